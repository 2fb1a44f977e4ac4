"""How well a score ranks sentences by quality: AUROC for finding the bad ones, Spearman's rank
correlation, and for probabilities the Brier score and the expected calibration error.
A few lines of torch in float64 each (no extra dependency); used by
:mod:`anuvad.evaluation.confidence_model` and its reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

GOOD_CHRF = 30.0  # a sentence with sentence-level chrF++ below this counts as bad


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            out[i] = (start + end) / 2.0 + 1.0
        start = end + 1
    return out


def auroc(scores: Sequence[float], positives: Sequence[bool]) -> float:
    """Area under the ROC curve of ``scores`` for finding the ``positives`` (higher score =
    more likely positive): the probability that a random positive outscores a random negative,
    ties counting half (Mann–Whitney U).

    Raises:
        ValueError: a length mismatch, or no positives or no negatives.
    """
    if len(scores) != len(positives):
        raise ValueError(f"{len(scores)} scores for {len(positives)} labels")
    num_pos = sum(1 for p in positives if p)
    num_neg = len(positives) - num_pos
    if num_pos == 0 or num_neg == 0:
        raise ValueError("AUROC needs both positives and negatives")
    r = ranks(scores)
    rank_sum = sum(r[i] for i, p in enumerate(positives) if p)
    return (rank_sum - num_pos * (num_pos + 1) / 2.0) / (num_pos * num_neg)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson's on average ranks); 0 when one side is constant.

    Raises:
        ValueError: a length mismatch or fewer than 2 values.
    """
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"need two equal lists of >= 2 values, got {len(x)} and {len(y)}")
    rx = torch.tensor(ranks(x), dtype=torch.float64)
    ry = torch.tensor(ranks(y), dtype=torch.float64)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = float(torch.sqrt((rx**2).sum() * (ry**2).sum()))
    return float((rx * ry).sum()) / denom if denom > 0 else 0.0


def brier(probabilities: Sequence[float], outcomes: Sequence[bool]) -> float:
    """Mean squared error of predicted probabilities against 0/1 outcomes (lower is better)."""
    if len(probabilities) != len(outcomes) or not outcomes:
        raise ValueError(f"{len(probabilities)} probabilities for {len(outcomes)} outcomes")
    return sum((p - float(o)) ** 2 for p, o in zip(probabilities, outcomes, strict=True)) / len(
        outcomes
    )


def expected_calibration_error(
    probabilities: Sequence[float], outcomes: Sequence[bool], bins: int = 10
) -> float:
    """|mean predicted - observed rate| per equal-width probability bin, weighted by the bin's
    share of sentences (Naeini et al. 2015); 0 = perfectly calibrated."""
    if len(probabilities) != len(outcomes) or not outcomes:
        raise ValueError(f"{len(probabilities)} probabilities for {len(outcomes)} outcomes")
    total = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [
            (p, float(o))
            for p, o in zip(probabilities, outcomes, strict=True)
            if low <= p < high or (b == bins - 1 and p == 1.0)
        ]
        if members:
            predicted = sum(p for p, _ in members) / len(members)
            observed = sum(o for _, o in members) / len(members)
            total += len(members) / len(outcomes) * abs(predicted - observed)
    return total


@dataclass
class RankingReport:
    """How well one confidence ranks one group of sentences by quality."""

    sentences: int
    bad_share: float  # share of sentences with chrF++ < good_chrf
    auroc: float | None  # for detecting bad sentences; None when one class is absent
    spearman: float  # with sentence chrF++
    brier: float | None = None  # calibrated confidences only
    ece: float | None = None
    flagged_precision: float | None = None  # of flagged sentences, the share that were bad
    flagged_recall: float | None = None  # of bad sentences, the share flagged


def ranking_report(
    confidence: Sequence[float],
    chrf: Sequence[float],
    good_chrf: float = GOOD_CHRF,
    calibrated: bool = False,
    threshold: float = 0.5,
) -> RankingReport:
    """AUROC (higher confidence = better, bad sentences the class to find), Spearman with
    ``chrf``, and for a calibrated confidence the Brier score, ECE and the flag's
    precision/recall at ``threshold``."""
    bad = [c < good_chrf for c in chrf]
    both = any(bad) and not all(bad)
    report = RankingReport(
        sentences=len(chrf),
        bad_share=sum(bad) / max(1, len(bad)),
        auroc=auroc([-c for c in confidence], bad) if both else None,
        spearman=spearman(confidence, chrf),
    )
    if calibrated:
        good = [not b for b in bad]
        report.brier = brier(confidence, good)
        report.ece = expected_calibration_error(confidence, good)
        flagged = [c < threshold for c in confidence]
        hits = sum(1 for f, b in zip(flagged, bad, strict=True) if f and b)
        report.flagged_precision = hits / sum(flagged) if any(flagged) else None
        report.flagged_recall = hits / sum(bad) if any(bad) else None
    return report
