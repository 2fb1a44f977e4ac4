"""The catalogue of known corpora: where each is published, and how it becomes the files that the
recipes in ``configs/`` read.

``anuvad data download NAME`` downloads a corpus into the user cache (see
:func:`anuvad.download.cache_dir`), extracts the needed files and writes them under a data root
in the layout the configs use (``en-hi/hvg/hindi-visual-genome-train.txt``,
``en-de/multi30k/train.en``, ...); point ``$ANUVAD_DATA`` (or ``data.data_root``) at that root.

Checksums: none of the upstream files had a SHA-256 pinned when this catalogue was written (they
could not be fetched from the machine it was written on, and no checksum is invented here).
Without one, each download is checked for a plausible size and its archive format, and the
prepared files for their line counts and column counts. Pin a checksum by setting
``RemoteFile.sha256`` once a file has been verified by hand.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from anuvad.download import Progress, RemoteFile, cache_dir, copy_local, download
from anuvad.errors import DataError
from anuvad.unpack import Check, Output, Part, check_prepared, write_output

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Dataset:
    """One corpus of the catalogue."""

    name: str
    description: str
    homepage: str
    licence: str
    files: tuple[RemoteFile, ...]
    outputs: tuple[Output, ...]
    checks: tuple[Check, ...]
    note: str = ""


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

CATALOGUE: dict[str, Dataset] = {
    dataset.name: dataset
    for dataset in (
        Dataset(
            name="hvg",
            description="Hindi Visual Genome 1.1: image captions, English -> Hindi, post-edited "
            "(29k train / 1k dev / 1.6k test / 1.4k challenge)",
            homepage="https://lindat.mff.cuni.cz/repository/xmlui/handle/11234/1-3267",
            licence="CC BY-NC-SA 4.0 (non-commercial research)",
            files=tuple(
                RemoteFile(
                    f"{_HVG}/hindi-visual-genome-{split}.txt.gz",
                    f"hindi-visual-genome-{split}.txt.gz",
                    min_bytes=10_000,
                )
                for split, _ in _HVG_SPLITS
            ),
            outputs=tuple(
                Output(
                    f"en-hi/hvg/hindi-visual-genome-{split}.txt",
                    (Part(f"hindi-visual-genome-{split}.txt.gz"),),
                )
                for split, _ in _HVG_SPLITS
            ),
            checks=tuple(
                Check((f"en-hi/hvg/hindi-visual-genome-{split}.txt",), lines, columns=7)
                for split, lines in _HVG_SPLITS
            ),
            note="TSV, 7 columns: image_id x y w h english hindi",
        ),
        Dataset(
            name="tatoeba-hin",
            description="Tatoeba English-Hindi sentence pairs as packaged by manythings.org/anki "
            "(everyday sentences, ~3k pairs, grows over time)",
            homepage="https://www.manythings.org/anki/",
            licence="CC BY 2.0 FR (attribution per line)",
            files=(
                RemoteFile(
                    "https://www.manythings.org/anki/hin-eng.zip", "hin-eng.zip", None, 50_000
                ),
            ),
            outputs=(
                Output("en-hi/anki/hin.txt", (Part("hin-eng.zip", "hin.txt"),)),
                Output("en-hi/anki/_about.txt", (Part("hin-eng.zip", "_about.txt"),)),
            ),
            checks=(Check(("en-hi/anki/hin.txt",), 2_500, columns=3),),
            note="TSV, 3 columns: english hindi attribution",
        ),
        Dataset(
            name="iitb",
            description="IIT Bombay English-Hindi corpus v1.5 (1.6M pairs of mixed quality) with "
            "its dev (= WMT14 newsdev2014) and test sets",
            homepage="https://www.cfilt.iitb.ac.in/iitb_parallel/",
            licence="CC BY-NC 4.0 (non-commercial research)",
            files=(
                RemoteFile(f"{_IITB}/parallel.tgz", "parallel.tgz", None, 50_000_000),
                RemoteFile(f"{_IITB}/dev_test.tgz", "dev_test.tgz", None, 100_000),
            ),
            outputs=(
                *_aligned(
                    "en-hi/iitb", "train", "parallel.tgz", "IITB.en-hi.en", "IITB.en-hi.hi", "en-hi"
                ),
                *_aligned(
                    "en-hi/iitb",
                    "dev",
                    "dev_test.tgz",
                    "dev_test/dev.en",
                    "dev_test/dev.hi",
                    "en-hi",
                ),
                *_aligned(
                    "en-hi/iitb",
                    "test",
                    "dev_test.tgz",
                    "dev_test/test.en",
                    "dev_test/test.hi",
                    "en-hi",
                ),
            ),
            checks=(
                Check(("en-hi/iitb/train.en", "en-hi/iitb/train.hi"), 1_500_000),
                Check(("en-hi/iitb/dev.en", "en-hi/iitb/dev.hi"), 500),
                Check(("en-hi/iitb/test.en", "en-hi/iitb/test.hi"), 2_400),
            ),
            note="CFILT has moved these files before; if the URL fails, the same corpus is on "
            "Hugging Face as cfilt/iitb-english-hindi (use --from with files fetched by hand).",
        ),
        Dataset(
            name="multi30k",
            description="Multi30k task 1: Flickr30k captions, English-German, raw text "
            "(29k train / 1,014 val / 1k test 2016)",
            homepage="https://github.com/multi30k/dataset",
            licence="research use (Flickr30k terms)",
            files=tuple(
                RemoteFile(f"{_M30K}/{split}.{lang}.gz", f"{split}.{lang}.gz", None, 10_000)
                for split, _ in _M30K_SPLITS
                for lang in ("en", "de")
            ),
            outputs=tuple(
                Output(f"en-de/multi30k/{split}.{lang}", (Part(f"{split}.{lang}.gz"),))
                for split, _ in _M30K_SPLITS
                for lang in ("en", "de")
            ),
            checks=tuple(
                Check((f"en-de/multi30k/{split}.en", f"en-de/multi30k/{split}.de"), lines)
                for split, lines in _M30K_SPLITS
            ),
        ),
        Dataset(
            name="flores200",
            description="FLORES-200 dev and devtest, English-Hindi (997 / 1,012 sentences, "
            "professional translations of Wikipedia text): an out-of-domain test",
            homepage="https://github.com/facebookresearch/flores/tree/main/flores200",
            licence="CC BY-SA 4.0",
            files=(
                RemoteFile(
                    "https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz",
                    "flores200_dataset.tar.gz",
                    None,
                    5_000_000,
                ),
            ),
            outputs=(
                *_aligned(
                    "en-hi/flores200",
                    "dev",
                    "flores200_dataset.tar.gz",
                    "dev/eng_Latn.dev",
                    "dev/hin_Deva.dev",
                    "en-hi",
                ),
                *_aligned(
                    "en-hi/flores200",
                    "devtest",
                    "flores200_dataset.tar.gz",
                    "devtest/eng_Latn.devtest",
                    "devtest/hin_Deva.devtest",
                    "en-hi",
                ),
            ),
            checks=(
                Check(("en-hi/flores200/dev.en", "en-hi/flores200/dev.hi"), 997),
                Check(("en-hi/flores200/devtest.en", "en-hi/flores200/devtest.hi"), 1_012),
            ),
        ),
        Dataset(
            name="wmt14-en-de",
            description="WMT14 English-German training data as in the paper (Europarl v7 + "
            "Common Crawl + News Commentary v9, ~4.5M pairs) and newstest2013 (dev)",
            homepage="https://www.statmt.org/wmt14/translation-task.html",
            licence="WMT research use (per corpus)",
            files=(
                *(
                    RemoteFile(f"{_WMT}/wmt13/{name}", name, None, 10_000_000)
                    for name, _ in _WMT_TRAIN[:2]
                ),
                RemoteFile(f"{_WMT}/wmt14/{_WMT_TRAIN[2][0]}", _WMT_TRAIN[2][0], None, 10_000_000),
                RemoteFile(f"{_WMT}/wmt14/dev.tgz", "dev.tgz", None, 1_000_000),
            ),
            outputs=(
                *(
                    Output(
                        f"en-de/wmt14/train.{lang}",
                        tuple(Part(archive, f"{stem}.{lang}") for archive, stem in _WMT_TRAIN),
                    )
                    for lang in ("en", "de")
                ),
                *(
                    Output(
                        f"en-de/newstest2013/newstest2013.{lang}",
                        (Part("dev.tgz", f"dev/newstest2013.{lang}"),),
                    )
                    for lang in ("en", "de")
                ),
            ),
            checks=(
                Check(("en-de/wmt14/train.en", "en-de/wmt14/train.de"), 4_400_000),
                Check(
                    ("en-de/newstest2013/newstest2013.en", "en-de/newstest2013/newstest2013.de"),
                    3_000,
                ),
            ),
            note="The test set newstest2014 is not included: score with sacrebleu "
            "(`sacrebleu -t wmt14/full -l en-de --echo src`).",
        ),
    )
}


def get_dataset(name: str) -> Dataset:
    """The catalogue entry called ``name``.

    Raises:
        DataError: unknown name (the message lists the known ones).
    """
    if name not in CATALOGUE:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(CATALOGUE)}")
    return CATALOGUE[name]


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
    """
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
