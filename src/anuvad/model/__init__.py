"""The Transformer itself, plain PyTorch: layers, the key/value cache, the encoder-decoder.

No I/O, training, device or CPU-specific code lives here; speed-ups for a device wrap the model
from outside (:func:`anuvad.inference.cpu.accelerate`).
"""
