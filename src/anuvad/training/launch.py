"""Start or resume a training run, in one process or as one rank of a ``torchrun`` job.

Rank 0 prepares (or loads) the data first; the other ranks load it once it is there.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from anuvad.config import ExperimentConfig, load_config
from anuvad.data.prepare import load_prepared, prepare_or_load
from anuvad.distributed import barrier, init_distributed, shutdown_distributed
from anuvad.errors import TrainingError
from anuvad.training.run_lock import hold_run_folder
from anuvad.training.run_log import RUN_INFO_FILE, read_run_history
from anuvad.training.trainer import Trainer, TrainResult
from anuvad.training.warm_start import init_tokenizers

logger = logging.getLogger(__name__)


def default_data_dir(config: ExperimentConfig) -> Path:
    """Where ``anuvad prepare`` caches a config's data: ``data/prepared/<name>``."""
    return Path("data/prepared") / config.name


def default_run_dir(config: ExperimentConfig) -> Path:
    """Where ``anuvad train`` writes a run: ``runs/<name>``."""
    return Path("runs") / config.name


def resume_settings(run_dir: Path, overrides: list[str]) -> tuple[ExperimentConfig, Path | None]:
    """The config a run was started with (plus ``overrides``, e.g. a longer ``max_steps``) and
    the prepared-data folder it used.

    Raises:
        TrainingError: ``run_dir`` is not a run folder.
    """
    config_file = run_dir / "config.yaml"
    if not config_file.is_file():
        raise TrainingError(f"{run_dir} is not a run folder: it has no config.yaml to resume")
    data_dir: Path | None = None
    history = read_run_history(run_dir / RUN_INFO_FILE)
    if history and history[-1].get("data_dir"):
        data_dir = Path(history[-1]["data_dir"])
    return load_config(config_file, overrides), data_dir


def run_training(
    config: ExperimentConfig,
    data_dir: Path,
    run_dir: Path,
    resume: bool = False,
    show_progress: bool = True,
) -> TrainResult:
    """Prepare the data if needed and train (every rank of a DDP job calls this).

    Raises:
        DataError, TrainingError, CheckpointError: as the steps they come from.
    """
    context = init_distributed(config.train.device)
    try:
        # Rank 0 writes the run: it holds the folder's lock (a live holder elsewhere: an error).
        with hold_run_folder(run_dir) if context.is_main else contextlib.nullcontext():
            given = init_tokenizers(config.train.init_from) if config.train.init_from else None
            prepared = prepare_or_load(config, data_dir, given) if context.is_main else None
            barrier(context)
            if prepared is None:
                prepared = load_prepared(data_dir)
            trainer = Trainer(config, prepared, run_dir, context=context, resume=resume)
            result = trainer.train(show_progress=show_progress, data_dir=data_dir)
            barrier(context)  # every rank done before any leaves (shutdown_distributed)
            return result
    finally:
        shutdown_distributed(context)
