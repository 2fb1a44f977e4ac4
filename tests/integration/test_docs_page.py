"""The API docs (``/docs``) in a real browser (headless Chromium driven by Playwright, as
test_web_page.py): Swagger UI renders the published OpenAPI 3.1 from local files and lists the
operations. Issue 34, item 1: Swagger UI 4.15.5 showed "Unable to render this definition"."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers import running_server

from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
OPERATIONS = ["POST /translate", "POST /translate/stream", "POST /attention", "POST /detect",
              "GET /models", "GET /health"]  # fmt: skip


@pytest.fixture(scope="module")
def page(tiny_enhi_model: Path) -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip(
            "chromium is not installed (Debian: apt-get install chromium; `make test` does)"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
    app = create_app(Translator.from_file(tiny_enhi_model, device="cpu"))
    with running_server(app) as (_, port, _thread), sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        context = browser.new_context()
        # Offline: any request that leaves this server fails (no CDN may be needed).
        outside: list[str] = []

        def only_local(route: Any) -> None:
            if route.request.url.startswith(f"http://127.0.0.1:{port}/"):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        context.route("**/*", only_local)
        tab = context.new_page()
        tab.goto(f"http://127.0.0.1:{port}/docs")
        yield tab, outside
        browser.close()


def test_the_docs_list_every_operation_offline(page: tuple[Any, list[str]]) -> None:
    tab, outside = page
    tab.wait_for_selector(".opblock-summary", timeout=30_000)
    shown = tab.inner_text("#swagger-ui")
    assert "Unable to render this definition" not in shown
    for operation in OPERATIONS:
        method, path = operation.split()
        summary = tab.locator(f".opblock-summary-{method.lower()}", has_text=path)
        assert summary.count() >= 1, operation
        assert summary.first.is_visible(), operation
    assert "OAS 3.1" in shown  # the version badge Swagger UI 5 shows for 3.1 definitions
    assert outside == []
