"""Shouted and title-case sentences are recased before translation; other text is untouched."""

from __future__ import annotations

import pytest

from anuvad.config import TokenizerConfig
from anuvad.data.tokenizer import Tokenizer, train_tokenizer
from anuvad.inference.casing import fold_unreadable, needs_recasing, recase

# Sentence-case text where the names and the acronym occur only as written here, so the
# vocabulary learns "Delhi", "Rahul" and "NASA" with their capitals and the rest in lower case.
CORPUS = [
    "the train is late again today .",
    "the train to Delhi is late .",
    "Rahul took the train to Delhi .",
    "NASA sent a rocket to the moon .",
    "the rocket is late and the train is late .",
    "today Rahul is in Delhi with NASA .",
] * 30


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return train_tokenizer(CORPUS, TokenizerConfig(model_type="word"), 24)


@pytest.mark.parametrize(
    ("text", "judged"),
    [
        ("THE TRAIN IS LATE.", True),
        ("The Train Is Late To Delhi", True),
        ("NASA sent a rocket.", False),  # an acronym in a normal sentence
        ("Rahul took the train to Delhi.", False),  # names in a normal sentence
        ("OK", False),  # too short to judge
        ("ट्रेन देर से है।", False),  # a script without case
        ("", False),
    ],
)
def test_shouted_and_title_case_sentences_are_recognised(text: str, judged: bool) -> None:
    assert needs_recasing(text) is judged


def test_words_take_the_casing_the_vocabulary_knows(tokenizer: Tokenizer) -> None:
    assert recase("THE TRAIN TO DELHI IS LATE.", tokenizer) == "The train to Delhi is late."
    assert recase("RAHUL TOOK THE TRAIN.", tokenizer) == "Rahul took the train."
    assert recase("THE Train Is Late For NASA", tokenizer) == "The train is late for NASA"
    # At the start an acronym the vocabulary knows keeps its capitals.
    assert recase("NASA SENT A ROCKET TO THE MOON", tokenizer) == "NASA sent a rocket to the moon"


@pytest.mark.parametrize(
    "text",
    ["NASA sent a rocket to the moon.", "the train is late", "Rahul, 85 runs (2024)!", "x"],
)
def test_other_text_is_returned_unchanged(text: str, tokenizer: Tokenizer) -> None:
    assert recase(text, tokenizer) is text


def test_only_letters_change(tokenizer: Tokenizer) -> None:
    """Spacing, digits and punctuation stay exactly where they were."""
    text = "  THE TRAIN,  12:30 TO DELHI -- LATE!!\t"
    out = recase(text, tokenizer)
    assert out.lower() == text.lower() and out != text


def test_letters_the_tokenizer_cannot_read_are_folded_to_ones_it_can() -> None:
    """API review: "Škoda is a car brand." came back "⁇ डा एक कार ब्रांड है।"; letters the
    tokenizer reads ("é" here) and those whose base it cannot read stay as written."""
    chars = train_tokenizer(
        ["Skoda Lodz Ca va Strasse cafe and more é"] * 20, TokenizerConfig(model_type="char"), 40
    )
    text = "Škoda, Łódź, Ça va, Straße, café; 你好"
    assert fold_unreadable(text, chars) == "Skoda, Lodz, Ca va, Strasse, café; 你好"
    assert fold_unreadable("plain ascii", chars) == "plain ascii"
