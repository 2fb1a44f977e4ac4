"""Calibrating a sentence confidence on dev sets: fit on the first half of each set, report how
the fit (and the plain score) rank the held-out second halves, per domain and dev set, with a
cross-validation on the fitting halves beside that single split.

The rows come from translating the dev sets (:mod:`anuvad.inference.confidence_fit`); the fit is
:func:`anuvad.evaluation.confidence_model.fit_confidence`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from anuvad.evaluation.confidence_model import ConfidenceModel, fit_confidence
from anuvad.evaluation.ranking import GOOD_CHRF, auroc, ranking_report

CV_FOLDS = 5  # the cross-validation on the fitting halves that calibrate() reports


@dataclass
class CalibrationRow:
    """One translated dev sentence.

    Attributes:
        domain: its domain (e.g. "captions", "general"): reports are per domain and pooled.
        dev_set: the dev set it came from.
        held_out: in the evaluation split (True) or the fitting split (False).
        score: the search's plain ranking score (the baseline every table shows).
        chrf: its sentence-level chrF++ against the reference.
        features: its confidence features.
        source: the source sentence ("" in rows written before the texts were kept).
        output: its translation.
    """

    domain: str
    dev_set: str
    held_out: bool
    score: float
    chrf: float
    features: dict[str, float]
    source: str = ""
    output: str = ""


def held_out_halves(count: int) -> list[bool]:
    """Which of ``count`` consecutive sentences are held out: the second half (documents and
    their neighbouring sentences stay on one side)."""
    return [i >= count // 2 for i in range(count)]


def calibrate(
    rows: Sequence[CalibrationRow],
    features: Sequence[str],
    good_chrf: float = GOOD_CHRF,
    l2: float = 1e-2,
    threshold: float = 0.5,
    balance: bool = True,
) -> ConfidenceModel:
    """Fit a :class:`ConfidenceModel` on the rows not held out (``balance``: each domain's good
    and bad sentences weigh the same, see :func:`fit_confidence`), and report how it and the
    plain score rank the held-out rows, per domain (each dev set too, where a domain has
    several) and pooled (``report["held_out"]``), and how a cross-validation on the fitting rows
    ranks each dev set (``report["cross_validated"]``, :func:`cross_validated`: five more fits).

    Raises:
        ValueError: a split is empty or the fitting split has a single class.
    """
    fit_rows = [r for r in rows if not r.held_out]
    test_rows = [r for r in rows if r.held_out]
    if not fit_rows or not test_rows:
        raise ValueError(f"{len(fit_rows)} fitting and {len(test_rows)} held-out sentences")
    model = fit_confidence(
        [r.features for r in fit_rows],
        [r.chrf >= good_chrf for r in fit_rows],
        features,
        l2=l2,
        threshold=threshold,
        groups=[r.domain for r in fit_rows] if balance else None,
    )
    model.good_chrf = good_chrf
    groups: dict[str, list[CalibrationRow]] = {}
    for r in test_rows:
        groups.setdefault(r.domain, []).append(r)
    for domain in list(groups):  # a domain of several dev sets: each set as well
        sets: dict[str, list[CalibrationRow]] = {}
        for r in groups[domain]:
            sets.setdefault(f"{domain}: {r.dev_set}", []).append(r)
        if len(sets) > 1:
            groups.update(sets)
    if len({r.domain for r in test_rows}) > 1:
        groups["pooled"] = list(test_rows)
    held_out = {}
    for name, members in groups.items():
        chrf = [r.chrf for r in members]
        confidence = model.probabilities([r.features for r in members])
        held_out[name] = {
            "plain score": asdict(ranking_report([r.score for r in members], chrf, good_chrf)),
            "confidence": asdict(
                ranking_report(confidence, chrf, good_chrf, calibrated=True, threshold=threshold)
            ),
        }
    model.report = {
        "good_chrf": good_chrf,
        "l2": l2,
        "balanced": balance,
        "fitted_on": _counts(fit_rows),
        "held_out_sets": _counts(test_rows),
        "held_out": held_out,
        "cross_validated": cross_validated(fit_rows, features, good_chrf, l2, balance),
    }
    return model


def cross_validated(
    rows: Sequence[CalibrationRow],
    features: Sequence[str],
    good_chrf: float = GOOD_CHRF,
    l2: float = 1e-2,
    balance: bool = True,
    folds: int = CV_FOLDS,
) -> dict[str, float | None]:
    """AUROC per dev set of a ``folds``-fold cross-validation on ``rows`` (the fitting halves):
    each dev set is cut into ``folds`` consecutive parts (neighbouring sentences stay together),
    and each part is scored by a model fitted, as :func:`calibrate` fits, on every other part of
    every set. A second opinion beside the single held-out split, from data the shipped fit also
    saw.

    Returns:
        Per dev set, keyed ``"domain: dev_set"`` even where the held-out report names a domain
        of one set by the domain alone, its AUROC; None for a set whose rows are all good or all
        bad, and for every set when a fold cannot be fitted (what is left of it holds one class).
    """
    by_set: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_set.setdefault(f"{r.domain}: {r.dev_set}", []).append(i)
    fold_of = [0] * len(rows)
    for members in by_set.values():
        for position, i in enumerate(members):
            fold_of[i] = position * folds // len(members)
    scores: list[float | None] = [None] * len(rows)
    for fold in range(folds):
        train = [r for r, f in zip(rows, fold_of, strict=True) if f != fold]
        try:
            model = fit_confidence(
                [r.features for r in train],
                [r.chrf >= good_chrf for r in train],
                features,
                l2=l2,
                groups=[r.domain for r in train] if balance else None,
            )
        except ValueError:  # a fold left one class only
            continue
        for i, f in enumerate(fold_of):
            if f == fold:
                scores[i] = model.probability(rows[i].features)
    result: dict[str, float | None] = {}
    for name, members in by_set.items():
        good = [rows[i].chrf >= good_chrf for i in members]
        found = [scores[i] for i in members]
        complete = [s for s in found if s is not None]
        both = any(good) and not all(good)
        result[name] = auroc(complete, good) if both and len(complete) == len(found) else None
    return result


def _counts(rows: Sequence[CalibrationRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        key = f"{r.domain}: {r.dev_set}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def report_table(model: ConfidenceModel) -> str:
    """The held-out report of :func:`calibrate` as a Markdown table."""

    def show(value: Any, digits: int = 3) -> str:
        return "–" if value is None else f"{value:.{digits}f}"

    lines = [
        f"held out: {model.report.get('held_out_sets', {})}; bad = sentence chrF++ < "
        f"{model.good_chrf:g}",
        "",
        "| domain | sentences | bad | AUROC plain score | AUROC confidence | Spearman plain | "
        "Spearman confidence | Brier | ECE | flag precision / recall |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, pair in model.report.get("held_out", {}).items():
        plain, conf = pair["plain score"], pair["confidence"]
        lines.append(
            f"| {name} | {conf['sentences']} | {conf['bad_share']:.0%} | {show(plain['auroc'])} "
            f"| {show(conf['auroc'])} | {show(plain['spearman'])} | {show(conf['spearman'])} "
            f"| {show(conf['brier'])} | {show(conf['ece'])} | "
            f"{show(conf['flagged_precision'], 2)} / {show(conf['flagged_recall'], 2)} |"
        )
    cv = model.report.get("cross_validated")
    if cv:
        parts = ", ".join(f"{name} {show(value)}" for name, value in cv.items())
        lines += ["", f"AUROC of a {CV_FOLDS}-fold cross-validation on the fitting halves: {parts}"]
    return "\n".join(lines)
