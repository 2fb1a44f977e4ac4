"""Search over ``Transformer.encode`` / ``decode_step`` with the key/value cache.

Greedy search is batched: N sentences decode together and a sentence that has produced EOS
leaves the batch (its cache rows are dropped), so finished sentences cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from anuvad.model import Transformer
from anuvad.tokenizer import BOS_ID, EOS_ID, PAD_ID


@dataclass
class Hypothesis:
    """One output sentence.

    Attributes:
        token_ids: target ids without BOS and EOS.
        score: sum of the token log-probabilities (EOS included when it was produced).
        finished: whether EOS was produced before the length limit.
    """

    token_ids: list[int]
    score: float
    finished: bool


def max_output_lengths(src_pad_mask: Tensor, max_len_a: float, max_len_b: int) -> Tensor:
    """Per-sentence limit a * source_length + b (section 6.1: input length + 50), shape (B,)."""
    src_lengths = (~src_pad_mask).sum(dim=1)  # (B,)
    return (src_lengths.float() * max_len_a).floor().long() + max_len_b


def forbid_special_tokens(log_probs: Tensor) -> Tensor:
    """Padding and BOS can never be generated."""
    log_probs[:, PAD_ID] = float("-inf")
    log_probs[:, BOS_ID] = float("-inf")
    return log_probs


@torch.inference_mode()
def greedy_search(
    model: Transformer,
    src_ids: Tensor,
    src_pad_mask: Tensor,
    max_len_a: float = 1.0,
    max_len_b: int = 50,
) -> list[Hypothesis]:
    """Batched greedy decoding: the most probable token at every step.

    Args:
        model: the network (put it in eval mode first).
        src_ids: (B, S) source ids, EOS-terminated and padded.
        src_pad_mask: (B, S) True on padding.
        max_len_a: output length limit is ``max_len_a * source_length + max_len_b`` tokens
            (EOS not counted).
        max_len_b: see ``max_len_a``.

    Returns:
        One hypothesis per input row, in input order.
    """
    batch = src_ids.size(0)
    device = src_ids.device
    memory = model.encode(src_ids, src_pad_mask)  # (B, S, D)
    cache = model.init_cache(memory)
    # Position 0 holds BOS, so at most max_positions - 1 tokens can follow it.
    limits: list[int] = (
        max_output_lengths(src_pad_mask, max_len_a, max_len_b)
        .clamp(max=model.config.max_positions - 1)
        .tolist()
    )
    limit = max(limits) if limits else 0

    tokens: list[list[int]] = [[] for _ in range(batch)]
    scores = [0.0] * batch
    finished = [False] * batch
    active_rows = list(range(batch))  # rows of the original batch still decoding
    pad_mask = src_pad_mask
    last = torch.full((batch, 1), BOS_ID, dtype=torch.long, device=device)  # (B_active, 1)

    for step in range(limit):
        logits = model.decode_step(last, cache, pad_mask).logits[:, -1]  # (B_active, V)
        log_probs = forbid_special_tokens(torch.log_softmax(logits.float(), dim=-1))
        best_scores, best = log_probs.max(dim=-1)  # (B_active,)
        keep: list[int] = []
        for i, (row, token, score) in enumerate(
            zip(active_rows, best.tolist(), best_scores.tolist(), strict=True)
        ):
            if step >= limits[row]:
                continue  # length limit reached without EOS
            scores[row] += score
            if token == EOS_ID:
                finished[row] = True
                continue
            tokens[row].append(token)
            keep.append(i)
        if not keep:
            break
        if len(keep) < len(active_rows):
            index = torch.tensor(keep, device=device)
            cache.reorder(index)
            pad_mask = pad_mask.index_select(0, index)
            best = best.index_select(0, index)
            active_rows = [active_rows[i] for i in keep]
        last = best.unsqueeze(1)  # (B_active, 1)

    return [
        Hypothesis(token_ids=tokens[i], score=scores[i], finished=finished[i]) for i in range(batch)
    ]
