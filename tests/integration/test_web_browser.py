"""A web export in headless Chromium (Debian's chromium through Playwright), served by a plain
static HTTP server with every off-site request refused: the page loads and translates offline,
its tokens are the torch engine's, and a browser without WASM SIMD or with a full disk gets a
clear message (issue 42). The 200-sentence check with the shipped models is in
tests/system/test_web_equality_browser.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from anuvad.checkpoint import load_model
from anuvad.inference.translator import Translator

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')")

from anuvad.web.browser_check import browser_problem, export_page

pytestmark = [
    pytest.mark.skipif(browser_problem() is not None, reason=f"browser: {browser_problem()}"),
    pytest.mark.usefixtures("one_thread"),
]
SENTENCES = [
    "I am going home.",
    "Where is the station?",
    "The train will come at 8 pm.",
    "Please sit down now, Ravi.",
    "Water boils at 100 degrees.",
    "She said, “the meeting was moved to Monday.”",
    "THE SHOP IS CLOSED TODAY.",
    "Thank you!",
    "Is this the right way to the station?",
    "The children played in the park until the sun went down.",
]


@pytest.fixture(scope="module")
def export(tiny_enhi_web: Path) -> Path:
    return tiny_enhi_web


@pytest.fixture(scope="module")
def page(export: Path) -> Iterator[object]:
    with export_page(export) as loaded:
        yield loaded


def test_the_page_translates_offline_as_the_torch_engine(
    page: object, tiny_enhi_model: Path
) -> None:
    from anuvad.web.browser_check import ExportPage

    assert isinstance(page, ExportPage)
    assert page.load_seconds > 0 and page.offsite_requests == []
    translator = Translator(load_model(tiny_enhi_model))
    for beam_size in (1, 4):
        found, _ = page.translate(SENTENCES, {"beam_size": beam_size})
        expected = translator.translate(SENTENCES, translator.settings(beam_size=beam_size))
        assert [r["token_ids"] for r in found] == [e.token_ids for e in expected]
    page.page.fill("#source", "I am going home. Where is the station?\n\nThank you!")
    page.page.click("#translate")
    page.page.wait_for_function("() => document.getElementById('target').textContent")
    text = page.page.evaluate("document.getElementById('target').textContent")
    assert text.count("\n\n") == 1  # the layout is kept
    assert "2 sentences" not in page.page.evaluate("document.getElementById('status').textContent")


def test_a_browser_without_wasm_simd_is_told_so(page: object) -> None:
    from anuvad.web.browser_check import ExportPage

    assert isinstance(page, ExportPage)
    browser = page.page.context.browser  # the same browser: one Playwright per process
    assert browser is not None
    broken = browser.new_page()
    broken.add_init_script("WebAssembly.validate = () => false;")
    broken.goto(page.page.url)
    broken.wait_for_function("() => document.getElementById('error').textContent")
    message = broken.evaluate("document.getElementById('error').textContent")
    assert "WebAssembly SIMD" in message and "Chrome" in message
    assert broken.evaluate("document.getElementById('translate').disabled")
    broken.close()


def test_storage_full_leaves_a_message_and_still_translates(page: object) -> None:
    from anuvad.web.browser_check import ExportPage

    assert isinstance(page, ExportPage)
    found = page.page.evaluate(
        """async () => {
          const full = new DOMException("full", "QuotaExceededError");
          Cache.prototype.put = () => Promise.reject(full);
          const { loadHere } = await import("./anuvad.js");
          const t = await loadHere(".", { cache: "anuvad-test-full" });
          const [r] = await t.translate(["I am going home."]);
          return { warnings: t.warnings, text: r.text };
        }"""
    )
    assert found["text"] and len(found["warnings"]) == 6  # the model's four files, the two runtimes
    assert "Not enough storage" in found["warnings"][0]


def test_stop_ends_a_translation_and_the_translator_goes_on(page: object) -> None:
    """Stopping a call (the page's Stop: an AbortSignal, passed to the Web Worker) ends it with an
    AbortError and loses nothing: the next call translates as a fresh one does."""
    from anuvad.web.browser_check import ExportPage

    assert isinstance(page, ExportPage)
    found = page.page.evaluate(
        """async (sentences) => {
          const t = window.anuvadTranslator;  // the page's translator, in its Web Worker
          const [before] = await t.translate(["I am going home."], { beam_size: 4 });
          const many = Array.from({ length: 300 }, (_, i) => sentences[i % sentences.length] + i);
          const controller = new AbortController();
          const running = t.translate(many, { beam_size: 4, signal: controller.signal });
          controller.abort();
          let stopped = "finished";
          try { await running; } catch (error) { stopped = error.name; }
          const [after] = await t.translate(["I am going home."], { beam_size: 4 });
          return { stopped, before: before.token_ids, after: after.token_ids };
        }""",
        SENTENCES,
    )
    assert found["stopped"] == "AbortError"
    assert found["after"] == found["before"] and found["after"]
    # The page's own Stop button: the status says so and the button comes back.
    page.page.fill("#source", " ".join(SENTENCES * 40))
    page.page.click("#translate")
    page.page.click("#stop")
    page.page.wait_for_function("() => !document.getElementById('translate').disabled")
    assert page.page.evaluate("document.getElementById('status').textContent") == "Stopped"
    assert page.page.evaluate("document.getElementById('stop').hidden")
