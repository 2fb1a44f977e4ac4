"""Glossaries: when a term occurs (case, whole words, inflections, hyphens, overlaps), reading
a TSV (errors name file and line), and the guarantee through the translator: every output,
every n-best candidate, holds the required translation; CTranslate2 refuses with a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.errors import DataError
from anuvad.inference.glossary import Glossary, GlossaryEntry, used_in

pytestmark = pytest.mark.usefixtures("one_thread")


def sources(glossary: Glossary, sentence: str) -> list[str]:
    return [e.source for e in glossary.matches(sentence)]


@pytest.mark.parametrize(
    ("term", "sentence", "found"),
    [
        ("court", "The Court ruled.", True),  # case
        ("court", "Two courts ruled.", True),  # plural
        ("court", "The court's ruling.", True),  # possessive
        ("court", "The courtyard was empty.", False),  # whole words only
        ("art", "a party of artists", False),
        ("policy", "new policies", True),  # y -> ies
        # no verb endings: they make other words ("train" is no "training")
        ("train", "The training starts now.", False),
        ("train", "He was trained well.", False),
        ("train", "Two trains left.", True),
        ("vaccinated", "they vaccinated", True),
        ("supreme court", "the Supreme  Court said", True),  # any run of spaces
        ("well known", "a well-known fact", True),  # hyphen between words
        ("court", "", False),
        ("COVID-19", "covid-19 cases rose", True),
        ("Delhi", "New Delhi's air", True),
        ("cat", "concatenate", False),
        # never part of an address (newcomer review: the link came back changed)
        ("court", "Visit https://example.com/court today.", False),
        ("court", "Write to court@example.com now.", False),
        ("court", "See court.pdf and the court.", True),  # the second "court" is a word
        ("example", "Visit www.example.com now.", False),
        ("example.com", "Visit example.com now.", True),  # a whole address may be a term
    ],
)
def test_when_a_term_occurs(term: str, sentence: str, found: bool) -> None:
    glossary = Glossary.from_pairs([(term, "x")])
    assert bool(glossary.matches(sentence)) is found


def test_overlapping_terms_the_longest_wins_and_each_entry_is_required_once() -> None:
    glossary = Glossary.from_pairs(
        [("court", "अदालत"), ("supreme court", "सर्वोच्च न्यायालय"), ("ruled", "फ़ैसला")]
    )
    sentence = "The Supreme Court ruled that the court ruled."
    assert sources(glossary, sentence) == ["supreme court", "ruled", "court"]
    assert glossary.phrases([sentence, "nothing here"]) == [
        ["सर्वोच्च न्यायालय", "फ़ैसला", "अदालत"],
        [],
    ]


def test_a_term_given_twice_with_two_translations_is_refused_naming_both(tmp_path: Path) -> None:

    Glossary.from_pairs([("policy", "नीति"), ("Policy", "नीति")])  # the same twice: harmless
    with pytest.raises(DataError, match=r"entry 2: the term 'Policy' is also glossary entry 0"):
        Glossary.from_pairs([("policy", "नीति"), ("court", "अदालत"), ("Policy", "पॉलिसी")])
    path = tmp_path / "terms.tsv"
    path.write_text("policy\tनीति\n# a comment\n\npolicy\tपॉलिसी\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path}:4: .* is also {path}:1"):
        Glossary.from_tsv(path)


def test_merged_glossaries_let_the_second_decide_a_shared_term() -> None:
    server = Glossary.from_pairs([("court", "अदालत"), ("law", "क़ानून")])
    request = Glossary.from_pairs([("Court", "न्यायालय")])
    merged = server.merged(request)
    assert sorted((e.source, e.target) for e in merged.entries) == [
        ("Court", "न्यायालय"),
        ("law", "क़ानून"),
    ]
    assert server.merged(None) is server


@pytest.mark.parametrize(
    ("translation", "used"),
    [
        ("भारतीय रेलमार्ग कई गाते हैं।", False),  # issue 34, item 3: glued into a longer word
        ("भारतीय रेल मार्ग कई ट्रेनें चलाती है।", True),
        ("यह भारतीय रेल।", True),
        ("भारतीय रेलें", False),  # a vowel sign glued on is part of the word
        ("(भारतीय रेल)", True),
        ("अभारतीय रेल", False),  # nor at the start
        ("भारतीय रेलमार्ग और भारतीय रेल", True),  # a later occurrence is whole
    ],
)
def test_a_term_is_used_only_as_a_whole_word(translation: str, used: bool) -> None:
    assert used_in("भारतीय रेल", translation) is used


def test_used_lists_the_occurring_terms_with_whether_each_was_used() -> None:
    glossary = Glossary.from_pairs([("Indian Railways", "भारतीय रेल"), ("train", "ट्रेन")])
    assert glossary.used("Indian Railways runs many trains.", "भारतीय रेलमार्ग कई ट्रेन") == [
        (GlossaryEntry("Indian Railways", "भारतीय रेल"), False),
        (GlossaryEntry("train", "ट्रेन"), True),
    ]


def test_a_tsv_glossary_is_read_with_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "terms.tsv"
    path.write_text("# term\ttranslation\n\ncourt\tअदालत\n  vaccine \t टीका \n", encoding="utf-8")
    glossary = Glossary.from_tsv(path)
    assert glossary.entries == (GlossaryEntry("court", "अदालत"), GlossaryEntry("vaccine", "टीका"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"court\n", "terms.tsv:1: expected 'term<TAB>translation'"),
        (b"ok\tfine\ncourt\t\n", "terms.tsv:2: expected 'term<TAB>translation'"),
        (b"a\tb\tc\n", "terms.tsv:1: expected"),
        (b"ok\tfine\n\xff\xfe\tx\n", "terms.tsv:2: not valid UTF-8"),
        (b"x" * 300 + b"\ty\n", "terms.tsv:1: the term is longer than 200"),
    ],
)
def test_a_bad_glossary_line_is_named(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "terms.tsv"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        Glossary.from_tsv(path)


def test_a_missing_glossary_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read the glossary"):
        Glossary.from_tsv(tmp_path / "none.tsv")


def test_empty_entries_are_refused() -> None:
    with pytest.raises(DataError, match="entry 0: the term and its translation may not be empty"):
        Glossary.from_pairs([("court", "  ")])


@pytest.mark.slow  # several seconds (a fit / the tiny model's training): not in make test-fast
def test_the_translator_uses_every_required_translation(tiny_enhi_model: Path) -> None:
    from anuvad.inference.translator import Translator

    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    tok = translator.tgt_tokenizer
    # Phrases the tiny model's 16-piece vocabulary can spell (and would not write by itself).
    pieces = [i for i in range(4, tok.vocab_size) if tok.id_to_piece([i])[0] != "▁"]
    first, second = tok.decode(pieces[:2]), tok.decode(pieces[-2:][::-1])
    glossary = Glossary.from_pairs([("home", first), ("weather", second)])
    texts = ["I am going home.", "The weather is nice today.", "Please sit down."]
    # The matcher finds both terms (else the checks below would pass having checked nothing).
    assert glossary.phrases(texts) == [[first], [second], []]
    for beam in (1, 4):
        settings = translator.settings(beam_size=beam, nbest=beam, no_repeat_ngram_size=3)
        results = translator.translate(texts, settings, glossary=glossary)
        plain = translator.translate(texts, settings)
        for text, result in zip(texts, results, strict=True):
            for phrase in glossary.phrases([text])[0]:
                assert all(used_in(phrase, c.text) for c in result.nbest), (phrase, result.nbest)
        assert results[2].text == plain[2].text  # no term: the same translation


def test_a_translation_the_vocabulary_cannot_spell_is_refused(tiny_enhi_model: Path) -> None:
    from anuvad.inference.translator import Translator

    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    glossary = Glossary.from_pairs([("home", "ঘর")])  # Bengali: not in the vocabulary
    with pytest.raises(DataError, match="translation 'ঘর' of 'home' has characters"):
        translator.translate(["I am going home."], glossary=glossary)


def test_the_ctranslate2_engine_refuses_a_glossary_naming_the_torch_engine(
    tiny_enhi_model: Path,
) -> None:
    pytest.importorskip("ctranslate2")
    from anuvad.errors import ConfigError
    from anuvad.inference.engine import load_engine

    engine = load_engine(tiny_enhi_model, engine="ctranslate2", device="cpu")
    with pytest.raises(ConfigError, match="needs the torch engine"):
        engine.translate(["home"], glossary=Glossary.from_pairs([("home", "घर")]))


def test_a_byte_order_mark_is_not_part_of_the_first_term(tmp_path: Path) -> None:
    # Windows editors save "UTF-8" with a BOM: it made the first term "\ufeffcourt" (never
    # found in a sentence) or a first comment line malformed.
    path = tmp_path / "terms.tsv"
    path.write_bytes("\ufeffcourt\tन्यायालय\ngovernment\tहुकूमत\n".encode())
    assert [(e.source, e.target) for e in Glossary.from_tsv(path).entries] == [
        ("court", "न्यायालय"),
        ("government", "हुकूमत"),
    ]
    path.write_bytes("\ufeff# my terms\ncourt\tन्यायालय\n".encode())
    assert len(Glossary.from_tsv(path)) == 1


def test_a_term_translated_into_another_script_is_copied_behind_a_placeholder() -> None:
    """API review: "Supreme Court" → "SC" in Hindi came out "दिल्ली में सर्वोच्च न्यायालय है
    Stumbrion Sthaver St in पर in Delform SC।": required letter by letter, the Latin target drew
    junk; behind "X1", as a marked name, it is copied. A Devanagari target stays a term."""
    from anuvad.config import TokenizerConfig
    from anuvad.data.tokenizer import train_tokenizer
    from anuvad.inference.placeholders import reveal
    from anuvad.inference.required import requirements
    from anuvad.inference.verbatim import PhraseEncoder, Verbatim

    corpus = ["दिल्ली में अदालत है SC X1 X2 Z1 Rohit Sharma 85"] * 20
    encoder = PhraseEncoder(train_tokenizer(corpus, TokenizerConfig(model_type="char"), 60))
    glossary = Glossary.from_pairs([("Supreme Court", "SC"), ("court", "अदालत")])
    text = "The Supreme Court and the court are in Delhi."
    found = requirements(text, glossary, Verbatim(langs=("en", "hi")), encoder)
    assert found.hidden is not None and found.hidden.text == "The X1 and the court are in Delhi."
    assert found.hidden.addresses == ("SC",)
    assert encoder.term("अदालत") in found.phrases and encoder.term("X1") in found.phrases
    assert reveal("X1 और अदालत दिल्ली में हैं।", found.hidden) == "SC और अदालत दिल्ली में हैं।"
    # into a Latin-script language (or without a copying policy) a Latin target is a term
    plain = requirements(text, glossary, None, encoder)
    assert plain.hidden is None and encoder.term("SC") in plain.phrases
