"""Reading UTF-8 text files line by line, so that a bad byte is reported with its line and
offset: the corpora's files (:mod:`anuvad.data.corpora`), monolingual text, and what ``anuvad
translate`` and ``anuvad evaluate`` read (:func:`read_input`). Only ``\n`` ends a line, so line
*i* of the input is line *i* of the output, as ``wc -l`` and editors count them.
"""

from __future__ import annotations

import codecs
import gzip
import sys
from dataclasses import dataclass
from pathlib import Path

from anuvad.errors import DataError

__all__ = [
    "InputText",
    "input_bytes",
    "read_input",
    "read_input_lines",
    "read_lines",
    "read_text_lines",
]

_BOM = "\ufeff"


def _decode_line(raw: bytes, path: Path, line_no: int, file_offset: int) -> str:
    """Decode one line of UTF-8, naming the line and byte on failure."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: line {line_no} is not valid UTF-8 ({exc.reason} at byte {exc.start} of the "
            f"line, byte {file_offset + exc.start} of the file). Fix: convert the file to UTF-8 "
            f"(e.g. iconv -f <its encoding> -t UTF-8) or remove the line."
        ) from exc
    if line_no == 1 and text.startswith(_BOM):
        text = text[1:]
    return text


def read_lines(path: Path, limit: int) -> tuple[list[str], int]:
    """Decode the first ``limit`` lines of ``path`` (all when ``limit`` <= 0).

    Only ``\\n`` ends a line (``\\r`` and Unicode line separators stay in the text until stripping),
    so the numbering matches ``wc -l`` and text editors.

    Returns:
        The decoded lines (line endings removed, nothing else) and the file's total line count.
    """
    if not path.is_file():
        raise DataError(
            f"corpus file {path} does not exist. Fix: check the path in the config, or set "
            f"data.data_root (or $ANUVAD_DATA) to the folder relative paths are read from."
        )
    lines: list[str] = []
    count = 0
    offset = 0
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            for raw in handle:
                count += 1
                if limit <= 0 or count <= limit:
                    lines.append(_decode_line(raw, path, count, offset).rstrip("\r\n"))
                offset += len(raw)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise DataError(
            f"{path}: cannot be read after line {count} ({exc}). Fix: re-download or re-create "
            f"the file (a .gz file must be complete gzip data)."
        ) from exc
    return lines, count


@dataclass(frozen=True)
class InputText:
    """What :func:`read_input` read: the lines, and the line ending the text used."""

    lines: list[str]
    newline: str  # "\r\n" where most lines end so (a file saved on Windows), else "\n"
    text: str = ""  # the whole text as written (with ``whole``), byte for byte once encoded
    bom: bool = False  # it began with UTF-8's byte order mark (line 1 is read without it)
    final_newline: bool = True  # its last line ended with a newline


def read_input_lines(path: str | Path | None) -> list[str]:
    """The lines of :func:`read_input` (what ``anuvad evaluate`` reads)."""
    return read_input(path).lines


def read_input(path: str | Path | None, whole: bool = False) -> InputText:
    """The lines of a UTF-8 file, or of standard input when ``path`` is None or ``-`` (what
    ``anuvad translate`` reads), and its line ending. Only ``\n`` ends a line (``\r\n`` is
    accepted, and reported as the ending when most lines have it, so that the output can keep
    it), so line *i* of the input is line *i* of the output. With ``whole``, also the text
    exactly as written (an HTML document is translated as one).

    Raises:
        DataError: the file is missing, or a line is not valid UTF-8 (naming the line and the
            byte, and how to fix it), or holds a NUL byte. A file with a UTF-16 or UTF-32 byte
            order mark is read in that encoding.
    """
    if path is None or str(path) == "-":
        stream = sys.stdin  # a text stream without .buffer (e.g. a test's StringIO) is UTF-8
        buffer = getattr(stream, "buffer", None)
        raw = buffer.read() if buffer is not None else stream.read().encode("utf-8")
        name = Path("<stdin>")
    else:
        name = Path(path)
        raw = input_bytes(name, "a text file, one line each")
    raw = _utf8_of(raw, name)
    lines, offset = [], 0
    chunks = raw.split(b"\n")
    if chunks and chunks[-1] == b"":
        chunks.pop()  # the final newline ends the last line; it does not start another
    for number, chunk in enumerate(chunks, start=1):
        lines.append(_decode_line(chunk, name, number, offset).rstrip("\r"))
        offset += len(chunk) + 1
    crlf = sum(1 for chunk in chunks if chunk.endswith(b"\r"))
    newline = "\r\n" if chunks and 2 * crlf > len(chunks) else "\n"
    return InputText(  # each line checked: the whole text decodes
        lines,
        newline,
        raw.decode("utf-8") if whole else "",
        bom=raw.startswith(codecs.BOM_UTF8),
        final_newline=not raw or raw.endswith(b"\n"),
    )


def input_bytes(path: Path, wanted: str) -> bytes:
    """The bytes of an input file.

    Raises:
        DataError: ``path`` is a folder (the message asks for ``wanted`` instead) or missing.
    """
    if path.is_dir():
        raise DataError(f"input file {path} is a folder; give {wanted}")
    if not path.is_file():
        raise DataError(f"input file {path} does not exist")
    return path.read_bytes()


# Byte order marks of the encodings Windows tools save as "Unicode" (UTF-32's first: its
# little-endian mark begins with UTF-16's).
_UNICODE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _utf8_of(raw: bytes, name: Path) -> bytes:
    """``raw`` as UTF-8: a file that begins with a UTF-16 or UTF-32 byte order mark (Notepad's
    "Unicode") is read in that encoding; a NUL byte, which no text holds, is refused naming its
    line (UTF-16 without a mark read as ASCII gave junk, exit 0).

    Raises:
        DataError: a marked file that its encoding cannot read, or a NUL byte.
    """
    for bom, encoding in _UNICODE_BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding).encode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"{name}: begins with a {encoding.upper()} byte order mark but is not "
                    f"{encoding.upper()} (byte {exc.start}); save it as UTF-8"
                ) from exc
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise DataError(
            f"{name}, line {line}: holds a NUL byte (byte {nul}): the file is binary, or UTF-16 "
            f"without a byte order mark; convert it: iconv -f UTF-16LE -t UTF-8 {name} > "
            f"{name.stem}.utf8{name.suffix}"
        )
    return raw


def read_text_lines(path: Path, limit: int = 0) -> list[str]:
    """The lines of a UTF-8 text file (``.gz`` files are decompressed), whitespace-stripped.

    Args:
        path: the file.
        limit: read only the first ``limit`` lines (0 = all).

    Raises:
        DataError: the file is missing, unreadable or not UTF-8 (naming the line).
    """
    return [line.strip() for line in read_lines(path, limit)[0]]
