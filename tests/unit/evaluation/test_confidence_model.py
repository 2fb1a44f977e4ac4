"""Confidence calibration: the ranking measures against brute force, the logistic fit recovers
known weights, held-out rows never reach the fit, and saved models load identically or fail
with the field named."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

from anuvad.errors import ConfigError
from anuvad.evaluation.calibration import (
    CalibrationRow,
    calibrate,
    cross_validated,
    held_out_halves,
    report_table,
)
from anuvad.evaluation.confidence_model import ConfidenceModel, fit_confidence
from anuvad.evaluation.ranking import (
    auroc,
    brier,
    expected_calibration_error,
    ranks,
    spearman,
)


def brute_auroc(scores: list[float], positives: list[bool]) -> float:
    pos = [s for s, p in zip(scores, positives, strict=True) if p]
    neg = [s for s, p in zip(scores, positives, strict=True) if not p]
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auroc_equals_the_pairwise_count_with_ties() -> None:
    rng = random.Random(1)
    for _ in range(20):
        scores = [float(rng.randint(0, 6)) for _ in range(40)]  # many ties
        positives = [rng.random() < 0.4 for _ in range(40)]
        positives[0], positives[1] = True, False
        assert auroc(scores, positives) == pytest.approx(brute_auroc(scores, positives))
    assert auroc([3.0, 2.0, 1.0], [True, True, False]) == 1.0
    assert auroc([1.0, 2.0, 3.0], [True, True, False]) == 0.0
    with pytest.raises(ValueError, match="both"):
        auroc([1.0, 2.0], [True, True])


def test_ranks_share_ties_and_spearman_matches_the_formula() -> None:
    assert ranks([10.0, 20.0, 10.0, 5.0]) == [2.5, 4.0, 2.5, 1.0]
    rng = random.Random(2)
    x = [rng.random() for _ in range(30)]
    y = [rng.random() for _ in range(30)]
    n = len(x)
    rx, ry = ranks(x), ranks(y)
    d2 = sum((a - b) ** 2 for a, b in zip(rx, ry, strict=True))
    assert spearman(x, y) == pytest.approx(1 - 6 * d2 / (n * (n * n - 1)))  # no ties
    assert spearman(x, [math.exp(v) for v in x]) == pytest.approx(1.0)  # any monotone map
    assert spearman(x, [-v for v in x]) == pytest.approx(-1.0)


def test_brier_and_ece() -> None:
    assert brier([1.0, 0.0], [True, False]) == 0.0
    assert brier([0.5, 0.5], [True, False]) == 0.25
    # 10 sentences at 0.7, 7 of them good: perfectly calibrated.
    outcomes = [True] * 7 + [False] * 3
    assert expected_calibration_error([0.7] * 10, outcomes) == pytest.approx(0.0)
    assert expected_calibration_error([0.9] * 10, outcomes) == pytest.approx(0.2)


def synthetic(count: int, seed: int) -> tuple[list[dict[str, float]], list[bool]]:
    """P(good) = sigmoid(2 a - 1 b + 0.5), c pure noise."""
    rng = random.Random(seed)
    rows, good = [], []
    for _ in range(count):
        row = {"a": rng.gauss(0, 1), "b": rng.gauss(0, 1), "c": rng.gauss(0, 1)}
        p = 1 / (1 + math.exp(-(2 * row["a"] - row["b"] + 0.5)))
        rows.append(row)
        good.append(rng.random() < p)
    return rows, good


@pytest.mark.slow  # several seconds: left out of make test-fast
def test_the_fit_recovers_known_weights_and_is_calibrated() -> None:
    rows, good = synthetic(6000, seed=3)
    model = fit_confidence(rows, good, ["a", "b", "c"], l2=0.0)
    raw = [w / s for w, s in zip(model.weights, model.scale, strict=True)]  # unstandardized
    assert raw[0] == pytest.approx(2.0, abs=0.15)
    assert raw[1] == pytest.approx(-1.0, abs=0.1)
    assert abs(raw[2]) < 0.1
    test_rows, test_good = synthetic(4000, seed=4)
    predicted = model.probabilities(test_rows)
    assert expected_calibration_error(predicted, test_good) < 0.03
    assert auroc(predicted, test_good) > 0.8


@pytest.mark.slow  # several seconds (a fit / the tiny model's training): not in make test-fast
def test_a_missing_feature_takes_the_mean() -> None:
    rows, good = synthetic(500, seed=5)
    model = fit_confidence(rows, good, ["a", "b"])
    assert model.probability({"a": 0.3}) == pytest.approx(
        model.probability({"a": 0.3, "b": model.mean[1]})
    )
    rows[0] = {"a": rows[0]["a"]}  # a row lacking b is fitted with b's mean
    fit_confidence(rows, good, ["a", "b"])
    with pytest.raises(ValueError, match="only good"):
        fit_confidence(rows, [True] * len(rows), ["a", "b"])


def rows_of(domain: str, count: int, seed: int) -> list[CalibrationRow]:
    features, good = synthetic(count, seed)
    return [
        CalibrationRow(domain, f"{domain}-dev", held_out, f["a"], 60.0 if g else 10.0, f)
        for held_out, f, g in zip(held_out_halves(count), features, good, strict=True)
    ]


def test_calibrate_never_fits_on_held_out_rows_and_reports_each_domain() -> None:
    rows = rows_of("captions", 400, 6) + rows_of("general", 400, 7)
    model = calibrate(rows, ["a", "b", "c"])
    flipped = [
        r if not r.held_out else CalibrationRow(**{**vars(r), "chrf": 100.0 - r.chrf}) for r in rows
    ]
    again = calibrate(flipped, ["a", "b", "c"])
    assert again.weights == model.weights and again.bias == model.bias
    report = model.report["held_out"]
    assert set(report) == {"captions", "general", "pooled"}
    assert report["captions"]["confidence"]["sentences"] == 200
    assert report["captions"]["confidence"]["auroc"] > 0.75
    table = report_table(model)
    assert "| captions | 200 |" in table and "| pooled | 400 |" in table


def test_a_domain_of_several_dev_sets_is_also_reported_per_set() -> None:
    news = [CalibrationRow(**{**vars(r), "dev_set": "newsdev"}) for r in rows_of("general", 200, 9)]
    rows = rows_of("captions", 400, 6) + rows_of("general", 400, 7) + news
    report = calibrate(rows, ["a", "b", "c"]).report["held_out"]
    assert list(report) == [
        "captions", "general", "general: general-dev", "general: newsdev", "pooled",
    ]  # fmt: skip
    sizes = {name: part["confidence"]["sentences"] for name, part in report.items()}
    assert sizes["general"] == sizes["general: general-dev"] + sizes["general: newsdev"] == 300
    assert sizes["pooled"] == 500
    # one domain of one set: no per-set rows, no pooled row
    assert list(calibrate(rows_of("captions", 400, 6), ["a"]).report["held_out"]) == ["captions"]


def test_the_cross_validation_scores_each_part_with_a_fit_that_never_saw_it() -> None:
    news = [CalibrationRow(**{**vars(r), "dev_set": "newsdev"}) for r in rows_of("general", 200, 9)]
    rows = [r for r in rows_of("captions", 400, 6) + news if not r.held_out]
    informative = cross_validated(rows, ["a", "b"])
    assert list(informative) == ["captions: captions-dev", "general: newsdev"]
    assert all(value is not None and value > 0.75 for value in informative.values())
    # 30 features of pure noise on 60 sentences: fitted on the rows it scores, a model would
    # rank them well (in sample); scored only on rows its fit never saw, it ranks at chance
    rng = random.Random(11)
    noisy = [
        CalibrationRow("general", "dev", False, 0.0, 60.0 if i % 2 else 10.0,
                       {f"n{k}": rng.gauss(0, 1) for k in range(30)})
        for i in range(60)
    ]  # fmt: skip
    names = [f"n{k}" for k in range(30)]
    in_sample = fit_confidence([r.features for r in noisy], [r.chrf >= 30 for r in noisy], names)
    seen = auroc(
        in_sample.probabilities([r.features for r in noisy]), [r.chrf >= 30 for r in noisy]
    )
    unseen = cross_validated(noisy, names)["general: dev"]
    assert seen > 0.85 and unseen is not None and unseen < 0.7
    # calibrate() reports it for its fitting halves; a set of one class only gets None
    model = calibrate(rows_of("captions", 400, 6) + rows_of("general", 200, 9), ["a", "b"])
    expected = {"captions: captions-dev", "general: general-dev"}
    assert set(model.report["cross_validated"]) == expected
    assert "5-fold cross-validation on the fitting halves" in report_table(model)
    one_class = [CalibrationRow(**{**vars(r), "chrf": 60.0}) for r in news if not r.held_out]
    mixed = cross_validated([*rows[:100], *one_class], ["a"])
    assert mixed["general: newsdev"] is None


def test_save_then_load_gives_the_same_probabilities(tmp_path: Path) -> None:
    rows, good = synthetic(300, seed=8)
    model = fit_confidence(rows, good, ["a", "b", "c"])
    model.report = {"held_out": {}}
    path = tmp_path / "m.confidence.json"
    model.save(path)
    loaded = ConfidenceModel.load(path)
    assert loaded == model
    assert loaded.probabilities(rows[:20]) == model.probabilities(rows[:20])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"weights": [1.0]}, "field 'weights' must be a list of 3 numbers"),
        ({"scale": [1.0, 0.0, 1.0]}, "field 'scale' must hold positive numbers"),
        ({"mean": [1.0, "x", 2.0]}, "field 'mean' holds a value that is not a finite number"),
        ({"features": "a"}, "field 'features' must be a non-empty list"),
        ({"format_version": 9}, "format_version is 9"),
        ({"colour": "red"}, "unknown fields ['colour']"),
    ],
)
def test_a_malformed_file_names_the_field(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    rows, good = synthetic(100, seed=9)
    path = tmp_path / "m.confidence.json"
    fit_confidence(rows, good, ["a", "b", "c"]).save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        ConfidenceModel.load(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="anuvad calibrate"):
        ConfidenceModel.load(path)
