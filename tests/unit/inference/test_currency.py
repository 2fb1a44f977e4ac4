"""Currency amounts (inference.currency): codes read and copied with their sign, one currency
per amount in an output, the rupee named in words around an amount."""

from __future__ import annotations

import pytest

from anuvad.decoding.boundaries import Boundary
from anuvad.inference.currency import (
    find_amounts,
    named_after,
    named_before,
    read_amounts,
    write_currencies,
    write_currency,
)
from anuvad.inference.post_search import write_signs
from anuvad.inference.translation import Candidate, CopiedSpan, Quality, Translation, WordScore
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
    text = "Tickets cost USD 25, 40 EUR or US$12.50; the fee is INR 1,500 and GBP 3-4, JPY 900."
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
        "in 2015 USD terms",  # a year
        "at 10:30 EUR",  # a time
        "USD 5/10/2024",  # a date
        "EUR/USD 1.08",  # an exchange rate's pair
        "It was 25 USD 30 EUR.",  # "25 USD" or "USD 30"? left as written
        "Pay 100 INR 200 later",
    ],
)
def test_what_is_not_an_amount_with_a_code(text: str) -> None:
    assert find_amounts(text, "en", "hi") == []
    assert read_amounts(text, "en", "hi") == text


def test_the_model_reads_a_code_as_a_sign_it_knows() -> None:
    text = "It costs USD 25 or 25 USD, INR 500, EUR 30 and JPY 900; GBP\u00a040, USD  7."
    assert (
        read_amounts(text, "en", "hi") == "It costs $25 or $25, Rs 500, €30 and JPY 900; £40, $7."
    )
    assert read_amounts(text, "en", "de") == text


def test_the_rupee_sign_no_source_vocabulary_knows_is_read_as_a_word() -> None:
    """ "उसने ₹500 दिए।" came out "He went on ₹500." (the model read "⁇500"); "रु. 500" it
    translates."""
    assert read_amounts("उसने ₹500 दिए, ₹ 2 करोड़ भी।", "hi", "en") == "उसने रु. 500 दिए, रु. 2 करोड़ भी।"
    assert read_amounts("Pay ₹80 or -₹5, not ₹x.", "en", "hi") == "Pay Rs 80 or -Rs 5, not ₹x."
    assert read_amounts("Pay ₹80.", "de", "en") == "Pay ₹80."  # no word known for it


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
        ("US$5 million dollars, A$25 dollars", "US$5 million dollars, A$25 dollars"),  # a word's
        ("$10 billion yen-denominated bonds", "$10 billion yen-denominated bonds"),
        ("₹50 dollar-denominated", "₹50 dollar-denominated"),
        ("He paid $20 Rs. 500 later", "He paid $20 Rs. 500 later"),  # the next amount's code
        # its own currency named right before the sign ("रु. 500 दिए।" came out "R. ₹500.")
        ("R. ₹500 and Rs ₹200, INR₹5", "₹500 and ₹200, ₹5"),
        ("USD $25 and रु. ₹500", "$25 and ₹500"),
        ("Dr. ₹5, OR ₹5, Rs. $5", "Dr. ₹5, OR ₹5, Rs. $5"),  # other words, another currency
    ],
)
def test_an_amount_names_one_currency(output: str, expected: str) -> None:
    """ "€30" came out "€30 डॉलर", "£40" as "£40 रुपये", "$699" as "$699 डॉलर"."""
    assert write_currency(output) == expected


def test_a_copied_amount_is_reported_as_written() -> None:
    """The report names what the output holds: "$699" as "699 डॉलर" once the doubled sign
    goes, "₹500" (read "Rs 500") as "500 रुपये", present; an amount the output lacks stays
    missing, one it holds with its sign stays as it is."""
    spans = [("$699", True), ("₹500", False), ("£7", False), ("€30", True), ("$99", False)]
    spans += [("₹2", False)]
    copied = [CopiedSpan("number", t, t, 0, 1, True, present) for t, present in spans]
    text = "इसमें $699 डॉलर और 500 रुपये दिए, €30 भी, कुल 1,099 डॉलर, Rs. 2 करोड़।"
    words = [WordScore("$699", 0.9, 6, 10), WordScore("डॉलर", 0.8, 11, 15)]
    best = Candidate(text, [], -1.0, -1.0, True, quality=Quality([], words, {}))
    result = Translation("", text, [], -1.0, True, [best], copied=copied)
    write_currencies([result])
    assert result.text == "इसमें 699 डॉलर और 500 रुपये दिए, €30 भी, कुल 1,099 डॉलर, Rs. 2 करोड़।"
    assert result.nbest[0].text == result.text
    assert [(c.target, c.present) for c in result.copied] == [
        ("699 डॉलर", True),
        ("500 रुपये", True),
        ("£7", False),
        ("€30", True),
        ("$99", False),  # "1,099 डॉलर" is another amount
        ("Rs. 2", True),  # named before it
    ]
    # the word scores point at their words again; the removed sign's word is nowhere
    assert [(w.start, w.end) for w in words] == [(-1, -1), (10, 14)]
    assert result.text[10:14] == "डॉलर"


def test_a_currency_named_later_in_the_clause() -> None:
    """ "कीमत रु. 500 है।" came out "The price 500 is Rs.", then "The price ₹500 is Rs."."""
    assert named_after("500 is Rs.", "₹") and named_after("500 rupees", "₹")
    assert named_after("30 यूरो", "€") and not named_after("30 डॉलर", "€")
    assert not named_after("500 and 600 rupees", "₹")  # another amount's
    assert not named_after("500. Rs. 600 more", "₹")  # another sentence's
    assert not named_after("500 rupeesh", "₹")
    assert not named_after("500 note is the most used rupee note", "₹")  # too far
    assert not named_after("500 की फीस, बाकी रुपये बाद में", "₹")  # after a comma
    assert named_before("कीमत JPY ", "¥") and named_before("Rs. ", "₹")
    assert not named_before("कीमत ", "¥") and not named_before("MRS. ", "₹")
    span = Span("number", 5, 12, "500", Boundary.NUMBER, sign="₹")
    assert write_signs("The price 500 is Rs.", [span]) == "The price 500 is Rs."
    assert write_signs("The price is 500.", [span]) == "The price is ₹500."
    assert write_signs("The 500 note is a rupee note.", [span]) == "The ₹500 note is a rupee note."
    yen = Span("number", 5, 12, "900", Boundary.NUMBER, sign="¥")
    assert write_signs("कीमत JPY 900 है।", [yen]) == "कीमत JPY 900 है।"  # named before it


def test_from_hindi_into_english_a_code_and_its_amount_are_copied_as_written() -> None:
    """ "टिकट USD 20 का है।" came out "ticket USD is 20.": the code was a name of its own."""
    text = "टिकट USD 20 का है, वापसी 15\u00a0EUR।"
    found = [(text[a.start : a.end], a.target) for a in find_amounts(text, "hi", "en")]
    assert found == [("USD 20", "USD 20"), ("15\u00a0EUR", "15 EUR")]
    spans = find_spans(text, Verbatim(langs=("hi", "en")))
    assert [(s.kind, s.target) for s in spans] == [("number", "USD 20"), ("number", "15 EUR")]
    assert find_amounts(text, "en", "de") == []  # Latin to Latin: the model's to translate
