"""What must be copied (issue 34, item 4): the recogniser (numbers with separators, ordinals,
amounts, URLs, e-mail addresses, marked names, overlaps), the settings' errors, and through the
translator: every output holds every span whole (greedy and beam search), a text without spans
translates exactly as without, a span the vocabulary cannot spell is reported instead of forced,
and CTranslate2 reports what it cannot guarantee."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.decoding.boundaries import Boundary, holds
from anuvad.errors import ConfigError
from anuvad.inference.glossary import Glossary
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import (
    UNCONSTRAINED_ENGINE,
    UNSPELLABLE_SPAN,
    Verbatim,
    find_spans,
    to_digits,
)

pytestmark = pytest.mark.usefixtures("one_thread")

# How the report checks each kind in these tests' outputs (no number here follows a letter).
BOUNDARIES = {"number": Boundary.NUMBER, "url": Boundary.LINK, "email": Boundary.LINK}


def found(text: str, verbatim: Verbatim | None = None) -> list[tuple[str, str]]:
    return [(s.kind, s.target) for s in find_spans(text, verbatim or Verbatim())]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("₹80 per kg on 12 June 2024", [("number", "₹80"), ("number", "12"), ("number", "2024")]),
        (
            "Visit https://indianrail.gov.in or call 139.",
            [("url", "https://indianrail.gov.in"), ("number", "139")],
        ),
        ("250 trains", [("number", "250")]),
        ("Mail ravi.kumar@example.com today.", [("email", "ravi.kumar@example.com")]),
        (
            "See indianrail.gov.in/enquiry, then www.irctc.co.in.",
            [
                ("url", "indianrail.gov.in/enquiry"),
                ("url", "www.irctc.co.in"),
            ],
        ),
        (
            "(see https://en.wikipedia.org/wiki/Delhi_(city))",
            [
                ("url", "https://en.wikipedia.org/wiki/Delhi_(city)"),
            ],
        ),
        (
            "1,20,000 people paid 3.5 kg at 10:30 on 12/06/2024 in 2019-20.",
            [
                ("number", "1,20,000"),
                ("number", "3.5"),
                ("number", "10:30"),
                ("number", "12/06/2024"),
                ("number", "2019-20"),
            ],
        ),
        (
            "The 12th report: 45% paid $3,000.",
            [
                ("number", "12"),
                ("number", "45%"),
                ("number", "$3,000"),
            ],
        ),
        # A sign is the number's ("-5 degrees" came back as "5 डिग्री"), not a range's hyphen
        ("It fell to -5 degrees in 2024.", [("number", "-5"), ("number", "2024")]),
        (
            "From −3.5% to +2%, pages 10-15.",
            [("number", "−3.5%"), ("number", "+2%"), ("number", "10-15")],
        ),
        ("COVID-19 cases, No.1", [("number", "19"), ("number", "1")]),
        # A telephone number is one span, its groups in order
        ("Call +91 98765 43210 now.", [("number", "+91 98765 43210")]),
        (
            "Call 98765 43210 or 011-2345-6789.",
            [("number", "98765 43210"), ("number", "011-2345-6789")],
        ),
        ("In 2023 50 people came.", [("number", "2023"), ("number", "50")]),
        # a hyphen after a word (a vowel sign is a word's) or a number is no sign
        ("धारा-370 हटाई गई, कक्षा-10", [("number", "370"), ("number", "10")]),
        ("pages 10 -15", [("number", "10"), ("number", "15")]),
        ("about 5 %d", [("number", "5"), ("code", "%d")]),  # the code's "%" is no per cent
        # years and scores in a row are numbers, not a telephone number
        ("The years 1947 1950 1962.", [("number", "1947"), ("number", "1950"), ("number", "1962")]),
        (
            "Dial 011 2345 6789 or +44 20 7946 0958.",
            [("number", "011 2345 6789"), ("number", "+44 20 7946 0958")],
        ),
        # Format placeholders and tags written as text ("{name}" came back as "{C}")
        ("Hello {name}, you have {count} new messages.", [("code", "{name}"), ("code", "{count}")]),
        (
            "Delete %s of %(n)d files at %.2f MB/s?",
            [("code", "%s"), ("code", "%(n)d"), ("code", "%.2f")],
        ),
        ("Welcome, {{ user }}! See {0:>5}.", [("code", "{{ user }}"), ("code", "{0:>5}")]),
        ("Use the <div> element, not <b>bold</b>.", [("code", "<div>")]),
        ("Run `pip install anuvad` now, not ``` or ``.", [("code", "`pip install anuvad`")]),
        (
            "It rose 45% in 5 < 6 cases, 50 % sale",
            [("number", "45%"), ("number", "5"), ("number", "<6"), ("number", "50%")],
        ),
        (
            "SS19, H1N1 and v1.2",
            [  # identifiers of letters and digits are names; a version's number is a number
                ("name", "SS19"),
                ("name", "H1N1"),
                ("number", "1.2"),
            ],
        ),
        ("http://x.in/page2 lists 7 items", [("url", "http://x.in/page2"), ("number", "7")]),
        (  # a comparison before a number is its own (newcomer review: "10 और 20 15 5।")
            "5 < 10 and 20 > 15, >= 18, <=60",
            [
                ("number", "5"),
                ("number", "<10"),
                ("number", "20"),
                ("number", ">15"),
                ("number", ">=18"),
                ("number", "<=60"),
            ],
        ),
        ("a->5, x=>6, x>7", [("number", "5"), ("number", "6"), ("number", "7")]),  # not arrows
        (  # an operator or section sign keeps its space ("कमरा 5 3 मीटर है।" lost the "×")
            "5 × 3 m, 5×3, ≥ 40°C, § 12, ± 2, A≥5",
            [
                ("number", "5"),
                ("number", "× 3"),
                ("number", "5"),
                ("number", "3"),  # glued: "1920×1080" is one thing, not a sign and a number
                ("number", "≥ 40°C"),
                ("number", "§ 12"),
                ("number", "± 2"),
                ("number", "5"),  # after a letter: a formula's, not the number's
            ],
        ),
        ("Line<br/> 5 and <br /> 6", [("number", "5"), ("code", "<br />"), ("number", "6")]),
        ("No numbers, e.g. none.", []),
    ],
)
def test_what_must_be_copied_is_found(text: str, spans: list[tuple[str, str]]) -> None:
    assert found(text) == spans


def test_each_span_knows_where_it_is_in_the_source() -> None:
    text = "Call 139 or visit https://indianrail.gov.in."
    for span in find_spans(text, Verbatim()):
        assert text[span.start : span.end] == span.target


def test_numbers_are_written_in_the_readers_digits() -> None:
    devanagari = Verbatim(digits="devanagari")
    assert found("250 trains, 3.5 kg", devanagari) == [("number", "२५०"), ("number", "३.५")]
    assert found("२५० trains") == [("number", "250")]  # Latin by default, whatever the source
    assert to_digits("1,200", "devanagari") == "१,२००"


def test_kinds_can_be_left_out_and_names_marked() -> None:
    text = "Rohit Sharma scored 85 at rohit.sharma@example.com; rohit sharma smiled."
    assert found(text, Verbatim(numbers=False, links=False)) == []
    assert found(text, Verbatim(keep=("Rohit Sharma",))) == [
        ("name", "Rohit Sharma"),  # case-sensitive: not "rohit sharma"
        ("number", "85"),
        ("email", "rohit.sharma@example.com"),
    ]
    assert found("Agent 47 left", Verbatim(keep=("Agent 47",))) == [("name", "Agent 47")]
    # a marked name inside a link is copied with it; one outside stays a name
    assert found("Mail care@irctc.co.in or IRCTC.", Verbatim(keep=("irctc.co.in", "IRCTC"))) == [
        ("email", "care@irctc.co.in"),
        ("name", "IRCTC"),
    ]


def test_glossary_terms_cover_the_numbers_in_them() -> None:
    glossary = Glossary.from_pairs([("Section 144", "धारा 144")])
    text = "Section 144 applies to 5 districts."
    taken = glossary.match_spans(text)
    assert taken == [(0, 11)]
    assert [s.target for s in find_spans(text, Verbatim(), taken)] == ["5"]


def test_bad_settings_are_named_together() -> None:
    with pytest.raises(ConfigError) as error:
        Verbatim(digits="roman", keep=("ok", " "))  # type: ignore[arg-type]
    assert "digits: expected one of latin, devanagari, got 'roman'" in str(error.value)
    assert "keep.1: an empty string" in str(error.value)


# -- through the translator ------------------------------------------------------------------


@pytest.fixture(scope="module")
def translator() -> Translator:
    """A random English→Hindi model whose character vocabulary has the Hindi side's digits
    (1, 2, 9) but no "@" and no Devanagari digits; outputs of at most 8 pieces."""
    from test_translator import EOS_BIAS, build_model_file

    return Translator(build_model_file(EOS_BIAS))


@pytest.mark.parametrize("beam", [1, 3])
def test_a_text_without_spans_translates_exactly_as_without(
    translator: Translator, beam: int
) -> None:
    texts = ["I am going home.", "Thank you very much.", "Where is the station?"]
    settings = translator.settings(beam_size=beam, nbest=beam)
    plain = translator.translate(texts, settings)
    kept = translator.translate(texts, settings, verbatim=Verbatim(keep=("Rohit",)))
    for a, b in zip(plain, kept, strict=True):
        assert b.copied == []
        assert [c.token_ids for c in a.nbest] == [c.token_ids for c in b.nbest]
        assert [c.score for c in a.nbest] == [c.score for c in b.nbest]


@pytest.mark.parametrize("beam", [1, 4])
def test_every_output_holds_every_number_whole(translator: Translator, beam: int) -> None:
    texts = ["There are 12 apples in the basket.", "The shop opens at 9 o'clock.", "Yes, 21."]
    settings = translator.settings(beam_size=beam, nbest=min(beam, 2), no_repeat_ngram_size=3)
    results = translator.translate(texts, settings, verbatim=Verbatim())
    for result in results:
        assert result.copied, result.source  # the recogniser found something to check
        for span in result.copied:
            assert span.required and span.present, (span, result.text)
            for candidate in result.nbest:
                assert holds(candidate.text, span.target, BOUNDARIES[span.kind])


def test_a_policy_per_text(translator: Translator) -> None:
    """One policy per text (as the server's micro-batcher merges requests): None for a text
    requires nothing there and reports nothing."""
    texts = ["There are 12 apples in the basket.", "There are 12 apples in the basket."]
    plain = translator.translate(texts[1:])
    kept, free = translator.translate(texts, verbatim=[Verbatim(), None])
    assert [c.target for c in kept.copied] == ["12"] and free.copied == []
    assert free.token_ids == plain[0].token_ids
    with pytest.raises(ValueError, match="1 verbatim policies for 2 texts"):
        translator.translate(texts, verbatim=[Verbatim()])


def test_a_span_the_vocabulary_cannot_spell_is_reported_not_forced(
    translator: Translator,
) -> None:
    """The tiny vocabulary has no "@": nothing is forced (the output is the plain one) and the
    result says why."""
    texts = ["Write to ravi@example.com now."]
    plain = translator.translate(texts)
    results = translator.translate(texts, verbatim=Verbatim())
    assert [r.text for r in results] == [r.text for r in plain]
    (span,) = results[0].copied
    assert not span.required and span.note == UNSPELLABLE_SPAN
    assert span.present is holds(results[0].text, span.target, BOUNDARIES[span.kind])


@pytest.mark.parametrize("beam", [1, 3])
def test_the_digit_choice_changes_digits_only(translator: Translator, beam: int) -> None:
    """The search writes Latin digits and they are transliterated after it: the words are the
    ones Latin digits give (forcing "८" into the search changed them: "at 8 pm" → "८ मई"), even
    with a vocabulary that has no Devanagari digits."""
    texts = ["There are 12 apples in the basket.", "He scored 85 runs in 2024.", "No number."]
    settings = translator.settings(beam_size=beam, nbest=beam)
    latin = translator.translate(texts, settings, verbatim=Verbatim())
    deva = translator.translate(texts, settings, verbatim=Verbatim(digits="devanagari"))
    assert "1" in latin[0].text and "१२" in deva[0].text
    for one, other in zip(latin, deva, strict=True):
        assert other.text == to_digits(one.text, "devanagari")
        assert [c.text for c in other.nbest] == [to_digits(c.text, "devanagari") for c in one.nbest]
        assert other.token_ids == one.token_ids
        for a, b in zip(one.copied, other.copied, strict=True):
            assert (b.target, b.present, b.required) == (
                to_digits(a.target, "devanagari"),
                a.present,
                a.required,
            )


def test_the_ctranslate2_engine_reports_what_it_cannot_guarantee(tiny_enhi_model: Path) -> None:
    pytest.importorskip("ctranslate2")
    from anuvad.inference.engine import load_engine

    engine = load_engine(tiny_enhi_model, engine="ctranslate2", device="cpu")
    assert not engine.capabilities.verbatim and "verbatim" not in engine.capabilities.names()
    (result,) = engine.translate(["There are 12 apples."], verbatim=Verbatim())
    (span,) = result.copied
    assert (span.kind, span.target, span.required) == ("number", "12", False)
    assert span.note == UNCONSTRAINED_ENGINE
    assert span.present is holds(result.text, "12", Boundary.NUMBER)


@pytest.mark.parametrize("beam", [1, 3])
def test_a_currency_sign_the_vocabulary_lacks_is_put_back_before_its_number(
    translator: Translator, beam: int
) -> None:
    """ "₹" is in neither shipped vocabulary: the bare number is required and the sign is
    written before it after the search, in every candidate; the report says "₹12"."""
    settings = translator.settings(beam_size=beam, nbest=beam)
    (result,) = translator.translate(["It costs ₹12 now."], settings, verbatim=Verbatim())
    (span,) = result.copied
    assert (span.kind, span.source, span.target, span.required, span.present) == (
        "number",
        "₹12",
        "₹12",
        True,
        True,
    )
    assert all(c.text.count("₹12") == 1 for c in result.nbest) and "₹12" in result.text
    (deva,) = translator.translate(
        ["It costs ₹12 now."], settings, verbatim=Verbatim(digits="devanagari")
    )
    assert deva.text == to_digits(result.text, "devanagari") and "₹१२" in deva.text


def test_dates_and_signed_numbers_are_spans_with_the_targets_words() -> None:
    policy = Verbatim(langs=("en", "hi"))
    text = "Tomatoes cost ₹80 on 12 June 2024, up 5.4% since March 2023."
    assert found(text, policy) == [
        ("number", "₹80"),
        ("date", "12 जून 2024"),
        ("number", "5.4%"),
        ("date", "मार्च 2023"),
    ]
    assert found(text, Verbatim()) == [  # without the model's languages: no month names
        ("number", "₹80"),
        ("number", "12"),
        ("number", "2024"),
        ("number", "5.4%"),
        ("number", "2023"),
    ]


@pytest.mark.parametrize(("tgt", "expected"), [("hi", "कीमत ८० है।"), ("en", "The price is 80.")])
def test_devanagari_digits_only_in_a_devanagari_translation(tgt: str, expected: str) -> None:
    # newcomer review: digits "devanagari" gave Hindi->English "The price is Rs ८०."
    from anuvad.inference.post_search import finish
    from anuvad.inference.translation import Candidate, Translation

    text = "कीमत 80 है।" if tgt == "hi" else "The price is 80."
    result = Translation("x 80", text, [5], 0.0, True, [Candidate(text, [5], 0.0, 0.0, True)])
    finish([result], Verbatim(digits="devanagari"), "en" if tgt == "hi" else "hi", tgt)
    assert result.text == expected == result.nbest[0].text


def test_devanagari_digits_leave_links_and_addresses_as_written() -> None:
    from anuvad.inference.post_search import write_digits
    from anuvad.inference.translation import Candidate, CopiedSpan, Translation

    text = "12 जून को https://irctc.co.in/page2 या care123@irctc.co.in देखें।"
    link = CopiedSpan(
        "url", "https://irctc.co.in/page2", "https://irctc.co.in/page2", 0, 1, True, True
    )
    number = CopiedSpan("number", "12", "12", 0, 2, True, True)
    result = Translation("x", text, [5], 0.0, True, [Candidate(text, [5], 0.0, 0.0, True)])
    result.copied = [number, link]
    write_digits([result], Verbatim(digits="devanagari"))
    assert result.text == "१२ जून को https://irctc.co.in/page2 या care123@irctc.co.in देखें।"
    assert result.nbest[0].text == result.text
    assert [c.target for c in result.copied] == ["१२", "https://irctc.co.in/page2"]


@pytest.mark.parametrize(
    ("source", "output", "expected"),
    [
        # the unknown mark the model wrote takes the symbols' place
        ("I love this movie 😀👍", "मुझे यह फ़िल्म पसंद है ⁇ ", "मुझे यह फ़िल्म पसंद है 😀👍"),
        ("I ❤ it", "मैं ⁇  ⁇ इसे", "मैं ❤ इसे"),  # a mark left over is removed
        # dropped: after the translation, before it, or before its final mark
        ("Great job! 🎉", "बहुत अच्छा!", "बहुत अच्छा! 🎉"),
        ("© 2024 Indian Railways.", "2024 भारतीय रेलवे।", "© 2024 भारतीय रेलवे।"),
        ("The ❤ of Delhi.", "दिल्ली का दिल।", "दिल्ली का दिल ❤।"),
        ("😀 and 👍🏽 and 👨\u200d👩\u200d👧", "और और", "😀 और और 👍🏽 👨\u200d👩\u200d👧"),
        ("😀👍", "", "😀👍"),
        # nothing to do: already there, or no symbol
        ("A ❤ B", "क ❤ ख", "क ❤ ख"),
        ("No symbol here.", "यहाँ ⁇ नहीं।", "यहाँ ⁇ नहीं।"),
    ],
)
def test_symbols_the_vocabulary_cannot_spell_are_carried(
    source: str, output: str, expected: str
) -> None:
    from anuvad.inference.carrying import carry_symbols

    assert carry_symbols(source, output, spellable=lambda text: text.isascii()) == expected
    assert carry_symbols(source, output, spellable=lambda text: True) == output


@pytest.mark.parametrize(
    ("source", "output", "expected"),
    [
        # math signs, fractions, degrees and foreign letters the vocabulary cannot spell
        # (newcomer review: "-5°C, i.e. 23°F" came back as "-5 ⁇   ⁇  23 ⁇  ⁇  ॥")
        ("It was -5°C, i.e. 23°F.", "यह -5 ⁇ था, 23 ⁇ ।", "यह -5 ° था, 23 °।"),
        ("It was -5°C today.", "आज -5 C था।", "आज -5° C था।"),  # after the number it touched
        ("Use 2×3 and ½ cup.", "2 ⁇ 3 और कप का प्रयोग करें।", "2 × 3 और कप का प्रयोग करें।"),
        # a free math sign is not moved; one touching a number goes next to that whole number
        ("3 × 4 = 12", "3 4 12 था।", "3 4 12 था।"),
        ("Add 5 ml (±2) water.", "पानी 25 मिली डालें।", "पानी 25 मिली डालें।"),
        ("Add (±2) water.", "पानी 2 मिली डालें।", "पानी ±2 मिली डालें।"),
        (
            "Call +91-98765-43210 now.",
            "अभी 91-98765-43210 पर कॉल करें।",
            "अभी +91-98765-43210 पर कॉल करें।",
        ),  # before the number it touched
        ("He said 你好 to me.", "उसने मुझसे कहा।", "उसने मुझसे कहा 你好।"),
        ("Google® is here", "गूगल यहाँ है", "गूगल यहाँ है"),  # its word is not there: nowhere
    ],
)
def test_characters_the_vocabulary_cannot_spell_are_carried_and_no_mark_is_left(
    source: str, output: str, expected: str
) -> None:
    from anuvad.inference.carrying import carry_symbols

    spellable = lambda text: text.isascii() and "+" not in text  # noqa: E731
    assert carry_symbols(source, output, spellable, ("en", "hi")) == expected
    # letters of the pair's own scripts are the model's: never carried
    assert carry_symbols("Quick brown fox.", "तेज भूरी लोमड़ी।", lambda t: False, ("en", "hi")) == (
        "तेज भूरी लोमड़ी।"
    )


@pytest.mark.parametrize("beam", [1, 3])
def test_every_candidate_keeps_the_emoji_and_its_word_scores_point_at_their_words(
    translator: Translator, beam: int
) -> None:
    settings = translator.settings(beam_size=beam, nbest=beam)
    texts = ["Thank you 😀", "I am going home."]
    results = translator.translate(texts, settings, verbatim=Verbatim(), quality=True)
    assert all("😀" in c.text for c in results[0].nbest) and results[0].text.endswith("😀")
    plain = translator.translate(texts, settings, verbatim=Verbatim(symbols=False))
    assert all("😀" not in c.text for c in plain[0].nbest)
    assert [c.text for c in results[1].nbest] == [c.text for c in plain[1].nbest]
    quality = results[0].quality
    assert quality is not None
    for word in quality.words:
        assert word.start < 0 or results[0].text[word.start : word.end] == word.text


@pytest.mark.parametrize(
    ("source", "output", "expected"),
    [
        ("😀 👍 Hello friend", "नमस्ते दोस्त", "😀 👍 नमस्ते दोस्त"),  # leading runs keep their order
        ("😀 hello 😀", "नमस्ते 😀", "नमस्ते 😀 😀"),  # a repeated symbol is counted
        ("25 °C today", "आज 25 C", "आज 25 °C"),  # one touching a word goes next to it
        ("Thanks😀 for coming.", "आने के लिए धन्यवाद ⁇।", "आने के लिए धन्यवाद 😀।"),  # an emoji: not
        ("Happy birthday🎂 dear friend.", "जन्मदिन मुबारक।", "जन्मदिन मुबारक 🎂।"),
        ("😀 👍", "", "😀 👍"),
        ("Google® is here", "गूगल यहाँ है", "गूगल यहाँ है"),
        ("Price 5 € 😀", "कीमत 5 ⁇", "कीमत 5 € 😀"),  # the mark is the €'s
    ],
)
def test_symbols_are_carried_each_as_often_as_in_the_source(
    source: str, output: str, expected: str
) -> None:
    from anuvad.inference.carrying import carry_symbols

    assert carry_symbols(source, output, spellable=lambda text: text.isascii()) == expected


def test_write_symbols_puts_the_emoji_in_the_mark_and_moves_the_word_offsets() -> None:
    from anuvad.inference.carrying import write_symbols
    from anuvad.inference.translation import Candidate, Quality, Translation, WordScore

    text = "मुझे ⁇ पसंद है।"
    words = [WordScore("मुझे", 0.9, 0, 4), WordScore("पसंद", 0.8, 7, 11), WordScore("है।", 0.7, 12, 15)]
    quality = Quality(token_probs=[], words=words, features={})
    best = Candidate(text, [], -1.0, -1.0, True, quality=quality)
    result = Translation("I ❤❤ it.", text, [], -1.0, True, [best], quality=quality)
    write_symbols([result], Verbatim(), spellable=lambda t: t.isascii())
    assert result.text == "मुझे ❤❤ पसंद है।" == result.nbest[0].text
    assert [(w.text, result.text[w.start : w.end]) for w in words] == [
        ("मुझे", "मुझे"),
        ("पसंद", "पसंद"),
        ("है।", "है।"),
    ]
    assert [w.start for w in words] == [0, 8, 13]  # moved by the longer run


def test_a_numbers_own_letters_are_not_a_name_of_their_own() -> None:
    """ "तापमान 45°C तक पहुँच गया।" copied "C" as a name and came out "… 45 degree Fahrenheit.
    1 to 48 degree Celsius C."; a number inside a Latin run stays the run's."""
    policy = Verbatim(langs=("hi", "en"))
    spans = find_spans("तापमान 45°C तक पहुँच गया।", policy)
    assert [(s.kind, s.target) for s in spans] == [("number", "45°C")]
    spans = find_spans("मैंने Samsung Galaxy S24 Ultra खरीदा।", policy)
    assert [(s.kind, s.target) for s in spans] == [("name", "Samsung Galaxy S24 Ultra")]
