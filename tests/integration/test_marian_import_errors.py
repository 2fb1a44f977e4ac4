"""Issue 35, bad input and the download: a folder that is not a Marian model, an architecture
anuvad does not compute, a missing tokenizer file, a broken weights file, a hub that is offline
or cuts a download: one line naming what is wrong, exit 2, nothing written. The hub is a local
HTTP server on 127.0.0.1 that answers as huggingface.co's file endpoints do."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from marian_folders import TEXTS, Shape, write_marian_folder

from anuvad.checkpoint import load_model
from anuvad.errors import CheckpointError
from anuvad.interop.exporter import export_huggingface
from anuvad.interop.importer import import_marian

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def marian_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("marian") / "opus-mt-en-de"
    return write_marian_folder(folder, Shape(), tune_eos=False)


def broken_copy(folder: Path, tmp_path: Path, change: Any) -> Path:
    copy = tmp_path / "opus-mt-en-de"
    shutil.copytree(folder, copy)
    change(copy)
    return copy


def run_import(source: str, out: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "anuvad", "import", source, "--out", str(out), *extra],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300,
    )  # fmt: skip


def edit_config(**changes: Any) -> Any:
    def change(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        config.update(changes)
        (folder / "config.json").write_text(json.dumps(config))

    return change


def with_positions(altered: bool) -> Any:
    """Store position tables in the weights, as older conversions did (Marian's own, or not)."""

    def change(folder: Path) -> None:
        from safetensors.torch import load_file, save_file
        from transformers.models.marian.modeling_marian import (
            MarianSinusoidalPositionalEmbedding,
        )

        state = load_file(str(folder / "model.safetensors"))
        config = json.loads((folder / "config.json").read_text())
        table = MarianSinusoidalPositionalEmbedding(
            config["max_position_embeddings"], config["d_model"]
        ).create_weight()
        if altered:
            table = table + 0.01
        for stack in ("encoder", "decoder"):
            state[f"model.{stack}.embed_positions.weight"] = table.clone()
        save_file(state, str(folder / "model.safetensors"), {"format": "pt"})

    return change


def test_stored_marian_positions_import(marian_folder: Path, tmp_path: Path) -> None:
    folder = broken_copy(marian_folder, tmp_path, with_positions(altered=False))
    assert load_model(import_marian(str(folder), tmp_path / "p.pt").path).model is not None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: (f / "config.json").unlink(), "not a Hugging Face model folder"),
        (edit_config(model_type="bart"), "model_type is 'bart'; anuvad imports Marian models"),
        (edit_config(normalize_before=True), "normalize_before is True"),
        (edit_config(scale_embedding=False), "scale_embedding is False"),
        (edit_config(activation_function="tanh"), "activation_function 'tanh'"),
        (lambda f: (f / "source.spm").unlink(), "missing source.spm"),
        (lambda f: (f / "model.safetensors").unlink(), "no weights (model.safetensors"),
        (
            lambda f: (f / "model.safetensors").write_bytes(
                (f / "model.safetensors").read_bytes()[:5000]
            ),
            "not a readable safetensors file",
        ),
        (
            lambda f: (f / "vocab.json").write_text(json.dumps({"</s>": 0, "<unk>": 1})),
            "2 pieces, but the model's embedding has",
        ),
        (edit_config(d_model=48), "its weights do not fit its config.json"),
        (with_positions(altered=True), "is not the sinusoid table Marian computes"),
    ],
    ids=[
        "no-config", "bart", "pre-ln", "unscaled", "activation", "no-spm", "no-weights",
        "truncated-weights", "wrong-vocab", "wrong-shape", "altered-positions",
    ],
)  # fmt: skip
def test_bad_folders_get_one_line_exit_2_and_no_file(
    marian_folder: Path,
    tmp_path: Path,
    change: Any,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from anuvad.cli.main import main

    folder = broken_copy(marian_folder, tmp_path, change)
    out = tmp_path / "out" / "model.pt"
    code = main(["import", str(folder), "--out", str(out), "--src-lang", "en", "--tgt-lang", "de"])
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], stderr
    assert not out.exists()
    assert not (out.parent.exists() and any(out.parent.iterdir()))


def test_languages_come_from_the_name_or_must_be_given(marian_folder: Path, tmp_path: Path) -> None:
    imported = import_marian(str(marian_folder), tmp_path / "a.pt")  # "opus-mt-en-de"
    assert (imported.src_lang, imported.tgt_lang) == ("en", "de")
    renamed = tmp_path / "some-model"
    shutil.copytree(marian_folder, renamed)
    with pytest.raises(CheckpointError, match="give --src-lang and --tgt-lang"):
        import_marian(str(renamed), tmp_path / "b.pt")


def test_models_that_are_not_marian_are_not_exported(tmp_path: Path) -> None:
    import torch

    from anuvad.checkpoint import save_model
    from anuvad.config import ExperimentConfig, ModelConfig, TokenizerConfig
    from anuvad.data.tokenizer import train_tokenizer
    from anuvad.model.transformer import build_model

    tok = train_tokenizer(TEXTS * 3, TokenizerConfig(model_type="char"), 100)
    config = ExperimentConfig(
        model=ModelConfig(
            d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
            src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, norm_position="pre",
        )
    )  # fmt: skip
    torch.manual_seed(0)
    path = save_model(tmp_path / "pre.pt", build_model(config.model), config, tok, tok)
    with pytest.raises(CheckpointError, match="norm_position is 'pre'; Marian models are post-LN"):
        export_huggingface(path, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


# ----------------------------------------------------------------------------------------------
# The hub, played by a local server
# ----------------------------------------------------------------------------------------------

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


def test_export_on_the_command_line_writes_a_folder_once(
    marian_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.cli.main import main

    model = import_marian(str(marian_folder), tmp_path / "m.pt").path
    out = tmp_path / "hf"
    assert main(["export", str(model), "--format", "huggingface", "--out", str(out)]) == 0
    assert "MarianMTModel.from_pretrained" in capsys.readouterr().out
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(
        ["README.md", "config.json", "generation_config.json", "model.safetensors",
         "source.spm", "target.spm", "tokenizer_config.json", "vocab.json"]
    )  # fmt: skip
    assert main(["export", str(model), "--format", "huggingface", "--out", str(out)]) == 2
    assert "add --force" in capsys.readouterr().err
    assert (
        main(["export", str(model), "--format", "huggingface", "--out", str(out), "--force"]) == 0
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hf.")], "no build folder left"
