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

from anuvad.inference.dates import MONTHS

WORDS = ("first", "second", "third", "fourth", "fifth",
         "sixth", "seventh", "eighth", "ninth", "tenth")  # fmt: skip
_MONTH = "|".join(name for month in MONTHS["en"] for name in month)
# A small ordinal standing alone ("1st", "10TH"; not "11th", "1stop", "A1st", "v1.2nd"), not a
# date's day ("5th June", "5th of June": a date, inference.dates).
SMALL_ORDINAL = re.compile(
    r"(?<![\w.,/-])(?:10|[1-9])(?:st|nd|rd|th)(?![A-Za-z0-9])"
    rf"(?!\s+(?:of\s+)?(?:{_MONTH})(?![A-Za-z]))",
    re.IGNORECASE,
)


def small_ordinal_at(text: str, start: int) -> bool:
    """Whether the number beginning at ``text[start]`` is a small ordinal's ("1st")."""
    return SMALL_ORDINAL.match(text, start) is not None


def read_ordinals(text: str, src_lang: str) -> str:
    """``text`` as the model reads it: in English, each small ordinal as its word, in the
    case it was written ("1st" → "first", "2ND" → "SECOND"); other languages unchanged."""
    if src_lang != "en":
        return text

    def word(match: re.Match[str]) -> str:
        written = WORDS[int(re.match(r"\d+", match.group()).group()) - 1]  # type: ignore[union-attr]
        return written.upper() if match.group()[-2:].isupper() else written

    return SMALL_ORDINAL.sub(word, text)


__all__ = ["SMALL_ORDINAL", "WORDS", "read_ordinals", "small_ordinal_at"]
