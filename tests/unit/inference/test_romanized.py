"""Hindi in Latin letters told apart from English (inference.romanized)."""

from __future__ import annotations

import pytest

from anuvad.inference.romanized import CORE, WORDS, romanized_hindi


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
     "The Ki and Ke islands are to the south.", "Hai Phong is a city in Vietnam.",
     "It was a mere hum.", "A mere hue.", "Lena and Jana", "Thanks, Abhi and Lena!",
     "Ko Samui and Ko Phangan", "Li Hui and Zhang Hua", "Hai Phong and Hue",
     "Mein Kampf, a mere book", "MATLAB toh", "kya"],
)  # fmt: skip
def test_english_and_devanagari_are_not(text: str) -> None:
    assert not romanized_hindi(text)


def test_no_listed_word_is_a_common_english_word_and_the_core_is_listed() -> None:
    english = set(
        [
            "to",
            "main",
            "par",
            "do",
            "the",
            "a",
            "me",
            "us",
            "he",
            "has",
            "have",
            "in",
            "on",
            "mere",
            "hum",
            "hue",
            "hun",
            "tum",
        ]
    )
    names = set(["lena", "jana", "abhi", "gaya", "dena", "kal", "ji", "han"])
    assert not WORDS & (english | names)
    assert CORE <= WORDS
