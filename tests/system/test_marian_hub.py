"""Issue 35, the download (system tier: whole commands, a few seconds each): ``anuvad import``
of a hub id against a local HTTP server on 127.0.0.1 that answers as huggingface.co's file
endpoints do: downloaded into the hub cache and served from it the second time, an unknown model
and an unreachable hub named in one line, a download cut halfway leaving nothing behind."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from anuvad.checkpoint import load_model
from marian_folders import Shape, write_marian_folder

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def marian_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("marian") / "opus-mt-en-de"
    return write_marian_folder(folder, Shape(), tune_eos=False)


def run_import(source: str, out: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "anuvad", "import", source, "--out", str(out), *extra],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300,
    )  # fmt: skip


COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """``/{owner}/{name}/resolve/{revision}/{file}`` for HEAD and GET, with the headers
    huggingface_hub reads (X-Repo-Commit, ETag, Content-Length), 404s as the hub gives them, and
    optionally a download that breaks off halfway."""

    def __init__(self, repos: dict[str, Path]) -> None:
        self.repos = repos
        self.cut: set[str] = set()  # file names whose GET stops halfway
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.answer(body=False)

            def do_GET(self) -> None:
                self.answer(body=True)

            def answer(self, body: bool) -> None:
                hub.requests.append(f"{self.command} {self.path}")
                parts = self.path.split("?")[0].strip("/").split("/")
                repo, rest = "/".join(parts[:2]), parts[2:]
                if repo not in hub.repos or len(rest) < 3 or rest[0] != "resolve":
                    self.send_response(404)
                    self.send_header("X-Error-Code", "RepoNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path = hub.repos[repo] / "/".join(rest[2:])
                if not path.is_file():
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = path.read_bytes()
                self.send_response(200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    if path.name in hub.cut:
                        self.wfile.write(data[: len(data) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hub(marian_folder: Path) -> Iterator[FakeHub]:
    server = FakeHub({"Helsinki-NLP/opus-mt-en-de": marian_folder})
    yield server
    server.server.shutdown()


def hub_env(url: str, home: Path) -> dict[str, str]:
    return {"HF_ENDPOINT": url, "HF_HOME": str(home), "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5",
            "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip


def test_a_hub_model_is_downloaded_cached_and_imported(hub: FakeHub, tmp_path: Path) -> None:
    env = hub_env(hub.url, tmp_path / "hf-home")
    out = tmp_path / "opus.pt"
    run = run_import("Helsinki-NLP/opus-mt-en-de", out, env=env)
    assert run.returncode == 0, run.stderr
    assert "wrote" in run.stdout and "en->de" in run.stdout
    model_file = load_model(out)
    assert model_file.metadata["imported_from"] == "Helsinki-NLP/opus-mt-en-de"
    cached = list((tmp_path / "hf-home").rglob("model.safetensors"))
    assert cached, "the download lands in the hub cache"

    # A second import is served from the cache: no file is fetched again.
    def files_fetched() -> list[str]:
        return [r for r in hub.requests if r.startswith("GET") and "/resolve/" in r]

    fetched = files_fetched()
    assert any(r.endswith("/model.safetensors") for r in fetched)
    again = run_import("Helsinki-NLP/opus-mt-en-de", tmp_path / "again.pt", env=env)
    assert again.returncode == 0, again.stderr
    assert files_fetched() == fetched


class InProcess:
    """``anuvad import`` run in this process (no interpreter start-up) with a hub environment;
    the hub cache is named by HF_HUB_CACHE, which the import passes on at call time."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
        self.monkeypatch, self.capsys = monkeypatch, capsys

    def __call__(self, source: str, out: Path, url: str, home: Path) -> tuple[int, str]:
        from anuvad.cli.main import main

        self.monkeypatch.setenv("HF_ENDPOINT", url)
        self.monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
        code = main(["import", source, "--out", str(out)])
        return code, self.capsys.readouterr().err


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> InProcess:
    return InProcess(monkeypatch, capsys)


def test_an_unknown_model_and_an_offline_hub_are_named(
    hub: FakeHub, tmp_path: Path, in_process: InProcess
) -> None:
    code, err = in_process("Helsinki-NLP/opus-mt-xx-yy", tmp_path / "x.pt", hub.url, tmp_path)
    assert code == 2 and "no such model" in err and len(err.strip().splitlines()) == 1, err
    closed = "http://127.0.0.1:9"  # nothing listens there
    code, err = in_process("Helsinki-NLP/opus-mt-en-de", tmp_path / "y.pt", closed, tmp_path)
    assert code == 2 and "cannot reach http://127.0.0.1:9" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.pt").exists() and not (tmp_path / "y.pt").exists()


def test_a_download_cut_halfway_leaves_nothing_and_says_run_again(
    hub: FakeHub, tmp_path: Path, in_process: InProcess
) -> None:
    hub.cut.add("model.safetensors")
    out = tmp_path / "cut.pt"
    code, err = in_process("Helsinki-NLP/opus-mt-en-de", out, hub.url, tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "model.safetensors" in err and "run the import again" in err, err
    assert not out.exists()
    assert not list(tmp_path.rglob("model.safetensors")), "no half file is cached"
    hub.cut.clear()  # the next try completes, from the files already cached and the rest
    code, err = in_process("Helsinki-NLP/opus-mt-en-de", out, hub.url, tmp_path)
    assert code == 0, err
    assert load_model(out).metadata["imported_from"] == "Helsinki-NLP/opus-mt-en-de"
