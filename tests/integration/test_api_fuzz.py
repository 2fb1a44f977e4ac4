"""Schema fuzzing of the HTTP API on a tiny real model (schemathesis + hypothesis, bounded).

Requests generated from the published OpenAPI schema (``/openapi.json``) must be answered — the
schema states what the server enforces, the served model ids included — and arbitrary JSON must
get a 4xx that names the field, never a 5xx. Three rules a JSON Schema cannot state are the
only refusals allowed for a schema-valid request: the characters of all texts together (in the
field's description), a glossary translation the model's vocabulary cannot spell, and a text of
several sentences sent with split_sentences false (422 each).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

FUZZ = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,  # the same examples on every run: a failure reproduces
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FIELDS = ("text", "decoding", "beam_size", "nbest", "length_penalty", "early_stopping",
          "no_repeat_ngram_size", "model", "split_sentences")  # fmt: skip


@pytest.fixture(scope="module")
def client(tiny_enhi_model: Path) -> Iterator[TestClient]:
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    with TestClient(create_app(translator)) as test_client:
        yield test_client


def valid_bodies(client: TestClient, path: str) -> st.SearchStrategy[Any]:
    """Request bodies generated from the schema ``client``'s server publishes for ``path``."""
    schema = schemathesis.openapi.from_dict(client.get("/openapi.json").json())
    return schema[path]["POST"].as_strategy().map(lambda case: case.body)  # type: ignore[no-any-return]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
ANY_REQUEST = st.dictionaries(st.sampled_from((*FIELDS, "unknown")), JSON, max_size=5) | JSON


def test_the_schema_states_the_limits_and_the_served_models(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    request = schemas["TranslateRequest"]
    text = request["properties"]["text"]["anyOf"]
    assert {branch["type"] for branch in text} == {"string", "array"}
    assert all(b.get("maxLength") or b["items"]["maxLength"] for b in text)
    assert request["properties"]["beam_size"]["maximum"] == 16
    assert request.get("additionalProperties") is False
    for name in ("TranslateRequest", "AttentionRequest"):
        model = schemas[name]["properties"]["model"]["anyOf"]
        assert {"type": "string", "enum": ["tiny_enhi"]} in model


@FUZZ
@given(data=st.data())
def test_every_schema_valid_translate_request_is_answered(client: TestClient, data: Any) -> None:
    body = data.draw(valid_bodies(client, "/translate"))
    response = client.post("/translate", json=body)
    if response.status_code == 422:  # rules the schema cannot state (see the module docstring)
        error = response.json()["error"]
        rules = ("characters in all", "vocabulary lacks", "sentences, but with split_sentences")
        assert any(rule in error for rule in rules), (body, error)
        return
    assert response.status_code == 200, (body, response.text)
    texts = body["text"] if isinstance(body["text"], list) else [body["text"]]
    translations = response.json()["translations"]
    assert [t["source"] for t in translations] == texts  # none lost, none reordered


@FUZZ
@given(data=st.data())
def test_every_schema_valid_attention_request_is_answered(client: TestClient, data: Any) -> None:
    body = data.draw(valid_bodies(client, "/attention"))
    response = client.post("/attention", json=body)
    assert response.status_code == 200, (body, response.text)
    assert response.json()["source"] == body["text"]


@FUZZ
@given(body=ANY_REQUEST)
def test_arbitrary_json_gets_a_4xx_naming_the_field_never_a_5xx(
    client: TestClient, body: Any
) -> None:
    for path in ("/translate", "/attention"):
        raw = json.dumps(body)  # `null` too (json=None would send no body)
        response = client.post(path, content=raw, headers={"content-type": "application/json"})
        assert response.status_code < 500, (path, body, response.text)
        if response.status_code == 200:
            continue
        assert response.status_code in (400, 422), (path, body, response.text)
        error = response.json()
        assert error["error"], error
        named = {d["field"].split(".")[0] for d in error["details"]}
        if isinstance(body, dict) and error["details"]:
            # Each complaint names a field of the request or a required one it lacks.
            assert named <= {*body, *FIELDS, ""}, (body, error)
