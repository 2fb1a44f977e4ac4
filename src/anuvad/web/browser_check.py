"""A web export in headless Chromium, for the tests and ``bench/web_speed.py`` (issue 42).

:func:`static_server` serves a folder as any static host would (Python's ``http.server`` on a
free 127.0.0.1 port); :func:`export_page` opens the export's own ``index.html`` in Debian's
Chromium through Playwright with every request off that host refused (the page must work
offline), waits until the translator has loaded, and gives a :class:`ExportPage` whose
:meth:`~ExportPage.translate` runs the page's ``translate`` (the Web Worker, onnxruntime-web's
WASM build; one thread: a static host sends no cross-origin isolation headers) and returns its
results and seconds.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)


def browser_problem() -> str | None:
    """Why the export cannot be opened in Chromium here (None: it can)."""
    if shutil.which("chromium") is None:
        return "Debian's chromium is not installed (make chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 (an instance attribute of the base class)
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def static_server(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on a free loopback port in a thread; yields its URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@dataclass
class ExportPage:
    """The export's page, loaded in Chromium."""

    page: Any  # playwright.sync_api.Page
    load_seconds: float  # from navigation until the translator was ready
    offsite_requests: list[str]  # requests to other hosts (refused)

    def translate(
        self, texts: Sequence[str], options: dict[str, Any], one_by_one: bool = False
    ) -> tuple[list[dict[str, Any]], float]:
        """The page translator's results for ``texts`` (one call, or one call per text with
        ``one_by_one``: typing), and the seconds it took."""
        found: dict[str, Any] = self.page.evaluate(
            """async ([texts, options, oneByOne]) => {
              const t = window.anuvadTranslator;
              const started = performance.now();
              let results = [];
              if (!oneByOne) results = await t.translate(texts, options);
              else for (const text of texts) results.push(...(await t.translate([text], options)));
              return { results, seconds: (performance.now() - started) / 1000 };
            }""",
            [list(texts), options, one_by_one],
        )
        return found["results"], float(found["seconds"])


@contextlib.contextmanager
def export_page(
    folder: Path, init_script: str = "", timeout_s: float = 120.0
) -> Iterator[ExportPage]:
    """The export in ``folder`` opened in headless Chromium (see the module docstring).

    Args:
        folder: a web export.
        init_script: JavaScript run before the page's own (e.g. to break a browser feature).
        timeout_s: how long loading may take.

    Yields:
        The loaded page; if loading failed, ``page.load_seconds`` is negative and the page's
        error is in its ``#error`` element.
    """
    from playwright.sync_api import sync_playwright

    with static_server(folder) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=list(CHROMIUM_ARGS), headless=True
        )
        try:
            page = browser.new_page()
            offsite: list[str] = []

            def route(request_route: Any) -> None:
                if request_route.request.url.startswith(url):
                    request_route.continue_()
                else:
                    offsite.append(request_route.request.url)
                    request_route.abort()

            page.route("**/*", route)
            if init_script:
                page.add_init_script(init_script)
            started = time.perf_counter()
            page.goto(f"{url}/index.html")
            page.wait_for_function(
                "() => window.anuvadTranslator || document.getElementById('error').textContent",
                timeout=timeout_s * 1000,
            )
            ready = page.evaluate("() => !!window.anuvadTranslator")
            seconds = time.perf_counter() - started if ready else -1.0
            yield ExportPage(page, seconds, offsite)
        finally:
            browser.close()


__all__ = ["CHROMIUM_ARGS", "ExportPage", "browser_problem", "export_page", "static_server"]
