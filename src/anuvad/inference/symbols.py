"""Symbols: emoji, "©", "™", "♥", which neither shipped vocabulary can spell. Where they stand
between or around sentences they are layout, kept in place and never shown to the model
(:func:`anuvad.inference.documents.split_document`); inside a sentence they are carried into its
translation after the search (:func:`anuvad.inference.carrying.carry_symbols`).

A symbol is a non-ASCII character of Unicode category So, Sk or Co ("`" and "^" are Sk, but
code, not symbols), or any code point of the emoji blocks (:data:`EMOJI_RANGES`: listed, so that
an emoji newer than this Python's Unicode tables is one too, as it is in the page's JavaScript).
A run of symbols takes with it the joiners and variation selectors that build one emoji from
symbols ("👍🏽", "👨‍👩‍👧", "❤️"), and no spaces: "😀👍" is one run, "😀 👍" two. A joiner or
selector on its own (a Hindi word's ZWJ, the keycap of "1️⃣") is no symbol.

:data:`JS_SYMBOL`, :data:`JS_EMOJI` and :data:`JS_GLUE` are the same sets as JavaScript classes,
for the page (:mod:`anuvad.web.text_rules`).
"""

from __future__ import annotations

import functools
import unicodedata

_SYMBOL_CATEGORIES = ("Co", "Sk", "So")
# Misc symbols and dingbats, arrows/stars, the emoji planes (regional indicators, pictographs,
# emoticons, transport, supplemental and extended pictographs).
EMOJI_RANGES = ((0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F000, 0x1FAFF))
# ZWJ, keycap, variation selectors, and the tags that spell a subdivision flag (🏴 + tags).
_GLUE = ("\u200d", "\u20e3", "\ufe0e", "\ufe0f", *map(chr, range(0xE0020, 0xE0080)))


def _js_range(first: int, last: int) -> str:
    return f"\\u{{{first:x}}}-\\u{{{last:x}}}"


JS_EMOJI = "[" + "".join(_js_range(a, b) for a, b in EMOJI_RANGES) + "]"
JS_SYMBOL = (
    "(?![\\x00-\\x7f])["
    + "".join(f"\\p{{{c}}}" for c in _SYMBOL_CATEGORIES)
    + "".join(_js_range(a, b) for a, b in EMOJI_RANGES)
    + "]"
)
JS_GLUE = "[\\u200d\\u20e3\\ufe0e\\ufe0f" + _js_range(0xE0020, 0xE007F) + "]"


def is_emoji(char: str) -> bool:
    """Whether ``char`` is in the emoji blocks (or a skin tone: category Sk there)."""
    code = ord(char)
    return any(a <= code <= b for a, b in EMOJI_RANGES)


def is_symbol(char: str) -> bool:
    """Whether ``char`` is a symbol (the module docstring; a joiner alone is not)."""
    return not char.isascii() and (
        unicodedata.category(char) in _SYMBOL_CATEGORIES or is_emoji(char)
    )


@functools.lru_cache(maxsize=64)  # a line is asked for by its splitting, locating and trimming
def symbol_runs(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each run of symbols in ``text`` (the module docstring)."""
    if text.isascii():
        return ()  # no symbol is ASCII
    runs: list[tuple[int, int]] = []
    start = None
    for i, char in enumerate(text):
        inside = is_symbol(char) or (start is not None and char in _GLUE)
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(text)))
    return tuple(runs)


def symbol_mask(text: str) -> list[bool]:
    """Per character of ``text``, whether it belongs to a free run of symbols
    (:func:`free_run`: the runs that are layout between and around sentences)."""
    mask = [False] * len(text)
    for a, b in symbol_runs(text):
        if free_run(text, a, b):
            mask[a:b] = [True] * (b - a)
    return mask


def blank_symbols(text: str) -> str:
    """``text`` with every free run of symbols made spaces (the same length)."""
    mask = symbol_mask(text)
    return "".join(" " if m else c for c, m in zip(text, mask, strict=True))


def free_run(text: str, a: int, b: int) -> bool:
    """Whether the run ``text[a:b]`` stands apart from the words: it holds an emoji, or no
    letter or digit touches it ("Thanks😀", "I ❤ it"; not "Google®" or "42°")."""
    touching = (a > 0 and text[a - 1].isalnum()) or (b < len(text) and text[b].isalnum())
    return any(is_emoji(c) for c in text[a:b]) or not touching


def without_edge_symbols(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` of ``text`` narrowed past the spaces and the free runs of symbols
    (:func:`free_run`) at both of its ends (``start == end`` when nothing else is in it); a
    symbol that belongs to a word ("Google®") stays with it."""
    runs = {a: b for a, b in symbol_runs(text)}
    ends = {b: a for a, b in runs.items()}
    while start < end:
        if text[start].isspace():
            start += 1
        elif start in runs and runs[start] <= end and free_run(text, start, runs[start]):
            start = runs[start]
        else:
            break
    while end > start:
        if text[end - 1].isspace():
            end -= 1
        elif end in ends and ends[end] >= start and free_run(text, ends[end], end):
            end = ends[end]
        else:
            break
    return start, end


__all__ = [
    "EMOJI_RANGES",
    "JS_EMOJI",
    "JS_GLUE",
    "JS_SYMBOL",
    "blank_symbols",
    "free_run",
    "is_emoji",
    "is_symbol",
    "symbol_mask",
    "symbol_runs",
    "without_edge_symbols",
]
