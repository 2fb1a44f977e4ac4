"""What ``anuvad translate`` reads: UTF-8 line by line, a file Windows saved as "Unicode"
(UTF-16 or UTF-32 with a byte order mark) read in its encoding, a NUL byte refused by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.data.text_files import read_input
from anuvad.errors import DataError

LINES = ["नमस्ते।", "The train is late.", ""]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_file_with_a_unicode_byte_order_mark_is_read_in_its_encoding(
    tmp_path: Path, encoding: str
) -> None:
    """Newcomer review: UTF-16 with a mark was refused as "not valid UTF-8" without saying
    what it was."""
    path = tmp_path / "in.txt"
    text = "\r\n".join(LINES) + "\r\n"
    mark = "\ufeff" if encoding == "utf-16-be" else ""  # "utf-16" and "utf-32" write their own
    path.write_bytes((mark + text).encode(encoding))
    read = read_input(path)
    assert read.lines == LINES and read.newline == "\r\n"
    assert read_input(path, whole=True).text == text


def test_a_nul_byte_is_refused_naming_its_line_and_how_to_convert(tmp_path: Path) -> None:
    """UTF-16 without a mark: Hindi in UTF-16LE read as ASCII junk, exit 0 (its "\\n" is the
    byte before the NUL: line 3)."""
    path = tmp_path / "in.txt"
    path.write_bytes(b"ok\n" + "नमस्ते।\n".encode("utf-16-le"))
    with pytest.raises(DataError, match=r"in.txt, line 3: holds a NUL byte .*iconv -f UTF-16LE"):
        read_input(path)
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"\xff\xfe" + b"\x00\xd8")  # a lone surrogate after the mark
    with pytest.raises(DataError, match=r"begins with a UTF-16 byte order mark but is not UTF-16"):
        read_input(broken)
