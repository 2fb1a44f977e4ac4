"""Dataset downloads against a local HTTP server (127.0.0.1, never the network): resume with
HTTP Range, checksum and format errors, extraction into the layout the configs read (CSV, JSON and
CoNLL-U extraction, line slices, CRLF), corpora that can only be prepared by hand, the CLI, and
the catalogue against the shared data folder when it is there."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import random
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from anuvad.cli.data import _KIND_TITLES
from anuvad.cli.main import main
from anuvad.config import CorpusConfig
from anuvad.data.catalogue import CATALOGUE, KINDS, Dataset, download_dataset
from anuvad.data.corpora import read_corpus
from anuvad.data.download import RemoteFile, cache_dir, download
from anuvad.data.unpack import Check, Extract, Output, Part, check_prepared, write_output
from anuvad.errors import DataError
from file_server import FileServer

REPO = Path(__file__).resolve().parents[3]
# The shared data folder beside the checkout (CI and developer machines; see its README).
SHARED = REPO.parent / "shared" / "data"
ORIGINAL = {"hvg", "tatoeba-hin", "iitb", "multi30k", "flores200", "wmt14-en-de"}
NEW = sorted(set(CATALOGUE) - ORIGINAL)
DOWNLOADABLE = sorted(name for name, d in CATALOGUE.items() if d.downloadable)
BY_HAND = sorted(name for name, d in CATALOGUE.items() if not d.downloadable)


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


HIEN = [
    "hvg",
    "tatoeba-hin",
    "ud-pud",
    "xquad",
    "il-ilgov",
    "mturk",
    "kaggle-ted-tides",
    "enindic-speeches",
    "enindic-news-subtitles",
    "milpac",
    "en-hi-combined",
    "ntrex128",
]


@pytest.mark.parametrize(
    ("config", "datasets"),
    [
        ("enhi_d256_L3.yaml", ["hvg", "tatoeba-hin"]),
        ("hien_d256_L3.yaml", HIEN),
        ("multi30k_en_de.yaml", ["multi30k"]),
        ("base.yaml", ["wmt14-en-de"]),
    ],
)
def test_the_catalogue_writes_the_files_the_recipes_read(config: str, datasets: list[str]) -> None:
    written = {output.path for name in datasets for output in CATALOGUE[name].outputs}
    needed = {p for p in config_paths(config) if not p.startswith("en-hi/iitb-sample")}
    assert needed <= written


def test_catalogue_entries_are_consistent() -> None:
    assert set(CATALOGUE) > ORIGINAL
    new_for_hien = set(HIEN) - {"hvg", "tatoeba-hin", "en-hi-combined", "ntrex128"}
    assert new_for_hien | {
        "quran",
        "bbc-news",
        "hiner-news-tourism",
        "hdtb-ssf-news-tourism",
        "ilner-general",
        "hiwiki-sample",
        "discourse-stories",
        "literature-nopunct",
        "freedict-eng-hin",
        "muse-en-hi",
        "en-hi-combined",
        "ntrex128",
        "wmt24",
        "wmt24pp",
        "newsdev2014",
    } == set(NEW)
    all_outputs = [o.path for d in CATALOGUE.values() for o in d.outputs]
    assert len(all_outputs) == len(set(all_outputs))  # no two entries write the same file
    for dataset in CATALOGUE.values():
        names = [f.name for f in dataset.files]
        assert len(names) == len(set(names))
        for remote in dataset.files:
            assert remote.url.startswith(("https://", "http://")) and remote.url.endswith(
                remote.name
            )
            assert remote.sha256 is None or len(remote.sha256) == 64
            assert remote.min_bytes > 0  # without a pinned checksum, a size floor
            if "raw.githubusercontent.com" in remote.url and dataset.name in NEW:
                commit = remote.url.split("/")[5]  # https://raw.../owner/repo/COMMIT/path
                assert len(commit) == 40 and int(commit, 16) >= 0, remote.url
        outputs = {o.path for o in dataset.outputs}
        assert {part.file for o in dataset.outputs for part in o.parts} <= set(names)
        assert {p for check in dataset.checks for p in check.paths} <= outputs
        assert all(o.parts for o in dataset.outputs) == dataset.downloadable
        assert all(not o.parts for o in dataset.outputs) != dataset.downloadable


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_entry_names_its_licence_source_and_kind(name: str) -> None:
    dataset = CATALOGUE[name]
    assert dataset.description.strip() and dataset.licence.strip() and dataset.source.strip()
    assert dataset.homepage.startswith("https://")
    assert dataset.kind in KINDS
    assert dataset.outputs and dataset.checks
    if not dataset.downloadable:
        # How it was prepared, so that a user can do it by hand.
        assert "by hand" in dataset.note


def shared_or_skip() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not there (the shared data folder beside the checkout)")
    return SHARED


@pytest.mark.parametrize("name", NEW)
def test_new_entries_write_the_files_of_the_shared_data_folder(name: str) -> None:
    shared = shared_or_skip()
    dataset = CATALOGUE[name]
    for output in dataset.outputs:
        assert (shared / output.path).is_file(), output.path
    for check in dataset.checks:
        # The line counts are those of the data READMEs, i.e. of the shared copies.
        assert check_prepared(shared, check) == check.min_lines, check.paths


@pytest.mark.parametrize("name", BY_HAND)
def test_corpora_prepared_by_hand_refuse_to_download_and_name_their_source(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: Path
) -> None:
    dataset = CATALOGUE[name]
    with pytest.raises(DataError, match="cannot be downloaded automatically") as error:
        download_dataset(dataset, tmp_path / "data")
    assert dataset.source in str(error.value)
    assert not (tmp_path / "data").exists() and not cache.exists()  # nothing fetched or written
    assert main(["data", "download", name, "--out", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err
    assert "cannot be downloaded automatically" in err and dataset.source in err


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
    if name in _FAKES:
        return _FAKES[name]()
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


def conllu(sentences: list[tuple[str, str]], lang: str) -> bytes:
    """A CoNLL-U file with one token line per sentence (sent_id, text)."""
    blocks = [
        f"# sent_id = {sent_id}\n# text = {text}\n# text_{lang}x = other\n"
        f"1\t{text.split()[0]}\t_\tX\t_\t_\t0\troot\t_\t_\n"
        for sent_id, text in sentences
    ]
    return ("# newdoc id = d1\n" + "\n".join(blocks) + "\n").encode("utf-8")


def quran_json(verses: list[str], as_list: bool = False) -> bytes:
    records: object = verses if as_list else {str(i): v for i, v in enumerate(verses, 1)}
    return json.dumps({"translations": records, "footnotes": {}}, ensure_ascii=False).encode()


def _fake_ud() -> dict[str, bytes]:
    ids = ["n01001011", "n01001013", "w01002001"]
    en = [(i, f"Sentence {i} in English .") for i in ids]
    hi = [(i, f"वाक्य {i} हिन्दी में ।") for i in ids]
    # The Hindi file lists its sentences in another order: the join on sent_id realigns them.
    return {
        "en_pud-ud-test.conllu": conllu(en, "en"),
        "hi_pud-ud-test.conllu": conllu(hi[::-1], "hi"),
    }


def _fake_mturk() -> dict[str, bytes]:
    files = {}
    for split in ("dev", "devtest", "test"):
        files[f"{split}.hi-en.hi"] = lines(f"{split} hi", 3)
        for k in range(4):
            files[f"{split}.hi-en.en.{k}"] = lines(f"{split} en{k}", 3)
    return files


def _fake_kaggle() -> dict[str, bytes]:
    rows = "source,english_sentence,hindi_sentence\n"
    rows += 'ted,"Hello, world",नमस्ते\n'
    rows += 'tides,"two\nlines",दो पंक्तियाँ\n'
    rows += 'indic2012,plain,"सादा , "" उद्धरण"\n'
    return {"Hindi_English_Truncated_Corpus.csv": rows.encode("utf-8")}


def _fake_quran() -> dict[str, bytes]:
    en = [f"verse {i}" for i in range(1, 12)]  # 11 verses: "10" must come after "9"
    return {
        "en-pickthall-tanzil.json": quran_json(en),
        "hi-farooq-tanzil.json": quran_json([f"आयत {i}" for i in range(1, 12)], as_list=True),
        "hi-hindi-tanzil.json": quran_json([f"आयत {i} हिन्दी" for i in range(1, 12)]),
        "hi-omari-quranenc.json": quran_json([f"आयत {i}[^{i}]" for i in range(1, 12)]),
    }


def _fake_wmt24() -> dict[str, bytes]:
    canary = "CANARY GUID 26b5c67b\n"
    source = canary + "".join(f"paragraph {i}\n" for i in range(997)) + "test suite 1\nts 2\n"
    ref = canary + "".join(f"अनुच्छेद {i}\n" for i in range(997))
    ref += "NO TRANSLATION AVAILABLE\n" * 2
    return {"en-hi.txt": source.encode(), "en-hi.refA.txt": ref.encode()}


_FAKES: dict[str, Callable[[], dict[str, bytes]]] = {
    "ud-pud": _fake_ud,
    "il-ilgov": lambda: {
        "nway_parallel.eng": lines("gov en", 6),
        "nway_parallel.hin": lines("सरकार", 6, newline_at_end=False),
    },
    "mturk": _fake_mturk,
    "kaggle-ted-tides": _fake_kaggle,
    "enindic-news-subtitles": lambda: {
        "dev.en.txt": lines("news en", 5),
        "dev.hi.txt": lines("समाचार", 5),
    },
    "quran": _fake_quran,
    # NTREX's files end their lines with CRLF.
    "ntrex128": lambda: {
        "newstest2019-src.eng.txt": lines("news", 4).replace(b"\n", b"\r\n"),
        "newstest2019-ref.hin.txt": lines("समाचार", 4).replace(b"\n", b"\r\n"),
    },
    "wmt24": _fake_wmt24,
    "newsdev2014": lambda: {
        "dev.tgz": tgz(
            {f"dev/newsdev2014.{lang}": lines(f"nd {lang}", 5) for lang in ("en", "hi")}
            | {"dev/newstest2013.en": lines("other", 3)}
        )
    },
    "muse-en-hi": lambda: {"en-hi.txt": "the\tयह\nwater\tपानी\nwater\tजल\n".encode()},
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


@pytest.mark.parametrize("name", DOWNLOADABLE)
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
        parallel = read_corpus(corpus, tmp_path / "data")
        assert len(parallel.src) == counts[check.paths[0]] > 0
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


def test_mturk_pairs_each_crowd_translation_with_its_hindi_source(
    server: FileServer, tmp_path: Path
) -> None:
    download_dataset(served(CATALOGUE["mturk"], server), tmp_path)
    en = (tmp_path / "en-hi/general/mturk/train.en").read_text(encoding="utf-8").splitlines()
    hi = (tmp_path / "en-hi/general/mturk/train.hi").read_text(encoding="utf-8").splitlines()
    assert len(en) == len(hi) == 3 * 4 * 3
    assert en[:4] == ["dev en0 0", "dev en0 1", "dev en0 2", "dev en1 0"]
    assert hi[:4] == ["dev hi 0", "dev hi 1", "dev hi 2", "dev hi 0"]
    assert (en[12], hi[12]) == ("devtest en0 0", "devtest hi 0")
    assert (en[-1], hi[-1]) == ("test en3 2", "test hi 2")


def test_ud_pud_is_joined_on_sent_id(server: FileServer, tmp_path: Path) -> None:
    download_dataset(served(CATALOGUE["ud-pud"], server), tmp_path)
    en = (tmp_path / "en-hi/general/ud-pud/train.en").read_text(encoding="utf-8").splitlines()
    hi = (tmp_path / "en-hi/general/ud-pud/train.hi").read_text(encoding="utf-8").splitlines()
    assert [e.split()[1] for e in en] == [h.split()[1] for h in hi]
    assert en[0] == "Sentence n01001011 in English ." and hi[0] == "वाक्य n01001011 हिन्दी में ।"


def test_wmt24_drops_the_canary_and_the_test_suites(server: FileServer, tmp_path: Path) -> None:
    download_dataset(served(CATALOGUE["wmt24"], server), tmp_path)
    en = (tmp_path / "en-hi/dev-general/wmt24.en").read_text(encoding="utf-8").splitlines()
    hi = (tmp_path / "en-hi/dev-general/wmt24.hi").read_text(encoding="utf-8").splitlines()
    assert len(en) == len(hi) == 997
    assert (en[0], en[-1]) == ("paragraph 0", "paragraph 996")
    assert (hi[0], hi[-1]) == ("अनुच्छेद 0", "अनुच्छेद 996")


def test_quran_pairs_every_hindi_translation_with_pickthall_verse_by_verse(
    server: FileServer, tmp_path: Path
) -> None:
    download_dataset(served(CATALOGUE["quran"], server), tmp_path)
    folder = tmp_path / "en-hi/religious/quran"
    english = [f"verse {i}" for i in range(1, 12)]
    for name in ("farooq-tanzil", "hindi-tanzil", "omari-quranenc"):
        assert (folder / f"{name}.en").read_text(encoding="utf-8").splitlines() == english
    assert (folder / "farooq-tanzil.hi").read_text(encoding="utf-8").splitlines()[9] == "आयत 10"
    omari = (folder / "omari-quranenc.hi").read_text(encoding="utf-8").splitlines()
    assert omari[-1] == "आयत 11[^11]"  # footnote marks are kept


def test_kaggle_csv_columns_become_aligned_lines(server: FileServer, tmp_path: Path) -> None:
    download_dataset(served(CATALOGUE["kaggle-ted-tides"], server), tmp_path)
    folder = tmp_path / "en-hi/general/kaggle-ted-tides"
    en = (folder / "train.en").read_text(encoding="utf-8").splitlines()
    hi = (folder / "train.hi").read_text(encoding="utf-8").splitlines()
    assert en == ["Hello, world", "two lines", "plain"]  # a line break inside a field: a space
    assert hi == ["नमस्ते", "दो पंक्तियाँ", 'सादा , " उद्धरण']


def test_ntrex_crlf_line_ends_become_lf(server: FileServer, tmp_path: Path) -> None:
    download_dataset(served(CATALOGUE["ntrex128"], server), tmp_path)
    data = (tmp_path / "en-hi/dev-general/ntrex128.en").read_bytes()
    assert b"\r" not in data and data.splitlines() == [f"news {i}".encode() for i in range(4)]


# ------------------------------------------------------------------------------ extraction steps


def write_one(tmp_path: Path, name: str, data: bytes, part: Part) -> list[str]:
    """Prepare one output from one local file (no download) and return its lines."""
    downloads = tmp_path / "downloads"
    downloads.mkdir(exist_ok=True)
    (downloads / name).write_bytes(data)
    target = write_output(downloads, tmp_path / "root", Output("out.txt", (part,)))
    text = target.read_text(encoding="utf-8")
    assert text.endswith("\n") or text == ""
    return text.splitlines()


def test_csv_extraction_reads_quoted_fields_and_names_a_missing_column(tmp_path: Path) -> None:
    data = b'a,b\n"x, y",1\n"multi\r\nline",2\n'
    assert write_one(
        tmp_path, "f.csv", b"\xef\xbb\xbf" + data, Part("f.csv", extract=Extract("csv", "a"))
    ) == [
        "x, y",
        "multi line",
    ]
    with pytest.raises(DataError, match="no CSV column 'c'"):
        write_one(tmp_path, "f.csv", data, Part("f.csv", extract=Extract("csv", "c")))
    assert not (tmp_path / "root" / "out.txt.tmp").exists()  # no half-written file is left


def test_json_extraction_takes_numbered_records_in_numeric_order_or_a_list(
    tmp_path: Path,
) -> None:
    records = {"10": "ten", "2": "two", "1": "one"}
    data = json.dumps({"translations": records}).encode()
    part = Part("t.json", extract=Extract("json", "translations"))
    assert write_one(tmp_path, "t.json", data, part) == ["one", "two", "ten"]
    listed = json.dumps({"translations": ["a", "b\nc"]}).encode()
    assert write_one(tmp_path, "t.json", listed, part) == ["a", "b c"]
    with pytest.raises(DataError, match="no list or object 'translations'"):
        write_one(tmp_path, "t.json", b'{"other": []}', part)
    with pytest.raises(DataError, match="not valid JSON"):
        write_one(tmp_path, "t.json", b'{"translations": [', part)
    with pytest.raises(DataError, match="record 2 of 'translations' is not a string"):
        write_one(tmp_path, "t.json", b'{"translations": ["a", 3]}', part)


def test_conllu_extraction_orders_by_sent_id_and_needs_ids_and_texts(tmp_path: Path) -> None:
    part = Part("x.conllu", extract=Extract("conllu", "text"))
    data = conllu([("s2", "second = 2"), ("s1", "first")], "en")
    assert write_one(tmp_path, "x.conllu", data, part) == ["first", "second = 2"]
    no_id = b"# text = lonely\n1\tlonely\t_\tX\t_\t_\t0\troot\t_\t_\n\n"
    with pytest.raises(DataError, match="line 3 has no # sent_id"):
        write_one(tmp_path, "x.conllu", no_id, part)
    twice = conllu([("s1", "a"), ("s1", "b")], "en")
    with pytest.raises(DataError, match="sent_id 's1' occurs twice"):
        write_one(tmp_path, "x.conllu", twice, part)
    no_text = b"# sent_id = s9\n1\tw\t_\tX\t_\t_\t0\troot\t_\t_\n"
    with pytest.raises(DataError, match="has no # text"):
        write_one(tmp_path, "x.conllu", no_text, part)


def test_line_slices_keep_a_range_and_notice_a_short_file(tmp_path: Path) -> None:
    data = b"header\r\na\nb\nc\ntail"
    assert write_one(tmp_path, "f.txt", data, Part("f.txt", lines=(1, 4))) == ["a", "b", "c"]
    with pytest.raises(DataError, match="has only 5 lines, expected at least 9"):
        write_one(tmp_path, "f.txt", data, Part("f.txt", lines=(1, 9)))
    with pytest.raises(ValueError, match="either lines or extract"):
        Part("f.txt", lines=(0, 1), extract=Extract("csv", "a"))
    with pytest.raises(ValueError, match="start < stop"):
        Part("f.txt", lines=(3, 3))


def test_crlf_becomes_lf_even_across_read_blocks(tmp_path: Path) -> None:
    block = 1 << 20
    data = b"x" * (block - 1) + b"\r\n" + b"y\r\nz\r"  # the first "\r\n" spans two blocks
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f.txt").write_bytes(data)
    target = write_output(tmp_path / "in", tmp_path, Output("o.txt", (Part("f.txt"),)))
    assert target.read_bytes() == b"x" * (block - 1) + b"\ny\nz\r\n"


def test_prepared_gzip_files_are_counted_decompressed(tmp_path: Path) -> None:
    (tmp_path / "m.hi.gz").write_bytes(gzip.compress("एक\nदो\nतीन\n".encode()))
    assert check_prepared(tmp_path, Check(("m.hi.gz",), 3)) == 3


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


def test_data_list_groups_the_corpora_by_kind_and_says_which_are_prepared_by_hand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert tuple(_KIND_TITLES) == KINDS  # every kind has a title, in the catalogue's order
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    headers = [
        out.index(title) for title in ("Parallel corpora", "Dev sets", "Monolingual", "Dict")
    ]
    assert headers == sorted(headers)
    for name, dataset in CATALOGUE.items():
        block = out[out.index(f"\n{name}\n") :].split("\n\n", 1)[0]
        assert "licence:" in block and "source:" in block
        if dataset.downloadable:
            assert f"anuvad data download {name}" in block
        else:
            assert "by hand only" in block
    assert main(["data", "list", "--kind", "dictionary"]) == 0
    out = capsys.readouterr().out
    assert "\nmuse-en-hi\n" in out and "\nhvg\n" not in out and "Parallel" not in out


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
