"""Marian (Hugging Face ``MarianMTModel``) weights ↔ anuvad's Transformer, exactly.

A Marian model is the paper's post-LN encoder-decoder with a few differences, each mapped here
without changing what the network computes:

* **Positions**: Marian's sinusoid table puts every sine first and every cosine after
  (``[sin_0 .. sin_{D/2-1}, cos_0 .. cos_{D/2-1}]``); anuvad interleaves them (section 3.5:
  ``[sin_0, cos_0, sin_1, cos_1, ..]``). Reordering the coordinates of the residual stream is an
  exact symmetry of the network (LayerNorm, attention and the feed-forward network treat the
  coordinates alike), so every weight that reads or writes the residual stream has its D axis
  permuted by :func:`residual_order` and the table becomes anuvad's.
* **Special ids**: Marian has ``</s>`` and ``<unk>`` first and ``<pad>`` last, and its decoder
  starts from ``<pad>`` (``decoder_start_token_id``) with no BOS; anuvad reserves ``<pad>`` 0,
  ``<unk>`` 1, BOS 2 and ``</s>`` 3 (:mod:`anuvad.data.tokenizer`). The vocabulary is reordered
  (:class:`VocabOrder`) and the decoder-start row becomes anuvad's BOS row, so the decoder's first
  input is the same vector; that added row gets a logit bias of -1e4, so that it takes no part
  in the softmax. The tokenizers keep Marian's pieces through their own vocabulary.
* **Options** the paper lacks (read from ``config.json`` by
  :class:`anuvad.interop.marian_config.MarianShape`) become typed model settings:
  ``activation`` (swish), ``output_bias`` (``final_logits_bias``), a vocabulary shared by the
  encoder with or without a tied output layer, ``layer_norm_eps`` 1e-5 and the model's number of
  positions.

:func:`marian_to_anuvad` and :func:`anuvad_to_marian` are inverse: a model exported and imported
again has identical weights. Files, downloads and tokenizers live in
:mod:`anuvad.interop.hf_folder`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from anuvad.config import ModelConfig
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from anuvad.errors import CheckpointError
from anuvad.interop.marian_config import MarianShape
from anuvad.model.layers import sinusoidal_table

NEVER_LOGIT = -1e4  # the added start row's logit bias: no probability (exp underflows to 0)


def residual_order(d_model: int) -> Tensor:
    """The permutation ``p`` with ``marian_table[:, j] = anuvad_table[:, p[j]]``: Marian's j-th
    coordinate of the residual stream is anuvad's ``p[j]``-th ([0, 2, 4, .., 1, 3, 5, ..]).

    Raises:
        CheckpointError: ``d_model`` is odd (no sinusoid table pairs its coordinates).
    """
    if d_model % 2:
        raise CheckpointError(f"d_model {d_model} is odd: sinusoid tables need an even size")
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


@dataclass(frozen=True)
class VocabOrder:
    """Which Marian id each anuvad id takes, for one side's vocabulary.

    Attributes:
        marian_ids: for anuvad id ``i``, the Marian id whose row and piece it takes; anuvad's
            BOS takes the decoder-start row.
        pieces: anuvad's vocabulary, id → piece (``<pad>``, ``<unk>``, the start piece, ``</s>``,
            then Marian's other pieces in Marian's order).
    """

    marian_ids: tuple[int, ...]
    pieces: tuple[str, ...]

    @classmethod
    def from_marian(
        cls, vocab: Sequence[str], pad: int, unk: int, eos: int, start: int
    ) -> VocabOrder:
        """Reorder Marian's ``vocab`` (id → piece) for anuvad.

        When the decoder starts from ``<pad>`` (Marian's convention) anuvad's BOS is an extra row,
        a copy of ``<pad>``'s, named ``<s>`` (or ``<decoder-start>`` if ``<s>`` is taken); when it
        starts from its own token (an exported anuvad model), that token is the BOS.
        """
        specials = {pad, unk, eos, start}
        others = [i for i in range(len(vocab)) if i not in specials]
        if start == pad:
            start_piece = "<s>" if "<s>" not in vocab else "<decoder-start>"
        else:
            start_piece = vocab[start]
        ids = [0] * 4
        ids[PAD_ID], ids[UNK_ID], ids[BOS_ID], ids[EOS_ID] = pad, unk, start, eos
        names = [""] * 4
        names[PAD_ID], names[UNK_ID], names[BOS_ID], names[EOS_ID] = (
            "<pad>",
            "<unk>",
            start_piece,
            "</s>",
        )
        return cls((*ids, *others), (*names, *(vocab[i] for i in others)))

    @property
    def added_start(self) -> bool:
        """Whether anuvad's BOS is an extra row (a copy of ``<pad>``'s: Marian's decoder starts
        from ``<pad>``), not a token of Marian's vocabulary."""
        return self.marian_ids[BOS_ID] == self.marian_ids[PAD_ID]

    def rows(self, matrix: Tensor) -> Tensor:
        """Marian's (V_marian, ...) rows → anuvad's (V, ...) rows."""
        return matrix[list(self.marian_ids)]

    def back(self, matrix: Tensor, marian_size: int) -> Tensor:
        """anuvad's (V, ...) rows → Marian's (``marian_size``, ...): the inverse of :meth:`rows`
        (an extra BOS row, a copy, is dropped)."""
        out = matrix.new_zeros((marian_size, *matrix.shape[1:]))
        for ours, theirs in reversed(list(enumerate(self.marian_ids))):
            out[theirs] = matrix[ours]  # reversed: the first anuvad row of a Marian id wins
        return out


# What each anuvad weight is in Marian's state dict, and how its D axis (the residual stream's
# coordinates) is laid out: "in" = columns (a projection reading the stream), "out" = rows and
# the bias (writing it), "norm" = LayerNorm weight and bias.
_ENCODER_LAYER = (
    ("self_attn.out_proj", "self_attn.out_proj", "out"),
    ("attn_sublayer.norm", "self_attn_layer_norm", "norm"),
    ("ffn.linear1", "fc1", "in"),
    ("ffn.linear2", "fc2", "out"),
    ("ffn_sublayer.norm", "final_layer_norm", "norm"),
)
_DECODER_LAYER = (
    ("self_attn.out_proj", "self_attn.out_proj", "out"),
    ("self_sublayer.norm", "self_attn_layer_norm", "norm"),
    ("cross_attn.q_proj", "encoder_attn.q_proj", "in"),
    ("cross_attn.out_proj", "encoder_attn.out_proj", "out"),
    ("cross_sublayer.norm", "encoder_attn_layer_norm", "norm"),
    ("ffn.linear1", "fc1", "in"),
    ("ffn.linear2", "fc2", "out"),
    ("ffn_sublayer.norm", "final_layer_norm", "norm"),
)
# Fused anuvad projections and the Marian projections they stack (rows: q, k, v).
_ENCODER_FUSED = (
    ("self_attn.qkv_proj", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
)
_DECODER_FUSED = (
    ("self_attn.qkv_proj", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
    ("cross_attn.kv_proj", ("encoder_attn.k_proj", "encoder_attn.v_proj")),
)


def _layer_names(encoder_layers: int, decoder_layers: int) -> list[tuple[str, str, str]]:
    """(anuvad prefix, Marian prefix, kind) of every single (unfused) weight pair."""
    names = []
    for stack, count, table in (
        ("encoder", encoder_layers, _ENCODER_LAYER),
        ("decoder", decoder_layers, _DECODER_LAYER),
    ):
        for i in range(count):
            for ours, theirs, kind in table:
                names.append(
                    (f"{stack}_layers.{i}.{ours}", f"model.{stack}.layers.{i}.{theirs}", kind)
                )
    return names


def _fused_names(encoder_layers: int, decoder_layers: int) -> list[tuple[str, list[str]]]:
    names = []
    for stack, count, table in (
        ("encoder", encoder_layers, _ENCODER_FUSED),
        ("decoder", decoder_layers, _DECODER_FUSED),
    ):
        for i in range(count):
            for ours, parts in table:
                names.append(
                    (f"{stack}_layers.{i}.{ours}", [f"model.{stack}.layers.{i}.{p}" for p in parts])
                )
    return names


def _permute(tensor: Tensor, kind: str, order: Tensor, suffix: str) -> Tensor:
    """Reorder the residual-stream axis of one weight (``order`` maps new → old coordinates)."""
    if kind == "norm" or (kind == "out" and suffix == "bias"):
        return tensor[order]
    if kind == "out":
        return tensor[order, :]
    return tensor if suffix == "bias" else tensor[:, order]


def _need(state: Mapping[str, Tensor], name: str, where: str) -> Tensor:
    if name not in state:
        raise CheckpointError(f"{where}: the weights lack {name} (not a MarianMTModel checkpoint?)")
    return state[name]


def marian_to_anuvad(
    shape: MarianShape,
    state: Mapping[str, Tensor],
    src_order: VocabOrder,
    tgt_order: VocabOrder,
    where: str,
) -> tuple[ModelConfig, dict[str, Tensor]]:
    """A Marian state dict → anuvad's :class:`ModelConfig` and state dict (float32).

    Args:
        shape: the checked config.
        state: ``MarianMTModel`` weights (``model.*``, ``lm_head.weight``, ``final_logits_bias``).
        src_order: the source vocabulary's reordering; ``tgt_order`` the target's (the same
            object for a shared vocabulary).
        where: the model's name for messages.

    Raises:
        CheckpointError: a weight is missing or has the wrong shape.
    """

    def get(name: str) -> Tensor:
        tensor = _need(state, name, where).float()
        if tensor.dim() == 0 or (name.endswith("norm.weight") and tensor.shape != (d,)):
            raise CheckpointError(
                f"{where}: its weights do not fit its config.json: {name} "
                f"has shape {tuple(tensor.shape)}, d_model is {d}"
            )
        if tensor.dim() == 2 and d not in tensor.shape:
            raise CheckpointError(
                f"{where}: its weights do not fit its config.json: {name} "
                f"has shape {tuple(tensor.shape)}, d_model is {d}"
            )
        return tensor

    d = shape.d_model

    order = torch.argsort(residual_order(shape.d_model))  # anuvad coordinate → Marian's
    out: dict[str, Tensor] = {}
    for ours, theirs, kind in _layer_names(shape.encoder_layers, shape.decoder_layers):
        for suffix in ("weight", "bias"):
            out[f"{ours}.{suffix}"] = _permute(get(f"{theirs}.{suffix}"), kind, order, suffix)
    for ours, parts in _fused_names(shape.encoder_layers, shape.decoder_layers):
        out[f"{ours}.weight"] = torch.cat([get(f"{p}.weight")[:, order] for p in parts])
        out[f"{ours}.bias"] = torch.cat([get(f"{p}.bias") for p in parts])
    _check_positions(shape, state, where)
    src_embed, tgt_embed, lm_head = _embeddings(shape, state, where)
    shared = src_order is tgt_order and torch.equal(src_embed, tgt_embed)
    tied = torch.equal(lm_head, tgt_embed)
    out["tgt_embed.weight"] = tgt_order.rows(tgt_embed)[:, order]
    out["src_embed.weight"] = (
        out["tgt_embed.weight"] if shared else src_order.rows(src_embed)[:, order]
    )
    if not tied:
        out["output_proj.weight"] = tgt_order.rows(lm_head)[:, order]
    bias = state.get("final_logits_bias")
    output_bias = bias is not None and bool(bias.float().abs().max() > 0)
    if output_bias:
        assert bias is not None
        out["output_bias"] = tgt_order.rows(bias.float().reshape(-1))
    if tgt_order.added_start:
        # The added start row must not take part in the softmax: Marian's has no such row, and
        # a copy of <pad>'s logit would lower every token's log-probability. exp(-1e4) is 0.
        vector = out.get("output_bias", torch.zeros(len(tgt_order.pieces)))
        vector[BOS_ID] = NEVER_LOGIT
        out["output_bias"], output_bias = vector, True
    config = shape.model_config(len(src_order.pieces), len(tgt_order.pieces), output_bias)
    config.share_source_embedding, config.tie_output_embedding = shared, tied
    return config, out


def _check_positions(shape: MarianShape, state: Mapping[str, Tensor], where: str) -> None:
    """Position tables stored in a checkpoint (older conversions kept them; transformers then
    loads them as they are) must be the sinusoids anuvad computes, in Marian's layout."""
    expected = sinusoidal_table(shape.max_positions, shape.d_model)[
        :, residual_order(shape.d_model)
    ]
    for stack in ("encoder", "decoder"):
        table = state.get(f"model.{stack}.embed_positions.weight")
        if table is None:
            continue
        rows = min(len(table), len(expected))
        if table.dim() != 2 or float((table[:rows].float() - expected[:rows]).abs().max()) > 1e-4:
            raise CheckpointError(
                f"{where}: model.{stack}.embed_positions.weight is not the sinusoid table "
                "Marian computes (learned or altered positions); anuvad cannot import it exactly"
            )


def _embeddings(
    shape: MarianShape, state: Mapping[str, Tensor], where: str
) -> tuple[Tensor, Tensor, Tensor]:
    """The (source embedding, target embedding, output layer) matrices ``MarianMTModel`` uses
    once loaded: with ``tie_word_embeddings`` Hugging Face ties the output layer (and, with
    ``share_encoder_decoder_embeddings``, both embeddings) to one matrix whatever the file
    holds under the other names; without it each name is its own matrix."""
    names = (
        "model.shared.weight",
        "model.decoder.embed_tokens.weight",
        "model.encoder.embed_tokens.weight",
        "lm_head.weight",
    )
    present = [n for n in names if n in state]
    if not present:
        raise CheckpointError(f"{where}: the weights hold no embedding ({', '.join(names)})")

    def first(*candidates: str) -> Tensor:
        for name in candidates:
            if name in state:
                return state[name].float()
        return _need(state, candidates[0], where)

    shared, decoder, encoder, lm_head = names
    if shape.tied_output and shape.shared_embeddings:
        one = first(shared, decoder, encoder, lm_head)
        return one, one, one
    if shape.tied_output:
        tgt = first(decoder, lm_head)
        return first(encoder), tgt, tgt
    if shape.shared_embeddings and shared in state and not (encoder in state or decoder in state):
        return first(shared), first(shared), first(lm_head)
    return first(encoder, shared), first(decoder, shared), first(lm_head)


def anuvad_to_marian(
    config: ModelConfig,
    state: Mapping[str, Tensor],
    src_order: VocabOrder,
    tgt_order: VocabOrder,
    src_marian_size: int,
    tgt_marian_size: int,
) -> dict[str, Tensor]:
    """anuvad's state dict → ``MarianMTModel``'s (the inverse of :func:`marian_to_anuvad`).

    Args:
        config: the model's config (post-LN, sinusoidal: see :func:`export_problems`).
        state: anuvad weights.
        src_order, tgt_order: the vocabularies' orders (identity for an anuvad model).
        src_marian_size, tgt_marian_size: Marian's vocabulary sizes.

    Returns:
        Marian's weights; tied matrices appear under every name Hugging Face checks.
    """
    order = residual_order(config.d_model)  # Marian coordinate → anuvad's
    d = config.d_model
    out: dict[str, Tensor] = {}
    for ours, theirs, kind in _layer_names(config.num_encoder_layers, config.num_decoder_layers):
        for suffix in ("weight", "bias"):
            out[f"{theirs}.{suffix}"] = _permute(state[f"{ours}.{suffix}"], kind, order, suffix)
    for ours, parts in _fused_names(config.num_encoder_layers, config.num_decoder_layers):
        weight, bias = state[f"{ours}.weight"][:, order], state[f"{ours}.bias"]
        for i, part in enumerate(parts):
            out[f"{part}.weight"] = weight[i * d : (i + 1) * d].contiguous()
            out[f"{part}.bias"] = bias[i * d : (i + 1) * d].contiguous()
    tgt_embed = tgt_order.back(state["tgt_embed.weight"][:, order], tgt_marian_size)
    out["model.decoder.embed_tokens.weight"] = tgt_embed
    if config.share_source_embedding:
        out["model.shared.weight"] = tgt_embed
        out["model.encoder.embed_tokens.weight"] = tgt_embed
    else:
        src_embed = src_order.back(state["src_embed.weight"][:, order], src_marian_size)
        out["model.encoder.embed_tokens.weight"] = src_embed
    out["lm_head.weight"] = (
        tgt_embed
        if config.tie_output_embedding
        else tgt_order.back(state["output_proj.weight"][:, order], tgt_marian_size)
    )
    logit_bias = state.get("output_bias")
    out["final_logits_bias"] = (
        tgt_order.back(logit_bias.unsqueeze(1), tgt_marian_size).reshape(1, -1)
        if logit_bias is not None
        else torch.zeros(1, tgt_marian_size)
    )
    return out


def export_problems(config: ModelConfig) -> list[str]:
    """What stops an anuvad model from being a ``MarianMTModel`` (empty: it can be one)."""
    problems = []
    if config.norm_position != "post":
        problems.append("model.norm_position is 'pre'; Marian models are post-LN")
    if config.positional_encoding != "sinusoidal":
        problems.append(
            f"model.positional_encoding is {config.positional_encoding!r}; Marian's positions "
            "are the paper's sinusoids"
        )
    if config.d_model % 2:
        problems.append(f"model.d_model {config.d_model} is odd")
    return problems
