"""The building blocks of the Transformer (sections 3.1-3.5): positions, multi-head attention
with a key/value cache, the feed-forward network, residual sub-layers, encoder and decoder layers.

Dimension legend and mask convention: see :mod:`anuvad.model.transformer` (True marks a position
that must not be attended to, everywhere).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.config import ModelConfig
from anuvad.inference.cpu import Linear
from anuvad.model.cache import LayerCache, group_rows, ungroup_rows

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


class SinusoidalPositions(nn.Module):
    """Fixed sinusoidal encodings, precomputed up to ``max_positions`` (not saved: derivable)."""

    def __init__(self, max_positions: int, d_model: int) -> None:
        super().__init__()
        self.max_positions = max_positions
        self.register_buffer("table", sinusoidal_table(max_positions, d_model), persistent=False)

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
# Multi-head attention (section 3.2)
# --------------------------------------------------------------------------------------------


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_H) W_O with scaled dot-product heads.

    Self-attention projects Q, K and V with one fused (D, 3D) matrix and cross-attention K and
    V with one (D, 2D) matrix: the same parameters as separate W_Q, W_K, W_V, fewer kernels.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float, self_attention: bool) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.dropout = dropout
        self.self_attention = self_attention
        if self_attention:
            self.qkv_proj = Linear(d_model, 3 * d_model)
        else:
            self.q_proj = Linear(d_model, d_model)
            self.kv_proj = Linear(d_model, 2 * d_model)
        self.out_proj = Linear(d_model, d_model)

    def _split_heads(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)  # (B,H,L,Dh)

    def project_kv(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Cross-attention keys and values of ``memory`` (B, S, D) → two (B, H, S, Dh)."""
        k, v = self.kv_proj(memory).chunk(2, dim=-1)  # 2 × (B, S, D)
        return self._split_heads(k), self._split_heads(v)

    def forward(
        self,
        query: Tensor,
        memory: Tensor | None = None,
        key_pad_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        causal: bool = False,
        cache: LayerCache | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` (B, T, D) to itself (self-attention) or to ``memory`` (B, S, D).

        Args:
            query: (B, T, D) queries (and keys/values for self-attention).
            memory: (B, S, D) encoder output for cross-attention; None for self-attention.
            key_pad_mask: (B, L) True on keys that are padding.
            attn_mask: (T, L) True where a query must not see a key (e.g. the future).
            causal: mask the future without building a mask (training-time decoder).
            cache: incremental decoding; self-attention appends this step's keys/values,
                cross-attention reuses the keys/values computed once from memory.
            need_weights: also return the attention probabilities (slower, explicit path).

        Returns:
            (B, T, D) output and, when asked, (B, H, T, L) attention probabilities.
        """
        if self.self_attention:
            q, k, v = self.qkv_proj(query).chunk(3, dim=-1)  # 3 × (B, T, D)
            q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
            if cache is not None:
                if cache.self_k is not None and cache.self_v is not None:
                    k = torch.cat([cache.self_k, k], dim=2)  # (B, H, t+T, Dh)
                    v = torch.cat([cache.self_v, v], dim=2)
                cache.self_k, cache.self_v = k, v
        else:
            q = self._split_heads(self.q_proj(query))  # (B, H, T, Dh)
            if cache is not None and cache.cross_k is not None and cache.cross_v is not None:
                k, v = cache.cross_k, cache.cross_v
            else:
                if memory is None:
                    raise ValueError("cross-attention needs memory or a filled cache")
                k, v = self.project_kv(memory)  # (B, H, S, Dh)
                if cache is not None:
                    cache.cross_k, cache.cross_v = k, v

        group = 1 if self.self_attention or cache is None else cache.group
        if group > 1:  # the group's queries side by side against their sentence's keys
            q = group_rows(q, group)  # (N / G, H, G * T, Dh)
        mask = _combine_masks(key_pad_mask, attn_mask)  # broadcastable to (B, H, T, L)
        if causal and mask is not None:
            raise ValueError("pass either causal=True or an explicit attn_mask, not both")
        dropout = self.dropout if self.training else 0.0
        weights: Tensor | None = None
        if need_weights or _explicit_is_faster(q, k):
            weights = attention_weights(q, k, mask, causal)  # (B, H, T, L)
            context = F.dropout(weights, p=dropout, training=self.training) @ v  # (B,H,T,Dh)
        else:
            context = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=dropout, is_causal=causal
            )  # (B, H, T, Dh)
        if group > 1:
            context = ungroup_rows(context, group)  # (N, H, T, Dh)
            weights = ungroup_rows(weights, group) if weights is not None else None
        batch, _, length, _ = context.shape
        context = context.transpose(1, 2).reshape(batch, length, -1)  # (B, T, D)
        return self.out_proj(context), weights if need_weights else None


def _explicit_is_faster(q: Tensor, k: Tensor) -> bool:
    """Whether softmax(Q K^T / sqrt(d)) V beats ``F.scaled_dot_product_attention`` here.

    On a CPU, PyTorch's fused attention backward in bf16/fp16 is 5-10x slower than the explicit
    product for sentence-length keys (48 against 7 ms for 128 x 8 heads x 32 x 32, even at 256
    keys; docs/benchmarks.md, "Training throughput"), so training under CPU autocast takes the
    explicit path. Inference, fp32 and GPUs keep the fused kernel.
    """
    return (
        q.device.type == "cpu"
        and q.dtype in (torch.bfloat16, torch.float16)
        and torch.is_grad_enabled()
        and k.size(-2) <= 256
    )


def attention_weights(q: Tensor, k: Tensor, mask: Tensor | None, causal: bool) -> Tensor:
    """softmax(Q K^T / sqrt(d_k)) (B, H, T, L), the softmax in float32, masked keys at zero."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T, L)
    if causal:
        future = torch.ones(q.size(2), k.size(2), dtype=torch.bool, device=q.device)
        scores = scores.masked_fill(future.triu(1), float("-inf"))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)


def _combine_masks(key_pad_mask: Tensor | None, attn_mask: Tensor | None) -> Tensor | None:
    """Turn anuvad's masks (True = blocked) into SDPA's (True = may attend)."""
    allowed: Tensor | None = None
    if key_pad_mask is not None:
        allowed = ~key_pad_mask[:, None, None, :]  # (B, 1, 1, L)
    if attn_mask is not None:
        future_ok = ~attn_mask[None, None, :, :]  # (1, 1, T, L)
        allowed = future_ok if allowed is None else allowed & future_ok
    return allowed


# --------------------------------------------------------------------------------------------
# Position-wise feed-forward network (section 3.3)
# --------------------------------------------------------------------------------------------


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2: D → F → D."""

    def __init__(self, d_model: int, d_ff: int, activation_dropout: float) -> None:
        super().__init__()
        self.linear1 = Linear(d_model, d_ff)
        self.linear2 = Linear(d_ff, d_model)
        self.activation_dropout = nn.Dropout(activation_dropout)

    def forward(self, x: Tensor) -> Tensor:
        """(B, L, D) → (B, L, D)."""
        out: Tensor = self.linear2(self.activation_dropout(F.relu(self.linear1(x))))
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
        self.self_attn = MultiHeadAttention(
            config.d_model, config.num_heads, config.attention_dropout, self_attention=True
        )
        self.ffn = FeedForward(config.d_model, config.d_ff, config.activation_dropout)
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
        self.self_attn = MultiHeadAttention(d, h, p, self_attention=True)
        self.cross_attn = MultiHeadAttention(d, h, p, self_attention=False)
        self.ffn = FeedForward(d, config.d_ff, config.activation_dropout)
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
