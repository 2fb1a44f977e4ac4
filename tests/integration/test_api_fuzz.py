"""The HTTP API against its own published schema (``/openapi.json``), as ``schemathesis run
--checks all`` tests it: requests made from the schema (its examples, its edge cases, random
ones, valid and invalid) are sent to a real server (uvicorn on a loopback port) serving a tiny
English→Hindi model and a copy labelled Hindi→English, and every answer must pass every check:
no 5xx, each status and content type documented, each body of its documented schema, invalid
requests refused, valid ones accepted (issue 40 item 12 found 7 mismatches), none slower than
30 s.

A JSON Schema cannot state every rule, so a schema-valid request may still be refused (400 or
422), and then only for a rule the schema's error descriptions name; ``api_rules`` (the run's
hooks module) checks that, and that an answered translation has every text sent, in order.

Arbitrary JSON (not from the schema) must get a 4xx that names the field, never a 5xx.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import running_server

from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

HERE = Path(__file__).resolve().parent
SLOWEST_S = 30.0  # no answer may take longer
MAX_EXAMPLES = 25  # cases per operation and phase
# `schemathesis run --checks all`, but for the refusals of valid requests that the schema's
# descriptions allow (api_rules.refused_only_by_unstated_rules checks what they say).
CONFIG = f"""
[checks]
max_response_time = {SLOWEST_S}

[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "429", "400", "422"]
"""
FIELDS = ("text", "decoding", "beam_size", "nbest", "length_penalty", "early_stopping",
          "no_repeat_ngram_size", "model", "split_sentences")  # fmt: skip


@pytest.fixture(scope="module")
def base_url(tiny_enhi_model: Path) -> Iterator[str]:
    """The tiny model and a copy labelled Hindi→English, served as ``anuvad serve`` runs them."""
    enhi = Translator.from_file(tiny_enhi_model, device="cpu")
    hien = Translator.from_file(tiny_enhi_model, device="cpu")
    config = hien.model_file.config
    data = dataclasses.replace(config.data, src_lang="hi", tgt_lang="en")
    hien.model_file.config = dataclasses.replace(config, name="tiny_hien", data=data)
    # One request at a time: no other request to wait for (max_wait_ms 5 cost ~10 s here).
    app = create_app([enhi, hien], max_wait_ms=0)
    with running_server(app) as (_, port, _thread):
        yield f"http://127.0.0.1:{port}"


@pytest.mark.slow
def test_every_answer_is_what_the_schema_says(base_url: str, tmp_path: Path) -> None:
    (tmp_path / "schemathesis.toml").write_text(CONFIG)
    command = [str(Path(sys.executable).with_name("schemathesis")),
               "--config-file", str(tmp_path / "schemathesis.toml"), "run",
               f"{base_url}/openapi.json", "--checks", "all", "--workers", "1",
               "--max-examples", str(MAX_EXAMPLES), "--seed", "40", "--generation-deterministic",
               "--no-color"]  # fmt: skip
    hooks = {"SCHEMATHESIS_HOOKS": "api_rules", "PYTHONPATH": str(HERE)}
    run = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600,
                         env={**os.environ, **hooks})  # fmt: skip
    print(run.stdout[run.stdout.rfind("SUMMARY") :])
    assert run.returncode == 0, run.stdout[-20_000:] + run.stderr[-5_000:]


def test_the_schema_states_the_limits_and_the_served_models(base_url: str) -> None:
    schemas = httpx.get(f"{base_url}/openapi.json").json()["components"]["schemas"]
    request = schemas["TranslateRequest"]
    text = request["properties"]["text"]["anyOf"]
    assert {branch["type"] for branch in text} == {"string", "array"}
    assert all(b.get("maxLength") or b["items"]["maxLength"] for b in text)
    beam = [b for b in request["properties"]["beam_size"]["anyOf"] if b["type"] == "integer"]
    assert beam == [{"type": "integer", "minimum": 1, "maximum": 16}]  # null: the model's own
    assert request.get("additionalProperties") is False
    for name in ("TranslateRequest", "AttentionRequest"):
        model = schemas[name]["properties"]["model"]["anyOf"]
        assert {"type": "string", "enum": ["tiny_enhi", "tiny_hien"]} in model


def fuzz(max_examples: int) -> settings:
    """Hypothesis settings: ``max_examples`` cases, the same on every run (a failure
    reproduces), no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
ANY_REQUEST = st.dictionaries(st.sampled_from((*FIELDS, "unknown")), JSON, max_size=5) | JSON


@fuzz(30)
@given(body=ANY_REQUEST)
def test_arbitrary_json_gets_a_4xx_naming_the_field_never_a_5xx(base_url: str, body: Any) -> None:
    for path in ("/translate", "/translate/stream", "/attention", "/detect"):
        raw = json.dumps(body)  # `null` too (json=None would send no body)
        response = httpx.post(f"{base_url}{path}", content=raw, timeout=SLOWEST_S,
                              headers={"content-type": "application/json"})  # fmt: skip
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
