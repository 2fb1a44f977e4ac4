"""The training loop: token-budget batches, label-smoothed loss, Adam with the paper's schedule.

Saving goes through :mod:`anuvad.checkpoint`; data comes prepared by :mod:`anuvad.prepare`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from anuvad.batching import Batch, collate, make_batches, model_lengths
from anuvad.checkpoint import ModelFile, save_model
from anuvad.config import ExperimentConfig, save_config
from anuvad.errors import AnuvadError
from anuvad.evaluate import corpus_scores
from anuvad.loss import label_smoothed_nll
from anuvad.model import Transformer, build_model, count_parameters
from anuvad.optim import build_optimizer, noam_learning_rate, set_learning_rate
from anuvad.prepare import PreparedData
from anuvad.translator import Translator, resolve_device

logger = logging.getLogger(__name__)


class TrainingError(AnuvadError):
    """Training cannot go on (e.g. the loss became NaN or infinite)."""


@dataclass
class TrainResult:
    """What a finished run reports."""

    steps: int
    epochs: int
    seconds: float
    train_loss: float
    valid: dict[str, float]
    model_path: Path


def with_vocab_sizes(config: ExperimentConfig, prepared: PreparedData) -> ExperimentConfig:
    """The config with ``model.src/tgt_vocab_size`` taken from the prepared tokenizers."""
    model = dataclasses.replace(
        config.model,
        src_vocab_size=prepared.src_tokenizer.vocab_size,
        tgt_vocab_size=prepared.tgt_tokenizer.vocab_size,
    )
    resolved = dataclasses.replace(config, model=model)
    resolved.validate()
    return resolved


def autocast_context(
    device: torch.device, precision: str
) -> contextlib.AbstractContextManager[Any]:
    """bf16/fp16 autocast on ``device``, or nothing for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.type, dtype=dtype)


def _update_groups(batches: Sequence[list[int]], accumulate: int) -> Iterator[list[list[int]]]:
    for start in range(0, len(batches) - accumulate + 1, accumulate):
        yield list(batches[start : start + accumulate])


class Trainer:
    """Trains one model on prepared data and writes the run folder.

    Run folder: ``config.yaml`` (resolved), ``metrics.jsonl`` (one JSON object per log line),
    ``model.pt`` (the final self-contained model file).
    """

    def __init__(
        self, config: ExperimentConfig, prepared: PreparedData, run_dir: str | Path
    ) -> None:
        self.config = with_vocab_sizes(config, prepared)
        self.prepared = prepared
        self.run_dir = Path(run_dir)
        self.device = resolve_device(self.config.train.device)
        train = self.config.train
        if train.precision == "fp16" and self.device.type != "cuda":
            raise TrainingError("train.precision=fp16 needs a CUDA device; use bf16 on the CPU")
        if train.num_threads > 0:
            torch.set_num_threads(train.num_threads)
        torch.manual_seed(train.seed)
        self.model: Transformer = build_model(self.config.model).to(self.device)
        self.optimizer = build_optimizer(self.model, train)
        self.scaler = torch.amp.GradScaler("cuda", enabled=train.precision == "fp16")
        self.step = 0
        self.epoch = 0
        if len(prepared.train) == 0:
            raise TrainingError("the prepared training set is empty; check data.train")
        self._train_src_lengths = model_lengths(prepared.train.src)
        self._train_tgt_lengths = model_lengths(prepared.train.tgt)

    # ----------------------------------------------------------------------------------------
    def _check_run_dir(self) -> None:
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            probe = self.run_dir / ".write-test"
            probe.write_text("ok", encoding="utf-8")
            probe.unlink()
        except OSError as exc:
            raise TrainingError(
                f"run directory {self.run_dir} is not writable ({exc}); choose another with "
                f"--run-dir"
            ) from exc

    def _log(self, record: dict[str, Any]) -> None:
        with (self.run_dir / "metrics.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def _batch(self, group: list[int], src: Sequence[list[int]], tgt: Sequence[list[int]]) -> Batch:
        batch = collate([src[i] for i in group], [tgt[i] for i in group], group)
        return batch.to(self.device)

    def _loss(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, int]:
        with autocast_context(self.device, self.config.train.precision):
            logits = self.model(batch.src_ids, batch.tgt_in_ids, batch.src_pad_mask)
        return label_smoothed_nll(logits, batch.tgt_out_ids, self.config.train.label_smoothing)

    def train_step(self, groups: list[list[int]]) -> tuple[float, int]:
        """One optimizer update over ``groups`` (accumulated batches of example indices).

        The loss is averaged over every non-padding target token of the update, so gradient
        accumulation gives the same update as one large batch.

        Returns:
            (mean label-smoothed loss per token, target tokens in the update).
        """
        train = self.config.train
        src, tgt = self.prepared.train.src, self.prepared.train.tgt
        total_tokens = sum(len(tgt[i]) + 1 for group in groups for i in group)
        self.model.train()
        loss_sum = 0.0
        for group in groups:
            loss, _, _ = self._loss(self._batch(group, src, tgt))
            self.scaler.scale(loss / total_tokens).backward()  # type: ignore[no-untyped-call]
            loss_sum += float(loss.detach())
        if not math.isfinite(loss_sum):
            raise TrainingError(
                f"loss became {loss_sum} at step {self.step + 1}; lower train.lr_scale or use "
                f"train.clip_norm; the last saved model is kept"
            )
        self.step += 1
        set_learning_rate(
            self.optimizer,
            noam_learning_rate(
                self.step, self.config.model.d_model, train.warmup_steps, train.lr_scale
            ),
        )
        if train.clip_norm > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), train.clip_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        return loss_sum / total_tokens, total_tokens

    @torch.no_grad()
    def validate(self) -> dict[str, float]:
        """Dev loss, perplexity and (greedy) BLEU / chrF++; empty when there is no dev set."""
        valid = self.prepared.valid
        if len(valid) == 0:
            return {}
        self.model.eval()
        plan = make_batches(
            model_lengths(valid.src),
            model_lengths(valid.tgt),
            self.config.data.valid_max_tokens,
            shuffle=False,
        )
        nll_sum, tokens = 0.0, 0
        for group in plan.batches:
            _, nll, count = self._loss(self._batch(group, valid.src, valid.tgt))
            nll_sum += float(nll)
            tokens += count
        metrics = {"valid_nll": nll_sum / tokens, "valid_ppl": math.exp(min(nll_sum / tokens, 50))}
        limit = self.config.train.valid_bleu_max_sentences
        sources = self.prepared.valid_src_text[: limit or None]
        references = self.prepared.valid_tgt_text[: limit or None]
        if sources:
            hypotheses = self.translator().translate_text(sources)
            scores = corpus_scores(hypotheses, references, self.config.train.bleu_tokenize)
            metrics.update({"valid_bleu": scores.bleu, "valid_chrf": scores.chrf})
        return metrics

    def translator(self) -> Translator:
        """A translator over the model being trained (shares its weights)."""
        return Translator(
            ModelFile(
                self.model, self.config, self.prepared.src_tokenizer, self.prepared.tgt_tokenizer
            )
        )

    def _done(self, started: float) -> bool:
        train = self.config.train
        return (
            (train.max_steps > 0 and self.step >= train.max_steps)
            or (train.max_epochs > 0 and self.epoch >= train.max_epochs)
            or (train.max_minutes > 0 and time.monotonic() - started >= 60 * train.max_minutes)
        )

    def train(self, show_progress: bool = True) -> TrainResult:
        """Train until a step, epoch or time limit; validate; write the final model file."""
        self._check_run_dir()
        save_config(self.config, self.run_dir / "config.yaml")
        cfg, train = self.config, self.config.train
        logger.info(
            "training %s: %d parameters on %s (%s)",
            cfg.name,
            count_parameters(self.model),
            self.device,
            train.precision,
        )
        started = time.monotonic()
        total = train.max_steps if train.max_steps > 0 else None
        bar = tqdm(total=total, disable=not show_progress, unit="step", dynamic_ncols=True)
        window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
        valid: dict[str, float] = {}
        last_loss = float("nan")
        while not self._done(started):
            plan = make_batches(
                self._train_src_lengths,
                self._train_tgt_lengths,
                cfg.data.max_tokens,
                seed=train.seed,
                epoch=self.epoch,
            )
            if len(plan.batches) < train.accumulate:
                raise TrainingError(
                    f"an epoch has {len(plan.batches)} batches, fewer than train.accumulate="
                    f"{train.accumulate}; lower train.accumulate or data.max_tokens"
                )
            for groups in _update_groups(plan.batches, train.accumulate):
                loss, tokens = self.train_step(groups)
                last_loss = loss
                window_loss += loss * tokens
                window_tokens += tokens
                bar.update(1)
                if self.step % train.log_every == 0:
                    elapsed = time.monotonic() - window_start
                    record = {
                        "step": self.step,
                        "epoch": self.epoch,
                        "loss": window_loss / window_tokens,
                        "lr": self.optimizer.param_groups[0]["lr"],
                        "tgt_tokens_per_s": window_tokens / max(elapsed, 1e-9),
                        "elapsed_s": time.monotonic() - started,
                    }
                    self._log(record)
                    if not show_progress:
                        logger.info(
                            "step %d: loss %.3f, lr %.2e, %.0f target tokens/s",
                            self.step,
                            record["loss"],
                            record["lr"],
                            record["tgt_tokens_per_s"],
                        )
                    bar.set_postfix(
                        loss=f"{record['loss']:.3f}",
                        lr=f"{record['lr']:.2e}",
                        tok_s=f"{record['tgt_tokens_per_s']:.0f}",
                    )
                    window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
                if train.valid_every > 0 and self.step % train.valid_every == 0:
                    valid = self.validate()
                    self._log({"step": self.step, **valid})
                    logger.info("step %d: %s", self.step, valid)
                if self._done(started):
                    break
            else:
                self.epoch += 1
        bar.close()
        valid = self.validate()
        seconds = time.monotonic() - started
        self._log({"step": self.step, "final": True, "elapsed_s": seconds, **valid})
        model_path = save_model(
            self.run_dir / "model.pt",
            self.model,
            cfg,
            self.prepared.src_tokenizer,
            self.prepared.tgt_tokenizer,
            metadata={"steps": self.step, "epochs": self.epoch, "train_seconds": seconds, **valid},
        )
        logger.info("wrote %s after %d steps (%.0f s)", model_path, self.step, seconds)
        return TrainResult(self.step, self.epoch, seconds, last_loss, valid, model_path)
