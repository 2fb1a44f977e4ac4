"""The exported graphs against the torch model they came from, run with onnxruntime in Python.

:func:`compare_step_log_probs` feeds the same token sequences through the torch model's cached
``decode_step`` and through ``encoder.onnx`` + ``decoder.onnx`` step by step, and reports the
largest difference of the next-token log-probabilities (what every search decision reads) and
whether each step's best token agrees. ``anuvad export --format web`` runs it on a few sentences
before it writes anything, so a graph that does not compute the model is never shipped; the
tests run it on more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import BOS_ID
from anuvad.decoding.search import next_log_probs
from anuvad.model.transformer import Transformer
from anuvad.web.onnx_export import graph_shapes


@dataclass
class StepComparison:
    """How closely the graphs follow the torch model over some token sequences.

    Attributes:
        max_abs_diff: the largest |log p_onnx - log p_torch| over every step, row and finite
            vocabulary entry.
        steps: decoding steps compared (summed over rows).
        argmax_agree: steps at which both give the same best token.
    """

    max_abs_diff: float
    steps: int
    argmax_agree: int


class OnnxGraphs:
    """``encoder.onnx`` and ``decoder.onnx`` of one export, in onnxruntime sessions."""

    def __init__(self, folder: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        self.encoder = ort.InferenceSession(str(folder / "encoder.onnx"), options, providers)
        self.decoder = ort.InferenceSession(str(folder / "decoder.onnx"), options, providers)

    def encode(self, src_ids: np.ndarray, src_pad_mask: np.ndarray) -> np.ndarray:
        """src_ids (B, S) int64, src_pad_mask (B, S) bool → cross_kv (B, 2L, H, S, Dh)."""
        out: list[Any] = self.encoder.run(None, {"src_ids": src_ids, "src_pad_mask": src_pad_mask})
        return np.asarray(out[0])

    def step(
        self,
        tgt_ids: np.ndarray,
        self_kv: np.ndarray,
        cross_kv: np.ndarray,
        src_pad_mask: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """One decoder step: (N, 1) newest tokens → log_probs (N, V), new_self_kv."""
        feed = {
            "tgt_ids": tgt_ids,
            "self_kv": self_kv,
            "cross_kv": cross_kv,
            "src_pad_mask": src_pad_mask,
        }
        log_probs, new_kv = self.decoder.run(None, feed)
        return np.asarray(log_probs), np.asarray(new_kv)


def compare_step_log_probs(
    model: Transformer,
    graphs: OnnxGraphs,
    sources: Sequence[list[int]],
    targets: Sequence[list[int]],
) -> StepComparison:
    """Teacher-force ``targets`` (token ids after BOS, one list per source) through both.

    Args:
        model: the torch model (eval mode).
        graphs: its exported graphs.
        sources: source ids without EOS (as ``Translator.encode`` gives them).
        targets: the tokens to feed after BOS; each row runs ``len(target) + 1`` steps.

    Returns:
        The largest log-probability difference and how often the best tokens agree.
    """
    src_ids, src_pad_mask = collate_source(list(sources))  # (B, S) each
    rows = src_ids.size(0)
    length = max(len(t) for t in targets) + 1
    fed = torch.full((rows, length), BOS_ID, dtype=torch.long)  # (B, T): BOS, then targets
    for i, target in enumerate(targets):
        fed[i, 1 : 1 + len(target)] = torch.tensor(target, dtype=torch.long)
    g = graph_shapes(model)
    mask_np = src_pad_mask.numpy()
    cross_kv = graphs.encode(src_ids.numpy(), mask_np)
    self_kv = np.zeros((rows, 2 * g.layers, g.heads, 0, g.head_size), dtype=np.float32)
    worst, steps, agree = 0.0, 0, 0
    with torch.inference_mode():
        cache = model.init_cache(model.encode(src_ids, src_pad_mask))
        for t in range(length):
            torch_lp = next_log_probs(
                model.decode_step(fed[:, t : t + 1], cache, src_pad_mask).logits[:, -1]
            )
            onnx_lp, self_kv = graphs.step(fed[:, t : t + 1].numpy(), self_kv, cross_kv, mask_np)
            ours = torch_lp.numpy()
            for i, target in enumerate(targets):
                if t > len(target):
                    continue  # this row's sequence has ended; later steps are padding
                finite = np.isfinite(ours[i])
                worst = max(worst, float(np.abs(ours[i][finite] - onnx_lp[i][finite]).max()))
                steps += 1
                agree += int(ours[i].argmax() == onnx_lp[i].argmax())
    return StepComparison(worst, steps, agree)


__all__ = ["OnnxGraphs", "StepComparison", "compare_step_log_probs"]
