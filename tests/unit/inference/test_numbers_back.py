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
    ("The village is 5km away in the 1990s.", "गाँव किमी दूर 1990 के दशक में है।"),
    ("The G20 summit met in 2023.", "जी शिखर सम्मेलन 20 में हुआ।"),
    # a telephone number in groups stays one number (web review: the page wrote "(अंक 98765
    # 43210 … 91)")
    (
        "Call +91 98765 43210. The price is 1,499.50, up 7.25%.",
        "आयोग (अंक 98765 43210 91) कीमत 1,499.50 है 7.25%।",
    ),
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
    # Numbers glued to letters are numbers too (codes, units, ordinals, decades), and digits
    # of either script are the same number.
    assert carry_numbers("12वीं रिपोर्ट, पेज2 पर।", ["12", "2"]) == "12वीं रिपोर्ट, पेज2 पर।"
    assert carry_numbers("गाँव किमी दूर है।", source_numbers("It is 5km away.")) == "गाँव किमी दूर है 5।"
    assert carry_numbers("जी20 शिखर सम्मेलन", source_numbers("G20 summit")) == "जी20 शिखर सम्मेलन"
    assert carry_numbers("at 5 o'clock.", source_numbers("मैं ५ बजे आऊँगा।")) == "at 5 o'clock."
    assert carry_numbers("", ["139"]) == "139"


def test_a_telephone_number_is_one_number_and_a_currency_sign_stays_the_models() -> None:
    assert source_numbers("Call +91 98765 43210 or pay ₹1,499.50.") == [
        "+91 98765 43210",
        "1,499.50",
    ]
    fixed = carry_numbers("आयोग (अंक 98765 43210 91) को कॉल करें।", ["+91 98765 43210"])
    assert fixed == "आयोग (अंक +91 98765 43210) को कॉल करें।"
    assert carry_numbers("यह 5 डॉलर का है।", source_numbers("It costs $5.")) == "यह 5 डॉलर का है।"
