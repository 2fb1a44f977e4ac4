"""CTranslate2: export a model file to a CTranslate2 folder, and an engine that serves it.

This package module imports without the optional ``ctranslate2`` package (the CLI reads
:data:`QUANTIZATIONS` from it); ``export`` and ``engine`` need it.
"""

from __future__ import annotations

from anuvad.errors import AnuvadError

# CTranslate2 weight types an export may write ("int8" keeps float32 activations).
QUANTIZATIONS = (
    "float32",
    "float16",
    "bfloat16",
    "int8",
    "int8_float32",
    "int8_float16",
    "int8_bfloat16",
)


def missing_ctranslate2(exc: ImportError) -> AnuvadError:
    """The error for a CTranslate2 feature used without the package installed."""
    return AnuvadError(
        f"the CTranslate2 engine needs the ctranslate2 package ({exc}); install it with "
        "pip install 'anuvad[ct2]'"
    )
