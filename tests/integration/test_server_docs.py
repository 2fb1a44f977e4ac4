"""The request examples the API docs fill in (issue 40 item 10): ``/docs``' "Try it out" showed
values at the schema's limits (length_penalty 5, no_repeat_ngram_size 8, keep ["\\\\"]); the
schema now carries examples with the served model's own search settings, each answered 200, and
Swagger UI (headless Chromium, as test_docs_page.py drives it) fills them in."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from servers import running_server

from anuvad.decode_config import DecodeConfig
from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EXAMPLED = ("/translate", "/translate/stream", "/attention")


@pytest.fixture(scope="module")
def base_url(tiny_enhi_model: Path) -> Iterator[str]:
    app = create_app(Translator.from_file(tiny_enhi_model, device="cpu"))
    with running_server(app) as (_, port, _thread):
        yield f"http://127.0.0.1:{port}"


def example_of(spec: dict[str, Any], path: str) -> dict[str, Any]:
    example: dict[str, Any] = spec["paths"][path]["post"]["requestBody"]["content"][
        "application/json"
    ]["example"]
    return example


def test_each_request_example_has_the_model_s_own_settings_and_is_answered(base_url: str) -> None:
    spec = httpx.get(f"{base_url}/openapi.json").json()
    (model,) = httpx.get(f"{base_url}/models").json()["models"]
    for path in EXAMPLED:
        example = example_of(spec, path)
        for name, value in model["defaults"].items():  # beam, length penalty, ... as served
            assert example[name] == value, (path, name)
        assert "keep" not in example and "glossary" not in example
        assert httpx.post(f"{base_url}{path}", json=example, timeout=60).status_code == 200
    # Each search field's own example is the usual default, never a limit.
    fields = spec["components"]["schemas"]["TranslateRequest"]["properties"]
    usual = DecodeConfig()
    for name in model["defaults"]:
        assert fields[name]["examples"] == [getattr(usual, name)], name


def test_try_it_out_fills_in_the_example(base_url: str) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
    spec = httpx.get(f"{base_url}/openapi.json").json()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        page = browser.new_page()
        page.goto(f"{base_url}/docs")
        operation = page.locator("#operations-default-translate_translate_post")
        operation.locator(".opblock-summary").click()
        operation.locator(".try-out__btn").click()
        shown = operation.locator("textarea.body-param__text").input_value()
        browser.close()
    assert json.loads(shown) == example_of(spec, "/translate")
