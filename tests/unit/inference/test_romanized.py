"""Hindi in Latin letters told apart from English (inference.romanized)."""

from __future__ import annotations

import pytest

from anuvad.inference.romanized import WORDS, romanized_hindi


@pytest.mark.parametrize(
    "text",
    ["mera naam Ravi hai", "kya haal hai", "aap kaise ho?", "Main theek hoon, aap batao",
     "kal subah 9 baje meeting hai", "bhai kahan ho", "train late hai yaar", "KYA HAAL HAI"],
)  # fmt: skip
def test_hindi_in_latin_letters_is_found(text: str) -> None:
    assert romanized_hindi(text)


@pytest.mark.parametrize(
    "text",
    ["Namaste, how are you?", "I love aloo paratha.", "Thank you", "ok", "", "123 456",
     "Do you want to go to the main market?", "मेरा नाम रवि है", "mera naam रवि है",
     "The Ki and Ke islands are to the south.", "Hai Phong is a city in Vietnam."],
)  # fmt: skip
def test_english_and_devanagari_are_not(text: str) -> None:
    assert not romanized_hindi(text)


def test_no_listed_word_is_a_common_english_word() -> None:
    english = {"to", "main", "par", "do", "the", "a", "me", "us", "he", "has", "have", "in", "on"}
    assert not WORDS & english
