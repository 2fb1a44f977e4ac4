"""Dataset downloads against a local HTTP server (127.0.0.1, never the network): resume with
HTTP Range, checksum and format errors, extraction into the layout the configs read, the CLI."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import random
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from anuvad.cli import main
from anuvad.config import CorpusConfig
from anuvad.data import read_corpus
from anuvad.datasets import CATALOGUE, Dataset, download_dataset
from anuvad.download import RemoteFile, cache_dir, download
from anuvad.errors import DataError
from anuvad.unpack import Check, check_prepared

REPO = Path(__file__).resolve().parents[2]


class FileServer:
    """Serves ``files`` (path → bytes) on 127.0.0.1 with HTTP Range support.

    ``cut[path] = n``: the next response for ``path`` stops after ``n`` bytes (a dropped
    connection). ``ignore_range``: answer 200 with the whole file even to a Range request.
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.cut: dict[str, int] = {}
        self.ignore_range = False
        self.requests: list[tuple[str, str | None]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, self.headers.get("Range")))
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404, "Not Found")
                    return
                start = 0
                byte_range = self.headers.get("Range")
                if byte_range and not server.ignore_range:
                    start = int(byte_range.removeprefix("bytes=").split("-")[0])
                    if start >= len(data):
                        self.send_error(416, "Range Not Satisfiable")
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                limit = server.cut.pop(self.path, None)
                self.wfile.write(body if limit is None else body[:limit])
                if limit is not None:
                    self.wfile.flush()
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FileServer]:
    files = FileServer()
    yield files
    files.close()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANUVAD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def payload(size: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)


# ------------------------------------------------------------------------------ download


def test_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANUVAD_CACHE", "/x/anuvad-cache")
    assert cache_dir() == Path("/x/anuvad-cache")
    monkeypatch.delenv("ANUVAD_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/y/cache")
    assert cache_dir() == Path("/y/cache/anuvad")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "anuvad"


def test_an_interrupted_download_resumes_with_a_range_request(
    server: FileServer, tmp_path: Path
) -> None:
    data = payload(300_000)
    server.files["/big.bin"] = data
    server.cut["/big.bin"] = 120_000
    remote = RemoteFile(server.url("big.bin"), "big.bin", hashlib.sha256(data).hexdigest())
    with pytest.raises(DataError, match="resumes"):
        download(remote, tmp_path)
    part = tmp_path / "big.bin.part"
    assert part.stat().st_size == 120_000 and not (tmp_path / "big.bin").exists()

    assert download(remote, tmp_path).read_bytes() == data
    assert server.requests[-1] == ("/big.bin", "bytes=120000-")
    assert not part.exists()
    # A verified file is reused without asking the server again.
    count = len(server.requests)
    assert download(remote, tmp_path).read_bytes() == data
    assert len(server.requests) == count


def test_a_server_that_ignores_ranges_makes_the_download_start_over(
    server: FileServer, tmp_path: Path
) -> None:
    data = payload(50_000, seed=1)
    server.files["/f.bin"] = data
    server.ignore_range = True
    (tmp_path / "f.bin.part").write_bytes(b"stale bytes from another attempt")
    remote = RemoteFile(server.url("f.bin"), "f.bin", hashlib.sha256(data).hexdigest())
    assert download(remote, tmp_path).read_bytes() == data


def test_a_complete_part_file_is_accepted_after_416(server: FileServer, tmp_path: Path) -> None:
    data = payload(10_000, seed=2)
    server.files["/f.bin"] = data
    (tmp_path / "f.bin.part").write_bytes(data)
    remote = RemoteFile(server.url("f.bin"), "f.bin", hashlib.sha256(data).hexdigest())
    assert download(remote, tmp_path).read_bytes() == data


def test_a_wrong_checksum_is_an_error_and_deletes_the_file(
    server: FileServer, tmp_path: Path
) -> None:
    server.files["/f.bin"] = payload(10_000)
    remote = RemoteFile(server.url("f.bin"), "f.bin", "0" * 64)
    with pytest.raises(DataError, match="SHA-256") as error:
        download(remote, tmp_path)
    assert "0" * 64 in str(error.value) and server.url("f.bin") in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_without_a_checksum_size_and_format_are_checked(server: FileServer, tmp_path: Path) -> None:
    server.files["/page.gz"] = b"<!DOCTYPE html><html>moved</html>"
    with pytest.raises(DataError, match="HTML"):
        download(RemoteFile(server.url("page.gz"), "page.gz"), tmp_path)
    server.files["/small.txt"] = b"tiny"
    with pytest.raises(DataError, match="at least 1,000"):
        download(RemoteFile(server.url("small.txt"), "small.txt", min_bytes=1000), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_http_errors_and_unreachable_hosts_are_clear(server: FileServer, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="HTTP 404"):
        download(RemoteFile(server.url("missing.gz"), "missing.gz"), tmp_path)
    closed = FileServer()
    closed.close()  # nothing listens on this port any more
    with pytest.raises(DataError, match="connection"):
        download(RemoteFile(closed.url("x.gz"), "x.gz"), tmp_path, timeout=5)


# ------------------------------------------------------------------------------ the catalogue


def config_paths(config: str) -> set[str]:
    data = yaml.safe_load((REPO / "configs" / config).read_text(encoding="utf-8"))["data"]
    corpora = [*data.get("train", []), *data.get("valid", [])]
    return {c[key] for c in corpora for key in ("path", "src", "tgt") if key in c}


@pytest.mark.parametrize(
    ("config", "datasets"),
    [
        ("enhi_d256_L3.yaml", ["hvg", "tatoeba-hin"]),
        ("multi30k_en_de.yaml", ["multi30k"]),
        ("base.yaml", ["wmt14-en-de"]),
    ],
)
def test_the_catalogue_writes_the_files_the_recipes_read(config: str, datasets: list[str]) -> None:
    written = {output.path for name in datasets for output in CATALOGUE[name].outputs}
    needed = {p for p in config_paths(config) if not p.startswith("en-hi/iitb-sample")}
    assert needed <= written


def test_catalogue_entries_are_consistent() -> None:
    assert set(CATALOGUE) == {"hvg", "tatoeba-hin", "iitb", "multi30k", "flores200", "wmt14-en-de"}
    for dataset in CATALOGUE.values():
        names = [f.name for f in dataset.files]
        assert len(names) == len(set(names))
        for remote in dataset.files:
            assert remote.url.startswith(("https://", "http://")) and remote.url.endswith(
                remote.name
            )
            assert remote.sha256 is None or len(remote.sha256) == 64
            assert remote.min_bytes > 0  # without a pinned checksum, a size floor
        outputs = {o.path for o in dataset.outputs}
        assert {part.file for o in dataset.outputs for part in o.parts} <= set(names)
        assert {p for check in dataset.checks for p in check.paths} <= outputs


# ------------------------------------------------------------------------------ preparing


def tsv_lines(n: int, columns: int, seed: int) -> bytes:
    rng = random.Random(seed)
    rows = [
        "\t".join(
            [*(str(rng.randint(0, 99)) for _ in range(columns - 2)), f"a cat {i}", f"एक बिल्ली {i}"]
        )
        for i in range(n)
    ]
    return "".join(r + "\n" for r in rows).encode("utf-8")


def lines(prefix: str, n: int, newline_at_end: bool = True) -> bytes:
    text = "\n".join(f"{prefix} {i}" for i in range(n))
    return (text + ("\n" if newline_at_end else "")).encode("utf-8")


def tgz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def fake_upstream(name: str) -> dict[str, bytes]:
    """Small stand-ins for the real files of a catalogue entry, with the real names and layout."""
    if name == "hvg":
        return {
            f"hindi-visual-genome-{s}.txt.gz": gzip.compress(tsv_lines(20, 7, i))
            for i, s in enumerate(("train", "dev", "test", "challenge-test-set"))
        }
    if name == "tatoeba-hin":
        return {"hin-eng.zip": zipped({"hin.txt": tsv_lines(12, 3, 7), "_about.txt": b"about\n"})}
    if name == "multi30k":
        return {
            f"{s}.{lang}.gz": gzip.compress(lines(f"{s} {lang}", 9))
            for s in ("train", "val", "test_2016_flickr")
            for lang in ("en", "de")
        }
    if name == "flores200":
        members = {
            f"flores200_dataset/{split}/{code}.{split}": lines(code, 5)
            for split in ("dev", "devtest")
            for code in ("eng_Latn", "hin_Deva", "deu_Latn")
        }
        return {"flores200_dataset.tar.gz": tgz(members)}
    if name == "iitb":
        return {
            "parallel.tgz": tgz(
                {
                    "parallel/IITB.en-hi.en": lines("en", 30),
                    "parallel/IITB.en-hi.hi": lines("hi", 30),
                }
            ),
            "dev_test.tgz": tgz(
                {
                    f"dev_test/{s}.{lang}": lines(f"{s}{lang}", 4)
                    for s in ("dev", "test")
                    for lang in ("en", "hi")
                }
            ),
        }
    assert name == "wmt14-en-de"
    return {
        "training-parallel-europarl-v7.tgz": tgz(
            {f"training/europarl-v7.de-en.{lang}": lines(f"ep {lang}", 6) for lang in ("en", "de")}
        ),
        # The last line without a newline: concatenation must not glue two sentences together.
        "training-parallel-commoncrawl.tgz": tgz(
            {
                f"commoncrawl.de-en.{lang}": lines(f"cc {lang}", 4, newline_at_end=False)
                for lang in ("en", "de")
            }
        ),
        "training-parallel-nc-v9.tgz": tgz(
            {
                f"training/news-commentary-v9.de-en.{lang}": lines(f"nc {lang}", 3)
                for lang in ("en", "de")
            }
        ),
        "dev.tgz": tgz(
            {f"dev/newstest2013.{lang}": lines(f"nt {lang}", 7) for lang in ("en", "de", "fr")}
        ),
    }


def served(dataset: Dataset, server: FileServer) -> Dataset:
    """``dataset`` with its URLs pointing at the local server (and small-file limits)."""
    files = tuple(
        dataclasses.replace(f, url=server.url(f.name), min_bytes=10) for f in dataset.files
    )
    checks = tuple(dataclasses.replace(c, min_lines=1) for c in dataset.checks)
    for name, data in fake_upstream(dataset.name).items():
        server.files[f"/{name}"] = data
    return dataclasses.replace(dataset, files=files, checks=checks)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_corpus_is_prepared_in_the_layout_the_configs_read(
    name: str, server: FileServer, tmp_path: Path, cache: Path
) -> None:
    dataset = served(CATALOGUE[name], server)
    counts = download_dataset(dataset, tmp_path / "data")
    assert set(counts) == {check.paths[0] for check in dataset.checks}
    for output in dataset.outputs:
        text = (tmp_path / "data" / output.path).read_text(encoding="utf-8")
        assert text.endswith("\n") and "\n\n" not in text
    for check in dataset.checks:
        # Every prepared corpus reads with the project's own reader, as a recipe would.
        if check.columns:
            corpus = CorpusConfig(
                name="c",
                format="tsv",
                path=check.paths[0],
                src_column=check.columns - 2,
                tgt_column=check.columns - 1,
            )
        else:
            corpus = CorpusConfig(name="c", src=check.paths[0], tgt=check.paths[1])
        text = read_corpus(corpus, tmp_path / "data")
        assert len(text.src) == counts[check.paths[0]] > 0
    assert all(not p.name.endswith(".part") for p in (cache / "downloads" / name).iterdir())


def test_wmt14_training_files_are_the_three_corpora_concatenated(
    server: FileServer, tmp_path: Path
) -> None:
    download_dataset(served(CATALOGUE["wmt14-en-de"], server), tmp_path)
    train = (tmp_path / "en-de/wmt14/train.en").read_text(encoding="utf-8").splitlines()
    assert train == [f"ep en {i}" for i in range(6)] + [f"cc en {i}" for i in range(4)] + [
        f"nc en {i}" for i in range(3)
    ]


def test_hvg_tsv_keeps_its_seven_columns(server: FileServer, tmp_path: Path) -> None:
    download_dataset(served(CATALOGUE["hvg"], server), tmp_path)
    first = (
        (tmp_path / "en-hi/hvg/hindi-visual-genome-train.txt")
        .read_text(encoding="utf-8")
        .splitlines()[0]
    )
    assert len(first.split("\t")) == 7 and first.endswith("एक बिल्ली 0")


def test_prepared_files_that_do_not_match_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.tsv").write_text("x\ty\tz\nonly\ttwo\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2 has 2 tab-separated fields"):
        check_prepared(tmp_path, Check(("a.tsv",), 1, columns=3))
    (tmp_path / "a.en").write_text("1\n2\n", encoding="utf-8")
    (tmp_path / "a.hi").write_text("1\n", encoding="utf-8")
    with pytest.raises(DataError, match="differ in length"):
        check_prepared(tmp_path, Check(("a.en", "a.hi"), 1))
    with pytest.raises(DataError, match="at least 5"):
        check_prepared(tmp_path, Check(("a.en",), 5))


def test_a_changed_archive_layout_is_a_clear_error(server: FileServer, tmp_path: Path) -> None:
    dataset = served(CATALOGUE["flores200"], server)
    server.files["/flores200_dataset.tar.gz"] = tgz({"other/file.txt": b"x\n"})
    with pytest.raises(DataError, match=r"has no file 'dev/eng_Latn\.dev'"):
        download_dataset(dataset, tmp_path)


# ------------------------------------------------------------------------------ the CLI


def test_data_list_names_every_corpus_and_its_checksum_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name, dataset in CATALOGUE.items():
        assert f"\n{name}\n" in f"\n{out}"
        assert all(remote.url in out for remote in dataset.files)
    assert "checksum not pinned" in out


def test_data_download_from_a_local_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --from uses files fetched by hand (no network); the real entry's limits apply.
    manual = tmp_path / "manual"
    manual.mkdir()
    about = b"Tatoeba terms of use\n" * 4000  # a stored (uncompressed) member: above the size floor
    archive = zipped({"hin.txt": tsv_lines(2600, 3, 1), "_about.txt": about})
    (manual / "hin-eng.zip").write_bytes(archive)
    out = tmp_path / "data"
    assert main(["data", "download", "tatoeba-hin", "--from", str(manual), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "en-hi/anki/hin.txt: 2,600 lines" in printed
    assert f"export ANUVAD_DATA={out}" in printed
    assert (out / "en-hi/anki/_about.txt").read_bytes() == about

    assert main(["data", "download", "nonexistent"]) == 2
    assert "known: hvg" in capsys.readouterr().err
    (manual / "hin-eng.zip").write_bytes(b"<html>not a zip</html>" * 5000)
    assert main(["data", "download", "tatoeba-hin", "--from", str(manual)]) == 2
    assert "not a .zip file" in capsys.readouterr().err
