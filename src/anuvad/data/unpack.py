"""From downloaded files to the files the recipes read: which archive members make up each
prepared file (:class:`Part`, :class:`Output`), how they are unpacked, sliced or extracted
(:class:`Extract`: a CSV column, the records of a JSON file, the sentences of a CoNLL-U treebank)
and concatenated, and how the result is checked (:class:`Check`). The catalogue itself is
:mod:`anuvad.data.catalogue`.

Every prepared file ends each line with LF (CRLF line ends are turned into LF).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, cast

from anuvad.errors import DataError


@dataclass(frozen=True)
class Extract:
    """How a structured file becomes one text line per record.

    ``kind``:
        ``"csv"``: the column named ``key`` of a CSV file with a header row, row by row.
        ``"json"``: the records under the top-level member ``key`` of a JSON file: a list (in
        order) or an object keyed by record numbers (in numeric order, e.g. verse 1..6236).
        ``"conllu"``: the sentence comment ``key`` (``"text"`` for ``# text = ...``) of every
        sentence of a CoNLL-U file, in ``sent_id`` order, so that the files of a parallel
        treebank (the same ``sent_id`` in every language) line up.

    Line breaks inside a record become spaces (a record is one line).
    """

    kind: Literal["csv", "json", "conllu"]
    key: str


@dataclass(frozen=True)
class Part:
    """A file inside a download: ``member`` of the archive ``file`` (None: the file itself,
    gunzipped when it ends in ``.gz``). ``member`` matches an archive path's end, e.g.
    ``dev/eng_Latn.dev`` matches ``flores200_dataset/dev/eng_Latn.dev``.

    ``lines=(start, stop)`` keeps only the lines ``start <= i < stop`` (0-based), e.g. to drop a
    header line or a test suite appended to a test set; ``extract`` turns a structured file into
    text lines (:class:`Extract`). The two are not combined.
    """

    file: str
    member: str | None = None
    lines: tuple[int, int] | None = None
    extract: Extract | None = None

    def __post_init__(self) -> None:
        if self.lines is not None and self.extract is not None:
            raise ValueError(f"{self.file}: a part takes either lines or extract, not both")
        if self.lines is not None and not 0 <= self.lines[0] < self.lines[1]:
            raise ValueError(f"{self.file}: lines must be (start, stop) with 0 <= start < stop")


@dataclass(frozen=True)
class Output:
    """A prepared file: its path under the data root and the parts concatenated into it (none
    for a corpus that cannot be downloaded automatically: then only where it belongs)."""

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


def _copy_blocks(handle: IO[bytes], out: IO[bytes]) -> None:
    """Copy a whole file, CRLF turned into LF, ending with a line end."""
    last = b"\n"
    carry = b""  # a "\r" at the end of a block may be the first half of "\r\n"
    for raw in iter(lambda: handle.read(1 << 20), b""):
        block = carry + raw
        carry = b""
        if block.endswith(b"\r"):
            block, carry = block[:-1], b"\r"
        block = block.replace(b"\r\n", b"\n")
        if block:
            out.write(block)
            last = block[-1:]
    if carry:
        out.write(carry)
        last = carry
    if last != b"\n":
        out.write(b"\n")


def _copy_lines(handle: IO[bytes], out: IO[bytes], lines: tuple[int, int], where: str) -> None:
    """Copy the lines ``start <= i < stop`` (0-based), each ended by LF."""
    start, stop = lines
    count = 0
    for count, line in enumerate(handle, 1):
        if count > stop:
            break
        if count > start:
            out.write(line.rstrip(b"\r\n") + b"\n")
    if count < stop:
        raise DataError(
            f"{where} has only {count:,} lines, expected at least {stop:,} (lines {start + 1:,} "
            f"to {stop:,} are used): the file changed upstream or the download is not the "
            f"expected file."
        )


def _one_line(text: str) -> str:
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def _csv_records(text: IO[str], column: str, where: str) -> Iterator[str]:
    reader = csv.DictReader(text)
    if reader.fieldnames is None or column not in reader.fieldnames:
        raise DataError(
            f"{where} has no CSV column {column!r} (columns: {reader.fieldnames}): the file "
            f"changed upstream or the download is not the expected file."
        )
    for row in reader:
        yield row[column] or ""


def _json_records(text: IO[str], key: str, where: str) -> Iterator[str]:
    try:
        data = json.load(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where} is not valid JSON ({exc}): the download is damaged.") from exc
    records = data.get(key) if isinstance(data, dict) else None
    if isinstance(records, dict):
        try:
            numbered = sorted((int(number), value) for number, value in records.items())
        except ValueError as exc:
            raise DataError(f"{where}: the keys of {key!r} are not record numbers") from exc
        values = [value for _, value in numbered]
    elif isinstance(records, list):
        values = records
    else:
        raise DataError(
            f"{where} has no list or object {key!r} at the top level: the file format changed "
            f"upstream or the download is not the expected file."
        )
    for number, value in enumerate(values, 1):
        if not isinstance(value, str):
            raise DataError(f"{where}: record {number} of {key!r} is not a string")
        yield value


def _conllu_records(text: IO[str], key: str, where: str) -> Iterator[str]:
    sentences: dict[str, str] = {}
    comments: dict[str, str] = {}

    def finish(line_no: int) -> None:
        if not comments:
            return
        sent_id = comments.get("sent_id")
        if sent_id is None or key not in comments:
            missing = "sent_id" if sent_id is None else key
            raise DataError(f"{where}: the sentence ending at line {line_no} has no # {missing}")
        if sent_id in sentences:
            raise DataError(f"{where}: sent_id {sent_id!r} occurs twice (line {line_no})")
        sentences[sent_id] = comments[key]
        comments.clear()

    line_no = 0
    for line_no, raw in enumerate(text, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            finish(line_no)
        elif line.startswith("#") and "=" in line:
            name, value = line[1:].split("=", 1)
            comments.setdefault(name.strip(), value.strip())
    finish(line_no)
    for sent_id in sorted(sentences):
        yield sentences[sent_id]


def extract_lines(handle: IO[bytes], extract: Extract, where: str) -> Iterator[str]:
    """The records of a structured file (``where`` names it in errors), one text line each.

    Raises:
        DataError: the file is not UTF-8 or lacks what ``extract`` asks for.
    """
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    readers = {"csv": _csv_records, "json": _json_records, "conllu": _conllu_records}
    try:
        for record in readers[extract.kind](text, extract.key, where):
            yield _one_line(record)
    except UnicodeDecodeError as exc:
        raise DataError(f"{where} is not UTF-8 text ({exc})") from exc
    finally:
        text.detach()


def write_output(downloads: Path, root: Path, output: Output) -> Path:
    """Write the parts one after the other into ``root/output.path`` (atomically; every part
    ends a line; CRLF becomes LF).

    Args:
        downloads: the folder holding the downloaded files.
        root: the data root the recipes read.
        output: the file to write and its parts.

    Returns:
        The written file.

    Raises:
        DataError: an archive lacks a member, a file is shorter than its ``lines`` or lacks
            what its ``extract`` asks for (the message says how to recover).
    """
    target = root / output.path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    try:
        with tmp.open("wb") as out:
            for part in output.parts:
                where = part.file + (f" ({part.member})" if part.member else "")
                with _open_part(downloads, part) as handle:
                    if part.extract is not None:
                        for line in extract_lines(handle, part.extract, where):
                            out.write(line.encode("utf-8") + b"\n")
                    elif part.lines is not None:
                        _copy_lines(handle, out, part.lines, where)
                    else:
                        _copy_blocks(handle, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, target)
    return target


def _count_lines(path: Path, columns: int) -> int:
    count = 0
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
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
    """Verify prepared files against ``check``; return their line count (``.gz`` files are
    counted decompressed).

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
