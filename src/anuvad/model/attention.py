"""Multi-head attention (section 3.2): one scaled dot-product core, two small classes.

MultiHead(Q, K, V) = Concat(head_1..head_H) W_O, head_i = softmax(Q_i K_i^T / sqrt(Dh)) V_i.
:class:`SelfAttention` projects Q, K and V from one input with one fused (D, 3D) matrix;
:class:`CrossAttention` projects Q from the decoder and K, V from the encoder output with a fused
(D, 2D) matrix: the same parameters as separate W_Q, W_K, W_V, fewer kernels. Both hand their
heads to :func:`attend`.

The core has two computations of the same formula: PyTorch's fused
``scaled_dot_product_attention`` (the default) and the explicit product, which also returns the
probabilities (heatmaps) and which a caller may prefer for speed (``explicit = True`` on the
modules, see :func:`use_explicit_attention`; the trainer does it where the fused kernel's
backward is slow). Which one runs never depends on the device: that is the caller's decision.

Dimension legend and mask convention: see :mod:`anuvad.model.transformer` (True marks a position
that must not be attended to).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.model.cache import LayerCache


def attention_weights(q: Tensor, k: Tensor, allowed: Tensor | None, causal: bool) -> Tensor:
    """softmax(Q K^T / sqrt(Dh)) (B, H, T, L), the softmax in float32, blocked keys at zero.

    ``allowed`` is SDPA's mask (True = may attend), broadcastable to (B, H, T, L).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T, L)
    if causal:
        future = torch.ones(q.size(2), k.size(2), dtype=torch.bool, device=q.device)
        scores = scores.masked_fill(future.triu(1), float("-inf"))
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)


def allowed_keys(key_pad_mask: Tensor | None, attn_mask: Tensor | None) -> Tensor | None:
    """anuvad's masks (True = blocked) → SDPA's (True = may attend), (B or 1, 1, T or 1, L)."""
    allowed: Tensor | None = None
    if key_pad_mask is not None:
        allowed = ~key_pad_mask[:, None, None, :]  # (B, 1, 1, L)
    if attn_mask is not None:
        future_ok = ~attn_mask[None, None, :, :]  # (1, 1, T, L)
        allowed = future_ok if allowed is None else allowed & future_ok
    return allowed


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    allowed: Tensor | None,
    causal: bool,
    dropout: float,
    explicit: bool,
) -> tuple[Tensor, Tensor | None]:
    """Scaled dot-product attention of (B, H, T, Dh) queries over (B, H, L, Dh) keys/values.

    Args:
        allowed: True where a query may see a key, broadcastable to (B, H, T, L); None: all.
        causal: also block the future (training-time decoder; not with a T x L mask).
        dropout: on the probabilities (0 outside training).
        explicit: the explicit product, which also returns the probabilities.

    Returns:
        (B, H, T, Dh) context and, on the explicit path, (B, H, T, L) probabilities.
    """
    if causal and allowed is not None:
        raise ValueError("pass either causal=True or an explicit attn_mask, not both")
    if explicit:
        weights = attention_weights(q, k, allowed, causal)  # (B, H, T, L)
        return F.dropout(weights, p=dropout, training=dropout > 0) @ v, weights
    context = F.scaled_dot_product_attention(
        q, k, v, attn_mask=allowed, dropout_p=dropout, is_causal=causal
    )  # (B, H, T, Dh)
    return context, None


class _HeadsAttention(nn.Module):
    """What both attentions share: head split/merge, the output projection W_O (``out_proj``,
    created by each subclass after its input projections), the core."""

    out_proj: nn.Linear

    def __init__(self, d_model: int, num_heads: int, dropout: float) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.dropout = dropout
        self.explicit = False  # True: the explicit product (see the module docstring)

    def _split_heads(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)  # (B,H,L,Dh)

    def _merge_heads(self, context: Tensor) -> Tensor:
        batch, _, length, _ = context.shape
        out: Tensor = self.out_proj(context.transpose(1, 2).reshape(batch, length, -1))
        return out  # (B, T, D)

    def _attend(
        self, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, causal: bool, weights: bool
    ) -> tuple[Tensor, Tensor | None]:
        dropout = self.dropout if self.training else 0.0
        return attend(q, k, v, allowed, causal, dropout, explicit=weights or self.explicit)


class SelfAttention(_HeadsAttention):
    """Queries, keys and values from one sequence; with a cache, this step's keys and values
    are appended to the earlier steps'."""

    def __init__(self, d_model: int, num_heads: int, dropout: float) -> None:
        super().__init__(d_model, num_heads, dropout)
        self.qkv_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)  # W_O (registered last: parameter order)

    def forward(
        self,
        x: Tensor,
        key_pad_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        causal: bool = False,
        cache: LayerCache | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``x`` (B, T, D) to itself (and the cached steps).

        Args:
            key_pad_mask: (B, L) True on keys that are padding.
            attn_mask: (T, L) True where a query must not see a key (e.g. the future).
            causal: mask the future without building a mask (training-time decoder).
            cache: incremental decoding: keys/values of earlier steps, extended in place.
            need_weights: also return the attention probabilities (explicit path).

        Returns:
            (B, T, D) output and, when asked, (B, H, T, L) probabilities.
        """
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)  # 3 × (B, T, D)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        if cache is not None:
            k, v = cache.append_self(k, v)  # (B, H, t+T, Dh)
        context, weights = self._attend(
            q, k, v, allowed_keys(key_pad_mask, attn_mask), causal, need_weights
        )
        return self._merge_heads(context), weights if need_weights else None


class CrossAttention(_HeadsAttention):
    """Decoder queries over the encoder output; its keys and values are computed once per
    sentence and kept in the cache (shared by the sentence's beam hypotheses)."""

    def __init__(self, d_model: int, num_heads: int, dropout: float) -> None:
        super().__init__(d_model, num_heads, dropout)
        self.q_proj = nn.Linear(d_model, d_model)
        self.kv_proj = nn.Linear(d_model, 2 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)  # W_O

    def project_kv(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of ``memory`` (B, S, D) → two (B, H, S, Dh)."""
        k, v = self.kv_proj(memory).chunk(2, dim=-1)  # 2 × (B, S, D)
        return self._split_heads(k), self._split_heads(v)

    def forward(
        self,
        query: Tensor,
        memory: Tensor | None = None,
        key_pad_mask: Tensor | None = None,
        cache: LayerCache | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` (B, T, D) to ``memory`` (B, S, D) or the cached keys/values.

        Args:
            key_pad_mask: (B', S) True on source padding (B' = sentences when grouped).
            cache: incremental decoding; the first step fills its cross keys/values.
            need_weights: also return the attention probabilities (explicit path).

        Returns:
            (B, T, D) output and, when asked, (B, H, T, S) probabilities.
        """
        q = self._split_heads(self.q_proj(query))  # (B, H, T, Dh)
        if cache is not None and cache.cross_k is not None and cache.cross_v is not None:
            k, v = cache.cross_k, cache.cross_v
        else:
            if memory is None:
                raise ValueError("cross-attention needs memory or a filled cache")
            k, v = self.project_kv(memory)  # (B, H, S, Dh)
            if cache is not None:
                cache.cross_k, cache.cross_v = k, v
        grouped = cache is not None and cache.group > 1
        if grouped and cache is not None:
            q = cache.group_queries(q)  # (B / G, H, G * T, Dh)
        context, weights = self._attend(
            q, k, v, allowed_keys(key_pad_mask, None), False, need_weights
        )
        if grouped and cache is not None:
            context = cache.ungroup(context)  # (B, H, T, Dh)
            weights = cache.ungroup(weights) if weights is not None else None
        return self._merge_heads(context), weights if need_weights else None


@contextlib.contextmanager
def use_explicit_attention(model: nn.Module, explicit: bool = True) -> Iterator[None]:
    """Within the block, every attention module of ``model`` computes the explicit product
    (``explicit=True``) or the fused kernel; afterwards each gets its own setting back."""
    modules = [m for m in model.modules() if isinstance(m, _HeadsAttention)]
    before = [m.explicit for m in modules]
    for module in modules:
        module.explicit = explicit
    try:
        yield
    finally:
        for module, setting in zip(modules, before, strict=True):
            module.explicit = setting
