"""The web page in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright
against the real server (uvicorn on a free 127.0.0.1 port) serving a tiny model.

Set ``ANUVAD_SCREENSHOTS=DIR`` to keep desktop and phone screenshots of the page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anuvad.server.limits import MAX_TERM_CHARS, MAX_TEXT_CHARS

pytestmark = pytest.mark.usefixtures("one_thread")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SENTENCE = "The weather is nice today."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port in a thread; yields its URL."""
    uvicorn = pytest.importorskip("uvicorn")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def enhi(tiny_enhi_model: Path) -> Any:
    from anuvad.inference.translator import Translator

    return Translator.from_file(tiny_enhi_model, device="cpu")


@pytest.fixture(scope="module")
def base_url(tiny_enhi_model: Path, enhi: Any) -> Iterator[str]:
    """The real server (uvicorn in a thread) serving the tiny model."""
    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    # A second served model, labelled as the other direction: the page must let the reader
    # choose, and send its id.
    other = Translator.from_file(tiny_enhi_model, device="cpu")
    config = other.model_file.config
    data = dataclasses.replace(config.data, src_lang="hi", tgt_lang="en")
    other.model_file.config = dataclasses.replace(config, name="tiny_hien", data=data)
    with serving(create_app([enhi, other])) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip(
            "chromium is not installed (Debian: apt-get install chromium; `make test` does)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def screenshot(page: Any, name: str) -> None:
    folder = os.environ.get("ANUVAD_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def translate_with_beam(page: Any, base_url: str, beam: int, nbest: int) -> None:
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    # One line says what the served model was trained on.
    assert page.inner_text("#trained-on") == "trained on pairs"
    page.fill("#source", SENTENCE)
    page.click("label[for=mode-beam]")
    page.select_option("#beam-size", str(beam))
    page.select_option("#nbest", str(nbest))
    page.click("#translate-button")
    page.wait_for_selector("#heatmap rect.cell", timeout=60_000)


def test_translate_with_beam_4_shows_output_nbest_and_heatmap(browser: Any, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    translate_with_beam(page, base_url, beam=4, nbest=3)

    target = page.inner_text(".translation .target")
    assert target.strip() and target != "(empty output)"
    assert page.inner_text(".translation .source") == SENTENCE
    assert page.locator(".nbest tbody tr").count() == 3
    assert "beam 4" in page.inner_text("#timing") and "ms" in page.inner_text("#timing")

    # The heatmap: one cell per (output token, input token), labels on both axes.
    rows = page.locator("#heatmap text.tgt").count()
    cols = page.locator("#heatmap text.src").count()
    assert rows >= 1 and cols >= 2
    assert page.locator("#heatmap rect.cell").count() == rows * cols
    layers = page.locator("#layer option").count()
    heads = page.locator("#head option").count()
    assert layers == 2 and heads == 4 + 1  # the tiny preset: 2 layers, 4 heads, + the average

    page.select_option("#head", "2")
    page.select_option("#layer", "1")
    assert page.locator("#heatmap rect.cell").count() == rows * cols
    page.hover("#heatmap rect.cell >> nth=0")
    assert page.is_visible("#tooltip")
    assert "attention" in page.inner_text("#readout")

    page.click("label[for=view-cosine]")
    assert page.is_disabled("#head") and page.is_disabled("#layer")
    assert page.locator("#heatmap rect.cell").count() == rows * cols
    page.hover("#heatmap rect.cell >> nth=1")
    assert "cosine" in page.inner_text("#readout")
    page.click("label[for=view-cross]")
    page.select_option("#head", "avg")
    screenshot(page, "desktop")

    assert errors == []
    assert all(url.startswith(base_url) for url in requests)  # nothing fetched elsewhere
    page.close()


def test_api_errors_are_shown_in_the_page(browser: Any, base_url: str) -> None:
    page = browser.new_page()
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    # Over the server's limit: the page says so without sending anything.
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/translate") else None)
    page.fill("#source", "a" * (MAX_TEXT_CHARS + 5))
    page.click("#translate-button")
    page.wait_for_selector("#error:not([hidden])")
    assert str(MAX_TEXT_CHARS) in page.inner_text("#error") and sent == []
    # The server's 422 for a term too long is shown with the Terms box's own line number.
    page.fill("#source", SENTENCE)
    page.click("#glossary-field summary")
    page.fill("#glossary", "\n\nhome = " + "घ" * (MAX_TERM_CHARS + 1))
    page.click("#translate-button")
    page.wait_for_function("document.getElementById('error').textContent.includes('422')")
    message = page.inner_text("#error")
    assert "Terms, line 3" in message and "glossary" not in message, message
    # The page recovers: a valid request translates and clears the error.
    page.fill("#glossary", "")
    page.click("#translate-button")
    page.wait_for_selector("#heatmap rect.cell", timeout=60_000)
    assert page.is_hidden("#error")
    page.close()


def test_a_failed_attention_view_leaves_the_translation_and_says_why(
    browser: Any, base_url: str
) -> None:
    page = browser.new_page()
    page.route(
        "**/attention",
        lambda route: route.fulfill(
            status=422, content_type="application/json",
            body='{"error": "text: longer than the attention view takes", "details": []}',
        ),
    )  # fmt: skip
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    page.fill("#source", SENTENCE)
    page.click("#translate-button")
    page.wait_for_selector("#attention-status:not([hidden])", timeout=60_000)
    assert "longer than the attention view takes" in page.inner_text("#attention-status")
    assert page.is_visible("#output-card") and page.locator(".translation").count() == 1
    assert page.is_hidden("#error") and page.is_hidden("#attention-card")
    assert page.is_enabled("#translate-button")
    page.close()


def test_offsets_stay_right_after_an_emoji_and_a_model_switch_marks_the_result_old(
    browser: Any, base_url: str
) -> None:
    """The server counts code points, JavaScript UTF-16 units: after an emoji the layout (the
    line break, the gap between sentences) must still land where it was."""
    page = browser.new_page()
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    page.fill("#source", "I am going home \U0001f600.\nOpen the window.")
    page.click("label[for=mode-greedy]")
    with page.expect_response("**/translate") as response:
        page.click("#translate-button")
    (doc,) = response.value.json()["translations"]
    page.wait_for_selector("#document .doc-sentence")
    assert page.text_content("#document") == doc["text"]
    assert (page.text_content("#document") or "").count("\n") == 1
    assert page.is_hidden("#stale-note")
    page.select_option("#model-select", "tiny_hien")
    assert page.is_visible("#stale-note")
    page.close()


def test_stop_ends_a_translation_in_flight_and_keeps_the_page_usable(
    browser: Any, base_url: str
) -> None:
    """A translation the server has not answered yet is stopped by the Stop button (and by
    Escape): no error, the earlier result is marked out of date, and the page translates again."""
    page = browser.new_page()
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    page.fill("#source", SENTENCE)
    page.click("label[for=mode-greedy]")
    page.click("#translate-button")
    page.wait_for_selector(".translation .target", timeout=60_000)
    assert page.is_hidden("#stop-button") and page.is_hidden("#stale-note")

    held: list[Any] = []
    page.route("**/translate", lambda route: held.append(route))  # held: never answered
    for stop in ("click", "Escape"):
        page.fill("#source", f"Open the window ({stop}).")
        page.click("#translate-button")
        page.wait_for_selector("#stop-button:not([hidden])")
        assert page.is_disabled("#translate-button")
        if stop == "click":
            page.click("#stop-button")
        else:
            page.keyboard.press("Escape")
        page.wait_for_function(
            "document.getElementById('status').textContent.startsWith('Stopped')"
        )
        assert page.is_hidden("#error") and page.is_hidden("#stop-button")
        assert page.is_enabled("#translate-button") and page.is_visible("#stale-note")
        assert page.evaluate("document.activeElement.id") == "source"
        page.evaluate("document.getElementById('status').textContent = ''")
    assert len(held) == 2

    page.unroute("**/translate")
    with page.expect_response("**/translate") as response:
        page.click("#translate-button")
    assert response.value.ok
    page.wait_for_function("document.getElementById('stale-note').hidden")
    page.close()


def test_the_heatmap_reads_out_with_the_keyboard(browser: Any, base_url: str) -> None:
    page = browser.new_page()
    translate_with_beam(page, base_url, beam=2, nbest=1)
    page.focus("#heatmap")
    for key in ("ArrowRight", "ArrowRight", "ArrowDown"):
        page.keyboard.press(key)
    cursor = page.locator("#heatmap rect.cursor")
    assert cursor.count() == 1
    assert (cursor.get_attribute("data-t"), cursor.get_attribute("data-s")) == ("1", "2")
    assert "attention of output" in page.inner_text("#readout")
    assert page.get_attribute("#readout", "aria-live") == "polite"
    page.close()


def test_the_page_fits_a_phone(browser: Any, base_url: str) -> None:
    page = browser.new_page(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
    )
    translate_with_beam(page, base_url, beam=4, nbest=4)
    # No sideways scrolling of the page itself (the heatmap scrolls inside its own box).
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    box = page.locator("#translate-button").bounding_box()
    assert box is not None and box["width"] > 300  # a full-width button for thumbs
    screenshot(page, "phone")
    page.close()


def test_the_reader_chooses_the_direction(browser: Any, base_url: str) -> None:
    page = browser.new_page()
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    assert page.is_visible("#model-select")
    assert page.text_content("#src-name") == "English"
    page.select_option("#model-select", "tiny_hien")
    assert page.text_content("#src-name") == "Hindi" and page.text_content("#tgt-name") == "English"
    assert "tiny_hien" in page.inner_text("#model-info")
    page.fill("#source", SENTENCE)
    page.click("label[for=mode-greedy]")
    with page.expect_response("**/translate") as response:
        page.click("#translate-button")
    assert response.value.json()["model"] == "tiny_hien"
    page.close()


def test_a_pasted_three_paragraph_document_comes_back_as_three_paragraphs(
    browser: Any, base_url: str
) -> None:
    page = browser.new_page()
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    document = "I am going home. The sky is blue.\n\nOpen the window.\n\nWhat is your name? Go."
    page.fill("#source", document)
    page.click("label[for=mode-greedy]")
    with page.expect_response("**/translate") as response:
        page.click("#translate-button")
    (doc,) = response.value.json()["translations"]
    page.wait_for_selector("#document .doc-sentence")
    assert page.locator(".translation").count() == 5
    assert page.locator("#document .doc-sentence").count() == 5
    # The document view is the assembled translation: three paragraphs, blank lines kept.
    shown = page.text_content("#document") or ""
    assert shown == doc["text"]
    paragraphs = shown.split("\n\n")
    assert len(paragraphs) == 3 and all(p.strip() for p in paragraphs)
    sentences = [s["text"] for s in doc["sentences"]]
    first, second, third, fourth, fifth = sentences
    assert paragraphs == [f"{first} {second}", third, f"{fourth} {fifth}"]
    # Hovering a sentence of the translation highlights its pair.
    page.hover("#document .doc-sentence[data-index='1']")
    assert "paired" in (page.get_attribute(".translation[data-index='1']", "class") or "")
    # The attention view offers each sentence.
    assert page.locator("#sentence option").count() == 5
    page.close()


def test_the_page_asks_for_the_api_key_of_a_protected_server(browser: Any, enhi: Any) -> None:
    from anuvad.server.app import create_app

    key = "a-key-for-the-page-test"
    with serving(create_app(enhi, api_keys={key})) as url:
        page = browser.new_page()
        asked: list[str] = []

        def answer(dialog: Any) -> None:
            asked.append(dialog.message)
            dialog.accept(key)

        page.on("dialog", answer)
        page.goto(url)
        page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
        assert len(asked) == 1 and "API key" in asked[0]
        page.fill("#source", SENTENCE)
        page.click("label[for=mode-greedy]")
        with page.expect_response("**/translate") as response:
            page.click("#translate-button")
        assert response.value.status == 200
        assert response.value.request.headers["authorization"] == f"Bearer {key}"
        assert len(asked) == 1  # asked once, then kept for the tab
        page.close()


def test_terms_typed_in_the_page_are_sent_and_shown(browser: Any, base_url: str, enhi: Any) -> None:
    tok = enhi.tgt_tokenizer
    pieces = [i for i in range(4, tok.vocab_size) if tok.id_to_piece([i])[0] != "▁"]
    phrase = tok.decode(pieces[:2])  # spellable by the tiny model
    page = browser.new_page()
    page.goto(base_url)
    page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
    page.fill("#source", SENTENCE)
    page.click("#glossary-field summary")
    page.fill("#glossary", f"weather = {phrase}")
    page.click("label[for=mode-greedy]")
    with page.expect_response("**/translate") as response:
        page.click("#translate-button")
    sent = response.value.request.post_data_json
    assert sent["glossary"] == [{"source": "weather", "target": phrase}]
    (doc,) = response.value.json()["translations"]
    assert phrase in doc["text"]
    page.wait_for_selector(".translation .terms")
    assert "✓" in (page.text_content(".translation .terms") or "")
    page.fill("#glossary", "no equals sign")
    page.click("#translate-button")
    page.wait_for_selector("#error:not([hidden])")
    assert "Terms, line 1" in (page.text_content("#error") or "")
    page.close()


def test_improbable_words_are_shaded_and_a_doubtful_sentence_is_flagged(
    browser: Any, tiny_enhi_model: Path, tmp_path: Path
) -> None:
    """A calibrated model (here one whose threshold flags every sentence): the page shades
    exactly the words the API gives a probability below 0.5, says the model is calibrated, and
    marks the sentence likely wrong with its confidence."""
    import httpx

    from anuvad.evaluation.confidence_model import ConfidenceModel
    from anuvad.inference.confidence import calibration_path
    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    model = tmp_path / "calibrated.pt"
    shutil.copy(tiny_enhi_model, model)
    ConfidenceModel(
        features=["mean_log_prob"], mean=[-1.0], scale=[1.0], weights=[1.0], bias=0.0,
        threshold=1.0, report={"held_out": {"captions": {"confidence": {"auroc": 0.8}}}},
    ).save(calibration_path(model))  # fmt: skip
    with serving(create_app(Translator.from_file(model, device="cpu"))) as url:
        body = {"text": SENTENCE, "decoding": "greedy"}
        (sentence,) = httpx.post(f"{url}/translate", json=body).json()["translations"][0][
            "sentences"
        ]
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function("document.getElementById('model-info').textContent.includes('tiny')")
        assert "AUROC 0.80 (captions)" in page.inner_text("#confidence-info")
        page.fill("#source", SENTENCE)
        page.click("label[for=mode-greedy]")
        page.click("#translate-button")
        page.wait_for_selector(".translation .confidence", timeout=60_000)
        note = page.inner_text(".translation .confidence")
        p = sentence["confidence"]
        percent = "<1%" if p < 0.01 else ">99%" if p > 0.99 else f"{round(p * 100)}%"
        assert note == f"⚠ likely wrong · confidence {percent}"
        placed = [w for w in sentence["words"] if w["start"] >= 0]
        assert page.locator(".translation .target .word").count() == len(placed)
        low = sum(1 for w in placed if w["prob"] < 0.5)
        assert page.locator(".translation .target .word.low").count() == low
        shown = page.eval_on_selector(".translation .target", "e => e.textContent")
        assert shown == sentence["text"]  # shading changes no character
        page.close()


@pytest.mark.parametrize(
    "raw_path",
    [
        "/static/../app.py",
        "/static/../../anuvad/errors.py",
        "/static/..%2fapp.py",
        "/static/%2e%2e/%2e%2e/anuvad/errors.py",
        "/static/....//app.py",
        "/docs-assets/../../../anuvad/server/app.py",
    ],
)
def test_no_raw_request_line_reads_a_file_outside_the_static_folders(
    base_url: str, raw_path: str
) -> None:
    """Sent byte for byte over a real socket (a client library would normalise the path first):
    the server answers 404 or 400, never a source file."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        request = f"GET {raw_path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode("ascii"))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    assert status in (400, 404), answer[:300]
    assert b"def create_app" not in answer and b"class AnuvadError" not in answer
