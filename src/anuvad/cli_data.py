"""``anuvad data list`` and ``anuvad data download NAME``: the catalogue of public corpora."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path


def cmd_data_list(args: argparse.Namespace) -> int:
    """Print every catalogue entry: what it is, its licence, its URLs and checksum status."""
    from anuvad.datasets import CATALOGUE
    from anuvad.download import cache_dir

    print(f"cache: {cache_dir()} (set $ANUVAD_CACHE to change it)\n")
    for dataset in CATALOGUE.values():
        print(f"{dataset.name}\n  {dataset.description}\n  licence: {dataset.licence}")
        print(f"  home:    {dataset.homepage}")
        for remote in dataset.files:
            pinned = f"sha256 {remote.sha256}" if remote.sha256 else "checksum not pinned"
            print(f"  file:    {remote.url} ({pinned})")
        print(f"  writes:  {', '.join(output.path for output in dataset.outputs)}")
        if dataset.note:
            print(f"  note:    {dataset.note}")
        print()
    return 0


class _Progress:
    """A one-line download progress display on stderr."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.last < 0.5 and done != total:
            return
        self.last = now
        shown = f"{done / 1e6:,.1f} MB" + (f" of {total / 1e6:,.1f} MB" if total else "")
        print(f"\r  {shown}", end="\n" if done == total else "", file=sys.stderr, flush=True)


def cmd_data_download(args: argparse.Namespace) -> int:
    """Download, prepare and verify one corpus; say where it went and how to use it."""
    from anuvad.datasets import download_dataset, get_dataset
    from anuvad.download import cache_dir

    dataset = get_dataset(args.name)
    out = Path(args.out) if args.out else cache_dir() / "data"
    source = Path(args.source) if args.source else None
    counts = download_dataset(dataset, out, source_dir=source, progress=_Progress())
    print(f"{dataset.name}: prepared under {out} (licence: {dataset.licence})")
    for path, lines in counts.items():
        print(f"  {path}: {lines:,} lines")
    print(f"use it: export ANUVAD_DATA={out}   (or set data.data_root in the config)")
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad data list|download`` to the CLI."""
    p = add("data", "List or download the public corpora the recipes in configs/ use.")
    sub = p.add_subparsers(dest="data_command", required=True)
    listing = sub.add_parser("list", help="the catalogue: corpora, licences, URLs")
    listing.set_defaults(func=cmd_data_list)
    get = sub.add_parser("download", help="download, extract, prepare and verify a corpus")
    get.add_argument("name", help="hvg, tatoeba-hin, iitb, multi30k, flores200, wmt14-en-de")
    get.add_argument("--out", help="data root to write (default: <cache>/data)")
    get.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="a folder with the files downloaded by hand (used instead of the network)",
    )
    get.set_defaults(func=cmd_data_download)
