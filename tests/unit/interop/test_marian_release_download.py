"""Issue 41: ``anuvad import URL`` of a Marian release zip, against a local HTTP server (no
network): the zip is downloaded into the user cache (a ``.part`` file resumed with HTTP Range,
renamed only when whole) and imported as the local zip imports; a cut, a 404, an HTML page or no
server gives one line naming the URL and what to do, exit 2, and no model file and no broken zip.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model
from anuvad.cli.main import main
from anuvad.interop.importer import import_model
from anuvad.interop.release_download import cached_release, is_release_url
from file_server import FileServer
from marian_release_folders import ReleaseShape, write_release, zip_release

ZIP_PATH = "/Tatoeba-MT-models/eng-hin/opus+bt-2021-04-10.zip"


@pytest.fixture(scope="module")
def release_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random release (OPUS-MT's shape), zipped as Tatoeba-MT publishes it."""
    root = tmp_path_factory.mktemp("release")
    folder = write_release(root / "eng-hin", ReleaseShape(), tune_eos=False)
    return zip_release(folder, root / "opus+bt-2021-04-10.zip")


@pytest.fixture
def server(release_zip: Path) -> Iterator[FileServer]:
    files = FileServer()
    files.files[ZIP_PATH] = release_zip.read_bytes()
    yield files
    files.close()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANUVAD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def run_import(url: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """``anuvad import URL --out OUT``: its exit status and its ``error:`` lines."""
    code = main(["import", url, "--out", str(out)])
    stderr = capsys.readouterr().err
    return code, [line for line in stderr.splitlines() if line.startswith("error:")]


def assert_same_model(path: Path, reference: Path) -> None:
    ours, theirs = load_model(path), load_model(reference)
    state, expected = ours.model.state_dict(), theirs.model.state_dict()
    assert state.keys() == expected.keys()
    assert all(torch.equal(state[name], expected[name]) for name in state)
    assert ours.src_tokenizer.state() == theirs.src_tokenizer.state()
    assert ours.tgt_tokenizer.state() == theirs.tgt_tokenizer.state()
    assert (ours.config.model, ours.config.data, ours.config.decode) == (
        theirs.config.model,
        theirs.config.data,
        theirs.config.decode,
    )
    differing = {k for k in ours.metadata if ours.metadata[k] != theirs.metadata.get(k)}
    assert differing - {"created"} == {"imported_from"}  # the import time may differ by a second


def test_a_url_imports_as_its_zip_and_is_cached(
    server: FileServer,
    release_zip: Path,
    tmp_path: Path,
    cache: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = server.base + ZIP_PATH
    code, errors = run_import(url, tmp_path / "url.pt", capsys)
    assert code == 0 and not errors
    reference = import_model(str(release_zip), tmp_path / "zip.pt").path
    assert_same_model(tmp_path / "url.pt", reference)
    assert load_model(tmp_path / "url.pt").metadata["imported_from"] == url
    cached = cached_release(url)
    assert cached.is_relative_to(cache) and cached.parent.name == "eng-hin"
    assert cached.read_bytes() == release_zip.read_bytes()
    assert not cached.with_name(cached.name + ".part").exists()
    requests = len(server.requests)  # a second import reads the cache, not the network
    assert run_import(url, tmp_path / "again.pt", capsys)[0] == 0
    assert len(server.requests) == requests


def test_an_interrupted_download_leaves_no_zip_and_resumes(
    server: FileServer, release_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base + ZIP_PATH
    size = len(server.files[ZIP_PATH])
    server.cut[ZIP_PATH] = size // 3
    code, errors = run_import(url, tmp_path / "cut.pt", capsys)
    assert code == 2 and len(errors) == 1, errors
    assert url in errors[0] and "resumes" in errors[0]
    assert not (tmp_path / "cut.pt").exists() and not cached_release(url).exists()
    assert cached_release(url).with_name(cached_release(url).name + ".part").is_file()
    code, errors = run_import(url, tmp_path / "cut.pt", capsys)
    assert code == 0 and not errors
    assert server.requests[-1] == (ZIP_PATH, f"bytes={size // 3}-")
    assert cached_release(url).read_bytes() == release_zip.read_bytes()
    assert_same_model(tmp_path / "cut.pt", import_model(str(release_zip), tmp_path / "z.pt").path)


def test_a_zip_cut_short_without_a_length_is_not_cached(
    server: FileServer, release_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that sends no Content-Length (the body ends when the connection closes) and stops
    early: the zip's magic number is there, its end is not; nothing broken stays in the cache and
    the next run downloads it whole."""
    url = server.base + ZIP_PATH
    server.no_length.add(ZIP_PATH)
    server.cut[ZIP_PATH] = len(server.files[ZIP_PATH]) * 2 // 3
    code, errors = run_import(url, tmp_path / "cut.pt", capsys)
    assert code == 2 and len(errors) == 1, errors
    assert url in errors[0] and "incomplete or damaged" in errors[0]
    assert not (tmp_path / "cut.pt").exists() and not cached_release(url).exists()
    code, errors = run_import(url, tmp_path / "cut.pt", capsys)
    assert code == 0 and not errors
    assert cached_release(url).read_bytes() == release_zip.read_bytes()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing", "HTTP 404"),
        ("html", "did not send a zip file"),
        ("offline", "needs the internet once"),
    ],
)
def test_an_unreachable_or_wrong_url_gets_one_line_exit_2_and_nothing_kept(
    server: FileServer,
    tmp_path: Path,
    cache: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    message: str,
) -> None:
    url = {
        "missing": server.base + "/Tatoeba-MT-models/eng-hin/opus+bt-2099-01-01.zip",
        "html": server.base + "/eng-hin/page.zip",
        "offline": f"http://127.0.0.1:{closed_port()}{ZIP_PATH}",
    }[where]
    server.files["/eng-hin/page.zip"] = b"<html><body>moved</body></html>"
    code, errors = run_import(url, tmp_path / "m.pt", capsys)
    assert code == 2 and len(errors) == 1, errors
    assert url in errors[0] and message in errors[0], errors[0]
    assert "anuvad import" in errors[0]  # what to do: download by hand and import the path
    assert not (tmp_path / "m.pt").exists()
    assert not [p for p in cache.rglob("*") if p.is_file()]


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_urls_paths_and_hub_ids_are_told_apart(tmp_path: Path) -> None:
    assert is_release_url("https://object.pouta.csc.fi/Tatoeba-MT-models/eng-hin/x.zip")
    assert is_release_url("http://127.0.0.1:8000/r.zip")
    assert not is_release_url("Helsinki-NLP/opus-mt-en-hi")
    assert not is_release_url(str(tmp_path / "eng-hin.zip"))
    cached = cached_release("https://host.example/a/../b%20c/release?x=1")
    assert cached.name == "release.zip" and cached.parent.name == "b_c"
    assert ".." not in cached.parts
