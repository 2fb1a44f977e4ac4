"""``names: "model"`` in ``POST /translate`` (issue 39 item 7), on the shipped models: a name the
first translation missed comes back in the model's own spelling, required; nothing else
changes; refused where it cannot be given."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from anuvad.inference.names import SLACK_WORDS, find_names, usable_spelling
from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "trained_models"
ENHI, HIEN = sorted(SHIPPED.glob("enhi_*.pt")), sorted(SHIPPED.glob("hien_*.pt"))

pytestmark = [
    pytest.mark.skipif(not (ENHI and HIEN), reason="the shipped models are not in this checkout"),
    pytest.mark.usefixtures("one_thread"),
]

TEXTS = [
    "Captain Rohit Sharma scored 85 runs.",
    "Indian Railways will run 250 additional trains.",
    "The monsoon reached Kerala three days early this year.",
    "The weather is nice today.",
]


@pytest.fixture(scope="module")
def translator() -> Translator:
    return Translator.from_file(ENHI[-1], device="cpu", confidence=False)


@pytest.fixture(scope="module")
def client(translator: Translator) -> Iterator[TestClient]:
    reverse = Translator.from_file(HIEN[-1], device="cpu", confidence=False)
    with TestClient(create_app([translator, reverse])) as test_client:
        yield test_client


def texts_of(answer: dict[str, Any]) -> list[str]:
    return [t["text"] for t in answer["translations"]]


def test_a_missed_name_comes_back_in_the_models_spelling(
    client: TestClient, translator: Translator
) -> None:
    plain = client.post("/translate", json={"text": TEXTS, "scores": False})
    off = client.post("/translate", json={"text": TEXTS, "scores": False, "names": "off"})
    named = client.post("/translate", json={"text": TEXTS, "scores": False, "names": "model"})
    assert plain.status_code == off.status_code == named.status_code == 200, named.text
    assert texts_of(off.json()) == texts_of(plain.json())  # "off" is the default
    greedy = translator.settings(beam_size=1, nbest=1)
    changed = 0
    for source, first, second in zip(
        TEXTS, texts_of(off.json()), texts_of(named.json()), strict=True
    ):
        names = find_names(source)
        spellings = [usable_spelling(n, translator.translate([n], greedy)[0].text) for n in names]
        missed = [s for s in spellings if s and s not in first]
        if not missed:
            assert second == first, source  # nothing to add: the first translation stays
            continue
        if second != first:  # retranslated: every missed name is there, and it did not run on
            changed += 1
            assert all(s in second for s in missed), (source, second)
            extra = sum(len(s.split()) for s in missed) + SLACK_WORDS
            assert len(second.split()) <= len(first.split()) + extra
    assert changed >= 1  # the shipped model misses names in these sentences


def test_names_are_refused_for_another_pair_and_on_the_stream(client: TestClient) -> None:
    hindi = client.post("/translate", json={"text": "आज मौसम अच्छा है।", "names": "model"})
    assert hindi.status_code == 422, hindi.text
    assert hindi.json()["details"][0]["field"] == "names"
    assert "names writes English names in Devanagari" in hindi.json()["error"]
    stream = client.post("/translate/stream", json={"text": TEXTS[0], "names": "model"})
    assert stream.status_code == 422 and stream.json()["details"][0]["field"] == "names"
