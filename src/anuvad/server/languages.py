"""Language names, for messages, ``GET /models``' titles and the LibreTranslate-compatible
``/languages``."""

from __future__ import annotations

# Names for messages, GET /models' titles and the LibreTranslate-compatible /languages; a code
# missing here is shown as itself.
LANGUAGE_NAMES = {
    "en": "English",
    "hi": "Hindi",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "mr": "Marathi",
    "ne": "Nepali",
}
SCRIPT_NAMES = {"en": "Latin", "de": "Latin", "fr": "Latin", "es": "Latin", "hi": "Devanagari",
                "mr": "Devanagari", "ne": "Devanagari"}  # fmt: skip


def language_name(code: str) -> str:
    """``code``'s English name ("hi" → "Hindi"; an unknown code as itself)."""
    return LANGUAGE_NAMES.get(code, code)


__all__ = ["LANGUAGE_NAMES", "SCRIPT_NAMES", "language_name"]
