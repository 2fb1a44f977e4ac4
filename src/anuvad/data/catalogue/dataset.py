"""The catalogue's record type, the helpers its entries are written with, and downloading."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from anuvad.data.download import Progress, RemoteFile, cache_dir, copy_local, download
from anuvad.data.unpack import Check, Output, Part, check_prepared, write_output
from anuvad.errors import DataError

logger = logging.getLogger(__name__)

#: The kinds of corpora, in the order ``anuvad data list`` shows them.
KINDS = ("parallel", "dev", "monolingual", "dictionary")


@dataclass(frozen=True)
class Dataset:
    """One corpus of the catalogue.

    Attributes:
        name: what ``anuvad data download`` takes.
        description: what the corpus is, in one sentence.
        homepage: where it is published.
        licence: its licence as stated by the source.
        source: the exact files it is made from (``repository@commit:path``, an archive URL).
        files: the files to download; empty when the corpus cannot be downloaded automatically.
        outputs: the prepared files, as paths under the data root the recipes read.
        checks: line and column counts the prepared files must have.
        note: format, caveats, and for a corpus without files how it was prepared.
        kind: ``parallel`` (training pairs), ``dev`` (validation only), ``monolingual`` or
            ``dictionary`` (word pairs); see :data:`KINDS`.
    """

    name: str
    description: str
    homepage: str
    licence: str
    source: str
    files: tuple[RemoteFile, ...]
    outputs: tuple[Output, ...]
    checks: tuple[Check, ...]
    note: str = ""
    kind: str = "parallel"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")

    @property
    def downloadable(self) -> bool:
        """Whether ``anuvad data download`` can fetch and prepare it."""
        return bool(self.files)


def _aligned(folder: str, split: str, file: str, src: str, tgt: str, langs: str) -> list[Output]:
    a, b = langs.split("-")
    return [
        Output(f"{folder}/{split}.{a}", (Part(file, src),)),
        Output(f"{folder}/{split}.{b}", (Part(file, tgt),)),
    ]


_HVG = "https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/1-3267"
_HVG_SPLITS = (("train", 28_000), ("dev", 950), ("test", 1_500), ("challenge-test-set", 1_350))
_IITB = "http://www.cfilt.iitb.ac.in/~moses/iitb_en_hi_parallel/iitb_corpus_download"
_M30K = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
_M30K_SPLITS = (("train", 29_000), ("val", 1_014), ("test_2016_flickr", 1_000))
_WMT = "https://www.statmt.org"
_WMT_TRAIN = (
    ("training-parallel-europarl-v7.tgz", "europarl-v7.de-en"),
    ("training-parallel-commoncrawl.tgz", "commoncrawl.de-en"),
    ("training-parallel-nc-v9.tgz", "news-commentary-v9.de-en"),
)


def _github(repo: str, commit: str, path: str, min_bytes: int) -> RemoteFile:
    """A file of a GitHub repository at a full commit SHA (named by its base name)."""
    assert len(commit) == 40, "pin GitHub files to a full commit SHA"
    return RemoteFile(
        f"https://raw.githubusercontent.com/{repo}/{commit}/{path}",
        path.rsplit("/", 1)[-1],
        None,
        min_bytes,
    )


def _by_hand(folder_or_file: str, *langs: str) -> tuple[Output, ...]:
    """Where a corpus that cannot be downloaded automatically lives under the data root."""
    if not langs:
        return (Output(folder_or_file, ()),)
    return tuple(Output(f"{folder_or_file}.{lang}", ()) for lang in langs)


_GENERAL = "en-hi/general"
_DEV = "en-hi/dev-general"
_MONO = "en-hi/mono-hi"
_DICT = "en-hi/dictionary"

# Commits (full SHAs, see the module docstring).
_ILGOV = ("vmujadia/MT-IL-ILGOV", "96da193acfc04395ebf77a811b2f03bd908ae689")
_MTURK = ("joshua-decoder/indian-parallel-corpora", "a2cd1a99a4f2dbf3a15fffce8182162cd27c1b7b")
_MTURK_SPLITS = ("dev", "devtest", "test")  # 1,082 + 993 + 1,113 Hindi sources
_ENINDIC = ("debajyoty/EnIndic-Corpus", "1fc16af4102120ff855f602afa50ea468be64633")
_KAGGLE = ("deepakmoud/datasets-for-experiment", "6eeeba007b7102e64dac10fbe414ae1c84768166")
_UD_EN = ("UniversalDependencies/UD_English-PUD", "02b6f1dcb653093ee5d9604260448386b860fe43")
_UD_HI = ("UniversalDependencies/UD_Hindi-PUD", "04131d896f370dca6dc1e40b35959771aecf1687")
_QURAN = "ewinsutriandi/data-quran"
_QURAN_AYAH = "c4b8e25d042e46337e098f7e9a52658d981954c0"  # layout ayah-translation/
_QURAN_OLD = "624e830d1e1fb23d0b3100087d6d6ce2804d78d5"  # layout translation/
_QURAN_HI = (
    ("farooq-tanzil", "translation/hi-farooq-tanzil.json", _QURAN_OLD),
    ("hindi-tanzil", "ayah-translation/hi-hindi-tanzil.json", _QURAN_AYAH),
    ("omari-quranenc", "ayah-translation/hi-omari-quranenc.json", _QURAN_AYAH),
)
_NTREX = ("MicrosoftTranslator/NTREX", "c9f006f2c132c932b83ccd7aaa6a35930dd9c370")
_WMT24 = ("wmt-conference/wmt24-news-systems", "5700af1fe59b1cde97d34c9fab22f92caf53c4d2")
_WMT24_LINES = (1, 998)  # line 0 is a canary; test-suite segments follow line 997

_MONO_CLEANING = (
    "Cleaning (en-hi/mono-hi/README.md): split into sentences at danda, ?, ! and '.' before "
    "a space or a Devanagari letter (abbreviations protected); NFC, zero-width spaces removed, "
    "whitespace collapsed; lines of 3-80 words with >= 80 % Devanagari letters kept; lines with "
    "URLs, e-mail/@handles, #tags, markup, '&' or social-media boilerplate dropped; exact "
    "duplicates removed across all mono-hi files (earlier files in its table win); lines equal to "
    "a held-out test or dev line, or sharing a 10-word window with a test line, removed. The "
    "cross-file de-duplication and the held-out sets make it impossible to rebuild exactly from "
    "the source alone."
)
_CONLL_DETOK = (
    "tokens joined with spaces, then spaces removed before , . danda ? ! : ; ) ] } % and after "
    "( [ {, straight quotes re-attached"
)
_DICT_FILTER = (
    "kept only pairs whose English side has a Latin letter and no Devanagari and whose Hindi "
    "side is only Devanagari letters, both <= 60 characters; English lower-cased, Hindi NFC, "
    "exact duplicates removed"
)


def _mono(name: str, lines: int, description: str, source: str, licence: str, how: str) -> Dataset:
    """A monolingual Hindi file of en-hi/mono-hi/ (prepared by hand, see its README)."""
    path = f"{_MONO}/{name}.hi.gz"
    return Dataset(
        name=name,
        description=f"{description}; {lines:,} sentences, gzip, one a line",
        homepage=f"https://github.com/{source.split('@', 1)[0]}",
        licence=licence,
        source=source,
        files=(),
        outputs=_by_hand(path),
        checks=(Check((path,), lines),),
        note=f"{how} {_MONO_CLEANING}",
        kind="monolingual",
    )


def manual_preparation(dataset: Dataset) -> str:
    """Why ``dataset`` cannot be downloaded automatically and how it was prepared instead."""
    return (
        f"{dataset.name} cannot be downloaded automatically: it was prepared by hand from "
        f"{dataset.source}. {dataset.note} Its prepared files belong at "
        f"{', '.join(o.path for o in dataset.outputs)} under the data root."
    )


def download_dataset(
    dataset: Dataset,
    out: Path | None = None,
    *,
    source_dir: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Download (or reuse) a corpus's files, prepare them under ``out`` and verify them.

    Args:
        dataset: a catalogue entry (:func:`get_dataset`).
        out: the data root to write (default ``<cache>/data``).
        source_dir: a folder holding files downloaded by hand (used instead of the network).
        progress: called with (bytes, total) while downloading.

    Returns:
        Line counts of the prepared corpora, by their first path.

    Raises:
        DataError: the corpus cannot be downloaded automatically (the message names its source
            and how it was prepared), a download or a prepared file fails its checks.
    """
    if not dataset.downloadable:
        raise DataError(manual_preparation(dataset))
    downloads = cache_dir() / "downloads" / dataset.name
    root = out if out is not None else cache_dir() / "data"
    for remote in dataset.files:
        local = copy_local(remote, source_dir, downloads) if source_dir else None
        if local is None:
            logger.info("downloading %s", remote.url)
            download(remote, downloads, progress)
    for output in dataset.outputs:
        write_output(downloads, root, output)
    return {check.paths[0]: check_prepared(root, check) for check in dataset.checks}
