"""anuvad: a paper-faithful Transformer machine-translation toolkit."""

__version__ = "0.1.0"
