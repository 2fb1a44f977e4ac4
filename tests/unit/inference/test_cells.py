"""The cells of a line: tabs, a table row's pipes, pipes between spaces where "|" is no danda."""

from __future__ import annotations

import pytest

from anuvad.inference.cells import cell_spans
from anuvad.inference.documents import assemble, split_document


def cells(line: str, lang: str) -> list[str]:
    return [line[a:b] for a, b in cell_spans(line, lang)]


@pytest.mark.parametrize(
    ("line", "lang", "expected"),
    [
        ("Home | About Us | Contact", "en", ["Home ", " About Us ", " Contact"]),
        ("| Delhi | 3.2 crore |", "en", ["", " Delhi ", " 3.2 crore ", ""]),
        ("a|b and a |b", "en", ["a|b and a |b"]),  # not between spaces: no cell
        ("1\tThe train | is late.", "en", ["1", "The train ", " is late."]),
        ("आज मौसम अच्छा है | हम पार्क जाएंगे |", "hi", ["आज मौसम अच्छा है | हम पार्क जाएंगे |"]),
        ("| शहर | आबादी |", "hi", ["", " शहर ", " आबादी ", ""]),  # a table row in any language
        ("होम\tसंपर्क", "hi", ["होम", "संपर्क"]),
        ("|---|:--:|", "en", []),  # the rule under a table's head
        # lettered options on one line: each a cell (given whole, "A) हाँ B) नहीं" → "A) No B")
        ("A) हाँ B) नहीं", "hi", ["A) हाँ ", "B) नहीं"]),
        ("Options: A) yes B) no C) maybe", "en", ["Options: ", "A) yes ", "B) no ", "C) maybe"]),
        ("Do you agree? (a) yes (b) no", "en", ["Do you agree? ", "(a) yes ", "(b) no"]),
        ("I have (a) a dog and (b) a cat.", "en", ["I have (a) a dog and (b) a cat."]),  # prose
        ("Plan A) works. B) fails.", "en", ["Plan A) works. B) fails."]),
        ("A) yes b) no", "en", ["A) yes b) no"]),  # one case
        (
            "A) one two three four five six seven eight nine B) no",
            "en",
            ["A) one two three four five six seven eight nine B) no"],
        ),  # an option too long
    ],
)
def test_the_cells_of_a_line(line: str, lang: str, expected: list[str]) -> None:
    assert cells(line, lang) == expected


def test_each_cell_is_translated_on_its_own_and_the_pipes_stay() -> None:
    """ "Home | About Us | Contact" came back "घर के बारे में जानकारी" (pipes and a cell lost);
    a Hindi line typed with "|" for the danda is still split into its sentences there."""
    text = "Home | About Us | Contact\n| City | Population |\n|---|---|"
    segments = split_document(text, "en")
    assert [s.text for s in segments] == ["Home", "About Us", "Contact", "City", "Population"]
    out = assemble(text, segments, ["घर", "हमारे बारे में", "संपर्क", "शहर", "आबादी"])
    assert out == "घर | हमारे बारे में | संपर्क\n| शहर | आबादी |\n|---|---|"
    hindi = split_document("आज मौसम अच्छा है | हम पार्क जाएंगे |", "hi")
    assert [s.text for s in hindi] == ["आज मौसम अच्छा है |", "हम पार्क जाएंगे |"]


def test_options_after_a_list_marker_are_cells_of_the_whole_line() -> None:
    """split_document takes "A) " as the line's list marker: the line still has its options."""
    assert [s.text for s in split_document("A) हाँ B) नहीं", "hi")] == ["हाँ", "नहीं"]
    text = "Do you agree? (a) yes (b) no\nI have (a) a dog and (b) a cat."
    found = split_document(text, "en")
    assert [s.text for s in found] == [
        "Do you agree?",
        "yes",
        "no",
        "I have (a) a dog and (b) a cat.",
    ]
    outputs = ["क्या आप सहमत हैं?", "हाँ", "नहीं", "मेरे पास (a) एक कुत्ता और (b) एक बिल्ली है।"]
    assert assemble(text, found, outputs) == (
        "क्या आप सहमत हैं? (a) हाँ (b) नहीं\nमेरे पास (a) एक कुत्ता और (b) एक बिल्ली है।"
    )
