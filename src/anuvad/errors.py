"""The few named errors anuvad raises. Each message says what was expected, what was found and
how to fix it; the CLI prints the message and exits non-zero."""

from __future__ import annotations


class AnuvadError(Exception):
    """Base class of every error anuvad raises on purpose."""


class ConfigError(AnuvadError):
    """A configuration file or override is invalid (unknown key, wrong type, bad value)."""


class DataError(AnuvadError):
    """Training or evaluation data cannot be read as asked (names the file and line)."""


class CheckpointError(AnuvadError):
    """A model file or training checkpoint is missing, truncated, foreign or incompatible."""


class TrainingError(AnuvadError):
    """Training cannot start or go on (unwritable run folder, full disk, non-finite loss)."""


class InputTooLongError(AnuvadError):
    """A sentence is longer than the model can translate, even cut at its clause boundaries
    (the server answers 422; nothing is ever cut silently).

    Attributes:
        detail: what is too long, without where (the message adds the line in its document).
        document: the index of the document it is in, when several were translated together
            (None: not known), for the caller to name the file line or request text.
    """

    detail: str = ""
    document: int | None = None


class SearchStoppedError(AnuvadError):
    """A search was told to stop between two decoding steps (its request ran past its deadline,
    or its client went away); nothing it had computed is returned."""
