"""Servers for the integration tests: an app served by uvicorn in a thread (as ``anuvad serve``
runs it), and ``anuvad serve`` itself as a subprocess, each on a free loopback port; and the
translators they serve that record their calls or decode until stopped."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from anuvad.inference.translation import Translation
from anuvad.inference.translator import Translator
from anuvad.server.state import app_state


def free_port() -> int:
    """A TCP port free on 127.0.0.1 (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def running_server(app: Any, config: Any = None) -> Iterator[tuple[Any, int, threading.Thread]]:
    """``app`` served by uvicorn on a free loopback port in a thread, as ``anuvad serve`` runs
    it (:class:`DrainingServer`): (server, port, thread)."""
    import uvicorn

    from anuvad.server.shutdown import DrainingServer

    port = free_port()
    settings = config(port) if config else uvicorn.Config(app, host="127.0.0.1", port=port)
    server = DrainingServer(settings, app_state(app))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.05)
        yield server, port, thread
    finally:
        server.should_exit = True
        thread.join(15)


@contextlib.contextmanager
def anuvad_serve(*models: Path, options: tuple[str, ...] = ()) -> Iterator[str]:
    """``anuvad serve --model ...`` (a subprocess) on a free loopback port, once it answers
    ``/health``; yields its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "anuvad.cli.main", "serve", "--port", str(port),
               *(a for m in models for a in ("--model", str(m))), *options]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise AssertionError(process.stderr.read().decode() if process.stderr else "")
            assert time.monotonic() < deadline, "anuvad serve did not start"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


class CountingTranslator(Translator):
    """A real translator that records each ``translate`` call (its texts and its thread)."""

    def __init__(self, other: Translator) -> None:
        super().__init__(other.model_file)
        self.model_path = other.model_path
        self.calls: list[list[str]] = []
        self.threads: set[str] = set()
        self.fail_with: Exception | None = None

    def translate(self, texts: Sequence[str], *args: Any, **kwargs: Any) -> list[Translation]:
        self.calls.append(list(texts))
        self.threads.add(threading.current_thread().name)
        if self.fail_with is not None:
            raise self.fail_with
        return super().translate(texts, *args, **kwargs)


class StallingTranslator(CountingTranslator):
    """Decodes a text containing "STALL" until the server stops the search."""

    def __init__(self, other: Translator) -> None:
        super().__init__(other)
        self.started = threading.Event()  # a stalling search is running
        self.stopped = threading.Event()

    def translate(self, texts: Sequence[str], *args: Any, **kwargs: Any) -> list[Translation]:
        from anuvad.errors import SearchStoppedError

        stop = kwargs.get("stop")
        if any("STALL" in t for t in texts):
            self.started.set()
            for _ in range(5_000):  # 50 s at most: the test fails long before
                if stop is not None and stop():
                    self.stopped.set()
                    raise SearchStoppedError("stopped")
                threading.Event().wait(0.01)
        return super().translate(texts, *args, **kwargs)
