"""The catalogue of known corpora: where each is published, and how it becomes the files that the
recipes in ``configs/`` read.

``anuvad data download NAME`` downloads a corpus into the user cache (see
:func:`anuvad.data.download.cache_dir`), extracts the needed files and writes them under a data root
in the layout the configs use (``en-hi/hvg/hindi-visual-genome-train.txt``,
``en-de/multi30k/train.en``, ...); point ``$ANUVAD_DATA`` (or ``data.data_root``) at that root.

Some corpora cannot be downloaded automatically: they were prepared by hand (sentence
splitting, filtering, de-duplication against other files, a sample, or a source that is not a
plain file). Their entries have no files; ``anuvad data list`` shows where they come from and how
they were prepared (``note``), and ``anuvad data download`` refuses them with that explanation.

Files on GitHub are fetched from raw.githubusercontent.com at a full commit SHA, so that they
cannot change under a recipe. Where the data README names only an abbreviated commit, or the
repository's layout changed over its history, the pinned commit is the one whose file was
compared with the prepared copy in the shared data folder; the note names the README's commit.

Checksums: none of the upstream files had a SHA-256 pinned when this catalogue was written (they
could not be fetched from the machine it was written on, and no checksum is invented here).
Without one, each download is checked for a plausible size and its archive format, and the
prepared files for their line counts and column counts. Pin a checksum by setting
``RemoteFile.sha256`` once a file has been verified by hand.
"""

from __future__ import annotations

from anuvad.data.catalogue import evaluation_mono, general, training
from anuvad.data.catalogue.dataset import (
    KINDS,
    Dataset,
    download_dataset,
    manual_preparation,
)
from anuvad.errors import DataError

CATALOGUE: dict[str, Dataset] = {
    dataset.name: dataset
    for module in (training, general, evaluation_mono)
    for dataset in module.DATASETS
}


def get_dataset(name: str) -> Dataset:
    """The catalogue entry called ``name``.

    Raises:
        DataError: unknown name (the message lists the known ones).
    """
    if name not in CATALOGUE:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(CATALOGUE)}")
    return CATALOGUE[name]


__all__ = [
    "CATALOGUE",
    "KINDS",
    "Dataset",
    "download_dataset",
    "get_dataset",
    "manual_preparation",
]
