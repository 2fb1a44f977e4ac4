"""Calibrated sentence confidence: a small logistic model over a translation's own signals.

A translation's features (:mod:`anuvad.inference.confidence` computes them: token
log-probabilities, their entropy, the length ratio, repetition, how the cross-attention covers
the source, ...) go through a logistic model fitted on dev data where the quality is known:

    confidence = P(sentence chrF++ >= good_chrf | features) = sigmoid(w · z + b),
    z = (features - mean) / scale     (the fitting split's mean and standard deviation)

so a confidence of 0.8 means "about 8 in 10 such sentences were good on the dev data".
A sentence whose confidence is below ``threshold`` is flagged as likely wrong.

How well a confidence ranks sentences (AUROC, Spearman, Brier, ECE) is measured with
:mod:`anuvad.evaluation.ranking`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from anuvad.atomic import write_atomic
from anuvad.errors import ConfigError
from anuvad.evaluation.ranking import GOOD_CHRF, auroc, ranking_report

FORMAT_VERSION = 1
CV_FOLDS = 5  # the cross-validation on the fitting halves that calibrate() reports


@dataclass
class ConfidenceModel:
    """A fitted logistic model from sentence features to P(good translation).

    Attributes:
        features: the feature names, in the order of ``mean``, ``scale`` and ``weights``.
        mean: per feature, its mean on the fitting data.
        scale: per feature, its standard deviation there (1 where it was constant).
        weights: the logistic weights of the standardized features.
        bias: the logistic intercept.
        threshold: confidence below this flags a sentence as likely wrong.
        good_chrf: sentence chrF++ at or above which a sentence counted as good when fitting.
        model_sha256: the SHA-256 of the model file the features came from ("" = not bound).
        reverse_model: the file name (beside the model) of the reverse model whose features
            it uses ("" = none).
        reverse_sha256: that file's SHA-256.
        agreement_candidates: how many of the beam's other candidates ``nbest_agreement`` was
            measured over when fitting (the fitting beam size minus one); a wider beam's list
            is cut to as many, so that a translation's confidence does not change with a beam
            wider than the fitting one (issue 34: 24 % at beam 4, 9 % at beam 12 for one output).
        report: how it was fitted and how well it did on held-out data (for cards and docs).
    """

    features: list[str]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    bias: float
    threshold: float = 0.5
    good_chrf: float = GOOD_CHRF
    model_sha256: str = ""
    reverse_model: str = ""
    reverse_sha256: str = ""
    agreement_candidates: int = 3  # beam 4, as `make calibrate` fits
    report: dict[str, Any] = field(default_factory=dict)

    def probability(self, features: Mapping[str, float]) -> float:
        """P(good) for one sentence's features; a feature it lacks (e.g. the beam's agreement
        after greedy search) takes the fitting data's mean."""
        columns = zip(self.features, self.weights, self.mean, self.scale, strict=True)
        z = sum(w * (features.get(name, m) - m) / s for name, w, m, s in columns)
        return _sigmoid(z + self.bias)

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """:meth:`probability` of every row."""
        return [self.probability(row) for row in rows]

    def save(self, path: str | Path) -> None:
        """Write the model as JSON, atomically."""
        data = {"format_version": FORMAT_VERSION, **asdict(self)}
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        write_atomic(Path(path), text.encode("utf-8"))

    @classmethod
    def load(cls, path: str | Path) -> ConfidenceModel:
        """Read a model :meth:`save` wrote.

        Raises:
            ConfigError: the file is not valid JSON or a field is missing or malformed, naming
                the file and the field.
        """
        where = str(path)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(
                f"{where}: cannot read the confidence model ({exc}); write it again with "
                "`anuvad calibrate`, or delete it to translate without confidence"
            ) from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a JSON object (from `anuvad calibrate`)")
        version = data.pop("format_version", None)
        if version != FORMAT_VERSION:
            raise ConfigError(
                f"{where}: format_version is {version!r}, this anuvad reads {FORMAT_VERSION}; "
                "write it again with `anuvad calibrate`"
            )
        problems = _problems(data)
        if problems:
            raise ConfigError(f"{where}: " + "; ".join(problems))
        return cls(**data)


def _problems(data: dict[str, Any]) -> list[str]:
    """Every malformed field of a loaded model, named."""
    found = []
    names = data.get("features")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        return ["field 'features' must be a non-empty list of feature names"]
    for key in ("mean", "scale", "weights"):
        values = data.get(key)
        if not isinstance(values, list) or len(values) != len(names):
            found.append(f"field {key!r} must be a list of {len(names)} numbers (one per feature)")
        elif not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            found.append(f"field {key!r} holds a value that is not a finite number")
        elif key == "scale" and any(v <= 0 for v in values):
            found.append("field 'scale' must hold positive numbers")
    for key in ("bias", "threshold", "good_chrf"):
        if key in data and not isinstance(data[key], int | float):
            found.append(f"field {key!r} must be a number")
    candidates = data.get("agreement_candidates", 0)
    if not isinstance(candidates, int) or isinstance(candidates, bool) or candidates < 0:
        found.append("field 'agreement_candidates' must be a whole number >= 0")
    if "bias" not in data:
        found.append("field 'bias' is missing")
    unknown = set(data) - {f for f in ConfidenceModel.__dataclass_fields__}
    if unknown:
        found.append(f"unknown fields {sorted(unknown)}")
    return found


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _logistic(z: Tensor, y: Tensor, sample_weights: Tensor, l2: float) -> tuple[Tensor, Tensor]:
    """Weights (F,) and bias () minimising weighted cross-entropy + l2 * |weights|^2 (L-BFGS)."""
    weights = torch.zeros(z.size(1), dtype=torch.float64, requires_grad=True)
    bias = torch.zeros((), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS(
        [weights, bias], lr=1.0, max_iter=500, tolerance_grad=1e-10, line_search_fn="strong_wolfe"
    )

    def closure() -> Tensor:
        optimizer.zero_grad()
        logits = z @ weights + bias  # (N,)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, y, weight=sample_weights
        )
        loss = loss + l2 * (weights**2).sum()
        loss.backward()  # type: ignore[no-untyped-call]
        return loss

    optimizer.step(closure)  # type: ignore[no-untyped-call]
    return weights.detach(), bias.detach()


def fit_confidence(
    rows: Sequence[Mapping[str, float]],
    good: Sequence[bool],
    features: Sequence[str],
    l2: float = 1e-2,
    threshold: float = 0.5,
    groups: Sequence[str] | None = None,
) -> ConfidenceModel:
    """Fit P(good | features) by L2-regularised logistic regression (L-BFGS, float64).

    With ``groups`` (e.g. each sentence's domain), every (group, good/bad) cell weighs the
    same in the fit, so that the direction of the model ranks sentences *within* each group
    rather than telling the groups apart (a domain where nearly everything is bad would
    otherwise teach little but "this is that domain"); a second, unweighted one-feature fit
    (Platt scaling) then sets the probabilities to the data's real rates.

    Args:
        rows: per sentence, its features (a missing one takes the others' mean).
        good: per sentence, whether it was a good translation.
        features: which features to use.
        l2: weight of the squared-weight penalty (per sentence; the intercept is not penalised).
        threshold: confidence below which a sentence is flagged.
        groups: per sentence, its group, for the balanced fit; None: every sentence weighs 1.

    Raises:
        ValueError: no rows, a length mismatch, only one class present, or a feature that
            no row has.
    """
    if len(rows) != len(good) or not rows or (groups is not None and len(groups) != len(rows)):
        raise ValueError(f"{len(rows)} feature rows for {len(good)} labels")
    if all(good) or not any(good):
        raise ValueError("the fitting data holds only good or only bad sentences")
    nan = float("nan")
    x = torch.tensor([[row.get(f, nan) for f in features] for row in rows], dtype=torch.float64)
    y = torch.tensor([1.0 if g else 0.0 for g in good], dtype=torch.float64)  # (N,)
    mean = x.nanmean(dim=0)  # (F,); a row lacking a feature takes its mean, as in probability()
    if bool(mean.isnan().any()):
        raise ValueError("a feature is missing from every row")
    x = torch.where(x.isnan(), mean, x)  # (N, F)
    scale = x.std(dim=0, unbiased=False)
    scale = torch.where(scale > 1e-12, scale, torch.ones_like(scale))
    z = (x - mean) / scale  # (N, F)
    ones = torch.ones_like(y)
    if groups is None:
        weights, bias = _logistic(z, y, ones, l2)
    else:
        cells = Counter(zip(groups, good, strict=True))
        balanced = torch.tensor(
            [1.0 / cells[cell] for cell in zip(groups, good, strict=True)], dtype=torch.float64
        )
        direction, _ = _logistic(z, y, balanced / balanced.mean(), l2)
        logit = (z @ direction).unsqueeze(1)  # (N, 1)
        slope, bias = _logistic(logit, y, ones, 0.0)  # Platt scaling on the real rates
        weights = direction * slope[0]
    return ConfidenceModel(
        features=list(features),
        mean=mean.tolist(),
        scale=scale.tolist(),
        weights=weights.tolist(),
        bias=float(bias),
        threshold=threshold,
    )


# --------------------------------------------------------------------------------------------
# Fitting on one split of the dev sets, reporting on the other
# --------------------------------------------------------------------------------------------


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
