"""Training checkpoints: everything needed to resume a run exactly, and checkpoint averaging.

A training checkpoint holds the model, the optimizer and grad-scaler states, the step, the
position in the data (epoch and updates done in it), the random-number states, the best
validation score so far and the tokenizers, so that ``anuvad average`` can turn checkpoints
into a model file on its own. Like model files, checkpoints hold only plain data and tensors and
load with ``torch.load(..., weights_only=True)``; every write is atomic.
"""

from __future__ import annotations

import logging
import random
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from anuvad.checkpoint import atomic_save, read_payload, save_model
from anuvad.config import config_from_dict
from anuvad.data.tokenizer import Tokenizer
from anuvad.distributed import DistributedContext
from anuvad.errors import CheckpointError, ConfigError, TrainingError
from anuvad.model.transformer import build_model

logger = logging.getLogger(__name__)

STATE_FORMAT = "anuvad-training-state"
STATE_FORMAT_VERSION = 1
CHECKPOINT_DIR = "checkpoints"
_NAME = re.compile(r"^step_(\d+)\.pt$")


@dataclass
class Progress:
    """Where a run is: what resuming needs besides weights and optimizer.

    Attributes:
        step: optimizer updates done.
        epoch: the epoch being trained (0-based).
        epoch_updates: updates already done in ``epoch``; resuming skips that many.
        elapsed_seconds: training wall-clock time so far (excluding time spent dead).
        best_value: the best validation score so far (None before any validation).
        best_step: the step that reached it.
        bad_validations: validations in a row without improvement (for early stopping).
    """

    step: int = 0
    epoch: int = 0
    epoch_updates: int = 0
    elapsed_seconds: float = 0.0
    best_value: float | None = None
    best_step: int = 0
    bad_validations: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the checkpoint."""
        return dict(self.__dict__)


@dataclass
class TrainingState:
    """One training checkpoint as written to / read from disk."""

    config: dict[str, Any]
    model: dict[str, torch.Tensor]
    optimizer: dict[str, Any]
    scaler: dict[str, Any]
    progress: Progress
    rng: dict[str, Any]
    tokenizers: dict[str, Any]  # Tokenizer.state() of each side
    extra: dict[str, Any] = field(default_factory=dict)


def capture_rng_state() -> dict[str, Any]:
    """The random-number states training consumes (dropout draws from torch's generators)."""
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put back what :func:`capture_rng_state` captured."""
    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def gather_rng_states(context: DistributedContext) -> dict[str, Any]:
    """This rank's random states, and under DDP every rank's (``"ranks"``, by rank; a
    collective: every rank calls it). The top level stays rank 0's, as a single process saves."""
    own = capture_rng_state()
    if not context.enabled:
        return own
    states: list[Any] = [None] * context.world_size
    dist.all_gather_object(states, own)
    return {**states[0], "ranks": states}


def restore_rank_rng_state(state: dict[str, Any], context: DistributedContext) -> None:
    """Put back this rank's random states from :func:`gather_rng_states`' result. A run resumed
    with another number of processes than it saved with cannot be exact: every rank then takes
    rank 0's states, with a warning."""
    ranks = state.get("ranks")
    if ranks is not None and len(ranks) == context.world_size:
        restore_rng_state(ranks[context.rank])
        return
    saved = len(ranks) if ranks is not None else 1
    if saved != context.world_size:
        logger.warning(
            "the checkpoint was written by %d process(es), this run has %d: random states "
            "restored from rank 0's, so the run goes on but not bit-identically",
            saved,
            context.world_size,
        )
    restore_rng_state(state)


def checkpoint_path(run_dir: Path, step: int) -> Path:
    """``<run_dir>/checkpoints/step_00001234.pt``."""
    return run_dir / CHECKPOINT_DIR / f"step_{step:08d}.pt"


def list_checkpoints(run_dir: Path) -> list[Path]:
    """The run's training checkpoints, oldest first (temporary files are ignored)."""
    folder = run_dir / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def save_training_state(path: Path, state: TrainingState) -> Path:
    """Write a training checkpoint atomically."""
    payload = {
        "format": STATE_FORMAT,
        "format_version": STATE_FORMAT_VERSION,
        "config": state.config,
        "model": {k: v.detach().cpu() for k, v in state.model.items()},
        "optimizer": state.optimizer,
        "scaler": state.scaler,
        "progress": state.progress.to_dict(),
        "rng": state.rng,
        "tokenizers": state.tokenizers,
        "extra": state.extra,
    }
    return atomic_save(payload, path)


def load_training_state(path: Path) -> TrainingState:
    """Read a training checkpoint.

    Raises:
        CheckpointError: missing, truncated, or not an anuvad training checkpoint.
    """
    payload = read_payload(
        path,
        STATE_FORMAT,
        STATE_FORMAT_VERSION,
        "training checkpoint",
        "delete it to resume from the previous checkpoint",
    )
    return TrainingState(
        config=payload["config"],
        model=payload["model"],
        optimizer=payload["optimizer"],
        scaler=payload["scaler"],
        progress=Progress(**payload["progress"]),
        rng=payload["rng"],
        tokenizers=payload["tokenizers"],
        extra=payload.get("extra", {}),
    )


def latest_training_state(
    run_dir: Path, model_config: dict[str, Any]
) -> tuple[Path, TrainingState]:
    """The newest checkpoint of a run, checked against the model config it must fit.

    Raises:
        TrainingError: the run has no checkpoints, or they hold another architecture.
        CheckpointError: the newest checkpoint is unreadable.
    """
    checkpoints = list_checkpoints(run_dir)
    if not checkpoints:
        raise TrainingError(f"nothing to resume: {run_dir} has no checkpoints")
    state = load_training_state(checkpoints[-1])
    if state.config["model"] != model_config:
        raise TrainingError(
            f"{checkpoints[-1]} was trained with another model config; resume with the run's "
            f"own config.yaml"
        )
    return checkpoints[-1], state


def prune_checkpoints(run_dir: Path, keep_last: int) -> list[Path]:
    """Delete all but the newest ``keep_last`` checkpoints; returns what was deleted."""
    checkpoints = list_checkpoints(run_dir)
    doomed = checkpoints[: max(0, len(checkpoints) - keep_last)]
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed


def average_weights(paths: Sequence[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the model weights of several checkpoints (section 6.1).

    Accumulates in float64 so that averaging many checkpoints loses no precision; integer
    buffers are taken from the newest checkpoint.

    Raises:
        CheckpointError: no paths, or the checkpoints hold different parameters.
    """
    if not paths:
        raise CheckpointError("no checkpoints to average")
    total: dict[str, torch.Tensor] = {}
    newest: dict[str, torch.Tensor] = {}
    first: TrainingState | None = None
    for index, path in enumerate(paths):
        state = load_training_state(path)
        weights = state.model
        if first is None:
            first = state
        elif state.tokenizers != first.tokenizers or (
            state.config.get("model") != first.config.get("model")
        ):
            what = "tokenizers" if state.tokenizers != first.tokenizers else "model settings"
            raise CheckpointError(
                f"{path} and {paths[0]} come from different runs (other {what}); average "
                f"checkpoints of one run only"
            )
        if index == 0:
            total = {k: v.double() for k, v in weights.items() if v.is_floating_point()}
        elif set(weights) != set(newest):
            raise CheckpointError(
                f"{path} holds different parameters from {paths[0]}; average checkpoints of "
                f"one run only"
            )
        else:
            for name in total:
                total[name] += weights[name].double()
        newest = weights
    averaged = {name: (value / len(paths)).float() for name, value in total.items()}
    for name, value in newest.items():
        if name not in averaged:
            averaged[name] = value
    return averaged


def check_run_dir(run_dir: Path, model: nn.Module, keep_last: int, resuming: bool) -> None:
    """Fail before training starts if ``run_dir`` cannot hold the run's checkpoints.

    Raises:
        TrainingError: a fresh run (``resuming`` False) would write into the folder of an
            earlier run (its checkpoints would be pruned into, and averaged with, the new ones;
            its model file overwritten); the folder cannot be created or written; or the disk
            lacks room for ``keep_last`` checkpoints (weights and Adam's two moments each) plus
            model files.
    """
    if not resuming:
        refuse_earlier_run(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        raise TrainingError(
            f"run directory {run_dir} is not writable ({exc}); choose another with --run-dir"
        ) from exc
    params = sum(p.numel() for p in model.parameters())
    needed = params * 4 * (3 * (keep_last + 1) + 3)
    free = shutil.disk_usage(run_dir).free
    if free < needed:
        raise TrainingError(
            f"{run_dir} has {free / 2**20:.0f} MiB free but checkpoints need about "
            f"{needed / 2**20:.0f} MiB; free space, lower train.keep_last or use --run-dir"
        )


def refuse_earlier_run(run_dir: Path) -> None:
    """Fail if ``run_dir`` holds an earlier run's checkpoints or final model.

    Raises:
        TrainingError: naming what is there and the three ways on (resume, another folder,
            delete it); nothing in the folder is touched.
    """
    found = [p.name for p in list_checkpoints(run_dir)]
    models = [p.name for p in (run_dir / "model.pt", run_dir / "model_best.pt") if p.is_file()]
    if not found and not models:
        return
    held = []
    if found:
        held.append(f"{len(found)} checkpoint(s) up to {found[-1]}")
    held.extend(models)
    raise TrainingError(
        f"{run_dir} already holds a run ({', '.join(held)}); a fresh run there would mix its "
        f"checkpoints with the new ones and overwrite its model. Continue it with "
        f"`anuvad train --resume {run_dir}`, train into another folder (--run-dir DIR or "
        f"name=NEW_NAME), or delete the folder first. Nothing was changed."
    )


def average_into_model_file(paths: Sequence[Path], out: Path) -> Path:
    """Average checkpoints (section 6.1) into a self-contained model file (``anuvad average``).

    The config and tokenizers come from the newest checkpoint.

    Raises:
        CheckpointError: as :func:`average_weights`, or a checkpoint's config is unusable.
    """
    weights = average_weights(paths)
    newest = load_training_state(paths[-1])
    try:
        config = config_from_dict(newest.config)
    except ConfigError as exc:
        raise CheckpointError(f"{paths[-1]}: stored config is invalid: {exc}") from exc
    model = build_model(config.model)
    model.load_state_dict(weights)
    return save_model(
        out,
        model,
        config,
        Tokenizer.from_state(newest.tokenizers["src"]),
        Tokenizer.from_state(newest.tokenizers["tgt"]),
        metadata={
            "steps": newest.progress.step,
            "averaged_checkpoints": [p.name for p in paths],
        },
    )
