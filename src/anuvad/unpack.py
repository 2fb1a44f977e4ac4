"""From downloaded files to the files the recipes read: which archive members make up each
prepared file (:class:`Part`, :class:`Output`), how they are unpacked and concatenated, and how
the result is checked (:class:`Check`). The catalogue itself is :mod:`anuvad.datasets`.
"""

from __future__ import annotations

import gzip
import os
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from anuvad.errors import DataError


@dataclass(frozen=True)
class Part:
    """A file inside a download: ``member`` of the archive ``file`` (None: the file itself,
    gunzipped when it ends in ``.gz``). ``member`` matches an archive path's end, e.g.
    ``dev/eng_Latn.dev`` matches ``flores200_dataset/dev/eng_Latn.dev``."""

    file: str
    member: str | None = None


@dataclass(frozen=True)
class Output:
    """A prepared file: its path under the data root and the parts concatenated into it."""

    path: str
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Check:
    """What a prepared corpus must look like: aligned files with equal line counts, or a TSV
    file whose every line has at least ``columns`` fields; at least ``min_lines`` lines."""

    paths: tuple[str, ...]
    min_lines: int
    columns: int = 0  # > 0: a TSV file (one path)


@contextmanager
def _open_part(downloads: Path, part: Part) -> Iterator[IO[bytes]]:
    path = downloads / part.file
    if part.member is None:
        if part.file.endswith(".gz"):
            with gzip.open(path, "rb") as unzipped:
                yield cast(IO[bytes], unzipped)
        else:
            with path.open("rb") as plain:
                yield plain
        return
    suffix = "/" + part.member
    if part.file.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n == part.member or n.endswith(suffix)]
            if names:
                with archive.open(names[0]) as zipped:
                    yield zipped
                return
    else:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                if member.isfile() and (member.name == part.member or member.name.endswith(suffix)):
                    extracted = archive.extractfile(member)
                    assert extracted is not None  # a regular file
                    with extracted:
                        yield extracted
                    return
    raise DataError(
        f"{path} has no file {part.member!r}: the archive's layout changed upstream or the "
        f"download is not the expected file. Delete {path} and run the command again."
    )


def write_output(downloads: Path, root: Path, output: Output) -> Path:
    """Concatenate the parts into ``root/output.path`` (atomically; every part ends a line).

    Args:
        downloads: the folder holding the downloaded files.
        root: the data root the recipes read.
        output: the file to write and its parts.

    Returns:
        The written file.

    Raises:
        DataError: an archive lacks a member (the message says how to recover).
    """
    target = root / output.path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("wb") as out:
        for part in output.parts:
            last = b"\n"
            with _open_part(downloads, part) as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    out.write(block)
                    last = block[-1:]
            if last != b"\n":
                out.write(b"\n")
    os.replace(tmp, target)
    return target


def _count_lines(path: Path, columns: int) -> int:
    count = 0
    with path.open("rb") as handle:
        for line_no, line in enumerate(handle, 1):
            count = line_no
            fields = line.count(b"\t") + 1
            if columns and fields < columns:
                raise DataError(
                    f"{path}: line {line_no} has {fields} tab-separated fields, "
                    f"expected {columns}; the corpus format changed upstream or the download is "
                    f"damaged."
                )
    return count


def check_prepared(root: Path, check: Check) -> int:
    """Verify prepared files against ``check``; return their line count.

    Raises:
        DataError: too few lines, unequal aligned files, or too few TSV columns.
    """
    counts = [_count_lines(root / path, check.columns) for path in check.paths]
    if len(set(counts)) > 1:
        listed = ", ".join(f"{p}: {n}" for p, n in zip(check.paths, counts, strict=True))
        raise DataError(f"aligned files differ in length ({listed}) under {root}")
    if counts[0] < check.min_lines:
        raise DataError(
            f"{root / check.paths[0]} has {counts[0]:,} lines, expected at least "
            f"{check.min_lines:,}: the download is incomplete or the corpus changed upstream."
        )
    return counts[0]
