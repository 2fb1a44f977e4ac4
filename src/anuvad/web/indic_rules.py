"""The Indic NLP library's normaliser (Hindi and the other Indic languages) as data the browser
runtime applies: generated from the library itself, checked against anuvad's normaliser before
it is written (issue 42).

:class:`anuvad.data.cleaning.TextNormalizer` runs, for an Indic language: NFC, the library's
``IndicNormalizer.normalize``, NFC, whitespace runs collapsed to one space, trimmed. The
library's ``normalize`` (``remove_nuktas=False``, no nasal, chandra or vowel-ending changes, as
anuvad uses it) is a fixed sequence of ``str.replace`` calls and one ``re.sub``:

* one character for another (or for several, or none): BOM, word joiner, soft hyphen, ZWJ and
  ZWNJ removed; zero-width and no-break spaces to spaces; curly quotes, dashes and "…" to ASCII;
  the nukta letters (क़ U+0958 …) to consonant + nukta; "|" to the danda "।". These are read
  from the library by *probing*: every Basic Multilingual Plane character the library changes,
  with what it becomes (:func:`char_map`), so no table is written here;
* two rules that look at a neighbour (:data:`CONTEXT_RULES`): two apostrophes become a double
  quote, and a colon after a Devanagari character becomes the visarga "ः"; then anuvad's own
  (:data:`anuvad.data.cleaning.INDIC_RULES`: "॥" a danda, a danda between digits "|").

Probing cannot find the context rules, so they are written below, and :func:`check` runs the
whole description (:func:`apply`, which mirrors ``text.js``'s ``normalizer`` step for step)
against ``normalizer_for(lang)`` on every BMP character, every BMP character followed by each
context rule's trigger, and real sentences: the export refuses to write rules that differ.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from collections.abc import Iterable
from typing import Any

from anuvad.data.cleaning import INDIC_RULES, normalizer_for

# Rules with context, applied in order after the character map: the library's
# ``text.replace("''", '"')`` (after its quote replacements, so "’’" becomes '"' too) and its
# visarga correction ``re.sub(r'([\u0900-\u097f]):', '\\1\u0903', text)``. A pattern is a
# regular expression valid in both Python and JavaScript (``u`` flag); ``$1`` is group 1.
CONTEXT_RULES: tuple[tuple[str, str], ...] = (
    ("''", '"'),
    ("([\u0900-\u097f]):", "$1\u0903"),
    *INDIC_RULES,  # then anuvad's own (a double danda, a danda between digits)
)
_TRIGGERS = ("'", ":", "\u0964", "1")  # the characters a context rule starts or ends on
_BMP = range(0x10000)


def _is_surrogate(code: int) -> bool:
    return 0xD800 <= code <= 0xDFFF


@functools.cache
def _library_normalizer(lang: str) -> Any:
    from indicnlp.normalize.indic_normalize import IndicNormalizerFactory

    return IndicNormalizerFactory().get_normalizer(lang, remove_nuktas=False)


def char_map(lang: str) -> dict[str, str]:
    """Every BMP character the library's normaliser for ``lang`` changes, alone, and what it
    becomes."""
    normalize = _library_normalizer(lang).normalize
    changed = {}
    for code in _BMP:
        if _is_surrogate(code):
            continue
        char = chr(code)
        out = normalize(char)
        if out != char:
            changed[char] = out
    return changed


def space_ranges() -> list[list[int]]:
    """The characters Python's ``\\s`` and ``str.strip()`` treat as whitespace (``isspace``),
    as [first, last] code point ranges: JavaScript's ``\\s`` is another set (it has U+FEFF and
    lacks U+001C-U+001F and U+0085)."""
    ranges: list[list[int]] = []
    for code in range(sys.maxunicode + 1):
        if chr(code).isspace():
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return ranges


def indic_normalization(lang: str) -> dict[str, Any]:
    """``model.json``'s ``normalization`` for an Indic source language."""
    return {
        "kind": "indic",
        "language": lang,
        "char_map": char_map(lang),
        "rules": [list(rule) for rule in CONTEXT_RULES],
        "space_ranges": space_ranges(),
    }


def _space_class(spec: dict[str, Any]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in spec["space_ranges"]
    )


def apply(spec: dict[str, Any], text: str) -> str:
    """``text`` normalised as ``text.js`` does with ``spec`` (the same steps in the same
    order), for :func:`check`."""
    mapping: dict[str, str] = spec["char_map"]
    t = unicodedata.normalize("NFC", text)
    t = "".join(mapping.get(c, c) for c in t)
    for pattern, replacement in spec["rules"]:
        t = re.sub(pattern, re.sub(r"\$(\d)", r"\\\1", replacement), t)
    t = unicodedata.normalize("NFC", t)
    space = _space_class(spec)
    return re.sub(f"^[{space}]+|[{space}]+$", "", re.sub(f"[{space}]+", " ", t))


def check(spec: dict[str, Any], sentences: Iterable[str] = ()) -> list[str]:
    """Where ``spec`` normalises differently from anuvad's normaliser of its language: every
    BMP character alone and before each context trigger, and ``sentences``. Returns up to five
    differences, each as ``repr(input): expected -> found`` (empty: none)."""
    python = normalizer_for(spec["language"])
    differences: list[str] = []
    singles = (chr(c) for c in _BMP if not _is_surrogate(c))
    texts = (t for c in singles for t in (c, *(c + trigger for trigger in _TRIGGERS)))
    for text in (*sentences, *texts):
        expected, found = python(text), apply(spec, text)
        if expected != found:
            differences.append(f"{text!r}: {expected!r} -> {found!r}")
            if len(differences) == 5:
                break
    return differences


__all__ = ["CONTEXT_RULES", "apply", "char_map", "check", "indic_normalization", "space_ranges"]
