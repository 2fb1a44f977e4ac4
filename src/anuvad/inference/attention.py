"""Attention matrices of a translation, for heatmaps.

Two views of which source positions each output token relates to:

* the cross-attention (encoder-decoder attention) probabilities of every decoder layer and
  head, [tgt_pos × src_pos] rows summing to 1;
* the original design's view (docs: design note 003): the cosine similarity between each final
  decoder state and each encoder output (``memory``), [tgt_pos × src_pos] in [-1, 1].

Both come from one teacher-forced pass over the chosen hypothesis (BOS + its tokens), which
computes exactly the states the search computed step by step: row t is the decoder position
that produced output token t (the last row produced EOS when the hypothesis finished).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from anuvad.data.tokenizer import BOS_ID, EOS_ID
from anuvad.model.transformer import Transformer


@dataclass
class AttentionMatrices:
    """Attention of one output sentence over its source.

    Attributes:
        cross_attention: (layers, H, T, S) probabilities; T output tokens (EOS included when
            produced), S source positions (EOS included).
        cosine_similarity: (T, S) cosine of decoder state t and encoder output s.
    """

    cross_attention: Tensor
    cosine_similarity: Tensor


@torch.inference_mode()
def attention_matrices(
    model: Transformer,
    src_ids: Tensor,
    output_ids: list[int],
    finished: bool,
    tgt_prefix: Sequence[int] = (),
) -> AttentionMatrices:
    """Cross-attention and cosine similarity of one hypothesis.

    Args:
        model: the network (eval mode).
        src_ids: (S,) the source ids, EOS-terminated, no padding.
        output_ids: the hypothesis' tokens without BOS/EOS.
        finished: whether the hypothesis ended with EOS (its row is included).
        tgt_prefix: tokens the search forced after BOS (a multilingual model's target-language
            token): fed to the decoder as it saw them, their rows left out.

    Returns:
        The matrices for the T = len(output_ids) (+1 when finished) output positions; T may
        be 0 (an unfinished empty output).
    """
    targets = [*output_ids, EOS_ID] if finished else list(output_ids)
    src = src_ids.unsqueeze(0)  # (1, S)
    src_pad_mask = torch.zeros_like(src, dtype=torch.bool)
    memory = model.encode(src, src_pad_mask)  # (1, S, D)
    if not targets:
        layers, heads = len(model.decoder_layers), model.config.num_heads
        empty = memory.new_zeros(layers, heads, 0, src.size(1))
        return AttentionMatrices(empty, memory.new_zeros(0, src.size(1)))
    forced = len(tgt_prefix)
    tgt_in = torch.tensor([[BOS_ID, *tgt_prefix, *targets[:-1]]], device=src.device)  # (1, P+T)
    out = model.decode(tgt_in, memory, src_pad_mask, need_attention=True)
    assert out.cross_attention is not None
    # (layers, H, T, S): the output's rows, not the forced prefix's
    cross = torch.stack([a[0, :, forced:] for a in out.cross_attention]).float()
    hidden = F.normalize(out.hidden[0, forced:].float(), dim=-1)  # (T, D)
    keys = F.normalize(memory[0].float(), dim=-1)  # (S, D)
    return AttentionMatrices(cross, hidden @ keys.T)  # (T, S)
