"""Hindi numbers in words read as digits (inference.number_words)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from anuvad.inference.number_words import read_number_words, read_sources
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim
from conftest import encoded_texts


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("उसने ढाई सौ किताबें खरीदीं।", "उसने 250 किताबें खरीदीं।"),
        ("सरकार ने डेढ़ लाख रुपये की मदद दी।", "सरकार ने 1.5 लाख रुपये की मदद दी।"),
        ("कक्षा में पच्चीस बच्चे हैं।", "कक्षा में 25 बच्चे हैं।"),
        ("इस पर तीन करोड़ रुपये खर्च हुए।", "इस पर 3 करोड़ रुपये खर्च हुए।"),
        ("इस पर तीन करोड रुपये खर्च हुए।", "इस पर 3 करोड रुपये खर्च हुए।"),  # the word as written
        ("मैंने दो हज़ार रुपये दिए।", "मैंने 2000 रुपये दिए।"),
        ("मैंने दो हजार रुपये दिए।", "मैंने 2000 रुपये दिए।"),
        ("सवा सौ लोग आए।", "125 लोग आए।"),
        ("एक सौ पच्चीस", "125"),
        ("नौ सौ निन्यानवे", "999"),
        ("पच्चीस सौ", "2500"),
        ("साढ़े तीन सौ", "350"),
        ("पौने दो सौ", "175"),
        ("दस हज़ार लोग", "10,000 लोग"),
        ("पच्चीस हज़ार दर्शक", "25,000 दर्शक"),
        ("तीन लाख पचास हज़ार लोग", "3.5 लाख लोग"),
        ("तीन लाख पचास हज़ार एक लोग", "3,50,001 लोग"),
        ("एक करोड़ दस लाख", "1.1 करोड़"),
        ("सवा दो लाख", "2.25 लाख"),
        ("पाँच सौ करोड़ रुपये", "500 करोड़ रुपये"),
        ("पांच सौ करोड़ रुपये", "500 करोड़ रुपये"),
        ("डेढ़ घंटे", "1.5 घंटे"),
        ("सन दो हज़ार उन्नीस में", "सन 2019 में"),
        ("वह साढ़े तीन बजे आएगा।", "वह 3:30 बजे आएगा।"),
        ("पौने चार बजे", "3:45 बजे"),
        ("सवा छह बजे", "6:15 बजे"),
        ("ढाई बजे", "2:30 बजे"),
        ("बारह बजकर पंद्रह मिनट", "12 बजकर 15 मिनट"),  # any hour before बजकर
        ("दो बजकर पच्चीस मिनट", "2 बजकर 25 मिनट"),
        ("साढ़े तीन\u00a0बजे", "3:30\u00a0बजे"),
        ("साढ़े तीन  बजे", "3:30  बजे"),
        ("दो हज़ार करोड़ रुपये", "2000 करोड़ रुपये"),
        ("पच्चीस हज़ार करोड़", "25,000 करोड़"),
        ("पच्चीस अरब डॉलर", "25 अरब डॉलर"),  # the count read, अरब left to the model
        ("चालिस, बाइस और तेइस", "चालिस, 22 और 23"),
        ("बीस, पच्चीस या तीस", "बीस, 25 या तीस"),  # the tens alone stay words
        ("बीस हज़ार", "20,000"),
        # left in words: small counts alone, whole hours, a multiplier with no count, "Arab",
        # plurals, ranges, two counts in a row ("two or three days")
        ("एक लड़का और दो लड़कियाँ", "एक लड़का और दो लड़कियाँ"),
        ("सुबह दस बजे बैठक होगी।", "सुबह दस बजे बैठक होगी।"),
        ("लाख कोशिशों के बावजूद", "लाख कोशिशों के बावजूद"),
        ("हज़ारों लोग और सैकड़ों बच्चे", "हज़ारों लोग और सैकड़ों बच्चे"),
        ("दो-तीन सौ लोग", "दो-तीन सौ लोग"),
        ("बीस-पच्चीस लोग", "बीस-पच्चीस लोग"),
        ("दो तीन दिन", "दो तीन दिन"),
        ("दो तीन सौ लोग", "दो तीन सौ लोग"),
        ("वह नौ दो ग्यारह हो गया", "वह नौ दो ग्यारह हो गया"),
        ("उन्नीस बीस का फर्क", "उन्नीस बीस का फर्क"),
        ("दो लाख तीन करोड़", "दो लाख तीन करोड़"),
        ("पांच लाख करोड़ रुपये", "पांच लाख करोड़ रुपये"),  # "5 lakh crore": left to the model
        ("दो हज़ार लाख करोड़", "दो हज़ार लाख करोड़"),
        ("दो हज़ार डेढ़", "दो हज़ार डेढ़"),
        ("बीस—पच्चीस और दो/तीन सौ", "बीस—पच्चीस और दो/तीन सौ"),
        ("2 लाख पचास हज़ार और २ पच्चीस", "2 लाख पचास हज़ार और २ पच्चीस"),
        ("सात अरब और पच्चीस अरब देश", "सात अरब और 25 अरब देश"),
        ("सौभाग्य से", "सौभाग्य से"),
        ("पौने एक", "पौने एक"),
    ],
)
def test_a_hindi_number_in_words_is_read_as_digits(text: str, read: str) -> None:
    assert read_number_words(text, "hi").text == read


def test_other_languages_and_policies_without_numbers_are_read_as_written() -> None:
    assert read_number_words("Twenty five people came.", "en").text == "Twenty five people came."
    text = "कक्षा में पच्चीस बच्चे हैं।"
    assert [r.text for r in read_sources([text], Verbatim(numbers=False), "hi")] == [text]
    assert [r.text for r in read_sources([text], None, "hi")] == [text]
    assert [r.text for r in read_sources([text], Verbatim(number_words=False), "hi")] == [text]
    assert [r.text for r in read_sources([text, text], [None, Verbatim()], "hi")] == [
        text,
        "कक्षा में 25 बच्चे हैं।",
    ]


def test_each_replacement_maps_back_to_its_words_and_the_rest_shifts() -> None:
    """``Reading.original`` takes a span of what the model read to the source: a replaced
    number to its words, other text to the same characters (checked on random sentences)."""
    words = ["ढाई सौ", "पच्चीस", "डेढ़ लाख", "किताबें", "और", "दो", "साढ़े तीन बजे", "लोग", "7", "है।"]
    rng = random.Random(3)
    for _ in range(300):
        source = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        reading = read_number_words(source, "hi")
        for a, b, c, d in reading.edits:
            assert reading.original(c, d) == (a, b)
        for start in range(len(reading.text) + 1):
            for end in range(start, len(reading.text) + 1):
                first, last = reading.original(start, end)
                inside = any(c < end and start < d for _, _, c, d in reading.edits)
                if not inside:
                    assert source[first:last] == reading.text[start:end]
                else:  # over every replacement it touches, whole
                    for a, b, c, d in reading.edits:
                        if c < end and start < d:
                            assert first <= a and b <= last
                assert 0 <= first <= last <= len(source)


def test_glossary_terms_and_kept_names_keep_their_number_words() -> None:
    from anuvad.inference.glossary import Glossary, GlossaryEntry

    text = "वह चार सौ बीस है, सोलह सिंगार किए, पच्चीस लोग आए।"
    glossary = Glossary([GlossaryEntry("चार सौ बीस", "fraudster")])
    (reading,) = read_sources([text], Verbatim(keep=("सोलह सिंगार",)), "hi", glossary)
    assert reading.text == "वह चार सौ बीस है, सोलह सिंगार किए, 25 लोग आए।"
    (plain,) = read_sources([text], Verbatim(), "hi")
    assert plain.text == "वह 420 है, 16 सिंगार किए, 25 लोग आए।"


def test_a_number_that_keeps_its_word_is_read_up_to_the_word() -> None:
    """The copied "1.5" of "डेढ़ लाख" stands for "डेढ़" alone: "लाख" stays for the model."""
    reading = read_number_words("सरकार ने डेढ़ लाख रुपये दिए।", "hi")
    ((a, b, c, d),) = reading.edits
    assert (reading.source[a:b], reading.text[c:d]) == ("डेढ़", "1.5")
    reading = read_number_words("तीन लाख पचास हज़ार लोग", "hi")
    ((a, b, c, d),) = reading.edits
    assert (reading.source[a:b], reading.text[c:d]) == ("तीन लाख पचास हज़ार", "3.5 लाख")


@pytest.fixture(scope="module")
def hindi_translator() -> Translator:
    """A random Hindi→English model with character vocabularies (digits included)."""
    from conftest import EN_HI_PAIRS, char_translator

    return char_translator(
        [hi for _, hi in EN_HI_PAIRS] + ["0123456789,.: ढाई सौ"],
        [en for en, _ in EN_HI_PAIRS] + ["0123456789,.:"],
        ("hi", "en"),
        beam_size=2,
        name="number-words",
    )


@pytest.mark.parametrize("beam", [1, 2])
def test_the_model_reads_digits_and_the_result_keeps_the_source_as_written(
    hindi_translator: Translator, beam: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = encoded_texts(monkeypatch, hindi_translator, "encode")
    texts = ["उसने ढाई सौ किताबें लीं", "दो लड़के"]
    settings = hindi_translator.settings(beam_size=beam)
    results = hindi_translator.translate(texts, settings, verbatim=Verbatim())
    assert seen == ["उसने 250 किताबें लीं", "दो लड़के"]
    assert [r.source for r in results] == texts
    assert [r.read for r in results] == ["उसने 250 किताबें लीं", ""]
    (copied,) = results[0].copied
    assert (copied.source, copied.target, copied.present) == ("ढाई सौ", "250", True)
    assert texts[0][copied.start : copied.end] == "ढाई सौ"
    assert "250" in results[0].text
    view = hindi_translator.attention_of(results[0])
    assert view.source == texts[0]


def test_without_copied_numbers_the_model_reads_the_words(
    hindi_translator: Translator, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = encoded_texts(monkeypatch, hindi_translator, "encode")
    (result,) = hindi_translator.translate(["उसने ढाई सौ किताबें लीं"])
    assert seen == ["उसने ढाई सौ किताबें लीं"] and result.read == ""


def test_the_ctranslate2_engine_reads_digits_too_and_its_attention_follows(
    hindi_translator: Translator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ctranslate2")
    from anuvad.inference.ct2.engine import CT2Translator
    from anuvad.inference.ct2.export import export_ctranslate2

    folder = export_ctranslate2(hindi_translator.model_file, tmp_path / "ct2")
    engine = CT2Translator(folder, device="cpu")
    seen = encoded_texts(monkeypatch, engine, "_encode")
    text = "उसने ढाई सौ किताबें लीं"
    (result,) = engine.translate([text], verbatim=Verbatim())
    assert seen == ["उसने 250 किताबें लीं"]
    assert (result.source, result.read) == (text, "उसने 250 किताबें लीं")
    assert [(c.source, c.target) for c in result.copied] == [("ढाई सौ", "250")]
    seen.clear()
    view = engine.attention_of(result)  # over what the search read, shown with the source
    assert seen == ["उसने 250 किताबें लीं"] and view.source == text
