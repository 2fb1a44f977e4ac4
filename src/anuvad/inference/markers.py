"""A numbered list marker in the digits of its item's translation.

A list marker is layout: it is kept as written around the translated item
(:func:`anuvad.inference.documents.assemble`). But its digits are text: "१. दूध खरीदें" came
back "१. milk purchases" in English, and "1. Buy 2 kg rice." with Devanagari digits asked for
as "1. ब्यू २ किलोग्राम …". So the number of a marker right before an item takes the digits
the document's translations write (their digits, else Latin ones in a Latin-script
translation); a document translated without digits into Devanagari keeps its markers as
written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Digits = Literal["latin", "devanagari"]

_DEVANAGARI_DIGITS = "०१२३४५६७८९"
_TO_DEVANAGARI = str.maketrans("0123456789", _DEVANAGARI_DIGITS)
_TO_LATIN = str.maketrans(_DEVANAGARI_DIGITS, "0123456789")
# A numbered list marker ending the text before an item ("1. ", "(२) ", "\n3) ").
_NUMBERED = re.compile(r"(?:^|(?<=\s)|(?<=\())([0-9०-९]{1,3})(?=[.)]\s+$)")


def written_digits(translations: Sequence[str]) -> Digits | None:
    """The digits a document's translations write: Devanagari where they hold those and no
    Latin ones, Latin where they hold Latin ones or are in Latin script; None (the markers stay
    as written) where they hold no digit and are not."""
    text = "".join(translations)
    devanagari = any(c in _DEVANAGARI_DIGITS for c in text)
    latin = any(c.isascii() and c.isdigit() for c in text)
    if devanagari and not latin:
        return "devanagari"
    if latin or sum(c.isascii() and c.isalpha() for c in text) > sum(
        "\u0900" <= c <= "\u097f" for c in text
    ):
        return "latin"
    return None


def marker_digits(before: str, digits: Digits | None) -> str:
    """``before`` (the text kept before an item) with the number of a list marker at its end
    in ``digits`` (:func:`written_digits`; None: as it was)."""
    number = None if digits is None else _NUMBERED.search(before)
    if number is None:
        return before
    table = _TO_DEVANAGARI if digits == "devanagari" else _TO_LATIN
    a, b = number.span(1)
    return before[:a] + before[a:b].translate(table) + before[b:]


__all__ = ["marker_digits", "written_digits"]
