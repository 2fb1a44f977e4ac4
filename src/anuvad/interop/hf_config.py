"""What the Hugging Face encoder-decoder configs anuvad imports (``MarianConfig``,
``M2M100Config``) share: the activation names, the layer checks every family runs and the
layer fields every family reads (:mod:`anuvad.interop.marian_config`,
:mod:`anuvad.interop.m2m100`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from anuvad.config import ACTIVATIONS, ModelConfig

# Hugging Face activation names → anuvad's (ACT2FN: "swish" and "silu" are one function).
HF_ACTIVATIONS = {"relu": "relu", "swish": "swish", "silu": "swish", "gelu": "gelu"}


def layer_problems(config: Mapping[str, Any], activation: str) -> list[str]:
    """What anuvad cannot compute in a config's layers, one line each ([] when nothing).

    Args:
        config: a ``config.json``.
        activation: its ``activation_function`` (the family's default when absent).

    Returns:
        An activation anuvad lacks, and encoder and decoder layers with unequal heads or
        feed-forward widths (anuvad's layers share both).
    """
    problems = []
    if activation not in HF_ACTIVATIONS:
        problems.append(
            f"activation_function {activation!r} (anuvad has {', '.join(HF_ACTIVATIONS)})"
        )
    for ours, theirs in (
        ("encoder_attention_heads", "decoder_attention_heads"),
        ("encoder_ffn_dim", "decoder_ffn_dim"),
    ):
        if config.get(ours) != config.get(theirs):
            problems.append(f"{ours} {config.get(ours)} != {theirs} {config.get(theirs)}")
    return problems


@dataclass(frozen=True)
class EncoderDecoderShape:
    """The layer fields every family's checked config has (a family's shape adds its own)."""

    d_model: int
    num_heads: int
    d_ff: int
    encoder_layers: int
    decoder_layers: int
    activation: str  # anuvad's name

    @staticmethod
    def layer_fields(config: Mapping[str, Any], activation: str) -> dict[str, Any]:
        """These fields read from a ``config.json`` whose :func:`layer_problems` are none
        (``activation``: its ``activation_function``), to pass to the family's constructor.

        Raises:
            KeyError, TypeError, ValueError: a field is missing or garbled.
        """
        return {
            "d_model": int(config["d_model"]),
            "num_heads": int(config["encoder_attention_heads"]),
            "d_ff": int(config["encoder_ffn_dim"]),
            "encoder_layers": int(config["encoder_layers"]),
            "decoder_layers": int(config["decoder_layers"]),
            "activation": HF_ACTIVATIONS[activation],
        }

    def layer_config(self) -> ModelConfig:
        """anuvad's :class:`ModelConfig` with these layers; the family sets the rest
        (``dataclasses.replace``)."""
        assert self.activation in ACTIVATIONS
        return ModelConfig(
            d_model=self.d_model,
            num_heads=self.num_heads,
            d_ff=self.d_ff,
            num_encoder_layers=self.encoder_layers,
            num_decoder_layers=self.decoder_layers,
            activation=self.activation,
        )
