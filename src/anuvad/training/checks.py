"""What a run checks and sets up before it trains: settings that cannot work together, a
checkpoint that belongs to other data, a resumed run that computes in another precision than
before, and the run folder (checked, its config written, temp files of killed saves removed)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from anuvad.atomic import remove_stale_temp_files
from anuvad.config import ExperimentConfig, save_config
from anuvad.data.prepare import PreparedData
from anuvad.data.prepared_folder import fingerprint_differences
from anuvad.errors import TrainingError
from anuvad.training.run_log import RUN_INFO_FILE, read_run_history
from anuvad.training.state import CHECKPOINT_DIR, check_run_dir

logger = logging.getLogger(__name__)


def check_settings(config: ExperimentConfig, prepared: PreparedData, device: torch.device) -> None:
    """Refuse a run that cannot work, before a model is built.

    Raises:
        TrainingError: naming the setting and how to fix it.
    """
    train = config.train
    if train.precision == "fp16" and device.type != "cuda":
        raise TrainingError("train.precision=fp16 needs a CUDA device; use bf16 or fp32")
    if len(prepared.train) == 0:
        raise TrainingError("the prepared training set is empty; check data.train")
    positions = config.model.max_positions
    if config.data.max_len >= positions:  # a training sentence + EOS must fit
        raise TrainingError(
            f"data.max_len ({config.data.max_len}) must be below model.max_positions "
            f"({positions}): a training sentence of max_len tokens plus EOS must fit; "
            "lower data.max_len or raise model.max_positions"
        )
    if train.keep_last < train.average_last:
        raise TrainingError(
            f"train.keep_last ({train.keep_last}) must be at least train.average_last "
            f"({train.average_last}) so that the checkpoints to average exist"
        )


def check_same_data(
    path: Path,
    tokenizers: dict[str, Any],
    saved_fingerprint: dict[str, Any] | None,
    prepared: PreparedData,
    fingerprint: dict[str, Any],
) -> None:
    """Refuse to resume the checkpoint at ``path`` on prepared data other than its own.

    Raises:
        TrainingError: which tokenizers, or which parts of the data, differ.
    """
    ours = {"src": prepared.src_tokenizer.state(), "tgt": prepared.tgt_tokenizer.state()}
    differ = [side for side in ("src", "tgt") if tokenizers.get(side) != ours[side]]
    if differ:
        sides = " and ".join({"src": "source", "tgt": "target"}[side] for side in differ)
        raise TrainingError(
            f"{path} was trained with other {sides} tokenizers than the prepared data "
            "(prepared again with other settings, or another data folder?); resume with "
            "the data folder the run used (run.json records it) or start a new run"
        )
    differences = (
        fingerprint_differences(saved_fingerprint, fingerprint) if saved_fingerprint else []
    )
    if differences:
        raise TrainingError(
            f"{path} was trained on other prepared data: {'; '.join(differences)}. Resume "
            "with the data folder the run used (run.json records it; `--data` chooses one), "
            "or start a new run"
        )


def warn_on_precision_change(
    run_dir: Path, precision: str, requested: str, device: torch.device
) -> None:
    """A resumed run computes in the precision this machine resolves (``auto``: bf16 only where
    it is native); when that differs from the last start's, say so: the weights carry on
    exactly, but the arithmetic changes, so the result is not bit-identical to an
    uninterrupted run."""
    history = read_run_history(run_dir / RUN_INFO_FILE)
    before = history[-1].get("precision") if history else None
    if before is not None and before != precision:
        logger.warning(
            "this run computed in %s before and continues in %s here (train.precision=%s "
            "on %s); the weights continue exactly, the arithmetic does not, so the result "
            "is not bit-identical to an uninterrupted run. Set train.precision=%s to keep "
            "it (in bf16 on a CPU without native bf16, training runs 40-100x slower)",
            before,
            precision,
            requested,
            device,
            before,
        )


def prepare_run_folder(
    run_dir: Path,
    model: torch.nn.Module,
    requested: ExperimentConfig,
    config: ExperimentConfig,
    resumed: bool,
) -> None:
    """Make ``run_dir`` ready for a new or resumed run (rank 0): refuse a folder that is not
    usable, warn when a resumed run changes precision, write ``config.yaml`` (the ``requested``
    settings: a run resumed elsewhere decides "auto" again) and remove stale temp files.

    Raises:
        TrainingError: the folder is unusable (see :func:`check_run_dir`).
    """
    check_run_dir(run_dir, model, config.train.keep_last, resumed)
    if resumed:
        device = next(model.parameters()).device
        warn_on_precision_change(run_dir, config.train.precision, requested.train.precision, device)
    save_config(requested, run_dir / "config.yaml")
    for folder in (run_dir, run_dir / CHECKPOINT_DIR):
        for stale in remove_stale_temp_files(folder):
            logger.info("removed %s, left by a killed save", stale)
