"""Documents: sentence splitting keeps every character's place; reassembly keeps the layout."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from anuvad.inference.documents import (
    Segment,
    assemble,
    sentence_splitter,
    split_document,
    translate_documents,
)

DOCUMENT = (
    "  A man is riding a horse. Two children are playing football in the park.\n"
    "\n"
    'Dr. Smith said "Hi!" to the U.S. delegation.   The sky is blue.\n'
    "A headline without a full stop\n"
)


def test_segments_point_at_their_text_and_only_whitespace_lies_between() -> None:
    segments = split_document(DOCUMENT, "en")
    assert [s.text for s in segments] == [
        "A man is riding a horse.",
        "Two children are playing football in the park.",
        'Dr. Smith said "Hi!" to the U.S. delegation.',
        "The sky is blue.",
        "A headline without a full stop",
    ]
    assert [s.line for s in segments] == [0, 0, 2, 2, 3]
    pos = 0
    for segment in segments:
        assert DOCUMENT[segment.start : segment.end] == segment.text
        assert not DOCUMENT[pos : segment.start].strip()
        pos = segment.end
    assert not DOCUMENT[pos:].strip()


def test_assembling_the_sources_gives_the_document_back() -> None:
    segments = split_document(DOCUMENT, "en")
    assert assemble(DOCUMENT, segments, [s.text for s in segments]) == DOCUMENT
    upper = assemble(DOCUMENT, segments, [s.text.upper() for s in segments])
    assert upper.split("\n")[1] == "" and upper.startswith("  A MAN IS RIDING A HORSE. TWO")
    assert "DELEGATION.   THE SKY" in upper  # the spacing between sentences is kept
    with pytest.raises(ValueError, match="2 segments but 1 translations"):
        assemble("a. b.", split_document("One. Two.", "en"), ["x"])


def test_inner_spacing_changed_by_the_splitter_is_kept_from_the_source() -> None:
    text = "Then   it\trained. It stopped."
    segments = split_document(text, "en")
    assert [s.text for s in segments] == ["Then   it\trained.", "It stopped."]


def test_hindi_is_split_after_danda_question_and_exclamation_marks() -> None:
    text = "मौसम अच्छा है। क्या तुम आओगे? हाँ!  “ठीक है।” अंत"
    segments = split_document(text, "hi")
    assert [s.text for s in segments] == [
        "मौसम अच्छा है।",
        "क्या तुम आओगे?",
        "हाँ!",
        "“ठीक है।”",
        "अंत",
    ]
    assert sentence_splitter("hi") is sentence_splitter("hi")


def test_a_splitter_that_changes_text_leaves_the_line_whole() -> None:
    def rewriting(line: str) -> list[str]:
        return [line.replace("colour", "color")]

    segments = split_document("  The colour. \nNext line.", "en", rewriting)
    assert segments == [Segment(2, 13, "The colour.", 0), Segment(15, 25, "Next line.", 1)]
    assert split_document(" \n\n  ", "en") == []


@dataclass
class _Result:
    text: str


def test_all_sentences_of_all_documents_go_in_one_call() -> None:
    calls: list[list[str]] = []

    def translate(sentences: list[str]) -> list[_Result]:
        calls.append(sentences)
        return [_Result(f"<{s}>") for s in sentences]

    docs = ["One. Two.", "", "Three.\n\nFour. Five."]
    results = translate_documents(docs, "en", translate)
    assert calls == [["One.", "Two.", "Three.", "Four.", "Five."]]
    assert [r.text for r in results] == ["<One.> <Two.>", "", "<Three.>\n\n<Four.> <Five.>"]
    assert [len(r.sentences) for r in results] == [2, 0, 3]
    assert results[2].sentences[1].text == "<Four.>" and results[2].segments[1].line == 2
    assert translate_documents(["  "], "en", translate)[0].text == "  "


def test_a_sentence_too_long_for_the_model_is_cut_at_clause_boundaries() -> None:
    from anuvad.errors import InputTooLongError

    text = "Short one. " + "First part, second part; third part: and the last part - the end."
    segments = split_document(text, "en", fits=lambda s: len(s) <= 30)
    assert [s.text for s in segments] == [
        "Short one.",
        "First part, second part;",
        "third part: and the last part",
        "- the end.",
    ]
    assert all(len(s.text) <= 30 and text[s.start : s.end] == s.text for s in segments)
    assert assemble(text, segments, [s.text for s in segments]) == text
    with pytest.raises(InputTooLongError, match=r"line 2: .* longer than the model can"):
        split_document("ok\n" + "x" * 40 + ", y.", "en", fits=lambda s: len(s) <= 30)
