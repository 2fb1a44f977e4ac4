"""The training loop: token-budget batches, label-smoothed loss, Adam with the paper's schedule,
gradient accumulation, mixed precision, DDP, periodic validation, checkpoints and exact resume.

Saving goes through :mod:`anuvad.checkpoint` / :mod:`anuvad.training.state`; data comes
prepared by :mod:`anuvad.data.prepare`; logs are written by :mod:`anuvad.training.run_log`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from anuvad.config import ExperimentConfig, config_to_dict
from anuvad.data.batching import Batch, collate, rank_share
from anuvad.data.prepare import PreparedData, with_vocab_sizes
from anuvad.data.prepared_folder import data_fingerprint
from anuvad.device import prefer_shape_free_attention, resolve_device
from anuvad.distributed import DistributedContext, any_rank, barrier, broadcast_from_main
from anuvad.errors import TrainingError
from anuvad.model.attention import use_explicit_attention
from anuvad.model.transformer import Transformer, build_model, count_parameters
from anuvad.training.checks import check_same_data, check_settings, prepare_run_folder
from anuvad.training.distributed import wrap_model
from anuvad.training.epochs import EpochData
from anuvad.training.loss import label_smoothed_loss, label_smoothed_nll
from anuvad.training.optim import build_optimizer, noam_learning_rate, set_learning_rate
from anuvad.training.precision import autocast_context, explicit_attention_pays, with_precision
from anuvad.training.run_log import RunLogger, ThroughputWindow, peak_memory_mib
from anuvad.training.state import (
    Progress,
    TrainingState,
    checkpoint_path,
    gather_rng_states,
    latest_training_state,
    list_checkpoints,
    prune_checkpoints,
    restore_rank_rng_state,
    save_training_state,
)
from anuvad.training.validation import Validator, format_metrics
from anuvad.training.warm_start import init_weights

logger = logging.getLogger(__name__)

# fp16: this many overflowing updates in a row end the run (the loss scale cannot recover).
MAX_SKIPPED_UPDATES = 100


@dataclass
class TrainResult:
    """What a finished run reports."""

    steps: int
    epochs: int
    seconds: float
    train_loss: float
    valid: dict[str, float]
    model_path: Path | None


class Trainer:
    """Trains one model on prepared data and writes the run folder.

    Run folder: ``config.yaml`` (resolved), ``run.json`` (command, versions, git commit),
    ``train.log``, ``metrics.jsonl``, ``tensorboard/``, ``checkpoints/step_*.pt`` (training
    state, the last ``keep_last``), ``model_best.pt`` and ``model.pt`` (the final model file:
    the last ``average_last`` checkpoints averaged).

    Args:
        config: the experiment (vocabulary sizes are filled in from ``prepared``).
        prepared: tokenizers and encoded data.
        run_dir: the run folder.
        context: this process' place in a DDP job (default: one process).
        resume: continue from the newest checkpoint in ``run_dir``.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        prepared: PreparedData,
        run_dir: str | Path,
        context: DistributedContext | None = None,
        resume: bool = False,
    ) -> None:
        self.context = context or DistributedContext(device=resolve_device(config.train.device))
        self.device = self.context.device
        prefer_shape_free_attention(self.device)
        # config.yaml keeps the precision asked for ("auto"): a run resumed on another machine
        # decides again (a bf16 run on a CPU without native bf16 would be 40-100x slower).
        self.requested_config = with_vocab_sizes(config, prepared)
        self.config = with_precision(self.requested_config, self.device)
        self.prepared = prepared
        self.run_dir = Path(run_dir)
        train = self.config.train
        check_settings(self.config, prepared, self.device)
        if train.num_threads > 0:
            torch.set_num_threads(train.num_threads)
        torch.manual_seed(train.seed)
        self.model: Transformer = build_model(self.config.model)
        if train.init_from and not resume:  # a resumed run restores its own weights below
            tokenizers = prepared.src_tokenizer, prepared.tgt_tokenizer
            weights = init_weights(
                train.init_from,
                self.config.model,
                *tokenizers,
                encoder_layers=train.init_encoder_layers,
                decoder_layers=train.init_decoder_layers,
            )
            self.model.load_state_dict(weights)
            logger.info("initialised from %s", train.init_from)
        self.model.to(self.device)
        self.network = wrap_model(self.model, self.context)
        self.optimizer = build_optimizer(self.model, train)
        self.scaler = torch.amp.GradScaler("cuda", enabled=train.precision == "fp16")
        self.progress = Progress()
        self.validator = Validator(self.model, self.config, prepared, self._loss)
        self.epochs = EpochData(self.config, prepared)
        self._resumed = resume
        self.data_fingerprint = data_fingerprint(prepared)  # checked on resume
        if resume:
            self._restore()

    # -- state ---------------------------------------------------------------------------------
    def _state(self) -> TrainingState:
        return TrainingState(
            config=config_to_dict(self.config),
            model=self.model.state_dict(),
            optimizer=self.optimizer.state_dict(),
            scaler=self.scaler.state_dict(),
            progress=dataclasses.replace(self.progress),
            rng=gather_rng_states(self.context),
            tokenizers={
                "src": self.prepared.src_tokenizer.state(),
                "tgt": self.prepared.tgt_tokenizer.state(),
            },
            extra={"data": self.data_fingerprint},
        )

    def _restore(self) -> None:
        """Resume from the run's newest checkpoint: rank 0 reads it and sends it to every rank
        (other machines need no copy of the run folder); each rank takes back its own random
        state."""
        found: tuple[Path, TrainingState] | None = None
        if self.context.is_main:
            found = latest_training_state(self.run_dir, config_to_dict(self.config)["model"])
        path, state = broadcast_from_main(found, self.context)
        saved = state.extra.get("data")
        check_same_data(path, state.tokenizers, saved, self.prepared, self.data_fingerprint)
        self.model.load_state_dict(state.model)
        self.optimizer.load_state_dict(state.optimizer)
        self.scaler.load_state_dict(state.scaler)
        restore_rank_rng_state(state.rng, self.context)
        self.progress = state.progress
        logger.info("resumed from %s (step %d)", path, self.progress.step)

    def save_checkpoint(self) -> Path | None:
        """Write the training state and drop checkpoints beyond ``keep_last``. Every rank calls
        it (the random states of all ranks are gathered); rank 0 writes."""
        state = self._state()
        if not self.context.is_main:
            return None
        path = save_training_state(checkpoint_path(self.run_dir, self.progress.step), state)
        prune_checkpoints(self.run_dir, self.config.train.keep_last)
        return path

    # -- one update ----------------------------------------------------------------------------
    def _batch(self, group: list[int]) -> Batch:
        src, tgt = self.epochs.ids.src, self.epochs.ids.tgt
        batch = collate([src[i] for i in group], [tgt[i] for i in group], group)
        return batch.to(self.device)

    def _logits(self, batch: Batch, network: torch.nn.Module | None = None) -> torch.Tensor:
        with autocast_context(self.device, self.config.train.precision):
            logits: torch.Tensor = (network or self.model)(
                batch.src_ids, batch.tgt_in_ids, batch.src_pad_mask
            )
        return logits

    def _loss(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Smoothed loss, NLL and token count of a batch (validation)."""
        return label_smoothed_nll(
            self._logits(batch), batch.tgt_out_ids, self.config.train.label_smoothing
        )

    def train_step(self, local_groups: Sequence[list[int]], global_tokens: int) -> float:
        """One optimizer update: this rank's accumulated batches of the global batch.

        The loss is the sum over every target token of the global batch (all ranks, all
        accumulated batches) divided by its token count, so gradient accumulation and DDP give
        the same update as one large batch.

        An fp16 update that the gradient scaler skips (inf/NaN gradients) leaves
        ``progress.step`` and the learning-rate schedule where they were.

        Returns:
            Mean label-smoothed loss per target token over the global batch.

        Raises:
            TrainingError: the loss is NaN or infinite (fp32/bf16); nothing is updated.
        """
        train = self.config.train
        self.network.train()
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        scale = self.context.world_size / global_tokens  # DDP averages gradients over ranks
        # CPU bf16/fp16: the explicit attention product (a fast backward) for these batches.
        explicit = explicit_attention_pays(self.device, train.precision)
        with use_explicit_attention(self.model, explicit):
            for index, group in enumerate(local_groups):
                last = index == len(local_groups) - 1
                sync: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
                if isinstance(self.network, DistributedDataParallel) and not last:
                    sync = self.network.no_sync()  # gradients are all-reduced once, at the end
                with sync:
                    batch = self._batch(group)
                    logits = self._logits(batch, self.network)
                    loss = label_smoothed_loss(logits, batch.tgt_out_ids, train.label_smoothing)
                    self.scaler.scale(loss * scale).backward()  # type: ignore[no-untyped-call]
                loss_sum += loss.detach().double()
        if self.context.enabled:
            dist.all_reduce(loss_sum)
        total = float(loss_sum) / global_tokens
        if not math.isfinite(total) and train.precision != "fp16":  # fp16: the scaler skips it
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingError(
                f"the loss became {total} at step {self.progress.step + 1}; the last saved "
                f"checkpoint is kept. Lower train.lr_scale, set train.clip_norm, or use fp32"
            )
        step = self.progress.step + 1
        lr = noam_learning_rate(step, self.config.model.d_model, train.warmup_steps, train.lr_scale)
        set_learning_rate(self.optimizer, lr)
        if train.clip_norm > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), train.clip_norm)
        loss_scale = self.scaler.get_scale() if self.scaler.is_enabled() else 1.0
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        # fp16: a lowered loss scale means the scaler found inf/NaN gradients and skipped the
        # update; the step count and the learning-rate schedule then stay where they are.
        if self.scaler.is_enabled() and self.scaler.get_scale() < loss_scale:
            logger.warning(
                "fp16 gradient overflow at update %d: skipped, loss scale %g -> %g",
                step,
                loss_scale,
                self.scaler.get_scale(),
            )
        else:
            self.progress.step = step
        return total

    # -- the loop ------------------------------------------------------------------------------
    def _elapsed(self, started: float) -> float:
        return self.progress.elapsed_seconds + time.monotonic() - started

    def _finished(self, started: float, stop_early: bool) -> bool:
        train, p = self.config.train, self.progress
        done = (
            stop_early
            or (train.max_steps > 0 and p.step >= train.max_steps)
            or (train.max_epochs > 0 and p.epoch >= train.max_epochs)
            or (train.max_minutes > 0 and self._elapsed(started) >= 60 * train.max_minutes)
        )
        # Wall-clock limits may be reached on one rank first: stop all together.
        return any_rank(done, self.context)

    def train(self, show_progress: bool = True, data_dir: Path | None = None) -> TrainResult:
        """Train until a step, epoch, time or early-stopping limit; write the final model.

        Raises:
            TrainingError: the run folder is unusable, or the loss diverged.
        """
        is_main = self.context.is_main
        if is_main:
            prepare_run_folder(
                self.run_dir, self.model, self.requested_config, self.config, self._resumed
            )
        barrier(self.context)
        log = RunLogger(self.run_dir, enabled=is_main)
        try:
            log.drop_metrics_after(self.progress.step)  # a resume replays what came after
            log.write_run_info(
                {
                    "resumed_at_step": self.progress.step,
                    "data_dir": str(Path(data_dir).resolve()) if data_dir else None,
                    "world_size": self.context.world_size,
                    "device": str(self.device),
                    "precision": self.config.train.precision,
                    "num_parameters": count_parameters(self.model),
                }
            )
            return self._train(log, show_progress and is_main)
        finally:
            log.close()

    def _train(self, log: RunLogger, show_progress: bool) -> TrainResult:
        cfg, train, p = self.config, self.config.train, self.progress
        logger.info(
            "training %s: %d parameters on %s x%d (%s), from step %d",
            cfg.name,
            count_parameters(self.model),
            self.device,
            self.context.world_size,
            train.precision,
            p.step,
        )
        started = time.monotonic()
        last_save = time.monotonic()
        bar = tqdm(
            total=train.max_steps or None,
            initial=p.step,
            disable=not show_progress,
            unit="step",
            dynamic_ncols=True,
        )
        window = ThroughputWindow()
        last_loss, stop_early, valid = float("nan"), False, dict[str, float]()
        skipped = 0  # fp16 updates skipped in a row
        while not self._finished(started, stop_early):
            updates = self.epochs.updates(p.epoch, self.context.world_size)
            for global_groups in updates[p.epoch_updates :]:
                tokens = sum(len(self.epochs.ids.tgt[i]) + 1 for b in global_groups for i in b)
                local = rank_share(global_groups, self.context.rank, self.context.world_size)
                before = p.step
                last_loss = self.train_step(local, tokens)
                p.epoch_updates += 1
                if p.step == before:  # an fp16 update the gradient scaler skipped
                    skipped += 1
                    if skipped >= MAX_SKIPPED_UPDATES:
                        raise TrainingError(
                            f"{skipped} fp16 updates in a row overflowed at step {p.step + 1}; "
                            "the last saved checkpoint is kept. Use bf16 or fp32, lower "
                            "train.lr_scale or set train.clip_norm"
                        )
                    if self._finished(started, stop_early):
                        break
                    continue
                skipped = 0
                window.add(last_loss, tokens)
                bar.update(1)
                if p.step % train.log_every == 0:
                    self._log_window(log, bar, window, started)
                if train.valid_every > 0 and p.step % train.valid_every == 0:
                    valid, stop_early = self._validate(log)
                saved_recently = time.monotonic() - last_save < 60 * train.save_every_minutes
                due = (train.save_every > 0 and p.step % train.save_every == 0) or (
                    train.save_every_minutes > 0 and not saved_recently
                )
                if any_rank(due, self.context):  # a collective: every rank saves or none
                    p.elapsed_seconds, started = self._elapsed(started), time.monotonic()
                    self.save_checkpoint()
                    last_save = time.monotonic()
                if self._finished(started, stop_early):
                    break
            else:
                p.epoch += 1
                p.epoch_updates = 0
        bar.close()
        return self._finish(log, started, last_loss, valid)

    def _log_window(
        self, log: RunLogger, bar: tqdm[Any], window: ThroughputWindow, started: float
    ) -> None:
        record = {
            "epoch": self.progress.epoch,
            "lr": float(self.optimizer.param_groups[0]["lr"]),
            "elapsed_s": self._elapsed(started),
            **window.summary(),
            **peak_memory_mib(self.device),
        }
        log.window(self.progress.step, record, bar)

    def _validate(self, log: RunLogger) -> tuple[dict[str, float], bool]:
        """Validate on rank 0, keep the best model, decide on early stopping (all ranks)."""
        valid: dict[str, float] = {}
        stop = False
        if self.context.is_main:
            hypotheses = self.run_dir / "valid" / f"step_{self.progress.step:08d}.hyp"
            valid = self.validator.validate(hypotheses)
            if valid:
                log.metrics(self.progress.step, valid)
                logger.info("step %d: %s", self.progress.step, format_metrics(valid))
                improved, stop = self.validator.track(self.progress, valid)
                if improved:
                    metadata = {**valid, "step": self.progress.step}
                    self.validator.write_model(self.run_dir / "model_best.pt", metadata)
        return valid, any_rank(stop, self.context)

    def _finish(
        self, log: RunLogger, started: float, last_loss: float, valid: dict[str, float]
    ) -> TrainResult:
        p = self.progress
        p.elapsed_seconds = self._elapsed(started)
        checkpoints = list_checkpoints(self.run_dir)
        missing = not checkpoints or checkpoints[-1] != checkpoint_path(self.run_dir, p.step)
        if any_rank(missing, self.context):
            self.save_checkpoint()
        barrier(self.context)
        model_path: Path | None = None
        if self.context.is_main:
            valid, model_path = self.validator.write_final_model(self.run_dir, p)
            log.metrics(p.step, {"final": True, "elapsed_s": p.elapsed_seconds, **valid})
        barrier(self.context)
        return TrainResult(p.step, p.epoch, p.elapsed_seconds, last_loss, valid, model_path)
