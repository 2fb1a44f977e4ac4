"""A Hugging Face ``MarianConfig`` (``config.json``) read and checked: the fields anuvad reads,
the architectures it refuses, and the anuvad :class:`~anuvad.config.ModelConfig` it becomes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from anuvad.config import ModelConfig
from anuvad.errors import CheckpointError
from anuvad.interop.hf_config import EncoderDecoderShape, layer_problems

MARIAN_LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm's default, which MarianMTModel uses


@dataclass(frozen=True)
class MarianShape(EncoderDecoderShape):
    """The Hugging Face ``MarianConfig`` fields anuvad reads, checked."""

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
        problems += layer_problems(config, activation)
        if problems:
            raise CheckpointError(
                f"{where}: this Marian model is not one anuvad can compute exactly: "
                + "; ".join(problems)
            )
        try:
            vocab_size = int(config["vocab_size"])
            layers = cls.layer_fields(config, activation)
            pad = int(config["pad_token_id"])
            return cls(
                **layers,
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
        return replace(
            self.layer_config(),
            dropout=0.1,
            positional_encoding="sinusoidal",
            max_positions=self.max_positions,
            norm_position="post",
            layer_norm_eps=MARIAN_LAYER_NORM_EPS,
            src_vocab_size=src_vocab,
            tgt_vocab_size=tgt_vocab,
            tie_output_embedding=self.tied_output,
            share_source_embedding=self.shared_embeddings,
            output_bias=output_bias,
        )
