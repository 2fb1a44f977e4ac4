"""Reading and cleaning parallel text.

A corpus is an aligned file pair (line *i* of the source file translates line *i* of the target
file; plain or ``.gz``), one TSV file with two chosen columns, or Penn Treebank trees read as
(sentence, linearised tree) pairs for parsing (:mod:`anuvad.parsing.trees`). Files are read in
binary and decoded line by line so that a bad byte is reported with its line and offset. Each
sentence loses its line ending and surrounding whitespace and is otherwise kept as it is; nothing is
ever dropped silently: reading fails with a :class:`~anuvad.errors.DataError` naming the file and
the line, and cleaning (:mod:`anuvad.data.cleaning` for text, :func:`filter_pairs` for token
lengths) counts every dropped pair by reason.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from anuvad.config import CorpusConfig
from anuvad.data.text_files import read_lines
from anuvad.errors import DataError

logger = logging.getLogger(__name__)

# Why a training pair was dropped, in the order the checks run.
DROP_REASONS = ("empty", "too_long", "length_ratio", "duplicate")

_MAX_LISTED = 10  # offending lines listed in one error message


@dataclass
class ParallelText:
    """The sentence pairs of one corpus, in file order (pair ``i`` is line ``i + 1``).

    Attributes:
        name: the corpus name from the config (or the file name when unnamed).
        src_path: the file the source sentences were read from.
        tgt_path: the file the target sentences were read from (the same file for TSV).
        src: source sentences, stripped of surrounding whitespace.
        tgt: target sentences, stripped of surrounding whitespace.
    """

    name: str
    src_path: Path
    tgt_path: Path
    src: list[str]
    tgt: list[str]

    def __len__(self) -> int:
        return len(self.src)

    @property
    def files(self) -> str:
        """The file(s) read, e.g. ``a.en / b.de`` or ``pairs.tsv``."""
        if self.src_path == self.tgt_path:
            return str(self.src_path)
        return f"{self.src_path} / {self.tgt_path}"

    def location(self, index: int) -> str:
        """Where pair ``index`` (0-based) comes from, e.g. ``line 7 of a.en / b.de``."""
        return f"line {index + 1} of {self.files}"


def resolve_path(path: str, root: Path) -> Path:
    """Absolute paths, ``~`` and ``$VARS`` as written; ``./x`` and ``../x`` from the working
    directory (e.g. ``./data/synthetic/...``, generated beside the checkout); anything else from
    the data root."""
    expanded = os.path.expandvars(path)
    candidate = Path(expanded).expanduser()
    if candidate.is_absolute() or expanded.startswith(("./", "../")):
        return candidate
    return root / candidate


def _read_aligned(corpus: CorpusConfig, root: Path, name: str) -> ParallelText:
    src_path, tgt_path = resolve_path(corpus.src, root), resolve_path(corpus.tgt, root)
    src_lines, src_count = read_lines(src_path, corpus.max_lines)
    tgt_lines, tgt_count = read_lines(tgt_path, corpus.max_lines)
    # Counted over the whole files even with max_lines: a length mismatch means the pairs are
    # probably misaligned everywhere, including the first N lines.
    if src_count != tgt_count:
        raise DataError(
            f"corpus {name!r}: aligned files differ in length: {src_path} has {src_count} lines, "
            f"{tgt_path} has {tgt_count} lines (line {min(src_count, tgt_count) + 1} is the first "
            f"without a partner). Line i of one file must translate line i of the other. Fix: "
            f"re-align the files, or check that src and tgt name the right pair."
        )
    if src_count == 0:
        raise DataError(
            f"corpus {name!r}: {src_path} and {tgt_path} are empty (0 lines). Fix: point the "
            f"config at non-empty files or remove the corpus."
        )
    return ParallelText(
        name=name,
        src_path=src_path,
        tgt_path=tgt_path,
        src=[line.strip() for line in src_lines],
        tgt=[line.strip() for line in tgt_lines],
    )


def _read_tsv(corpus: CorpusConfig, root: Path, name: str) -> ParallelText:
    path = resolve_path(corpus.path, root)
    lines, count = read_lines(path, corpus.max_lines)
    if count == 0:
        raise DataError(
            f"corpus {name!r}: {path} is empty (0 lines). Fix: point the config at a non-empty "
            f"file or remove the corpus."
        )
    needed = max(corpus.src_column, corpus.tgt_column)
    src: list[str] = []
    tgt: list[str] = []
    for line_no, line in enumerate(lines, start=1):
        columns = line.split("\t")
        if len(columns) <= needed:
            which = "src_column" if corpus.src_column == needed else "tgt_column"
            raise DataError(
                f"corpus {name!r}: {path} line {line_no} has {len(columns)} tab-separated "
                f"column(s), but {which}={needed} (0-based) needs at least {needed + 1}. Fix: "
                f"check src_column/tgt_column against the file, or repair or remove the line."
            )
        src.append(columns[corpus.src_column].strip())
        tgt.append(columns[corpus.tgt_column].strip())
    return ParallelText(name=name, src_path=path, tgt_path=path, src=src, tgt=tgt)


CorpusReader = Callable[[CorpusConfig, Path, str], ParallelText]
# Built-in formats; more come from the "anuvad.corpus_formats" entry points (parsing's "ptb").
READERS: dict[str, CorpusReader] = {"aligned": _read_aligned, "tsv": _read_tsv}
FORMAT_ENTRY_POINTS = "anuvad.corpus_formats"


def corpus_reader(corpus_format: str) -> CorpusReader | None:
    """The reader of ``corpus_format``: built in, or a plug-in registered under the
    ``anuvad.corpus_formats`` entry points (e.g. ``ptb`` from :mod:`anuvad.parsing.corpus`);
    None when no reader knows it."""
    reader = READERS.get(corpus_format)
    if reader is None:
        for entry in entry_points(group=FORMAT_ENTRY_POINTS, name=corpus_format):
            reader = READERS[corpus_format] = entry.load()
            break
    return reader


def read_corpus(corpus: CorpusConfig, root: Path) -> ParallelText:
    """Read one parallel corpus.

    Args:
        corpus: the corpus settings (format, files, TSV columns, ``max_lines``).
        root: the folder relative paths are resolved against (``DataConfig.resolve_root()``).

    Returns:
        The sentence pairs (the first ``max_lines`` when it is positive), whitespace-stripped.

    Raises:
        DataError: a file is missing, empty or not UTF-8; aligned files differ in line count; a
            TSV line lacks a requested column; a treebank has a malformed tree or no file
            matches; the format is unknown.
    """
    name = corpus.name or Path(corpus.src or corpus.path).name
    reader = corpus_reader(corpus.format)
    if reader is None:
        raise DataError(
            f"corpus {name!r}: unknown format {corpus.format!r}; use 'aligned' (src and tgt "
            f"files), 'tsv' (path, src_column, tgt_column) or 'ptb' (path, first, last)"
        )
    text = reader(corpus, root, name)
    logger.info("read %d pairs from corpus %r (%s)", len(text), name, text.files)
    return text


def read_corpora(corpora: Sequence[CorpusConfig], root: Path) -> list[ParallelText]:
    """Read several corpora with :func:`read_corpus` (same arguments and errors), in order."""
    return [read_corpus(corpus, root) for corpus in corpora]


def require_nonempty_sides(text: ParallelText) -> None:
    """Check that no pair has a blank side (for dev/test sets, which are never filtered).

    Args:
        text: the corpus to check.

    Raises:
        DataError: listing the first offending lines, with the file names.
    """
    bad = [i for i, (s, t) in enumerate(zip(text.src, text.tgt, strict=True)) if not s or not t]
    if not bad:
        return
    shown = "; ".join(
        f"{text.location(i)}: {'source' if not text.src[i] else 'target'} side is empty"
        for i in bad[:_MAX_LISTED]
    )
    more = f" (and {len(bad) - _MAX_LISTED} more)" if len(bad) > _MAX_LISTED else ""
    raise DataError(
        f"corpus {text.name!r}: {len(bad)} pair(s) with an empty side: {shown}{more}. Validation "
        f"data is not filtered (every line counts for BLEU). Fix: repair or remove these lines "
        f"in both sides of the corpus."
    )


@dataclass
class FilterReport:
    """What :func:`filter_pairs` kept and dropped; ``sum(dropped.values()) == total - kept``.

    Attributes:
        total: pairs examined.
        kept: pairs kept.
        dropped: pairs dropped, by reason (every reason of ``DROP_REASONS`` is present).
    """

    total: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``report.json``."""
        return {"total": self.total, "kept": self.kept, "dropped": dict(self.dropped)}

    def summary(self) -> str:
        """One line, e.g. ``kept 990 of 1000 pairs; dropped empty=2 too_long=8 ...``."""
        reasons = " ".join(f"{reason}={n}" for reason, n in self.dropped.items())
        return f"kept {self.kept} of {self.total} pairs; dropped {reasons}"


def filter_pairs(
    src_text: Sequence[str],
    tgt_text: Sequence[str],
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    *,
    max_len: int,
    max_len_ratio: float,
    dedup: bool,
) -> tuple[list[int], FilterReport]:
    """Clean tokenized training pairs; each pair is dropped for the first reason that applies.

    Reasons, in order: ``empty`` (a blank side or no tokens), ``too_long`` (more than ``max_len``
    subword tokens on either side), ``length_ratio`` (longer / shorter side, in subword tokens,
    above ``max_len_ratio``), ``duplicate`` (the same raw source and target strings as an earlier
    kept pair, only when ``dedup``). Lengths count subword tokens without BOS/EOS.

    Args:
        src_text: raw source sentences.
        tgt_text: raw target sentences.
        src_ids: the source sentences encoded by the source tokenizer.
        tgt_ids: the target sentences encoded by the target tokenizer.
        max_len: most subword tokens allowed per side.
        max_len_ratio: largest allowed longer/shorter length ratio.
        dedup: whether to drop exact duplicate pairs.

    Returns:
        The indices of the kept pairs, in order, and the report (also logged).

    Raises:
        ValueError: the four sequences differ in length.
    """
    total = len(src_text)
    if not (len(tgt_text) == len(src_ids) == len(tgt_ids) == total):
        raise ValueError(
            f"filter_pairs needs equally long inputs, got {total} source / {len(tgt_text)} "
            f"target sentences and {len(src_ids)} / {len(tgt_ids)} encodings"
        )
    report = FilterReport(total=total)
    seen: set[tuple[str, str]] = set()
    kept: list[int] = []
    for i in range(total):
        src_len, tgt_len = len(src_ids[i]), len(tgt_ids[i])
        if not src_text[i] or not tgt_text[i] or src_len == 0 or tgt_len == 0:
            reason = "empty"
        elif src_len > max_len or tgt_len > max_len:
            reason = "too_long"
        elif max(src_len, tgt_len) / min(src_len, tgt_len) > max_len_ratio:
            reason = "length_ratio"
        elif dedup and (src_text[i], tgt_text[i]) in seen:
            reason = "duplicate"
        else:
            if dedup:
                seen.add((src_text[i], tgt_text[i]))
            kept.append(i)
            continue
        report.dropped[reason] += 1
    report.kept = len(kept)
    logger.info("cleaning: %s", report.summary())
    return kept, report
