"""Symbols: emoji, "©", "™", "♥" (Unicode categories So, Sk, Co), which neither shipped vocabulary
can spell. Where they stand between or around sentences they are layout, kept in place and never
shown to the model (:func:`anuvad.inference.documents.split_document`); inside a sentence they
are carried into its translation after the search
(:func:`anuvad.inference.post_search.carry_symbols`).

A run of symbols takes with it the joiners and variation selectors that build one emoji from
symbols ("👍🏽", "👨‍👩‍👧", "❤️"), and no spaces: "😀👍" is one run, "😀 👍" two. (A keycap, "1️⃣",
starts with a digit: it is no run.)
"""

from __future__ import annotations

import unicodedata

_SYMBOL_CATEGORIES = frozenset({"So", "Sk", "Co"})
_GLUE = frozenset({"\u200d", "\ufe0e", "\ufe0f", "\u20e3"})  # ZWJ, variation selectors, keycap


# The same set as a JavaScript character class, for the page (anuvad.web.text_rules).
JS_SYMBOL = (
    "["
    + "".join(f"\\p{{{c}}}" for c in sorted(_SYMBOL_CATEGORIES))
    + "".join(f"\\u{ord(g):04x}" for g in sorted(_GLUE))
    + "]"
)


def is_symbol(char: str) -> bool:
    """Whether ``char`` is a symbol, or glue that builds an emoji from symbols."""
    return unicodedata.category(char) in _SYMBOL_CATEGORIES or char in _GLUE


def symbol_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of symbols in ``text`` (the module docstring)."""
    runs: list[tuple[int, int]] = []
    start = None
    for i, char in enumerate(text):
        inside = unicodedata.category(char) in _SYMBOL_CATEGORIES or (
            start is not None and char in _GLUE
        )
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(text)))
    return runs


def without_edge_symbols(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` of ``text`` narrowed past the symbols and spaces at both of its ends
    (``start == end`` when nothing else is in it)."""
    while start < end and (is_symbol(text[start]) or text[start].isspace()):
        start += 1
    while end > start and (is_symbol(text[end - 1]) or text[end - 1].isspace()):
        end -= 1
    return start, end


__all__ = ["JS_SYMBOL", "is_symbol", "symbol_runs", "without_edge_symbols"]
