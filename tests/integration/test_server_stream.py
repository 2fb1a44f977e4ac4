"""``POST /translate/stream`` (issue 34, item 9): a long text's sentences arrive as the model
translates them, as NDJSON lines (start, sentence..., done or error), with the answer
``/translate`` gives; over TestClient, a real socket (uvicorn) and ``anuvad serve``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from servers import CountingTranslator, StallingTranslator, anuvad_serve, running_server

from anuvad.inference.translation import Translation
from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

SENTENCES = ["I am going home.", "What is your name?", "The sky is blue.", "Open the window."]
# Beam 16: the server's rows x steps budget gives 8 sentences per model call (MAX_ROW_STEPS),
# so 12 sentences are two model calls.
LONG = {"text": [" ".join(SENTENCES), " ".join(SENTENCES * 2)], "beam_size": 16}


@pytest.fixture(scope="module")
def translator(tiny_enhi_model: Path) -> CountingTranslator:
    return CountingTranslator(Translator.from_file(tiny_enhi_model, device="cpu"))


@pytest.fixture(scope="module")
def client(translator: CountingTranslator) -> Iterator[TestClient]:
    with TestClient(create_app(translator)) as test_client:
        yield test_client


def events(lines: Sequence[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]


def without_timing(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "elapsed_ms"}


def test_the_stream_sends_every_sentence_then_the_answer_translate_gives(
    client: TestClient, translator: CountingTranslator
) -> None:
    plain = client.post("/translate", json=LONG)
    assert plain.status_code == 200, plain.text
    translator.calls.clear()
    response = client.post("/translate/stream", json=LONG)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = response.text.split("\n")
    assert lines[-1] == "" and all(lines[:-1])  # one JSON object per line, newline-terminated
    start, *sentences, done = events(lines)
    assert start == {
        "event": "start",
        "total": 12,
        "sentences": [4, 8],
        "model": "tiny_enhi",
        "detected_language": "en",
    }
    assert [len(call) for call in translator.calls] == [8, 4]  # two model calls: two batches
    assert [e["event"] for e in sentences] == ["sentence"] * 12
    assert [e["done"] for e in sentences] == list(range(1, 13))
    assert {e["total"] for e in sentences} == {12}
    answer = done["response"]
    assert done["event"] == "done"
    assert without_timing(answer) == without_timing(plain.json())  # the same answer
    # Each sentence event is that sentence of the answer, and every sentence comes once.
    places = sorted((e["text"], e["sentence"]) for e in sentences)
    assert places == [(0, j) for j in range(4)] + [(1, j) for j in range(8)]
    for event in sentences:
        sentence = answer["translations"][event["text"]]["sentences"][event["sentence"]]
        assert event["result"] == sentence


def test_a_request_refused_before_the_stream_gets_its_status_and_error_body(
    client: TestClient,
) -> None:
    bad = client.post("/translate/stream", json={"text": "x", "beam_size": 99})
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/json"
    assert "beam_size" in bad.json()["error"]
    unsplit = client.post(
        "/translate/stream", json={"text": " ".join(SENTENCES), "split_sentences": False}
    )
    assert unsplit.status_code == 422 and "split_sentences" in unsplit.json()["error"]
    form = client.post(
        "/translate/stream", content=b"text=x", headers={"content-type": "text/plain"}
    )
    assert form.status_code == 415


def test_a_failure_after_the_stream_began_is_its_last_line(tiny_enhi_model: Path) -> None:
    stalling = StallingTranslator(Translator.from_file(tiny_enhi_model, device="cpu"))
    with TestClient(create_app(stalling, request_timeout_s=0.3)) as client:
        response = client.post("/translate/stream", json={"text": "STALL here."})
        assert response.status_code == 200
        start, error = events(response.text.split("\n"))
    assert start["event"] == "start" and start["total"] == 1
    assert error["event"] == "error" and error["status"] == 504
    assert "0.3 s limit per request" in error["error"]
    assert stalling.stopped.wait(5)  # and its search was stopped


class GatedTranslator(CountingTranslator):
    """Holds its second model call until ``gate`` is set (the test sets it once it has read
    the first call's sentences: a stream that sent nothing before the end would never)."""

    def __init__(self, other: Translator) -> None:
        super().__init__(other)
        self.gate = threading.Event()

    def translate(self, texts: Sequence[str], *args: Any, **kwargs: Any) -> list[Translation]:
        if self.calls and not self.gate.wait(30):
            raise RuntimeError("the first call's sentences were not streamed")
        return super().translate(texts, *args, **kwargs)


def test_sentences_arrive_while_the_rest_is_still_translating(tiny_enhi_model: Path) -> None:
    """Over a real socket: the first model call's 8 sentences reach the client while the
    second call has not started (it waits for the client to have read them)."""
    gated = GatedTranslator(Translator.from_file(tiny_enhi_model, device="cpu"))
    with (
        running_server(create_app(gated)) as (_, port, _thread),
        httpx.stream(
            "POST", f"http://127.0.0.1:{port}/translate/stream", json=LONG, timeout=60
        ) as response,
    ):
        assert response.status_code == 200
        seen: list[dict[str, Any]] = []
        for line in response.iter_lines():
            seen.append(json.loads(line))
            if len(seen) == 1 + 8:  # the start line and the first call's sentences
                assert len(gated.calls) == 1
                gated.gate.set()
    assert [e["event"] for e in seen] == ["start"] + ["sentence"] * 12 + ["done"]
    assert len(gated.calls) == 2


def test_a_reader_that_goes_away_stops_the_translation(tiny_enhi_model: Path) -> None:
    stalling = StallingTranslator(Translator.from_file(tiny_enhi_model, device="cpu"))
    app = create_app(stalling, request_timeout_s=None)  # only the disconnect can stop it
    with running_server(app) as (_, port, _thread):
        with httpx.stream(
            "POST", f"http://127.0.0.1:{port}/translate/stream", json={"text": "STALL forever."}
        ) as response:
            lines = response.iter_lines()  # kept: dropping it closes the connection
            assert json.loads(next(lines))["event"] == "start"
            assert stalling.started.wait(30)  # decoding
        assert stalling.stopped.wait(10)  # stopped after the reader closed the connection


def test_anuvad_serve_streams(tiny_enhi_model: Path) -> None:
    with (
        anuvad_serve(tiny_enhi_model) as url,
        httpx.stream("POST", f"{url}/translate/stream", json=LONG, timeout=60) as response,
    ):
        assert response.headers["content-type"] == "application/x-ndjson"
        seen = [json.loads(line) for line in response.iter_lines()]
    assert [e["event"] for e in seen] == ["start"] + ["sentence"] * 12 + ["done"]
    texts = seen[-1]["response"]["translations"]
    assert [t["source"] for t in texts] == LONG["text"]


def test_the_schema_publishes_the_stream_s_lines(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    answers = spec["paths"]["/translate/stream"]["post"]["responses"]
    schema = answers["200"]["content"]["application/x-ndjson"]["schema"]
    assert schema == {"$ref": "#/components/schemas/StreamLine"}
    line = spec["components"]["schemas"]["StreamLine"]
    assert set(line["discriminator"]["mapping"]) == {"start", "sentence", "done", "error"}
    body = spec["paths"]["/translate/stream"]["post"]["requestBody"]["content"]
    assert body["application/json"]["schema"] == {"$ref": "#/components/schemas/TranslateRequest"}
    assert {"422", "503"} <= set(answers)
