"""Every sentence in has its translation out, whatever its case, on every door of the server
(issue 40 item 1): a paragraph in sentence case, in lower case (as typed in chats) and in
capitals reaches the model as its three sentences through plain /translate, HTML, the stream
and the LibreTranslate-compatible API, and each answer has three translated sentences."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servers import CountingTranslator

from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

SENTENCES = [
    "The train to Delhi was late by two hours.",
    "Passengers waited on the platform in the heat.",
    "The railway apologised for the delay.",
]
FORMS = {
    "as written": " ".join(SENTENCES),
    "lower case": " ".join(SENTENCES).lower(),
    "capitals": " ".join(SENTENCES).upper(),
}


@pytest.fixture(scope="module")
def translator(tiny_enhi_model: Path) -> CountingTranslator:
    return CountingTranslator(Translator.from_file(tiny_enhi_model, device="cpu"))


@pytest.fixture(scope="module")
def client(translator: CountingTranslator) -> Iterator[TestClient]:
    with TestClient(create_app(translator)) as test_client:
        yield test_client


def model_saw(translator: CountingTranslator) -> list[str]:
    """The sentences the model was given since the last clear, in order."""
    return [text for call in translator.calls for text in call]


@pytest.mark.parametrize("form", FORMS)
def test_plain_and_html_texts_reach_the_model_sentence_by_sentence(
    client: TestClient, translator: CountingTranslator, form: str
) -> None:
    text = FORMS[form]
    translator.calls.clear()
    answer = client.post("/translate", json={"text": text})
    assert answer.status_code == 200, answer.text
    (out,) = answer.json()["translations"]
    assert [s["source"].lower() for s in out["sentences"]] == [s.lower() for s in SENTENCES]
    assert len(model_saw(translator)) == 3
    translator.calls.clear()
    html = client.post("/translate", json={"text": f"<p>{text}</p>", "format": "html"})
    assert html.status_code == 200, html.text
    (page,) = html.json()["translations"]
    assert len(page["sentences"]) == 3 and len(model_saw(translator)) == 3
    assert page["text"].startswith("<p>") and page["text"].endswith("</p>")


@pytest.mark.parametrize("form", FORMS)
def test_the_stream_sends_one_event_per_sentence(
    client: TestClient, translator: CountingTranslator, form: str
) -> None:
    translator.calls.clear()
    response = client.post("/translate/stream", json={"text": FORMS[form]})
    assert response.status_code == 200, response.text
    events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    assert [e["event"] for e in events] == ["start", "sentence", "sentence", "sentence", "done"]
    assert len(events[-1]["response"]["translations"][0]["sentences"]) == 3
    assert len(model_saw(translator)) == 3


@pytest.mark.parametrize("form", FORMS)
def test_the_libretranslate_door_translates_every_sentence(
    client: TestClient, translator: CountingTranslator, form: str
) -> None:
    translator.calls.clear()
    body = {"q": FORMS[form], "source": "en", "target": "hi"}
    response = client.post("/libretranslate/translate", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["translatedText"].strip()
    assert [s.lower() for s in model_saw(translator)] == [s.lower() for s in SENTENCES]
