"""Which features ``anuvad calibrate --features`` fits (anuvad.inference.confidence_fit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anuvad.errors import DataError
from anuvad.evaluation.calibration import CalibrationRow
from anuvad.inference.confidence import (
    ALL_FEATURES,
    ATTENTION_FEATURES,
    CERTAINTY_FEATURES,
    OUTPUT_FEATURES,
)
from anuvad.inference.confidence_fit import choose_features, load_rows, save_rows


def rows(*, reverse: bool, nbest: bool) -> list[CalibrationRow]:
    names = [
        f for f in ALL_FEATURES
        if (reverse or not f.startswith("reverse_")) and (nbest or f != "nbest_agreement")
    ]  # fmt: skip
    return [
        CalibrationRow("general", "dev", i % 2 == 1, -1.0, 40.0, {f: float(i) for f in names})
        for i in range(4)
    ]


def test_the_default_is_every_signal_of_the_source_and_output_alone() -> None:
    chosen = choose_features(rows(reverse=True, nbest=True), "output")
    assert chosen == list(OUTPUT_FEATURES)
    # none that needs a forced pass over the attention or depends on the beam
    assert not set(chosen) & {*ATTENTION_FEATURES, "nbest_agreement"}
    assert {"score", "min_log_prob", "log_length_ratio", "reverse_min_log_prob"} <= set(chosen)
    # without a reverse model the rows lack its features, and so does the fit
    chosen = choose_features(rows(reverse=False, nbest=False), "output")
    assert chosen == [f for f in OUTPUT_FEATURES if not f.startswith("reverse_")]


def test_the_other_presets_and_a_list() -> None:
    assert choose_features(rows(reverse=True, nbest=True), "certainty") == list(CERTAINTY_FEATURES)
    assert "nbest_agreement" in choose_features(rows(reverse=True, nbest=True), "all")
    assert choose_features(rows(reverse=True, nbest=False), "score, mean_entropy") == [
        "score",
        "mean_entropy",
    ]
    with pytest.raises(DataError, match="unknown features"):
        choose_features(rows(reverse=True, nbest=False), "score,loudness")
    with pytest.raises(DataError, match="--reverse-model"):
        choose_features(rows(reverse=False, nbest=False), "reverse_mean_log_prob")


def test_rows_are_saved_with_their_texts_and_older_rows_still_load(tmp_path: Path) -> None:
    kept = rows(reverse=False, nbest=False)
    kept[0].source, kept[0].output = "The bus is full.", "बस भरी है।"
    save_rows(kept, tmp_path / "rows")
    assert load_rows(tmp_path / "rows") == kept
    old = {k: v for k, v in vars(kept[1]).items() if k not in ("source", "output")}
    (tmp_path / "old").write_text(json.dumps(old) + "\n", encoding="utf-8")
    (loaded,) = load_rows(tmp_path / "old")
    assert loaded.features == kept[1].features and loaded.source == loaded.output == ""
    (tmp_path / "bad").write_text('{"domain": "general"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="bad, line 1: not a calibration row"):
        load_rows(tmp_path / "bad")
