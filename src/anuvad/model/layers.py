"""The building blocks of the Transformer (sections 3.1-3.5): positions, the output layer's
product, the feed-forward network, residual sub-layers, encoder and decoder layers (multi-head
attention: :mod:`anuvad.model.attention`).

Dimension legend and mask convention: see :mod:`anuvad.model.transformer` (True marks a position
that must not be attended to, everywhere).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.config import ModelConfig
from anuvad.model.attention import CrossAttention, SelfAttention
from anuvad.model.cache import LayerCache

# --------------------------------------------------------------------------------------------
# Positions (section 3.5)
# --------------------------------------------------------------------------------------------


def sinusoidal_table(max_positions: int, d_model: int) -> Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)).

    Returns:
        (max_positions, D) float32 table.
    """
    position = torch.arange(max_positions, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(D/2),)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (P, ceil(D/2))
    table = torch.zeros(max_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


FAIRSEQ_FIRST_POSITION = 2  # fairseq numbers positions from padding_idx + 1, its pad being 1


def fairseq_sinusoidal_table(max_positions: int, d_model: int) -> Tensor:
    """fairseq's sinusoids (tensor2tensor's layout), which M2M100 and NLLB models were trained
    with: with h = D // 2, row p holds ``[sin(p w_0) .. sin(p w_{h-1}), cos(p w_0) ..
    cos(p w_{h-1})]`` (not interleaved), w_i = exp(-i ln(10000) / (h - 1)), and a zero column
    when D is odd. fairseq numbers the positions of a sequence from 2 (its padding index 1, plus
    one), so row i of this table is fairseq's row i + 2. Computed in float32 exactly as
    ``transformers``' ``M2M100SinusoidalPositionalEmbedding`` computes it (bit for bit).

    Returns:
        (max_positions, D) float32 table.
    """
    half = d_model // 2
    step = math.log(10000) / (half - 1)
    frequency = torch.exp(torch.arange(half, dtype=torch.int64).float() * -step)  # (h,)
    rows = max_positions + FAIRSEQ_FIRST_POSITION
    position = torch.arange(rows, dtype=torch.int64).float().unsqueeze(1)  # (P + 2, 1)
    angle = position * frequency.unsqueeze(0)  # (P + 2, h)
    table = torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)  # (P + 2, 2h)
    if d_model % 2:
        table = torch.cat([table, torch.zeros(rows, 1)], dim=1)  # (P + 2, D)
    return table[FAIRSEQ_FIRST_POSITION:].contiguous()


class SinusoidalPositions(nn.Module):
    """Fixed sinusoidal encodings, precomputed up to ``max_positions`` (not saved: derivable);
    ``fairseq``: fairseq's table (:func:`fairseq_sinusoidal_table`) instead of the paper's."""

    def __init__(self, max_positions: int, d_model: int, fairseq: bool = False) -> None:
        super().__init__()
        self.max_positions = max_positions
        self.d_model = d_model
        self.fairseq = fairseq
        self.register_buffer("table", self._make_table(), persistent=False)

    def _make_table(self) -> Tensor:
        make_table = fairseq_sinusoidal_table if self.fairseq else sinusoidal_table
        return make_table(self.max_positions, self.d_model)  # (P, D)

    def reset_table(self, device: torch.device) -> None:
        """Compute the table again on ``device`` (a network built on the meta device and given
        its stored weights has none: the table is derived, never stored)."""
        with torch.device(device):
            self.register_buffer("table", self._make_table(), persistent=False)

    def forward(self, length: int, offset: int = 0) -> Tensor:
        """Encodings of positions offset .. offset+length-1, shape (length, D)."""
        _check_length(offset + length, self.max_positions)
        table = self.get_buffer("table")
        return table[offset : offset + length]


class LearnedPositions(nn.Module):
    """Learned position embeddings (the paper's Table 3, row E)."""

    def __init__(self, max_positions: int, d_model: int) -> None:
        super().__init__()
        self.max_positions = max_positions
        self.embedding = nn.Embedding(max_positions, d_model)
        nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model**-0.5)

    def forward(self, length: int, offset: int = 0) -> Tensor:
        """Embeddings of positions offset .. offset+length-1, shape (length, D)."""
        _check_length(offset + length, self.max_positions)
        return self.embedding.weight[offset : offset + length]


def _check_length(length: int, max_positions: int) -> None:
    if length > max_positions:
        raise ValueError(
            f"sequence of {length} positions exceeds model.max_positions={max_positions}; "
            f"shorten the input or build the model with a larger max_positions"
        )


# --------------------------------------------------------------------------------------------
# The output layer's product (section 3.4: the target embedding matrix, shared)
# --------------------------------------------------------------------------------------------


class LinearProduct(nn.Module):
    """``F.linear(x, weight, bias)`` as a module without parameters of its own.

    The output layer multiplies by a matrix it does not own (the tied target embedding,
    section 3.4); this module is where that product happens, so that a device-specific
    implementation can be swapped in from outside (:func:`anuvad.inference.cpu.accelerate`).
    """

    def forward(self, x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        """x (..., I), weight (O, I), bias (O,) → (..., O)."""
        return F.linear(x, weight, bias)


# --------------------------------------------------------------------------------------------
# Position-wise feed-forward network (section 3.3)
# --------------------------------------------------------------------------------------------


_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "swish": F.silu,
    "gelu": F.gelu,
}


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2: D → F → D (section 3.3; ``activation`` may replace
    the max(0, ·) by swish or GELU, as imported Marian models need)."""

    def __init__(
        self, d_model: int, d_ff: int, activation_dropout: float, activation: str = "relu"
    ) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation_dropout = nn.Dropout(activation_dropout)
        self.activation = _ACTIVATIONS[activation]

    def forward(self, x: Tensor) -> Tensor:
        """(B, L, D) → (B, L, D)."""
        out: Tensor = self.linear2(self.activation_dropout(self.activation(self.linear1(x))))
        return out


# --------------------------------------------------------------------------------------------
# Residual sub-layer connection (section 3.1 and 5.4)
# --------------------------------------------------------------------------------------------


class SublayerConnection(nn.Module):
    """Post-LN ``LayerNorm(x + Dropout(Sublayer(x)))`` (the paper) or pre-LN
    ``x + Dropout(Sublayer(LayerNorm(x)))`` (an option, not the default)."""

    def __init__(self, d_model: int, dropout: float, pre_norm: bool, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.pre_norm = pre_norm

    def normed_input(self, x: Tensor) -> Tensor:
        """What the sub-layer reads: LayerNorm(x) for pre-LN, x itself for post-LN."""
        return self.norm(x) if self.pre_norm else x

    def residual(self, x: Tensor, sublayer_out: Tensor) -> Tensor:
        """Add the dropped-out sub-layer output to the residual stream (and normalise post-LN)."""
        y: Tensor = x + self.dropout(sublayer_out)
        return y if self.pre_norm else self.norm(y)


# --------------------------------------------------------------------------------------------
# Encoder and decoder layers (section 3.1)
# --------------------------------------------------------------------------------------------


class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each in a residual sub-layer."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        pre, eps = config.norm_position == "pre", config.layer_norm_eps
        self.self_attn = SelfAttention(config.d_model, config.num_heads, config.attention_dropout)
        self.ffn = FeedForward(
            config.d_model, config.d_ff, config.activation_dropout, config.activation
        )
        self.attn_sublayer = SublayerConnection(config.d_model, config.dropout, pre, eps)
        self.ffn_sublayer = SublayerConnection(config.d_model, config.dropout, pre, eps)

    def forward(self, x: Tensor, src_pad_mask: Tensor | None) -> Tensor:
        """(B, S, D) → (B, S, D)."""
        h = self.attn_sublayer.normed_input(x)
        attended, _ = self.self_attn(h, key_pad_mask=src_pad_mask)
        x = self.attn_sublayer.residual(x, attended)
        return self.ffn_sublayer.residual(x, self.ffn(self.ffn_sublayer.normed_input(x)))


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder attention, feed-forward network."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        pre, eps = config.norm_position == "pre", config.layer_norm_eps
        d, h, p = config.d_model, config.num_heads, config.attention_dropout
        self.self_attn = SelfAttention(d, h, p)
        self.cross_attn = CrossAttention(d, h, p)
        self.ffn = FeedForward(d, config.d_ff, config.activation_dropout, config.activation)
        self.self_sublayer = SublayerConnection(d, config.dropout, pre, eps)
        self.cross_sublayer = SublayerConnection(d, config.dropout, pre, eps)
        self.ffn_sublayer = SublayerConnection(d, config.dropout, pre, eps)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None,
        src_pad_mask: Tensor | None,
        tgt_mask: Tensor | None = None,
        cache: LayerCache | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """(B, T, D) → (B, T, D) and, when asked, cross-attention (B, H, T, S).

        Without ``tgt_mask`` and ``cache`` the self-attention is causal; with a cache the
        queries are the newest positions and may see every cached key.
        """
        causal = tgt_mask is None and cache is None
        h = self.self_sublayer.normed_input(x)
        attended, _ = self.self_attn(h, attn_mask=tgt_mask, causal=causal, cache=cache)
        x = self.self_sublayer.residual(x, attended)
        h = self.cross_sublayer.normed_input(x)
        attended, weights = self.cross_attn(
            h, memory, key_pad_mask=src_pad_mask, cache=cache, need_weights=need_weights
        )
        x = self.cross_sublayer.residual(x, attended)
        x = self.ffn_sublayer.residual(x, self.ffn(self.ffn_sublayer.normed_input(x)))
        return x, weights
