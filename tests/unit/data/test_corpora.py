"""Reading parallel text (every DataError path) and cleaning (FilterReport invariants)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from anuvad.config import CorpusConfig
from anuvad.data.corpora import (
    DROP_REASONS,
    ParallelText,
    filter_pairs,
    read_corpora,
    read_corpus,
    require_nonempty_sides,
)
from anuvad.errors import DataError
from conftest import SHARED_DATA


def _aligned(tmp_path: Path, src: str, tgt: str, **kwargs: Any) -> CorpusConfig:
    (tmp_path / "a.en").write_text(src, encoding="utf-8")
    (tmp_path / "a.hi").write_text(tgt, encoding="utf-8")
    return CorpusConfig(name="toy", format="aligned", src="a.en", tgt="a.hi", **kwargs)


def _tsv(tmp_path: Path, text: str, src_column: int, tgt_column: int) -> CorpusConfig:
    (tmp_path / "t.tsv").write_text(text, encoding="utf-8")
    return CorpusConfig(
        name="toy", format="tsv", path="t.tsv", src_column=src_column, tgt_column=tgt_column
    )


# --- reading -------------------------------------------------------------------------------------


def test_aligned_strips_whitespace_and_keeps_the_rest(tmp_path: Path) -> None:
    corpus = _aligned(tmp_path, "  Hello ,  world \r\nsecond\n", "नमस्ते ,  दुनिया\t\nदूसरा\n")
    text = read_corpus(corpus, tmp_path)
    assert text.src == ["Hello ,  world", "second"]
    assert text.tgt == ["नमस्ते ,  दुनिया", "दूसरा"]
    assert text.src_path == tmp_path / "a.en"
    assert text.location(1) == f"line 2 of {tmp_path / 'a.en'} / {tmp_path / 'a.hi'}"


def test_missing_final_newline_and_bom(tmp_path: Path) -> None:
    corpus = _aligned(tmp_path, "\ufeffone\ntwo", "एक\nदो")
    text = read_corpus(corpus, tmp_path)
    assert text.src == ["one", "two"]
    assert text.tgt == ["एक", "दो"]


def test_absolute_paths_ignore_root(tmp_path: Path) -> None:
    corpus = _aligned(tmp_path, "a\n", "b\n")
    corpus.src, corpus.tgt = str(tmp_path / "a.en"), str(tmp_path / "a.hi")
    assert len(read_corpus(corpus, Path("/nonexistent-root"))) == 1


def test_max_lines_reads_the_first_pairs(tmp_path: Path) -> None:
    corpus = _aligned(tmp_path, "1\n2\n3\n4\n", "a\nb\nc\nd\n", max_lines=2)
    text = read_corpus(corpus, tmp_path)
    assert (text.src, text.tgt) == (["1", "2"], ["a", "b"])


def test_tsv_selects_columns_of_a_seven_column_line(tmp_path: Path) -> None:
    lines = "11\t45\t30\t545\t436\tit is an indoor scene\tयह एक इनडोर दृश्य है\n"
    lines += "17\t306\t239\t189\t94\t Computer screens turned on \tकंप्यूटर स्क्रीन चालू\n"
    text = read_corpus(_tsv(tmp_path, lines, 5, 6), tmp_path)
    assert text.src == ["it is an indoor scene", "Computer screens turned on"]
    assert text.tgt == ["यह एक इनडोर दृश्य है", "कंप्यूटर स्क्रीन चालू"]
    assert text.src_path == text.tgt_path == tmp_path / "t.tsv"
    # Columns can be swapped to translate the other way.
    reverse = read_corpus(_tsv(tmp_path, lines, 6, 5), tmp_path)
    assert reverse.src == text.tgt


def test_tsv_missing_column_names_file_line_and_counts(tmp_path: Path) -> None:
    corpus = _tsv(tmp_path, "Wow!\tवाह!\tCC-BY\nDuck!\tझुको!\n", 0, 2)
    with pytest.raises(DataError) as info:
        read_corpus(corpus, tmp_path)
    message = str(info.value)
    assert str(tmp_path / "t.tsv") in message
    assert "line 2" in message
    assert "has 2 tab-separated column(s)" in message
    assert "tgt_column=2" in message


def test_missing_file(tmp_path: Path) -> None:
    corpus = CorpusConfig(name="toy", src="nope.en", tgt="nope.hi")
    with pytest.raises(DataError, match=re.escape(str(tmp_path / "nope.en")) + ".*does not exist"):
        read_corpus(corpus, tmp_path)


def test_mismatched_line_counts_name_both_counts(tmp_path: Path) -> None:
    corpus = _aligned(tmp_path, "a\nb\nc\n", "x\ny\n")
    with pytest.raises(DataError) as info:
        read_corpus(corpus, tmp_path)
    message = str(info.value)
    assert f"{tmp_path / 'a.en'} has 3 lines" in message
    assert f"{tmp_path / 'a.hi'} has 2 lines" in message
    assert "line 3" in message


def test_mismatch_is_caught_even_with_max_lines(tmp_path: Path) -> None:
    corpus = _aligned(tmp_path, "a\nb\nc\n", "x\ny\n", max_lines=1)
    with pytest.raises(DataError, match="differ in length"):
        read_corpus(corpus, tmp_path)


def test_invalid_utf8_names_line_and_byte_offset(tmp_path: Path) -> None:
    (tmp_path / "a.en").write_bytes(b"fine\nbad \xff byte\n")
    (tmp_path / "a.hi").write_text("ठीक\nखराब\n", encoding="utf-8")
    corpus = CorpusConfig(name="toy", src="a.en", tgt="a.hi")
    with pytest.raises(DataError) as info:
        read_corpus(corpus, tmp_path)
    message = str(info.value)
    assert str(tmp_path / "a.en") in message
    assert "line 2" in message
    assert "byte 4 of the line" in message
    assert "byte 9 of the file" in message


def test_empty_files_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="empty"):
        read_corpus(_aligned(tmp_path, "", ""), tmp_path)
    with pytest.raises(DataError, match=re.escape(str(tmp_path / "t.tsv")) + ".*empty"):
        read_corpus(_tsv(tmp_path, "", 0, 1), tmp_path)


def test_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="unknown format 'csv'"):
        read_corpus(CorpusConfig(name="x", format="csv", path="x.csv"), tmp_path)


def test_read_corpora_keeps_order(tmp_path: Path) -> None:
    aligned = _aligned(tmp_path, "a\n", "b\n")
    tsv = _tsv(tmp_path, "c\td\n", 0, 1)
    texts = read_corpora([aligned, tsv], tmp_path)
    assert [t.src for t in texts] == [["a"], ["c"]]


def test_validation_empty_side_names_the_line() -> None:
    text = ParallelText("dev", Path("d.en"), Path("d.hi"), ["a", "b", ""], ["x", "", "z"])
    with pytest.raises(DataError) as info:
        require_nonempty_sides(text)
    message = str(info.value)
    assert "line 2 of d.en / d.hi: target side is empty" in message
    assert "line 3 of d.en / d.hi: source side is empty" in message
    require_nonempty_sides(ParallelText("dev", Path("d"), Path("d"), ["a"], ["b"]))


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"shared corpora not found at {SHARED_DATA}")
@pytest.mark.parametrize(
    "corpus",
    [
        CorpusConfig(
            format="tsv", path="en-hi/hvg/hindi-visual-genome-train.txt", src_column=5, tgt_column=6
        ),
        CorpusConfig(format="tsv", path="en-hi/anki/hin.txt", src_column=0, tgt_column=1),
        CorpusConfig(src="en-de/multi30k/train.en", tgt="en-de/multi30k/train.de"),
    ],
)
def test_real_corpora_first_lines(corpus: CorpusConfig) -> None:
    if not (SHARED_DATA / (corpus.path or corpus.src)).is_file():
        pytest.skip(f"{corpus.path or corpus.src} not present under {SHARED_DATA}")
    corpus.max_lines = 5
    text = read_corpus(corpus, SHARED_DATA)
    assert len(text) == 5
    assert all(s and t and "\t" not in s + t for s, t in zip(text.src, text.tgt, strict=True))


# --- cleaning ------------------------------------------------------------------------------------


def _lengths_to_ids(lengths: list[int]) -> list[list[int]]:
    return [[7] * n for n in lengths]


def test_filter_drops_by_first_reason_and_counts_add_up(caplog: pytest.LogCaptureFixture) -> None:
    src_text = ["a", "", "long", "ratio", "a", "ok", "a", "b"]
    tgt_text = ["x", "y", "long", "r", "x", "fine", "x", "x"]
    src_len = [2, 0, 9, 8, 2, 3, 2, 2]
    tgt_len = [2, 1, 2, 2, 2, 3, 2, 2]
    with caplog.at_level(logging.INFO, logger="anuvad.data.corpora"):
        kept, report = filter_pairs(
            src_text,
            tgt_text,
            _lengths_to_ids(src_len),
            _lengths_to_ids(tgt_len),
            max_len=8,
            max_len_ratio=3.0,
            dedup=True,
        )
    assert report.dropped == {"empty": 1, "too_long": 1, "length_ratio": 1, "duplicate": 2}
    assert kept == [0, 5, 7]
    assert report.total == 8
    assert report.kept == len(kept)
    assert sum(report.dropped.values()) == report.total - report.kept
    assert set(report.dropped) == set(DROP_REASONS)
    assert json.loads(json.dumps(report.to_dict())) == {
        "total": 8,
        "kept": 3,
        "dropped": {"empty": 1, "too_long": 1, "length_ratio": 1, "duplicate": 2},
    }
    assert "kept 3 of 8 pairs" in caplog.text


def test_ratio_boundary_and_max_len_boundary_are_kept() -> None:
    kept, report = filter_pairs(
        ["a", "b"],
        ["x", "y"],
        [[5] * 3, [5] * 4],
        [[6], [6] * 4],
        max_len=4,
        max_len_ratio=3.0,
        dedup=False,
    )
    assert kept == [0, 1]
    assert report.kept == 2


def test_dedup_needs_both_sides_equal_and_can_be_off() -> None:
    src = ["same", "same", "same", "other"]
    tgt = ["t", "t", "different", "t"]
    ids = [[4], [4], [4], [4]]
    kept, report = filter_pairs(src, tgt, ids, ids, max_len=10, max_len_ratio=3.0, dedup=True)
    assert kept == [0, 2, 3]
    assert report.dropped["duplicate"] == 1
    kept, report = filter_pairs(src, tgt, ids, ids, max_len=10, max_len_ratio=3.0, dedup=False)
    assert kept == [0, 1, 2, 3]
    assert sum(report.dropped.values()) == 0


def test_filter_rejects_unequal_inputs() -> None:
    with pytest.raises(ValueError, match="equally long"):
        filter_pairs(["a"], [], [[1]], [[1]], max_len=5, max_len_ratio=2.0, dedup=True)
