"""Numbers carried back after an unconstrained search: each source number as often as in the
source, no other."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from anuvad.inference.numbers_back import carry_numbers, source_numbers

CASES = [
    # (source, what CTranslate2 wrote with the shipped model)
    (
        "Call 139 or visit https://www.irctc.co.in/page2 for help.",
        "1399 या पंजाब (19939) के https://www.irctc.co.in/page2।",
    ),
    ("The meeting is on March 3, 2025.", "बैठक मार्च 30252 है।"),
    ("Prices rose to ₹80 per kg in Delhi on 12 June 2024.", "दिल्ली के 1204 में 2024 में हुआ।"),
    ("250 trains and 250 buses will run.", "250 ट्रेनें चलेंगी।"),
    ("The 12th report is out.", "12वीं रिपोर्ट 7 आई।"),
    ("No number here.", "यहाँ 5 और 6 हैं।"),
]


@pytest.mark.parametrize(("source", "output"), CASES)
def test_the_output_holds_exactly_the_sources_numbers(source: str, output: str) -> None:
    fixed = carry_numbers(output, source_numbers(source))
    assert Counter(source_numbers(fixed)) == Counter(source_numbers(source)), fixed
    assert "()" not in fixed and not re.search(r" [।,]", fixed), fixed
    words = [w for w in output.split() if not any(c.isdigit() for c in w)]
    assert all(w.strip("()।") in fixed for w in words), fixed  # nothing else lost


def test_a_wrong_number_is_replaced_in_place_and_a_missing_one_goes_before_the_mark() -> None:
    assert carry_numbers("बैठक मार्च 30252 है।", ["3", "2025"]) == "बैठक मार्च 3 है 2025।"
    assert carry_numbers("ठीक है।", []) == "ठीक है।"
    assert carry_numbers("12वीं रिपोर्ट, पेज2 पर।", []) == "12वीं रिपोर्ट, पेज2 पर।"  # glued: codes
