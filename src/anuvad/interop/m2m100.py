"""M2M100 and NLLB-200 (Hugging Face ``M2M100ForConditionalGeneration``) weights → anuvad's
Transformer, exactly.

An M2M100 / NLLB model is fairseq's pre-LN Transformer; every part of it is one of anuvad's typed
model options, so the network computes what ``transformers`` computes:

* **Pre-LN** layers (``norm_position: pre``) with a last LayerNorm on each stack
  (``model.encoder.layer_norm`` / ``model.decoder.layer_norm`` → ``encoder_norm`` /
  ``decoder_norm``), eps 1e-5 (``torch.nn.LayerNorm``'s default), ReLU.
* **Positions**: fairseq's sinusoids (``positional_encoding: sinusoidal_fairseq``,
  :func:`anuvad.model.layers.fairseq_sinusoidal_table`): sines then cosines, positions from 2.
  ``transformers`` numbers only the non-padding tokens, and anuvad pads on the right only, so
  every real token gets the same row (padding rows are masked out either way).
* **Embeddings** scaled by sqrt(D) (``scale_embedding``; a model without it is refused), one
  matrix for the source, the target and (``tie_word_embeddings``) the output layer.
* **Special ids**: fairseq's order (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3) is reordered
  to anuvad's (:class:`~anuvad.interop.marian.VocabOrder`); the decoder starts from ``</s>``
  (``decoder_start_token_id``), whose row becomes anuvad's BOS row, a copy, with a logit bias of
  -1e4 so that it takes no part in the softmax (as for Marian's start row). fairseq's ``<s>``
  stays an ordinary row.

Folders and tokenizers: :mod:`anuvad.interop.m2m100_folder`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor

from anuvad.config import ModelConfig
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from anuvad.errors import CheckpointError
from anuvad.interop.hf_config import EncoderDecoderShape, layer_problems
from anuvad.interop.marian import NEVER_LOGIT, VocabOrder

M2M100_LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm's default, which M2M100 uses
_START_PIECE = "<decoder-start>"  # anuvad's BOS: a copy of the decoder-start row


@dataclass(frozen=True)
class M2M100Shape(EncoderDecoderShape):
    """The Hugging Face ``M2M100Config`` fields anuvad reads, checked."""

    dropout: float
    max_positions: int
    vocab_size: int
    tied_output: bool
    pad: int
    eos: int
    start: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: str) -> M2M100Shape:
        """Read a ``config.json``; refuse what anuvad cannot compute exactly.

        Raises:
            CheckpointError: naming ``where`` and every field anuvad cannot compute
                (unscaled embeddings, unequal encoder/decoder heads or widths, another
                activation), or a missing or garbled field.
        """
        kind = config.get("model_type")
        if kind != "m2m_100":
            raise CheckpointError(
                f"{where}: model_type is {kind!r}; an M2M100 / NLLB model has 'm2m_100'"
            )
        problems = []
        if not bool(config.get("scale_embedding", True)):
            problems.append("scale_embedding is false (anuvad scales embeddings by sqrt(d_model))")
        activation = str(config.get("activation_function", "relu"))
        problems += layer_problems(config, activation)
        if config.get("pad_token_id", 1) != 1:
            problems.append(
                f"pad_token_id is {config.get('pad_token_id')!r}; fairseq's positions start "
                "after padding index 1, the only one anuvad's table has"
            )
        if problems:
            raise CheckpointError(
                f"{where}: this M2M100 model is not one anuvad can compute exactly: "
                + "; ".join(problems)
            )
        try:
            eos = int(config.get("eos_token_id", 2))
            return cls(
                **cls.layer_fields(config, activation),
                dropout=float(config.get("dropout", 0.1)),
                max_positions=int(config.get("max_position_embeddings", 1024)),
                vocab_size=int(config["vocab_size"]),
                tied_output=bool(config.get("tie_word_embeddings", True)),
                pad=1,
                eos=eos,
                start=int(config.get("decoder_start_token_id", eos)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{where}: config.json lacks or garbles {exc}") from exc

    def model_config(self, vocab_size: int) -> ModelConfig:
        """anuvad's :class:`ModelConfig` for this shape (``vocab_size`` after reordering)."""
        return replace(
            self.layer_config(),
            dropout=self.dropout,
            positional_encoding="sinusoidal_fairseq",
            max_positions=self.max_positions,
            norm_position="pre",
            layer_norm_eps=M2M100_LAYER_NORM_EPS,
            src_vocab_size=vocab_size,
            tgt_vocab_size=vocab_size,
            tie_output_embedding=self.tied_output,
            share_source_embedding=True,
            output_bias=True,  # the added start row's -1e4
        )


def fairseq_order(vocab: Sequence[str], shape: M2M100Shape, unk: int) -> VocabOrder:
    """Reorder a fairseq vocabulary (id → piece) for anuvad's special ids.

    anuvad's ``<pad>``, ``<unk>`` and ``</s>`` take fairseq's rows; its BOS takes the decoder
    start's row: a copy named ``<decoder-start>`` when that token is one of the other three
    (``</s>`` for every M2M100 / NLLB model), else the token itself. Every other id follows in
    fairseq's order (``<s>`` among them).

    Raises:
        CheckpointError: a special id lies outside the vocabulary.
    """
    for name, value in (("pad", shape.pad), ("eos", shape.eos), ("decoder_start", shape.start)):
        if not 0 <= value < len(vocab):
            raise CheckpointError(
                f"config.json's {name}_token_id {value} is outside the vocabulary "
                f"(0 .. {len(vocab) - 1})"
            )
    copied = shape.start in (shape.pad, unk, shape.eos)
    specials = {shape.pad, unk, shape.eos} | ({shape.start} if not copied else set())
    ids = [0] * 4
    ids[PAD_ID], ids[UNK_ID], ids[BOS_ID], ids[EOS_ID] = shape.pad, unk, shape.start, shape.eos
    names = [""] * 4
    names[PAD_ID], names[UNK_ID], names[EOS_ID] = "<pad>", "<unk>", "</s>"
    names[BOS_ID] = _START_PIECE if copied else vocab[shape.start]
    others = [i for i in range(len(vocab)) if i not in specials]
    return VocabOrder((*ids, *others), (*names, *(vocab[i] for i in others)))


def _weight(state: Mapping[str, Tensor], name: str, where: str, shape: tuple[int, ...]) -> Tensor:
    if name not in state:
        raise CheckpointError(
            f"{where}: the weights lack {name} (not an M2M100ForConditionalGeneration checkpoint?)"
        )
    tensor = state[name].float()
    if tuple(tensor.shape) != shape:
        raise CheckpointError(
            f"{where}: its weights do not fit its config.json: {name} has shape "
            f"{tuple(tensor.shape)}, expected {shape}"
        )
    return tensor


# anuvad sub-module ← M2M100 sub-module, per layer (weight and bias each).
_ENCODER_LAYER = (
    ("self_attn.out_proj", "self_attn.out_proj"),
    ("attn_sublayer.norm", "self_attn_layer_norm"),
    ("ffn.linear1", "fc1"),
    ("ffn.linear2", "fc2"),
    ("ffn_sublayer.norm", "final_layer_norm"),
)
_DECODER_LAYER = (
    ("self_attn.out_proj", "self_attn.out_proj"),
    ("self_sublayer.norm", "self_attn_layer_norm"),
    ("cross_attn.q_proj", "encoder_attn.q_proj"),
    ("cross_attn.out_proj", "encoder_attn.out_proj"),
    ("cross_sublayer.norm", "encoder_attn_layer_norm"),
    ("ffn.linear1", "fc1"),
    ("ffn.linear2", "fc2"),
    ("ffn_sublayer.norm", "final_layer_norm"),
)
# Fused anuvad projections and the M2M100 projections they stack (rows: q, k, v).
_ENCODER_FUSED = (
    ("self_attn.qkv_proj", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
)
_DECODER_FUSED = (
    ("self_attn.qkv_proj", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
    ("cross_attn.kv_proj", ("encoder_attn.k_proj", "encoder_attn.v_proj")),
)


def m2m100_to_anuvad(
    shape: M2M100Shape, state: Mapping[str, Tensor], order: VocabOrder, where: str
) -> tuple[ModelConfig, dict[str, Tensor]]:
    """An ``M2M100ForConditionalGeneration`` state dict → anuvad's config and state (float32).

    Args:
        shape: the checked config.
        state: the weights (``model.*``, ``lm_head.weight``).
        order: the reordered vocabulary (:func:`fairseq_order`).
        where: the model's name for messages.

    Raises:
        CheckpointError: a weight is missing or has the wrong shape.
    """
    d, f = shape.d_model, shape.d_ff
    sizes = {"fc1": (f, d), "fc2": (d, f)}
    out: dict[str, Tensor] = {}
    for stack, count, table, fused in (
        ("encoder", shape.encoder_layers, _ENCODER_LAYER, _ENCODER_FUSED),
        ("decoder", shape.decoder_layers, _DECODER_LAYER, _DECODER_FUSED),
    ):
        for i in range(count):
            ours_prefix, theirs_prefix = f"{stack}_layers.{i}", f"model.{stack}.layers.{i}"
            for ours, theirs in table:
                rows, cols = sizes.get(theirs, (d, d))
                norm = theirs.endswith("layer_norm")
                weight_shape = (d,) if norm else (rows, cols)
                out[f"{ours_prefix}.{ours}.weight"] = _weight(
                    state, f"{theirs_prefix}.{theirs}.weight", where, weight_shape
                )
                out[f"{ours_prefix}.{ours}.bias"] = _weight(
                    state, f"{theirs_prefix}.{theirs}.bias", where, (d if norm else rows,)
                )
            for ours, parts in fused:
                names = [f"{theirs_prefix}.{p}" for p in parts]
                out[f"{ours_prefix}.{ours}.weight"] = torch.cat(
                    [_weight(state, f"{n}.weight", where, (d, d)) for n in names]
                )
                out[f"{ours_prefix}.{ours}.bias"] = torch.cat(
                    [_weight(state, f"{n}.bias", where, (d,)) for n in names]
                )
        for suffix in ("weight", "bias"):
            out[f"{stack}_norm.{suffix}"] = _weight(
                state, f"model.{stack}.layer_norm.{suffix}", where, (d,)
            )
    v = shape.vocab_size
    # transformers ties the encoder's and decoder's embeddings to model.shared whatever the
    # file holds under their names; a file saved with tied weights may hold only one of them.
    present = [
        n
        for n in ("model.shared.weight", "model.encoder.embed_tokens.weight", "lm_head.weight")
        if n in state
    ]
    if not present:
        raise CheckpointError(f"{where}: the weights hold no embedding (model.shared.weight)")
    embedding = _weight(state, present[0], where, (v, d))
    out["tgt_embed.weight"] = order.rows(embedding)
    out["src_embed.weight"] = out["tgt_embed.weight"]
    if not shape.tied_output:
        out["output_proj.weight"] = order.rows(_weight(state, "lm_head.weight", where, (v, d)))
    bias = torch.zeros(len(order.pieces))
    if order.pieces[BOS_ID] == _START_PIECE:
        bias[BOS_ID] = NEVER_LOGIT  # the copied start row: no probability of its own
    out["output_bias"] = bias
    return shape.model_config(len(order.pieces)), out
