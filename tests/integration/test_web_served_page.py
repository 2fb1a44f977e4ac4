"""The served page's "Translate in this browser" (``anuvad serve --web DIR``, issue 42 item 4),
in headless Chromium against the real server: the switch is offered only for a model with an
export, asks before the first download, and its translation of the text box is the server's
torch engine's, greedy and beam 4, with no request to /translate; only the export's own files
are served under /web/<model>/."""

from __future__ import annotations

import http.client
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from anuvad.checkpoint import load_model, save_model
from anuvad.web.browser_check import CHROMIUM_ARGS, browser_problem

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')")


pytestmark = [
    pytest.mark.skipif(browser_problem() is not None, reason=f"browser: {browser_problem()}"),
    pytest.mark.usefixtures("one_thread"),
]
TEXT = "I am going home. Where is the station?\n\nThe train will come soon."


@pytest.fixture(scope="module")
def served(
    tiny_enhi_model: Path, tiny_enhi_web: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The tiny model with its export, and a second model (other bytes) without one."""
    from servers import running_server

    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    folder = tmp_path_factory.mktemp("served")
    export = tiny_enhi_web
    loaded = load_model(tiny_enhi_model)
    other = save_model(
        folder / "other.pt", loaded.model, loaded.config, loaded.src_tokenizer,
        loaded.tgt_tokenizer, {**loaded.metadata, "title": "English → Hindi, no export"},
    )  # fmt: skip
    engines = [Translator.from_file(tiny_enhi_model, device="cpu"),
               Translator.from_file(other, device="cpu")]  # fmt: skip
    with running_server(create_app(engines, web=[export], max_wait_ms=0)) as (_, port, _thread):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                              args=list(CHROMIUM_ARGS))  # fmt: skip
        yield chromium
        chromium.close()


def _raw_get(url: str, path: str) -> int:
    """The status of GET ``path`` sent as written (no client normalises its dots)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port)
    connection.request("GET", path)
    status = connection.getresponse().status
    connection.close()
    return status


def test_models_name_the_export_and_only_its_files_are_served(served: str) -> None:
    models = httpx.get(f"{served}/models").json()["models"]
    web = models[0]["web"]
    assert web["url"] == f"/web/{models[0]['id']}/" and web["download_bytes"] > 1_000_000
    assert models[1]["web"] is None
    settings = httpx.get(f"{served}{web['url']}model.json")
    assert settings.status_code == 200 and settings.json()["format"] == "anuvad-web"
    for path in ("../x", "../../../etc/passwd", "..%2F..%2Fmodel.json", "%2e%2e/model.json",
                 "vendor/../../model.json", ".%2e/.%2e/etc/passwd"):  # fmt: skip
        assert _raw_get(served, f"{web['url']}{path}") == 404, path
    assert httpx.get(f"{served}/web/{models[1]['id']}/model.json").status_code == 404


def test_the_page_translates_in_this_browser_as_the_server_does(served: str, browser: Any) -> None:
    page = browser.new_page()
    dialogs: list[str] = []

    def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.on("dialog", accept)
    posted: list[str] = []
    # With exports served, the page is cross-origin isolated: onnxruntime-web may use threads.
    assert httpx.get(served).headers["cross-origin-embedder-policy"] == "require-corp"
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    page.goto(served)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    assert page.evaluate("crossOriginIsolated") is True
    assert page.is_visible("#browser-field") and "MB" in page.text_content("#browser-size")
    page.check("#browser-switch")
    page.wait_for_function(
        "document.getElementById('browser-status').textContent.startsWith('Ready')",
        timeout=60_000,
    )
    assert len(dialogs) == 1 and "MB" in dialogs[0]  # asked before downloading
    assert page.is_disabled("#glossary") and page.is_visible("#browser-note")
    page.fill("#source", TEXT)
    for decoding, beam in (("greedy", 1), ("beam", 4)):
        page.click(f"label[for=mode-{decoding}]")
        if decoding == "beam":
            page.select_option("#beam-size", str(beam))
            page.select_option("#nbest", "1")
        page.evaluate("document.getElementById('status').textContent = ''")
        page.click("#translate-button")
        page.wait_for_function(
            "document.getElementById('status').textContent.startsWith('Translated')",
            timeout=60_000,
        )
        shown = page.text_content("#document")
        assert "in this browser" in page.text_content("#timing")
        server = httpx.post(f"{served}/translate", json={"text": TEXT, "decoding": decoding,
                            "beam_size": beam, "nbest": 1}, timeout=60).json()  # fmt: skip
        assert shown == server["translations"][0]["text"], decoding
    assert not [u for u in posted if u.endswith(("/translate", "/translate/stream"))]
    page.select_option("#model-select", index=1)
    assert not page.is_visible("#browser-field")
    page.close()


def test_a_load_failure_is_said_and_the_server_translates(served: str, browser: Any) -> None:
    page = browser.new_page()
    page.add_init_script("WebAssembly.validate = () => false;")  # no WASM SIMD
    page.on("dialog", lambda d: d.accept())
    page.goto(served)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    page.check("#browser-switch")
    page.wait_for_function("document.getElementById('error').textContent.includes('SIMD')")
    assert "server translates" in page.text_content("#error")
    assert not page.is_checked("#browser-switch") and not page.is_disabled("#glossary")
    with page.expect_response("**/translate/stream"):
        page.click("#translate-button")
    page.close()


def test_without_web_exports_the_page_has_no_switch(tiny_enhi_model: Path, browser: Any) -> None:
    from servers import running_server

    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    app = create_app([Translator.from_file(tiny_enhi_model, device="cpu")], max_wait_ms=0)
    with running_server(app) as (_, port, _thread):
        assert httpx.get(f"http://127.0.0.1:{port}/models").json()["models"][0]["web"] is None
        assert "cross-origin-embedder-policy" not in httpx.get(f"http://127.0.0.1:{port}/").headers
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
        assert not page.is_visible("#browser-field")
        page.close()


def test_with_api_keys_the_model_files_need_the_key_and_the_page_sends_it(
    tiny_enhi_model: Path, tiny_enhi_web: Path, browser: Any
) -> None:
    """A server with API keys hands the export's model files (.gz, model.json) only to a request
    with a key, as it does its API; the runtime's code stays open (a browser imports modules
    and starts workers without headers); the page's translator sends the tab's key."""
    from servers import running_server

    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    key = "k" * 12 + "-web-export-key"
    engine = Translator.from_file(tiny_enhi_model, device="cpu")
    app = create_app([engine], web=[tiny_enhi_web], api_keys={key}, max_wait_ms=0)
    with running_server(app) as (_, port, _thread):
        url = f"http://127.0.0.1:{port}"
        auth = {"Authorization": f"Bearer {key}"}
        models = httpx.get(f"{url}/models", headers=auth).json()["models"]
        web = f"{url}{models[0]['web']['url']}"
        for name in (
            "model.json",
            "encoder.onnx.gz",
            "vendor/onnxruntime-web/ort-wasm-simd-threaded.wasm.gz",
        ):
            assert httpx.get(web + name).status_code == 401, name
            assert httpx.get(web + name, headers=auth).status_code == 200, name
        for name in ("anuvad.js", "worker.js", "vendor/onnxruntime-web/ort.wasm.min.mjs"):
            assert httpx.get(web + name).status_code == 200, name
        # Another spelling of a model file's name: refused without a key, and never served.
        for name in ("model.json/", "encoder.onnx.gz/", "model.json/."):
            assert _raw_get(url, f"{models[0]['web']['url']}{name}") == 401, name
            assert httpx.get(web + name.rstrip("/."), headers=auth).status_code == 200
        assert httpx.get(web + "model.json/", headers=auth).status_code == 404
        page = browser.new_page()
        page.add_init_script(f"sessionStorage.setItem('anuvad-api-key', '{key}')")
        page.on("dialog", lambda d: d.accept())
        page.goto(url)
        page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
        page.check("#browser-switch")
        page.wait_for_function(
            "document.getElementById('browser-status').textContent.startsWith('Ready')",
            timeout=60_000,
        )
        page.fill("#source", TEXT)
        page.click("#translate-button")
        page.wait_for_function(
            "document.getElementById('status').textContent.startsWith('Translated')",
            timeout=60_000,
        )
        assert page.text_content("#document")
        page.close()
