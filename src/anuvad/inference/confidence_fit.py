"""Fitting a model's confidence on dev data: what ``anuvad calibrate`` does.

Each dev set (with its domain) is translated with quality signals; every sentence gets its
sentence-level chrF++ against the reference; the first half of each set fits the logistic
model (:func:`anuvad.evaluation.calibration.calibrate`), the second half is held out and
reported, per domain and pooled, against the plain score. The result is written beside the
model file (``<stem>.confidence.json``), where :meth:`Translator.from_file` finds it.

A dev set is given as ``DOMAIN=SOURCE,REFERENCE`` (two aligned files) or ``DOMAIN=FILE@I,J``
(a tab-separated file: source in column I, reference in column J, counted from 0).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from anuvad.atomic import write_atomic
from anuvad.decode_config import DecodeConfig
from anuvad.errors import DataError
from anuvad.evaluation.calibration import CalibrationRow, held_out_halves
from anuvad.evaluation.metrics import sentence_chrf
from anuvad.inference.confidence import (
    ALL_FEATURES,
    CERTAINTY_FEATURES,
    NBEST_FEATURES,
    OUTPUT_FEATURES,
)
from anuvad.inference.translator import Translator

# ``anuvad calibrate --features`` by name (the first is the default).
PRESETS: dict[str, tuple[str, ...]] = {
    "output": OUTPUT_FEATURES,
    "certainty": CERTAINTY_FEATURES,
    "all": ALL_FEATURES,
}


@dataclass
class DevSet:
    """Aligned dev sentences of one domain."""

    domain: str
    name: str
    sources: list[str]
    references: list[str]


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise DataError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid UTF-8 (byte {exc.start})") from exc


def read_dev_set(spec: str) -> DevSet:
    """Read ``DOMAIN=SOURCE,REFERENCE`` or ``DOMAIN=FILE@I,J`` (see the module docstring).

    Raises:
        DataError: a malformed spec, a missing or unreadable file, files of different
            lengths, or a line without the columns asked for (file and line named).
    """
    domain, sep, where = spec.partition("=")
    if not sep or not domain or not where:
        raise DataError(
            f"dev set {spec!r}: expected DOMAIN=SOURCE,REFERENCE or DOMAIN=FILE.tsv@I,J "
            "(e.g. captions=dev.en,dev.hi)"
        )
    if "@" in where:
        file, _, columns = where.rpartition("@")
        try:
            src_col, ref_col = (int(c) for c in columns.split(","))
        except ValueError as exc:
            raise DataError(f"dev set {spec!r}: after '@' give two column numbers (@5,6)") from exc
        sources, references = [], []
        for number, line in enumerate(_lines(Path(file)), start=1):
            cells = line.split("\t")
            if max(src_col, ref_col) >= len(cells):
                raise DataError(
                    f"{file}, line {number}: {len(cells)} tab-separated columns, but columns "
                    f"{src_col} and {ref_col} were asked for"
                )
            sources.append(cells[src_col].strip())
            references.append(cells[ref_col].strip())
        return DevSet(domain, Path(file).name, sources, references)
    src_file, sep, ref_file = where.partition(",")
    if not sep:
        raise DataError(f"dev set {spec!r}: give the source and reference files, comma-separated")
    sources, references = _lines(Path(src_file)), _lines(Path(ref_file))
    if len(sources) != len(references):
        raise DataError(
            f"{src_file} has {len(sources)} lines but {ref_file} has {len(references)}; "
            "a dev set's two files must be aligned line by line"
        )
    return DevSet(domain, Path(src_file).stem, sources, references)


def calibration_rows(
    translator: Translator,
    dev: DevSet,
    settings: DecodeConfig,
    progress: Callable[[int], object] | None = None,
    use_cache: bool = True,
) -> list[CalibrationRow]:
    """Translate ``dev`` with quality signals and score each sentence (empty sources skipped);
    the second half of the set is marked held out (``use_cache``: as for
    :meth:`Translator.translate`)."""
    keep = [i for i, s in enumerate(dev.sources) if s.strip() and dev.references[i].strip()]
    sources = [dev.sources[i] for i in keep]
    references = [dev.references[i] for i in keep]
    results = translator.translate(
        sources, settings, quality=True, progress=progress, use_cache=use_cache
    )
    chrf = sentence_chrf([r.text for r in results], references)
    rows = []
    for held_out, result, score in zip(held_out_halves(len(keep)), results, chrf, strict=True):
        assert result.quality is not None  # quality=True on the torch engine
        rows.append(
            CalibrationRow(
                domain=dev.domain,
                dev_set=dev.name,
                held_out=held_out,
                score=result.score if math.isfinite(result.score) else -50.0,
                chrf=score,
                features=result.quality.features,
                source=result.source,
                output=result.text,
            )
        )
    return rows


def choose_features(rows: Sequence[CalibrationRow], which: str) -> list[str]:
    """The features to fit: ``output`` (:data:`OUTPUT_FEATURES` that the rows have: the
    reverse model's only with one), ``certainty`` (:data:`CERTAINTY_FEATURES` that the rows
    have), ``all`` (every feature the rows have, the beam's agreement after beam search), or a
    comma-separated list.

    Raises:
        DataError: a listed feature is unknown or missing from the rows.
    """
    have = set.intersection(*(set(r.features) for r in rows)) if rows else set()
    if which in PRESETS:
        wanted = PRESETS[which]
        nbest = any("nbest_agreement" in r.features for r in rows)  # beam search
        return [f for f in wanted if f in have or (f in NBEST_FEATURES and nbest)]
    names = [name.strip() for name in which.split(",") if name.strip()]
    unknown = [n for n in names if n not in ALL_FEATURES]
    if unknown:
        raise DataError(f"unknown features {unknown}; choose from {', '.join(ALL_FEATURES)}")
    missing = [n for n in names if n not in have and n not in NBEST_FEATURES]
    if missing:
        raise DataError(
            f"the rows lack {missing} (the reverse model's need --reverse-model when translating)"
        )
    return names


def save_rows(rows: Sequence[CalibrationRow], path: str | Path) -> None:
    """Write rows as JSON Lines (to refit without translating again)."""
    text = "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in rows)
    write_atomic(Path(path), text.encode("utf-8"))


def load_rows(path: str | Path) -> list[CalibrationRow]:
    """Read rows :func:`save_rows` wrote.

    Raises:
        DataError: a line is not a row (file and line named).
    """
    rows = []
    for number, line in enumerate(_lines(Path(path)), start=1):
        try:
            rows.append(CalibrationRow(**json.loads(line)))
        except (json.JSONDecodeError, TypeError) as exc:
            raise DataError(
                f"{path}, line {number}: not a calibration row ({exc}); write the file again "
                "with `anuvad calibrate --save-rows`"
            ) from exc
    return rows
