"""The model as two ONNX graphs for the browser: the encoder, and one decoder step with its
key/value cache (issue 42).

Both graphs are traced from the real model classes (:class:`~anuvad.model.transformer.
Transformer`'s embeddings, encoder and decoder layers, :class:`~anuvad.model.cache.LayerCache`),
so what runs in the page is the network the torch engine runs, not a re-implementation:

* ``encoder.onnx``: ``src_ids`` (B, S) int64 and ``src_pad_mask`` (B, S) bool (True on padding)
  → ``cross_kv`` (B, 2L, H, S, Dh) float32: every decoder layer's cross-attention keys and values
  (layer i's keys at 2i, values at 2i + 1), computed once per sentence as ``init_cache`` does.
* ``decoder.onnx``: ``tgt_ids`` (N, 1) int64 (each row's newest token), ``self_kv``
  (N, 2L, H, t, Dh) (the self-attention keys/values of the t positions decoded so far; t = 0 at
  the first step), ``cross_kv`` (N, 2L, H, S, Dh) and ``src_pad_mask`` (N, S) →
  ``log_probs`` (N, V) (float32 log-softmax with PAD and BOS at -inf, exactly what
  :func:`anuvad.decoding.search.next_log_probs` gives the searches) and ``new_self_kv``
  (N, 2L, H, t + 1, Dh). The position of the new token is t, read from ``self_kv``'s shape.

Keeping each row's whole state in two tensors whose first axis is the row makes the search's
bookkeeping in JavaScript plain: a beam reorder or a finished sentence is a copy of contiguous
blocks (``static/search.js``).

Dimension legend (as in :mod:`anuvad.model.transformer`): B sentences, N decoder rows (B × beam),
S source length, t positions decoded, L decoder layers, H heads, Dh head size, V vocabulary.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from anuvad.model.cache import LayerCache
from anuvad.model.layers import DecoderLayer, LearnedPositions
from anuvad.model.transformer import Transformer

logger = logging.getLogger(__name__)

OPSET = 18  # onnxruntime-web 1.30 runs opset 18 graphs on its WASM backend
ENCODER_INPUTS = ("src_ids", "src_pad_mask")
ENCODER_OUTPUTS = ("cross_kv",)
DECODER_INPUTS = ("tgt_ids", "self_kv", "cross_kv", "src_pad_mask")
DECODER_OUTPUTS = ("log_probs", "new_self_kv")


class EncoderGraph(nn.Module):
    """``Transformer.encode`` followed by every decoder layer's cross-attention key/value
    projection (what ``init_cache`` computes), as one graph."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, src_ids: Tensor, src_pad_mask: Tensor) -> Tensor:
        """src_ids (B, S), src_pad_mask (B, S) → cross_kv (B, 2L, H, S, Dh)."""
        memory = self.model.encode(src_ids, src_pad_mask)  # (B, S, D)
        kv: list[Tensor] = []
        for layer in self.model.decoder_layers:
            assert isinstance(layer, DecoderLayer)
            k, v = layer.cross_attn.project_kv(memory)  # 2 × (B, H, S, Dh)
            kv += [k, v]
        return torch.stack(kv, dim=1)  # (B, 2L, H, S, Dh)


def _position_table(model: Transformer) -> Tensor:
    """The model's position encodings as one (P, D) tensor (sinusoids or learned)."""
    if isinstance(model.positions, LearnedPositions):
        return model.positions.embedding.weight
    return model.positions.get_buffer("table")


class DecoderStepGraph(nn.Module):
    """``Transformer.decode_step`` for one new token per row, with the cache passed in and out
    as tensors instead of a :class:`~anuvad.model.cache.DecoderCache` object."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model
        forbidden = torch.zeros(model.config.tgt_vocab_size)
        forbidden[[PAD_ID, BOS_ID]] = float("-inf")  # as search.forbid_special_tokens
        self.register_buffer("forbidden", forbidden, persistent=False)

    def forward(
        self, tgt_ids: Tensor, self_kv: Tensor, cross_kv: Tensor, src_pad_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """tgt_ids (N, 1), self_kv (N, 2L, H, t, Dh), cross_kv (N, 2L, H, S, Dh), src_pad_mask
        (N, S) → log_probs (N, V), new_self_kv (N, 2L, H, t + 1, Dh)."""
        model = self.model
        start = self_kv.size(3)  # t: the new token's position
        position = _position_table(model)[start : start + 1]  # (1, D)
        x = model.tgt_embed(tgt_ids) * model.embed_scale + position  # (N, 1, D)
        new_kv: list[Tensor] = []
        for i, layer in enumerate(model.decoder_layers):
            cache = LayerCache(
                self_k=self_kv[:, 2 * i], self_v=self_kv[:, 2 * i + 1],  # (N, H, t, Dh)
                cross_k=cross_kv[:, 2 * i], cross_v=cross_kv[:, 2 * i + 1],  # (N, H, S, Dh)
            )  # fmt: skip
            x, _ = layer(x, None, src_pad_mask, None, cache=cache)  # (N, 1, D)
            assert cache.self_k is not None and cache.self_v is not None
            new_kv += [cache.self_k, cache.self_v]  # (N, H, t + 1, Dh) each
        logits = model.project(model.decoder_norm(x))[:, -1]  # (N, V)
        log_probs = torch.log_softmax(logits.float(), dim=-1) + self.get_buffer("forbidden")
        return log_probs, torch.stack(new_kv, dim=1)  # (N, V), (N, 2L, H, t + 1, Dh)


@dataclass(frozen=True)
class GraphShapes:
    """The sizes a caller needs to build the graphs' inputs."""

    layers: int  # L: decoder layers (the cache tensors hold 2L slices)
    heads: int  # H
    head_size: int  # Dh
    vocab_size: int  # V (target)


def graph_shapes(model: Transformer) -> GraphShapes:
    """The cache dimensions of ``model``'s graphs."""
    c = model.config
    return GraphShapes(
        c.num_decoder_layers, c.num_heads, c.d_model // c.num_heads, c.tgt_vocab_size
    )


def _example_inputs(
    model: Transformer, rows: int = 2, src_len: int = 5, steps: int = 3
) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor, Tensor, Tensor]]:
    """Small inputs of the right kinds to trace both graphs with."""
    g = graph_shapes(model)
    src_ids = torch.full((rows, src_len), EOS_ID, dtype=torch.long)  # (B, S)
    src_pad_mask = torch.zeros(rows, src_len, dtype=torch.bool)  # (B, S)
    src_pad_mask[0, -1] = True
    kv = (rows, 2 * g.layers, g.heads)
    self_kv = torch.zeros(*kv, steps, g.head_size)  # (N, 2L, H, t, Dh)
    cross_kv = torch.zeros(*kv, src_len, g.head_size)  # (N, 2L, H, S, Dh)
    tgt_ids = torch.full((rows, 1), BOS_ID, dtype=torch.long)  # (N, 1)
    return (src_ids, src_pad_mask), (tgt_ids, self_kv, cross_kv, src_pad_mask)


def export_graphs(model: Transformer, folder: Path) -> tuple[Path, Path]:
    """Write ``encoder.onnx`` and ``decoder.onnx`` for ``model`` (in eval mode) into ``folder``.

    Returns:
        The two files' paths.
    """
    model = model.eval()
    encoder_in, decoder_in = _example_inputs(model)
    encoder_path, decoder_path = folder / "encoder.onnx", folder / "decoder.onnx"
    quiet = logging.getLogger("onnx_ir")  # its optimiser logs every initializer it merges
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    try:
        _export(model, encoder_in, decoder_in, encoder_path, decoder_path)
    finally:
        quiet.setLevel(level)
    return encoder_path, decoder_path


def _export(
    model: Transformer,
    encoder_in: tuple[Tensor, Tensor],
    decoder_in: tuple[Tensor, Tensor, Tensor, Tensor],
    encoder_path: Path,
    decoder_path: Path,
) -> None:
    batch, src_len = torch.export.Dim("batch"), torch.export.Dim("src_len")
    rows, steps = torch.export.Dim("rows"), torch.export.Dim("steps")
    with torch.no_grad():
        torch.onnx.export(
            EncoderGraph(model).eval(),
            encoder_in,
            str(encoder_path),
            input_names=list(ENCODER_INPUTS),
            output_names=list(ENCODER_OUTPUTS),
            dynamic_shapes=({0: batch, 1: src_len}, {0: batch, 1: src_len}),
            opset_version=OPSET,
            dynamo=True,
            external_data=False,
            verbose=False,
        )
        torch.onnx.export(
            DecoderStepGraph(model).eval(),
            decoder_in,
            str(decoder_path),
            input_names=list(DECODER_INPUTS),
            output_names=list(DECODER_OUTPUTS),
            dynamic_shapes=(
                {0: rows},
                {0: rows, 3: steps},
                {0: rows, 3: src_len},
                {0: rows, 1: src_len},
            ),
            opset_version=OPSET,
            dynamo=True,
            external_data=False,
            verbose=False,
        )


__all__ = [
    "DECODER_INPUTS",
    "DECODER_OUTPUTS",
    "ENCODER_INPUTS",
    "ENCODER_OUTPUTS",
    "DecoderStepGraph",
    "EncoderGraph",
    "GraphShapes",
    "export_graphs",
    "graph_shapes",
]
