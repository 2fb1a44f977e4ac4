"""``anuvad data list|download|pack|unpack``: the catalogue of public corpora, and the files a
set of recipes reads packed into one checksummed archive (for a machine without the data)."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from anuvad.data_config import DATA_ENV_VAR

_KIND_TITLES = {
    "parallel": "Parallel corpora (training pairs)",
    "dev": "Dev sets (validation only: never train on them)",
    "monolingual": "Monolingual Hindi (for back-translation)",
    "dictionary": "Dictionaries (English -> Hindi word pairs)",
}


def _field(label: str, text: str) -> None:
    """Print ``label: text``, wrapped at 100 columns under the text (URLs are not broken)."""
    print(
        textwrap.fill(
            text,
            width=100,
            initial_indent=f"  {label + ':':<9}",
            subsequent_indent=" " * 11,
            break_long_words=False,
            break_on_hyphens=False,
        )
    )


def cmd_data_list(args: argparse.Namespace) -> int:
    """Print the catalogue grouped by kind: what each corpus is, its licence and source, how to
    get it (its URLs and checksum status, or how it was prepared by hand) and what it writes."""
    from anuvad.data.catalogue import CATALOGUE, KINDS
    from anuvad.data.download import cache_dir

    kinds = [args.kind] if args.kind else list(KINDS)
    print(f"cache: {cache_dir()} (set $ANUVAD_CACHE to change it)")
    for kind in kinds:
        entries = [d for d in CATALOGUE.values() if d.kind == kind]
        automatic = sum(d.downloadable for d in entries)
        title = (
            f"{_KIND_TITLES[kind]}: {automatic} downloadable, {len(entries) - automatic} by hand"
        )
        print(f"\n{title}\n{'=' * len(title)}\n")
        for dataset in entries:
            print(dataset.name)
            print(
                textwrap.fill(dataset.description, 100, initial_indent="  ", subsequent_indent="  ")
            )
            _field("licence", dataset.licence)
            _field("source", dataset.source)
            _field("home", dataset.homepage)
            if dataset.downloadable:
                _field("get", f"anuvad data download {dataset.name}")
            else:
                _field("get", "by hand only (cannot be downloaded automatically; see note)")
            for remote in dataset.files:
                pinned = f"sha256 {remote.sha256}" if remote.sha256 else "checksum not pinned"
                print(f"  file:    {remote.url} ({pinned})")
            _field("writes", ", ".join(output.path for output in dataset.outputs))
            if dataset.note:
                _field("note", dataset.note)
            print()
    return 0


class DownloadProgress:
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
    from anuvad.data.catalogue import download_dataset, get_dataset
    from anuvad.data.download import cache_dir

    dataset = get_dataset(args.name)
    out = Path(args.out) if args.out else cache_dir() / "data"
    source = Path(args.source) if args.source else None
    counts = download_dataset(dataset, out, source_dir=source, progress=DownloadProgress())
    print(f"{dataset.name}: prepared under {out} (licence: {dataset.licence})")
    for path, lines in counts.items():
        print(f"  {path}: {lines:,} lines")
    print(f"use it: export ANUVAD_DATA={out}   (or set data.data_root in the config)")
    return 0


def cmd_data_pack(args: argparse.Namespace) -> int:
    """Pack every file the configs read (plus ``--file``s) into one checksummed archive."""
    from anuvad.cli.input_checks import unwritable
    from anuvad.config import load_config
    from anuvad.data.corpora import resolve_path
    from anuvad.data.pack import plan_pack, recipe_files, write_pack

    if problem := unwritable(Path(args.out), replaced=True):
        print(f"error: --out {args.out}: {problem}", file=sys.stderr)
        return 2  # before reading and compressing gigabytes
    configs = [load_config(path) for path in args.config]
    root = configs[0].data.resolve_root() if configs else Path(os.environ.get(DATA_ENV_VAR, "."))
    files = recipe_files(configs) + [(resolve_path(f, root), root) for f in args.file]
    if args.data_root_only:  # e.g. ./data/synthetic/: the machine that unpacks makes them
        files = [
            (path, base) for path, base in files if path.resolve().is_relative_to(base.resolve())
        ]
    planned = plan_pack(files)
    digest = write_pack(planned, Path(args.out), preset=args.level)
    raw = sum(f.size for f in planned)
    size = Path(args.out).stat().st_size
    print(f"{args.out}: {len(planned)} files, {raw / 2**20:.1f} MiB -> {size / 2**20:.1f} MiB")
    print(f"sha256 {digest}")
    print(f"unpack it: anuvad data unpack {args.out} --to DIR, then export {DATA_ENV_VAR}=DIR")
    return 0


def cmd_data_unpack(args: argparse.Namespace) -> int:
    """Unpack and verify a pack written by ``anuvad data pack``."""
    from anuvad.data.download import sha256_of
    from anuvad.data.pack import unpack

    if not Path(args.pack).is_file():
        print(f"error: {args.pack}: no such pack file", file=sys.stderr)
        return 2
    if args.sha256 and sha256_of(Path(args.pack)) != args.sha256:
        print(f"error: {args.pack} is not the pack --sha256 names; copy it again", file=sys.stderr)
        return 2
    files = unpack(Path(args.pack), Path(args.to))
    print(f"{args.pack}: {len(files)} files verified and in place under {args.to}")
    print(f"use them: export {DATA_ENV_VAR}={args.to}")
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad data list|download|pack|unpack`` to the CLI."""
    p = add(
        "data",
        "List or download the public corpora the recipes in configs/ use; pack what recipes read "
        "for another machine.",
    )
    sub = p.add_subparsers(dest="data_command", required=True)
    listing = sub.add_parser("list", help="the catalogue: corpora, licences, sources, URLs")
    listing.add_argument(
        "--kind",
        choices=list(_KIND_TITLES),
        help="list only one kind of corpus",
    )
    listing.set_defaults(func=cmd_data_list)
    get = sub.add_parser("download", help="download, extract, prepare and verify a corpus")
    get.add_argument("name", help="a corpus name from `anuvad data list`")
    get.add_argument("--out", help="data root to write (default: <cache>/data)")
    get.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="a folder with the files downloaded by hand (used instead of the network)",
    )
    get.set_defaults(func=cmd_data_download)
    pack = sub.add_parser(
        "pack", help="every file some recipes read, in one checksummed archive (.tar.xz)"
    )
    pack.add_argument(
        "--config",
        action="append",
        default=[],
        help="a recipe (YAML) whose corpora to pack; repeat",
    )
    pack.add_argument(
        "--file",
        action="append",
        default=[],
        help="one more file, relative to the data root (e.g. en-hi/mono-hi/bbc-news.hi.gz); repeat",
    )
    pack.add_argument(
        "--data-root-only",
        action="store_true",
        help="leave out the recipes' files outside the data root (./data/synthetic/...: made by "
        "back-translation on the machine that unpacks)",
    )
    pack.add_argument("--out", required=True, help="the pack to write (e.g. enhi.pack.tar.xz)")
    pack.add_argument("--level", type=int, default=6, choices=range(10), help="xz level (6)")
    pack.set_defaults(func=cmd_data_pack)
    unpacking = sub.add_parser("unpack", help="unpack and verify a pack into a data root")
    unpacking.add_argument("pack", help="a file written by anuvad data pack")
    unpacking.add_argument("--to", required=True, help="the data root to fill")
    unpacking.add_argument("--sha256", help="the pack's own checksum, as pack printed it")
    unpacking.set_defaults(func=cmd_data_unpack)
