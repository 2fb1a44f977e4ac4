"""Calibrated sentence confidence: a small logistic model over a translation's own signals.

A translation's features (:mod:`anuvad.inference.confidence` computes them: token
log-probabilities, their entropy, the length ratio, repetition, how the cross-attention covers
the source, ...) go through a logistic model fitted on dev data where the quality is known:

    confidence = P(sentence chrF++ >= good_chrf | features) = sigmoid(w · z + b),
    z = (features - mean) / scale     (the fitting split's mean and standard deviation)

so a confidence of 0.8 means "about 8 in 10 such sentences were good on the dev data".
A sentence whose confidence is below ``threshold`` is flagged as likely wrong.

How well a confidence ranks sentences (AUROC, Spearman, Brier, ECE) is measured with
:mod:`anuvad.evaluation.ranking`; :mod:`anuvad.evaluation.calibration` fits one on half of each dev
set and reports on the other half.
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
from anuvad.evaluation.ranking import GOOD_CHRF

FORMAT_VERSION = 1


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
