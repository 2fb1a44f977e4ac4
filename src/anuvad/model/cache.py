"""The key/value cache of incremental decoding, and the grouping of hypothesis rows by sentence.

Beam search decodes ``group`` hypotheses per sentence (its beams) as consecutive rows of one
batch. Their self-attention keys/values differ, one row each; their cross-attention keys/values
are the sentence's, stored once, and the group's queries are laid side by side against them
(:func:`group_rows` / :func:`ungroup_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def sentence_rows(group: int, index: Tensor, sentences: Tensor | None) -> Tensor | None:
    """Which per-sentence rows to keep when hypothesis rows are reordered by ``index`` (N'):
    ``index`` itself with one hypothesis per sentence, else ``sentences`` (B'; None: all)."""
    return index if group == 1 else sentences


@dataclass
class LayerCache:
    """Keys and values one decoder layer has already computed, each (rows, H, L, Dh).

    Self-attention keys/values have one row per decoded hypothesis (N). Cross-attention ones
    have one row per *sentence* (N / group): the ``group`` hypotheses of a sentence (its beams,
    consecutive rows) attend to the same source, so its keys and values are computed, stored
    and read once for all of them.
    """

    self_k: Tensor | None = None
    self_v: Tensor | None = None
    cross_k: Tensor | None = None
    cross_v: Tensor | None = None
    group: int = 1

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add this step's self-attention keys/values (N, H, T, Dh); return all so far."""
        if self.self_k is not None and self.self_v is not None:
            k = torch.cat([self.self_k, k], dim=2)  # (N, H, t+T, Dh)
            v = torch.cat([self.self_v, v], dim=2)
        self.self_k, self.self_v = k, v
        return k, v

    def group_queries(self, q: Tensor) -> Tensor:
        """(N, H, T, Dh) → (N / G, H, G * T, Dh): a sentence's hypotheses side by side
        against its one copy of the cross-attention keys."""
        return group_rows(q, self.group)

    def ungroup(self, x: Tensor) -> Tensor:
        """The inverse of :meth:`group_queries` for (N / G, H, G * T, X) results."""
        return ungroup_rows(x, self.group)


@dataclass
class DecoderCache:
    """Incremental-decoding state: per-layer key/value caches and the number of steps done."""

    layers: list[LayerCache]
    length: int = 0

    def reorder(self, index: Tensor, sentences: Tensor | None = None) -> None:
        """Keep/duplicate hypothesis rows by ``index`` (N',) (beam search reshuffles them).

        With ``group`` 1 the cross-attention rows follow ``index`` too. With a larger group,
        ``index`` must keep every row within its sentence's group, and ``sentences`` (B',)
        says which sentences' cross-attention rows to keep (None: all of them, in order).
        """
        for layer in self.layers:
            cross = sentence_rows(layer.group, index, sentences)
            for name in ("self_k", "self_v", "cross_k", "cross_v"):
                value = getattr(layer, name)
                rows = index if name.startswith("self") else cross
                if value is not None and rows is not None:
                    setattr(layer, name, value.index_select(0, rows))


def group_rows(x: Tensor, group: int) -> Tensor:
    """(N, H, T, X) → (N / G, H, G * T, X): each group's rows become one row's positions."""
    rows, heads, length, last = x.shape
    grouped = x.view(rows // group, group, heads, length, last).transpose(1, 2)
    return grouped.reshape(rows // group, heads, group * length, last)


def ungroup_rows(x: Tensor, group: int) -> Tensor:
    """The inverse of :func:`group_rows`: (N / G, H, G * T, X) → (N, H, T, X)."""
    sentences, heads, positions, last = x.shape
    split = x.view(sentences, heads, group, positions // group, last).transpose(1, 2)
    return split.reshape(sentences * group, heads, positions // group, last)
