"""A Hugging Face ``MarianConfig`` (``config.json``) read and checked: the fields anuvad reads,
the architectures it refuses, and the anuvad :class:`~anuvad.config.ModelConfig` it becomes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from anuvad.config import ACTIVATIONS, ModelConfig
from anuvad.errors import CheckpointError

MARIAN_LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm's default, which MarianMTModel uses
# Hugging Face activation names → anuvad's (ACT2FN: "swish" and "silu" are one function).
_ACTIVATIONS = {"relu": "relu", "swish": "swish", "silu": "swish", "gelu": "gelu"}


@dataclass(frozen=True)
class MarianShape:
    """The Hugging Face ``MarianConfig`` fields anuvad reads, checked."""

    d_model: int
    num_heads: int
    d_ff: int
    encoder_layers: int
    decoder_layers: int
    activation: str
    max_positions: int
    vocab_size: int
    decoder_vocab_size: int
    shared_embeddings: bool
    tied_output: bool
    pad: int
    eos: int
    start: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: str) -> MarianShape:
        """Read a ``config.json``'s fields; refuse what anuvad cannot compute exactly.

        Raises:
            CheckpointError: naming ``where``, the field and what it holds, for every model that
                is not a post-LN Marian encoder-decoder (BART-style, pre-LN, learned positions,
                unscaled embeddings, unequal encoder/decoder widths).
        """
        kind = config.get("model_type")
        if kind != "marian":
            raise CheckpointError(
                f"{where}: model_type is {kind!r}; anuvad imports Marian models (model_type "
                f"'marian', e.g. Helsinki-NLP/opus-mt-*) and M2M100 / NLLB-200 models "
                f"('m2m_100', e.g. facebook/nllb-200-distilled-600M)"
            )
        problems = []
        for field, wanted in (
            ("scale_embedding", True),
            ("normalize_before", False),
            ("normalize_embedding", False),
            ("add_final_layer_norm", False),
            ("static_position_embeddings", True),
        ):
            if field in config and bool(config[field]) != wanted:
                problems.append(f"{field} is {config[field]!r} (anuvad computes {wanted})")
        activation = str(config.get("activation_function", "swish"))
        if activation not in _ACTIVATIONS:
            problems.append(
                f"activation_function {activation!r} (anuvad has {', '.join(_ACTIVATIONS)})"
            )
        for ours, theirs in (
            ("encoder_attention_heads", "decoder_attention_heads"),
            ("encoder_ffn_dim", "decoder_ffn_dim"),
        ):
            if config.get(ours) != config.get(theirs):
                problems.append(f"{ours} {config.get(ours)} != {theirs} {config.get(theirs)}")
        if problems:
            raise CheckpointError(
                f"{where}: this Marian model is not one anuvad can compute exactly: "
                + "; ".join(problems)
            )
        try:
            vocab_size = int(config["vocab_size"])
            d_model = int(config["d_model"])
            pad = int(config["pad_token_id"])
            return cls(
                d_model=d_model,
                num_heads=int(config["encoder_attention_heads"]),
                d_ff=int(config["encoder_ffn_dim"]),
                encoder_layers=int(config["encoder_layers"]),
                decoder_layers=int(config["decoder_layers"]),
                activation=_ACTIVATIONS[activation],
                max_positions=int(config.get("max_position_embeddings", 512)),
                vocab_size=vocab_size,
                decoder_vocab_size=int(config.get("decoder_vocab_size") or vocab_size),
                shared_embeddings=bool(config.get("share_encoder_decoder_embeddings", True)),
                tied_output=bool(config.get("tie_word_embeddings", True)),
                pad=pad,
                eos=int(config["eos_token_id"]),
                start=int(config.get("decoder_start_token_id", pad) or pad),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{where}: config.json lacks or garbles {exc}") from exc

    def model_config(self, src_vocab: int, tgt_vocab: int, output_bias: bool) -> ModelConfig:
        """anuvad's :class:`ModelConfig` for this shape (vocabulary sizes after reordering)."""
        assert self.activation in ACTIVATIONS
        return ModelConfig(
            d_model=self.d_model,
            num_heads=self.num_heads,
            d_ff=self.d_ff,
            num_encoder_layers=self.encoder_layers,
            num_decoder_layers=self.decoder_layers,
            dropout=0.1,
            positional_encoding="sinusoidal",
            max_positions=self.max_positions,
            norm_position="post",
            activation=self.activation,
            layer_norm_eps=MARIAN_LAYER_NORM_EPS,
            src_vocab_size=src_vocab,
            tgt_vocab_size=tgt_vocab,
            tie_output_embedding=self.tied_output,
            share_source_embedding=self.shared_embeddings,
            output_bias=output_bias,
        )
