"""System test: the tiny preset learns to reverse digit strings through the real pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.config import load_config
from anuvad.data.prepare import prepare_data
from anuvad.data.synthetic import reversal_config, reversal_pairs
from anuvad.inference.translator import Translator
from anuvad.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]


STEPS = 800  # a fixed number of updates, so that the result does not depend on machine load


@pytest.mark.slow
def test_tiny_preset_learns_to_reverse_in_800_updates(tmp_path: Path) -> None:
    overrides = [f"train.max_steps={STEPS}", "train.max_minutes=0"]
    config = load_config(REPO / "configs" / "tiny.yaml", overrides)
    config = reversal_config(config, tmp_path / "corpus")
    prepared = prepare_data(config, tmp_path / "prepared")
    result = Trainer(config, prepared, tmp_path / "run").train(show_progress=False)
    assert result.steps == STEPS
    # Wall-clock time depends on the machine and its load (46 s on idle cores, 78 s on a slower
    # host: docs/benchmark-history.md), so it is recorded there and never asserted.

    assert result.model_path is not None
    translator = Translator.from_file(result.model_path, device="cpu")
    tests = reversal_pairs(300, seed=12345)
    outputs = translator.translate_text([src for src, _ in tests])
    exact = sum(out == tgt for out, (_, tgt) in zip(outputs, tests, strict=True)) / len(tests)
    # 95-100 % on Intel hosts; 88.3 % on an AMD EPYC host (2026-11-25): float rounding differs
    # between CPUs' GEMM kernels and 800 updates sit on the steep part of the curve. Chance is ~0.
    assert exact >= 0.85, f"only {exact:.1%} reversed exactly after {result.steps} steps"
