"""What results get after the search: a sign put back where the model wrote its unknown mark,
and characters the model cannot read carried from the source like those the target cannot
spell."""

from __future__ import annotations

import pytest

from anuvad.config import TokenizerConfig
from anuvad.data.tokenizer import train_tokenizer
from anuvad.inference.carrying import carried_runs, carry_symbols, readable_and_spelled
from anuvad.inference.post_search import unsigned, write_signs
from anuvad.inference.verbatim import Verbatim, find_spans


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (" ⁇  500 अब तक।", "₹500 अब तक।"),  # "Pay ₹500 now." came out " ⁇  ₹500 अब तक।"
        ("आज  ⁇  500 सहेजें।", "आज ₹500 सहेजें।"),
        ("आज 500 सहेजें।", "आज ₹500 सहेजें।"),  # no mark: the sign before the number
        ("⁇ आज 500 सहेजें।", "⁇ आज ₹500 सहेजें।"),  # a mark elsewhere is not the sign's
        ("कीमत (500) है", "कीमत (₹500) है"),  # glued as the model wrote it
        ("कीमत ( ⁇ 500) है", "कीमत (₹500) है"),
        ('"500" सहेजें', '"₹500" सहेजें'),
    ],
)
def test_a_sign_put_back_takes_the_place_of_the_mark_the_model_wrote_for_it(
    text: str, expected: str
) -> None:
    (span,) = find_spans("Pay ₹500 now.", Verbatim())
    bare = unsigned(span, lambda t: "₹" not in t)
    assert (bare.target, bare.sign) == ("500", "₹")
    assert write_signs(text, [bare]) == expected


def test_a_character_the_model_cannot_read_is_carried_as_one_the_target_lacks() -> None:
    """ "See §3 and ¶2." came out "देखें ⁇ 3 और ⁇ -2।": the target spells "§", the source
    vocabulary does not, so the model saw an unknown piece."""
    src = train_tokenizer(["See 3 and 2 now."] * 20, TokenizerConfig(model_type="char"), 40)
    target_spells = readable_and_spelled(src, lambda text: True)
    assert not target_spells("§") and not target_spells("¶") and target_spells("See 3")
    source, output = "See §3 and ¶2.", "देखें ⁇ 3 और ⁇ -2।"
    assert carry_symbols(source, output, target_spells, ("en", "hi")) == "देखें § 3 और ¶ -2।"
    assert carry_symbols(source, output, lambda text: True, ("en", "hi")) == output


def test_other_punctuation_is_carried_but_never_a_danda() -> None:
    lacks = "•†′।॥|"

    def spellable(text: str) -> bool:
        return not any(c in lacks for c in text)

    source = "• Buy rice† at 5′."
    runs = carried_runs(source, spellable, ("en", "hi"))
    assert [source[a:b] for a, b in runs] == ["•", "†", "′"]
    # into English: the dandas end sentences; the punctuation rules write them as full stops
    assert carried_runs("राम घर गया। सीता आई॥ वह | गई", spellable, ("hi", "en")) == []


def test_no_rupee_sign_where_the_currency_is_in_words_nor_a_second_minus() -> None:
    """Hindi->English "रु. 500" is "₹500", but "He paid Rs. 500." is not "Rs. ₹500"; an
    unspellable "−" takes the place of the model's own "-" ("-−5" before)."""
    (amount,) = find_spans("उसने रु. 500 दिए", Verbatim(langs=("hi", "en")))
    rupees = unsigned(amount, lambda t: "₹" not in t)
    assert write_signs("He paid Rs. 500.", [rupees]) == "He paid Rs. 500."
    assert write_signs("He paid 500 rupees.", [rupees]) == "He paid 500 rupees."
    assert write_signs("He paid 500.", [rupees]) == "He paid ₹500."
    (minus,) = find_spans("It was −5 at night.", Verbatim())
    bare = unsigned(minus, lambda t: "−" not in t)
    assert write_signs("रात में -5 था।", [bare]) == "रात में −5 था।"
    assert write_signs("रात में 5 था।", [bare]) == "रात में −5 था।"


@pytest.mark.parametrize(
    ("source", "output", "expected"),
    [
        # the tokenizer reads "½" as "1⁄2" and cannot read "⁄": the model copies "1 ⁇ 2"
        ("Add ½ cup of sugar.", "चीनी का 1 ⁇ 2 कप।", "चीनी का ½ कप।"),
        ("Add ½ cup of sugar.", "चीनी का १ ⁇ २ कप।", "चीनी का ½ कप।"),  # digits written already
        ("Add ½ cup.", "21 ⁇ 23 कप।", "21 ½ 23 कप।"),  # other numbers are not the fraction's
        # "℃" is required as the vocabulary reads it ("100°C"): carried once, not twice
        ("It boils at 100 ℃ here.", "यहाँ 100°C पर उबलता है।", "यहाँ 100°C पर उबलता है।"),
        # a fraction after its whole number goes after that number's one copy, in either script
        ("Add 2 ½ cups of water.", "पानी के 2 कप जोड़ें।", "पानी के 2 ½ कप जोड़ें।"),
        ("Add 2 ½ cups of water.", "पानी के २ कप जोड़ें।", "पानी के २ ½ कप जोड़ें।"),
        ("Mix 1½ cups of flour.", "१ कप आटा मिलाएं।", "१½ कप आटा मिलाएं।"),
        ("२ ½ कप दूध डालें।", "Add 2 cups of milk.", "Add 2 ½ cups of milk."),  # into English
        ("Add 2 ½ cups to 2 jugs.", "2 जग में 2 कप डालें।", "2 जग में 2 कप डालें।"),  # which 2?
    ],
)
def test_a_character_read_in_its_compatibility_form_is_carried_once(
    source: str, output: str, expected: str
) -> None:
    """Newcomer review: "Add ½ cup of sugar." came out "चीनी का 1 ½ 2 कप।", "100 ℃" as
    "100°C … ℃", and "Add 2 ½ cups" lost its "½"."""
    letters = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,"
    src = train_tokenizer([letters] * 20, TokenizerConfig(model_type="char"), 80)
    spellable = readable_and_spelled(src, lambda text: "⁄" not in text and text.isascii())
    assert carry_symbols(source, output, spellable, ("en", "hi")) == expected


def test_a_comparison_is_required_bare_and_written_back_before_its_number() -> None:
    """ "5 < 10 and 20 > 15." lost its signs; required with them, the model wrote junk around
    them ("… >15. <s> <10।"): the search holds the bare numbers, the signs go back after it."""
    spans = [unsigned(s, lambda t: True) for s in find_spans("5 < 10 and 20 > 15.", Verbatim())]
    assert [(s.target, s.sign) for s in spans] == [("5", ""), ("10", "<"), ("20", ""), ("15", ">")]
    assert write_signs("5 10 और 20 15।", spans) == "5 <10 और 20 >15।"
    assert write_signs("5 < 10 और 20 > 15।", spans) == "5 < 10 और 20 > 15।"  # not twice
    spans = [unsigned(s, lambda t: True) for s in find_spans("It is 5 × 3, § 12.", Verbatim())]
    assert [(s.target, s.sign) for s in spans] == [("5", ""), ("3", "× "), ("12", "§ ")]
    assert write_signs("यह 5 3, 12 है।", spans) == "यह 5 × 3, § 12 है।"
    (rupees,) = [unsigned(s, lambda t: "₹" not in t) for s in find_spans("> ₹500", Verbatim())]
    assert (rupees.target, rupees.sign, rupees.written) == ("500", ">₹", ">₹500")


def test_a_numbers_currency_sign_is_not_carried_where_numbers_are_copied() -> None:
    """ "सरकार ने ₹2 करोड़ दिए।" came out "… Rs ₹2 crore.": the number's sign is write_signs'
    (none beside "Rs"), not carried as a symbol; without numbers copied it is still carried."""
    from anuvad.inference.carrying import write_symbols
    from anuvad.inference.translation import Translation

    def lacks_rupee(text: str) -> bool:
        return "₹" not in text

    for numbers, expected in ((True, "The government gave Rs 2 crore."), (False, "₹")):
        result = Translation(
            "सरकार ने ₹2 करोड़ दिए।", "The government gave Rs 2 crore.", [], -1.0, True, []
        )
        write_symbols([result], Verbatim(numbers=numbers), lacks_rupee, ("hi", "en"))
        assert expected in result.text and result.text.count("₹") == (0 if numbers else 1)
