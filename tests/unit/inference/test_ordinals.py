"""Small English ordinals are words the model translates, not numbers to copy."""

from __future__ import annotations

import pytest

from anuvad.inference.numbers_back import carry_numbers, source_numbers
from anuvad.inference.ordinals import read_ordinals
from anuvad.inference.verbatim import Verbatim, find_spans


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("She finished 1st and he came 21st.", "She finished first and he came 21st."),
        ("This is the 2nd time, on the 3rd floor.", "This is the second time, on the third floor."),
        ("THE 10TH DAY, the 4th, 5th", "THE TENTH DAY, the fourth, fifth"),
        ("11th, 1stop, v1.2nd, A1st, 1 st", "11th, 1stop, v1.2nd, A1st, 1 st"),  # none of them
        ("the 5th of June, 5th June, 5th Junebug", "the 5th of June, 5th June, fifth Junebug"),
        # a date's day is the date's (review: "June first, 2024" with "1 जून 2024" required)
        ("On June 1st, 2024, from 5th-6th June", "On June 1st, 2024, from 5th-6th June"),
    ],
)
def test_a_small_ordinal_is_read_as_its_word(text: str, read: str) -> None:
    assert read_ordinals(text, "en") == read
    assert read_ordinals(text, "hi") == text


def test_a_small_ordinal_is_no_number_to_copy_and_a_larger_one_is() -> None:
    """ "1st" came out "1स्ट", "2nd time" as "2 समय", "3rd floor" as "3 बजे का फर्श"."""
    text = "She came 1st on the 2nd day, 21st overall, in 10 days, v1.2nd."
    spans = [s.target for s in find_spans(text, Verbatim()) if s.kind == "number"]
    assert spans == ["21", "10", "1.2"]
    assert source_numbers(text) == ["21", "10", "1.2"]
    assert source_numbers("On June 1st, 2024.") == ["1", "2024"]  # a date's day is copied
    # the CTranslate2 engine's repair neither adds a "1" nor takes the translated word's place
    output = "वह पहले आई, दूसरे दिन, कुल 21वीं, 10 दिनों में, v1.2।"
    assert carry_numbers(output, source_numbers(text)) == output
