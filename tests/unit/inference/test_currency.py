"""Currency amounts (inference.currency): codes read and copied with their sign, one currency
per amount in an output, the rupee named in words around an amount."""

from __future__ import annotations

import pytest

from anuvad.decoding.boundaries import Boundary
from anuvad.inference.currency import (
    find_amounts,
    named_after,
    read_codes,
    write_currencies,
    write_currency,
)
from anuvad.inference.post_search import write_signs
from anuvad.inference.translation import CopiedSpan, Translation
from anuvad.inference.verbatim import Span, Verbatim, find_spans


def test_a_rupee_abbreviation_into_english_is_the_sign() -> None:
    """ "उसने रु. 500 दिए।" came out "He gave a 500 offer.": the amount is copied with "₹"."""
    text = "उसने रु. 500 और रू १,२०० दिए, रुपया मजबूत है।"
    assert [(a.target, text[a.start : a.end]) for a in find_amounts(text, "hi", "en")] == [
        ("₹500", "रु. 500"),
        ("₹१,२००", "रू १,२००"),
    ]
    assert find_amounts(text, "hi", "hi") == [] and find_amounts(text, "en", "hi") == []
    assert [a.target for a in find_amounts("कीमत रु. 500-600 है", "hi", "en")] == ["₹500-600"]
    spans = find_spans(text, Verbatim(langs=("hi", "en")))
    assert [s.target for s in spans] == ["₹500", "₹1,200"]  # in the search's Latin digits


def test_a_code_into_hindi_is_its_sign() -> None:
    """ "USD 25" came out "अमरीकी 25" (American 25), "EUR 30" as "30 बजे" (30 o'clock)."""
    text = "Tickets cost USD 25, 40 EUR or US$12.50; the fee is INR 1,500 and GBP 3-4 JPY 900."
    found = [(text[a.start : a.end], a.target) for a in find_amounts(text, "en", "hi")]
    assert found == [
        ("USD 25", "$25"),
        ("40 EUR", "€40"),
        ("US$12.50", "$12.50"),
        ("INR 1,500", "₹1,500"),
        ("GBP 3-4", "£3-4"),
        ("JPY 900", "¥900"),
    ]
    assert find_amounts(text, "en", "de") == []  # a Latin-script language keeps the code
    spans = find_spans(text, Verbatim(langs=("en", "hi")))
    assert [s.target for s in spans] == ["$25", "€40", "$12.50", "₹1,500", "£3-4", "¥900"]


@pytest.mark.parametrize(
    "text",
    [
        "COVID-19 USD",  # a number glued to a word is a code's
        "USD25X",  # a code's letters after it
        "the USDA report of 2024",  # not a currency code
        "He earned 25 USDT",  # another code
        "v1.5 EUR",  # a version, not an amount
    ],
)
def test_what_is_not_an_amount_with_a_code(text: str) -> None:
    assert find_amounts(text, "en", "hi") == []
    assert read_codes(text, "hi") == text


def test_the_model_reads_a_code_as_a_sign_it_knows() -> None:
    text = "It costs USD 25 or 25 USD, INR 500, EUR 30 and JPY 900."
    assert read_codes(text, "hi") == "It costs $25 or $25, Rs 500, €30 and JPY 900."
    assert read_codes(text, "en") == text and read_codes(text, "de") == text


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("होटल में €30 डॉलर खर्च हुए।", "होटल में €30 खर्च हुए।"),  # another currency's word goes
        ("उन्होंने £40 रुपये की किताब ली।", "उन्होंने £40 की किताब ली।"),
        ("It costs $25 rupees, ₹1,500 Dollars.", "It costs $25, ₹1,500."),
        ("$699 डॉलर की बजट", "699 डॉलर की बजट"),  # the same currency's word: the sign goes
        ("$5 मिलियन डॉलर", "5 मिलियन डॉलर"),  # after the scale word
        ("€2 billion euros and ₹5 rupees", "2 billion euros and 5 rupees"),
        ("टिकट की $ $25।", "टिकट की $25।"),  # a stray sign before
        ("$10-15 डॉलर और -₹5", "10-15 डॉलर और -₹5"),
        ("$2 बिलियन का निवेश", "$2 बिलियन का निवेश"),  # one currency already: as written
        ("30 डॉलर", "30 डॉलर"),
        ("£2.8बर्ग डॉलर", "£2.8बर्ग डॉलर"),  # glued to a word: not an amount
        ("€30 यूरोपीय संघ", "€30 यूरोपीय संघ"),  # a longer word, not the currency's
    ],
)
def test_an_amount_names_one_currency(output: str, expected: str) -> None:
    """ "€30" came out "€30 डॉलर", "£40" as "£40 रुपये", "$699" as "$699 डॉलर"."""
    assert write_currency(output) == expected


def test_a_copied_amount_is_reported_as_written() -> None:
    """The report names what the output holds: "$699" as "699 डॉलर" once the doubled sign
    goes, "₹500" (read "Rs 500") as "500 रुपये", present; an amount the output lacks stays
    missing, one it holds with its sign stays as it is."""
    spans = [("$699", True), ("₹500", False), ("£7", False), ("€30", True)]
    copied = [CopiedSpan("number", t, t, 0, 1, True, present) for t, present in spans]
    result = Translation(
        source="",
        text="इसमें $699 डॉलर और 500 रुपये दिए, €30 भी।",
        token_ids=[],
        score=0.0,
        finished=True,
        nbest=[],
        copied=copied,
    )
    write_currencies([result])
    assert result.text == "इसमें 699 डॉलर और 500 रुपये दिए, €30 भी।"
    assert [(c.target, c.present) for c in result.copied] == [
        ("699 डॉलर", True),
        ("500 रुपये", True),
        ("£7", False),
        ("€30", True),
    ]


def test_a_currency_named_later_in_the_clause() -> None:
    """ "कीमत रु. 500 है।" came out "The price 500 is Rs.", then "The price ₹500 is Rs."."""
    assert named_after("500 is Rs.", "₹") and named_after("500 rupees", "₹")
    assert named_after("30 यूरो", "€") and not named_after("30 डॉलर", "€")
    assert not named_after("500 and 600 rupees", "₹")  # another amount's
    assert not named_after("500. Rs. 600 more", "₹")  # another sentence's
    assert not named_after("500 rupeesh", "₹") and not named_after("500", "?")
    span = Span("number", 5, 12, "500", Boundary.NUMBER, sign="₹")
    assert write_signs("The price 500 is Rs.", [span]) == "The price 500 is Rs."
    assert write_signs("The price is 500.", [span]) == "The price is ₹500."
