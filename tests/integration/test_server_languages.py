"""The wrong language is noticed (issue 34, item 5): ``POST /detect`` says which served source
language a text is written in; ``/translate``, its stream and ``/attention`` route a text that
names no model to the model that reads it, and refuse one sent to a model that cannot (English
left in the box labelled Hindi came back as "Tayayay + 4.")."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servers import CountingTranslator

from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

ENGLISH = "The sky is blue."
HINDI = "कप्तान ने 85 रन बनाए।"


def labelled(model: Path, name: str, src: str, tgt: str) -> CountingTranslator:
    """The tiny model, served as if it translated ``src`` → ``tgt`` under config ``name``."""
    translator = CountingTranslator(Translator.from_file(model, device="cpu"))
    config = translator.model_file.config
    data = dataclasses.replace(config.data, src_lang=src, tgt_lang=tgt)
    translator.model_file.config = dataclasses.replace(config, name=name, data=data)
    return translator


@pytest.fixture(scope="module")
def both(tiny_enhi_model: Path) -> tuple[CountingTranslator, CountingTranslator]:
    return (
        labelled(tiny_enhi_model, "tiny_enhi", "en", "hi"),
        labelled(tiny_enhi_model, "tiny_hien", "hi", "en"),
    )


@pytest.fixture(scope="module")
def client(both: tuple[CountingTranslator, CountingTranslator]) -> Iterator[TestClient]:
    with TestClient(create_app(list(both))) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def one_direction(tiny_enhi_model: Path) -> Iterator[TestClient]:
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    with TestClient(create_app(translator)) as test_client:
        yield test_client


def test_detect_names_the_language_and_the_model_that_reads_it(client: TestClient) -> None:
    hindi = client.post("/detect", json={"text": HINDI})
    assert hindi.status_code == 200, hindi.text
    assert hindi.json() == {
        "language": "hi",
        "confidence": 1.0,
        "candidates": [
            {"language": "hi", "confidence": 1.0},
            {"language": "en", "confidence": 0.0},
        ],
        "model": "tiny_hien",
    }
    english = client.post("/detect", json={"text": f"{ENGLISH} ({HINDI[:6]})"}).json()
    assert english["language"] == "en" and english["model"] == "tiny_enhi"
    assert 0.5 < english["confidence"] < 1
    assert sum(c["confidence"] for c in english["candidates"]) == pytest.approx(1, abs=1e-3)
    digits = client.post("/detect", json={"text": "85 + 139"}).json()
    assert digits["language"] is None and digits["model"] is None and digits["confidence"] == 0
    assert client.post("/detect", json={"text": " "}).status_code == 422
    assert client.post("/detect", json={"q": "x"}).status_code == 422


def test_a_hindi_text_that_names_no_model_goes_to_the_model_that_reads_hindi(
    client: TestClient, both: tuple[CountingTranslator, CountingTranslator]
) -> None:
    enhi, hien = both
    enhi.calls.clear()
    hien.calls.clear()
    response = client.post("/translate", json={"text": HINDI, "decoding": "greedy"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model"] == "tiny_hien" and body["detected_language"] == "hi"
    assert hien.calls == [[HINDI]] and enhi.calls == []  # never the English→Hindi model
    english = client.post("/translate", json={"text": ENGLISH, "decoding": "greedy"}).json()
    assert english["model"] == "tiny_enhi" and english["detected_language"] == "en"
    stream = client.post("/translate/stream", json={"text": HINDI, "decoding": "greedy"})
    assert '"model":"tiny_hien"' in stream.text.split("\n")[0]
    attention = client.post("/attention", json={"text": HINDI, "decoding": "greedy"})
    assert attention.status_code == 200 and attention.json()["model"] == "tiny_hien"


def test_a_text_sent_to_a_model_that_cannot_read_it_is_refused_naming_the_one_that_can(
    client: TestClient, both: tuple[CountingTranslator, CountingTranslator]
) -> None:
    enhi, hien = both
    enhi.calls.clear()
    hien.calls.clear()
    for path in ("/translate", "/translate/stream", "/attention"):
        response = client.post(path, json={"text": ENGLISH, "model": "tiny_hien"})
        assert response.status_code == 422, (path, response.text)
        error = response.json()
        assert error["error"] == (
            "text: the text is written in English, but model 'tiny_hien' translates from Hindi; "
            "send it with model 'tiny_enhi' (English → Hindi), or leave `model` out to have "
            "the server choose"
        ), path
        assert error["details"][0]["field"] == "text"
    # Mostly English (the default model's language): the Hindi text is refused.
    mixed = client.post("/translate", json={"text": [f"{ENGLISH} {ENGLISH} {ENGLISH}", HINDI]})
    assert mixed.status_code == 422
    assert mixed.json()["error"] == (
        "text: text[1] is written in Hindi, but model 'tiny_enhi' translates from English; send "
        "it with model 'tiny_hien' (Hindi → English); one request goes to one model: send the "
        "texts of each language in a request of their own"
    )  # not advice that sends the English text to the Hindi model next
    assert enhi.calls == [] and hien.calls == []  # nothing translated


def test_a_text_no_served_model_reads_is_refused(one_direction: TestClient) -> None:
    response = one_direction.post("/translate", json={"text": HINDI})
    assert response.status_code == 422
    assert response.json()["error"] == (
        "text: the text is written in the Devanagari script, but model 'tiny_enhi' translates "
        "from English; no served model translates from its language (they translate from "
        "English)"
    )
    greek = one_direction.post("/translate", json={"text": "Καλημέρα κόσμε"})
    assert greek.status_code == 422
    assert "is not written in the Latin script, but model 'tiny_enhi'" in greek.json()["error"]
    # Mostly English with a Hindi word, numbers, symbols: translated.
    for text in (f"{ENGLISH} ({HINDI[:6]})", "85 + 139 = 224", ENGLISH):
        assert one_direction.post("/translate", json={"text": text}).status_code == 200, text


def test_hindi_in_latin_letters_is_refused_saying_how_to_write_it(
    client: TestClient, both: tuple[CountingTranslator, CountingTranslator]
) -> None:
    """Sent with no model, "mera naam Ravi hai" went to the English model as English."""
    enhi, hien = both
    enhi.calls.clear()
    hien.calls.clear()
    for model in (None, "tiny_enhi", "tiny_hien"):
        body = {"text": ["The sky is blue.", "mera naam Ravi hai"], "model": model}
        response = client.post("/translate", json=body)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error.startswith("text: text[1] looks like Hindi written in Latin letters")
        assert "write it in Devanagari" in error
    assert enhi.calls == [] and hien.calls == []
