"""Validation during training: dev loss and perplexity (teacher forced) and dev BLEU / chrF++
of greedy translations."""

from __future__ import annotations

import logging
import math
import operator
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from anuvad.atomic import write_atomic
from anuvad.checkpoint import ModelFile, save_model
from anuvad.config import ExperimentConfig
from anuvad.data.batching import Batch, collate, make_batches, model_lengths
from anuvad.data.prepare import PreparedData
from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference.translator import Translator
from anuvad.model.transformer import Transformer
from anuvad.training.state import Progress, average_weights, list_checkpoints

logger = logging.getLogger(__name__)

LossFn = Callable[[Batch], tuple[Any, Any, int]]

# early_stop_metric → (metrics key, "is better" comparison)
METRICS: dict[str, tuple[str, Callable[[float, float], bool]]] = {
    "bleu": ("valid_bleu", operator.gt),
    "chrf": ("valid_chrf", operator.gt),
    "loss": ("valid_nll", operator.lt),
    "ppl": ("valid_ppl", operator.lt),
}


class Validator:
    """Scores the model being trained on the prepared dev set.

    Args:
        model: the network (not the DDP wrapper: validation runs on one rank).
        config: the resolved experiment.
        prepared: holds the encoded dev set and its raw text.
        loss_fn: the trainer's loss on one batch (same precision settings as training).
    """

    def __init__(
        self,
        model: Transformer,
        config: ExperimentConfig,
        prepared: PreparedData,
        loss_fn: LossFn,
    ) -> None:
        self.model = model
        self.config = config
        self.prepared = prepared
        self.loss_fn = loss_fn
        self.device = next(model.parameters()).device
        self._warned_long = False

    def _bleu_parts(self) -> list[tuple[str, int, int]]:
        """(dev set name, first line, end line) of the dev sentences translated for BLEU: the
        first ``valid_bleu_max_sentences`` of each dev set (all when 0)."""
        limit = self.config.train.valid_bleu_max_sentences
        corpora = self.prepared.report.get("valid", {}).get("corpora", [])
        sizes = [(str(c["name"]), int(c["pairs"])) for c in corpora]
        total = len(self.prepared.valid_src_text)
        if sum(n for _, n in sizes) != total:  # an older report: one dev set
            sizes = [("valid", total)]
        parts: list[tuple[str, int, int]] = []
        start = 0
        for name, count in sizes:
            parts.append((name, start, start + (min(count, limit) if limit else count)))
            start += count
        return parts

    @torch.no_grad()
    def validate(self, hypotheses_path: str | Path | None = None) -> dict[str, float]:
        """``valid_nll``, ``valid_ppl`` and, with dev text, ``valid_bleu`` / ``valid_chrf`` (and
        ``valid_bleu_<name>`` / ``valid_chrf_<name>`` per dev set when there are several).

        Args:
            hypotheses_path: where to write the dev translations (one per line, dev order), so
                that any validation can be inspected or re-scored later, e.g. on a subset.

        Returns an empty dict when there is no dev set. Leaves the model in eval mode.
        """
        valid = self.prepared.valid
        if len(valid) == 0:
            return {}
        self.model.eval()
        # A dev pair longer than the model's positions cannot be scored (its translation is
        # still made for BLEU, from the source cut to fit): left out of valid_nll, once said.
        fits = self.config.model.max_positions - 1  # tokens + EOS (source) or BOS (target)
        scored = [i for i in range(len(valid)) if max(len(valid.src[i]), len(valid.tgt[i])) <= fits]
        if len(scored) < len(valid) and not self._warned_long:
            self._warned_long = True
            logger.warning(
                "%d dev pair(s) have more than %d tokens on a side (model.max_positions %d): "
                "left out of valid_nll",
                len(valid) - len(scored),
                fits,
                self.config.model.max_positions,
            )
        plan = make_batches(
            model_lengths([valid.src[i] for i in scored]),
            model_lengths([valid.tgt[i] for i in scored]),
            self.config.data.valid_max_tokens,
            shuffle=False,
        )
        nll_sum, tokens = 0.0, 0
        for positions in plan.batches:
            group = [scored[j] for j in positions]
            batch = collate([valid.src[i] for i in group], [valid.tgt[i] for i in group], group)
            _, nll, count = self.loss_fn(batch.to(self.device))
            nll_sum += float(nll)
            tokens += count
        nll = nll_sum / tokens if tokens else float("nan")
        metrics = {"valid_nll": nll, "valid_ppl": math.exp(min(nll, 50.0))}
        parts = self._bleu_parts()
        sources = [s for _, start, end in parts for s in self.prepared.valid_src_text[start:end]]
        references = [r for _, start, end in parts for r in self.prepared.valid_tgt_text[start:end]]
        if sources:
            translator = Translator(
                ModelFile(
                    self.model,
                    self.config,
                    self.prepared.src_tokenizer,
                    self.prepared.tgt_tokenizer,
                )
            )
            # Greedy whatever the model's beam: fast, and the score to compare runs by.
            hypotheses = [
                t.text
                for t in translator.translate(sources, translator.settings(beam_size=1, nbest=1))
            ]
            if hypotheses_path is not None:
                write_lines(hypotheses_path, hypotheses)
            tokenize = self.config.train.bleu_tokenize
            scores = corpus_scores(hypotheses, references, tokenize)
            metrics.update({"valid_bleu": scores.bleu, "valid_chrf": scores.chrf})
            metrics["valid_distinct"] = distinct_share(sources, hypotheses)
            if len(parts) > 1:  # one curve per dev set (e.g. captions and news)
                offset = 0
                for name, start, end in parts:
                    count = end - start
                    part = corpus_scores(
                        hypotheses[offset : offset + count],
                        references[offset : offset + count],
                        tokenize,
                    )
                    metrics[f"valid_bleu_{name}"] = part.bleu
                    metrics[f"valid_chrf_{name}"] = part.chrf
                    offset += count
        return metrics

    def validate_final(
        self, checkpoints: Sequence[Path], hypotheses_path: Path
    ) -> dict[str, float]:
        """Score the last weights, then load the average of ``checkpoints`` into the model
        (section 6.1: the last 5 / 20 checkpoints) and score that.

        Args:
            checkpoints: the training states to average, oldest first; with fewer than two the
                model is left as it is.
            hypotheses_path: where the last weights' dev translations go; the averaged model's
                go beside it with the suffix ``.averaged.hyp``.

        Returns:
            The averaged model's metrics, with the last weights' as ``last_<metric>`` (just the
            last weights' metrics when nothing was averaged).
        """
        last = self.validate(hypotheses_path)
        if len(checkpoints) < 2:
            return last
        self.model.load_state_dict(average_weights(checkpoints))
        averaged = self.validate(hypotheses_path.with_suffix(".averaged.hyp"))
        logger.info(
            "averaged the last %d checkpoints: %s (last weights: %s)",
            len(checkpoints),
            format_metrics(averaged),
            format_metrics(last),
        )
        return {**averaged, **{f"last_{k}": v for k, v in last.items()}}

    def write_model(self, path: Path, metadata: dict[str, Any]) -> Path:
        """The model as it is now, as a model file with its tokenizers and ``metadata``."""
        tokenizers = self.prepared.src_tokenizer, self.prepared.tgt_tokenizer
        return save_model(path, self.model, self.config, *tokenizers, metadata=metadata)

    def write_final_model(self, run_dir: Path, progress: Progress) -> tuple[dict[str, float], Path]:
        """Average the run's last ``average_last`` checkpoints into the model, score it
        (:meth:`validate_final`) and write ``run_dir/model.pt``; its metrics and path."""
        to_average = list_checkpoints(run_dir)[-self.config.train.average_last :]
        p = progress
        final = self.validate_final(to_average, run_dir / "valid" / f"step_{p.step:08d}.hyp")
        metadata = {
            "steps": p.step,
            "epochs": p.epoch,
            "train_seconds": p.elapsed_seconds,
            "averaged_checkpoints": [c.name for c in to_average],
            **final,
        }
        path = self.write_model(run_dir / "model.pt", metadata)
        logger.info("wrote %s after %d steps (%.0f s)", path, p.step, p.elapsed_seconds)
        return final, path

    def score(self, metrics: dict[str, float]) -> tuple[float, Callable[[float, float], bool]]:
        """The early-stopping / best-model metric and how to compare it."""
        key, better = METRICS[self.config.train.early_stop_metric]
        if key not in metrics:  # e.g. BLEU asked for but no dev text: fall back to the loss
            key, better = METRICS["loss"]
        return metrics[key], better

    def track(self, progress: Progress, metrics: dict[str, float]) -> tuple[bool, bool]:
        """Record a validation in ``progress``: the best score and the validations since.

        Returns:
            (whether this is the best so far, whether early stopping's patience ran out).
        """
        value, better = self.score(metrics)
        train = self.config.train
        improved = progress.best_value is None or better(value, progress.best_value)
        if improved:
            progress.best_value, progress.best_step = value, progress.step
            progress.bad_validations = 0
        else:
            progress.bad_validations += 1
        stop = 0 < train.early_stop_patience <= progress.bad_validations
        if stop:
            logger.info(
                "early stop: no better %s for %d validations (best %.3f at step %d)",
                train.early_stop_metric,
                progress.bad_validations,
                progress.best_value,
                progress.best_step,
            )
        return improved, stop


def distinct_share(sources: Sequence[str], hypotheses: Sequence[str]) -> float:
    """Distinct outputs per distinct input; warns when the model writes one output for many.

    A model whose outputs do not depend on its input (e.g. an encoder collapsed to one state
    for every position, found on the parsing recipe at too high a learning rate) can still lower
    its loss by learning the targets' prior; this makes that visible at every validation.
    """
    inputs = len(set(sources))
    share = len(set(hypotheses)) / max(1, inputs)
    if inputs >= 10 and share <= 0.1:
        logger.warning(
            "%d distinct dev inputs got only %d distinct outputs: the model ignores its input "
            "(bench/encoder_spread.py checks for a collapsed encoder; a lower learning rate "
            "usually avoids it)",
            inputs,
            len(set(hypotheses)),
        )
    return share


def format_metrics(metrics: dict[str, float]) -> str:
    """``"valid_bleu 41.200, valid_chrf 60.100"``: metrics for a log line."""
    return ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())


def write_lines(path: str | Path, lines: Sequence[str]) -> None:
    """Write ``lines`` to ``path`` atomically (a temporary file beside it, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(line + "\n" for line in lines).encode("utf-8"))
