"""Small English ordinals ("1st" … "10th") are words to translate, not numbers to copy.

Required as numbers, they came out as digits with junk or lost: "She finished 1st" → "उसने
1स्ट", "This is the 2nd time." → "यह 2 समय है।", "On the 3rd floor." → "3 बजे का फर्श।". Hindi
writes these as words (पहला, दूसरा, तीसरा …), which the model knows from "first", "second",
"third": so the copied numbers leave them out (:mod:`anuvad.inference.verbatim`,
:mod:`anuvad.inference.numbers_back`) and the model reads them as words (:func:`read_ordinals`).
From "11th" on, the number is copied ("21वां").
"""

from __future__ import annotations

import re

from anuvad.inference.dates import date_spans

WORDS = ("first", "second", "third", "fourth", "fifth",
         "sixth", "seventh", "eighth", "ninth", "tenth")  # fmt: skip
# A small ordinal standing alone ("1st", "10TH"; not "11th", "1stop", "A1st", "v1.2nd").
SMALL_ORDINAL = re.compile(
    r"(?<![\w.,/-])(?:10|[1-9])(?:st|nd|rd|th)(?![A-Za-z0-9])", re.IGNORECASE
)


def small_ordinals(text: str) -> list[tuple[int, int]]:
    """(start, end) of each small ordinal of ``text`` outside its dates (a date's day is the
    date's: "5th of June", "June 1st, 2024", "5th-6th June")."""
    dates = date_spans(text, "en")
    return [
        m.span()
        for m in SMALL_ORDINAL.finditer(text)
        if not any(a <= m.start() < b for a, b in dates)
    ]


def read_ordinals(text: str, src_lang: str) -> str:
    """``text`` as the model reads it: in English, each small ordinal as its word, in the
    case it was written ("1st" → "first", "2ND" → "SECOND"); other languages unchanged."""
    if src_lang != "en":
        return text
    out, position = [], 0
    for start, end in small_ordinals(text):
        written = WORDS[int(text[start : end - 2]) - 1]
        out += [text[position:start], written.upper() if text[end - 2 : end].isupper() else written]
        position = end
    return "".join([*out, text[position:]])


__all__ = ["SMALL_ORDINAL", "WORDS", "read_ordinals", "small_ordinals"]
