"""Marian's own weights file (the ``.npz`` of an OPUS-MT / Tatoeba-MT release) → the config and
state dict a Hugging Face ``MarianMTModel`` would have after ``transformers``' conversion of it
(``convert_marian_to_pytorch.py``), so that :mod:`anuvad.interop.marian` maps it as it maps any
Hugging Face Marian model.

The npz holds Marian's options as YAML text under ``special:model.yml`` and one array per weight,
named by layer and role (``encoder_l1_self_Wq``, ``decoder_l2_context_bo``, ``Wemb``,
``decoder_ff_logit_out_b``). Marian stores a projection as (in, out) and a bias or LayerNorm
vector as (1, n); Hugging Face's ``nn.Linear`` holds (out, in), so every layer weight is
transposed and every vector flattened. Marian has no padding token: the conversion appends one,
a zero row of each embedding and a zero logit bias, after the vocabulary.

Beyond the reference converter (which refuses them): vocabularies of unequal sizes (the source
and target ``<pad>`` then have different ids; the config names the target's), and an output
layer of its own (``tied-embeddings: false``: ``decoder_ff_logit_out_W``, (D, V_tgt)).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import yaml
from torch import Tensor

from anuvad.errors import CheckpointError

MODEL_YML_KEY = "special:model.yml"
OUTPUT_BIAS = "decoder_ff_logit_out_b"
OUTPUT_WEIGHT = "decoder_ff_logit_out_W"  # only when the output layer is not tied
# Marian's options that must hold these values for the network to be Hugging Face's Marian
# (post-LN "dan" layers, sinusoid positions, no embedding LayerNorm, self-attention decoder);
# an absent option takes Marian's default, which is this value.
ASSUMED = {
    "type": "transformer",
    "layer-normalization": False,
    "right-left": False,
    "transformer-ffn-depth": 2,
    "transformer-aan-depth": 2,
    "transformer-no-projection": False,
    "transformer-postprocess-emb": "d",
    "transformer-postprocess": "dan",
    "transformer-preprocess": "",
    "transformer-train-position-embeddings": False,
    "transformer-decoder-autoreg": "self-attention",
    "transformer-tied-layers": [],
    "ulr-dim-emb": 0,
    "dec-cell-base-depth": 2,
    "dec-cell-high-depth": 1,
    "transformer-aan-nogate": False,
}
_ACTIVATIONS = ("swish", "relu")  # Marian's transformer-ffn-activation values
# Marian's per-layer weight name (after ``encoder_l<i>_``) → Hugging Face's (after
# ``model.encoder.layers.<i-1>.``), written out of three parts: the attention blocks, their
# LayerNorms, the feed-forward block.
_ATTENTION = {"self": "self_attn", "context": "encoder_attn"}
_PROJECTIONS = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "out_proj"}
_FFN = {
    "ffn_W1": "fc1.weight",
    "ffn_b1": "fc1.bias",
    "ffn_W2": "fc2.weight",
    "ffn_b2": "fc2.bias",
    "ffn_ffn_ln_scale": "final_layer_norm.weight",
    "ffn_ffn_ln_bias": "final_layer_norm.bias",
}


def layer_names(decoder: bool) -> dict[str, str]:
    """Marian's weight names of one layer (without the ``encoder_l<i>_`` prefix) → Hugging
    Face's (without ``model.encoder.layers.<i>.``); 16 for an encoder layer, 26 for a decoder
    layer (self-attention, then attention over the encoder's output, then the FFN)."""
    names: dict[str, str] = {}
    for role in ("self", "context") if decoder else ("self",):
        hf = _ATTENTION[role]
        for short, proj in _PROJECTIONS.items():
            names[f"{role}_W{short}"] = f"{hf}.{proj}.weight"
            names[f"{role}_b{short}"] = f"{hf}.{proj}.bias"
        names[f"{role}_Wo_ln_scale"] = f"{hf}_layer_norm.weight"
        names[f"{role}_Wo_ln_bias"] = f"{hf}_layer_norm.bias"
    return {**names, **_FFN}


def _yaml_value(value: Any) -> Any:
    """A value of Marian's YAML read as text → bool / int where it is one (Marian's own
    reading; "0.1" stays text, as in the reference conversion)."""
    if isinstance(value, list):
        return [_yaml_value(v) for v in value]
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def read_yaml(text: str, where: str) -> dict[str, Any]:
    """Marian's YAML (``model.yml``, ``decoder.yml``, a ``vocab.yml``) as a dict, every scalar
    read as text first, as Marian reads it (a piece "yes" stays "yes"); ints and booleans cast.

    Raises:
        CheckpointError: not YAML, or not a mapping.
    """
    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # libyaml's, when built with it
    try:
        data = yaml.load(text, Loader=loader)  # BaseLoader: text, lists, dicts only
    except yaml.YAMLError as exc:
        raise CheckpointError(f"{where}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(data, dict):
        raise CheckpointError(f"{where}: expected a YAML mapping")
    return {str(k): _yaml_value(v) for k, v in data.items()}


@dataclass(frozen=True)
class MarianOptions:
    """The options of Marian's ``model.yml`` that shape the network, checked.

    Attributes:
        d_model: ``dim-emb``.
        num_heads: ``transformer-heads``.
        d_ff: ``transformer-dim-ffn``.
        encoder_layers, decoder_layers: ``enc-depth``, ``dec-depth``.
        activation: ``transformer-ffn-activation`` (swish or relu).
        shared_embeddings: ``tied-embeddings-src`` (or ``-all``): one embedding for both sides.
        tied_output: ``tied-embeddings`` (or ``-all``): the output layer is the target embedding.
    """

    d_model: int
    num_heads: int
    d_ff: int
    encoder_layers: int
    decoder_layers: int
    activation: str
    shared_embeddings: bool
    tied_output: bool

    @classmethod
    def from_yaml(cls, options: Mapping[str, Any], where: str) -> MarianOptions:
        """Read and check ``model.yml``'s options.

        Raises:
            CheckpointError: naming ``where`` and every option anuvad cannot compute exactly
                (pre-LN, learned positions, an average-attention decoder, ...) or that is missing.
        """
        problems = [
            f"{key} is {options[key]!r} (anuvad computes {wanted!r})"
            for key, wanted in ASSUMED.items()
            if key in options and options[key] != wanted
        ]
        activation = str(options.get("transformer-ffn-activation", "swish"))
        if activation not in _ACTIVATIONS:
            problems.append(f"transformer-ffn-activation is {activation!r} (swish or relu)")
        needed = ("dim-emb", "transformer-heads", "transformer-dim-ffn", "enc-depth", "dec-depth")
        problems += [f"{key} is missing" for key in needed if key not in options]
        problems += [
            f"{key} is {options[key]!r}, not a positive number"
            for key in needed
            if key in options and not (isinstance(options[key], int) and options[key] > 0)
        ]
        if problems:
            raise CheckpointError(
                f"{where}: this Marian model is not one anuvad can compute exactly: "
                + "; ".join(problems)
            )
        every = bool(options.get("tied-embeddings-all", False))
        return cls(
            d_model=int(options["dim-emb"]),
            num_heads=int(options["transformer-heads"]),
            d_ff=int(options["transformer-dim-ffn"]),
            encoder_layers=int(options["enc-depth"]),
            decoder_layers=int(options["dec-depth"]),
            activation=activation,
            shared_embeddings=every or bool(options.get("tied-embeddings-src", False)),
            tied_output=every or bool(options.get("tied-embeddings", False)),
        )

    def expected_shapes(self, src_size: int, tgt_size: int) -> dict[str, tuple[int, ...]]:
        """Every weight the npz must hold, by Marian name, with Marian's shape (vectors (1, n))."""
        d, f = self.d_model, self.d_ff
        shapes: dict[str, tuple[int, ...]] = {OUTPUT_BIAS: (1, tgt_size)}
        if self.shared_embeddings:
            shapes["Wemb"] = (src_size, d)
        else:
            shapes["encoder_Wemb"], shapes["decoder_Wemb"] = (src_size, d), (tgt_size, d)
        if not self.tied_output:
            shapes[OUTPUT_WEIGHT] = (d, tgt_size)
        for stack, count in (("encoder", self.encoder_layers), ("decoder", self.decoder_layers)):
            for i in range(1, count + 1):
                for name in layer_names(stack == "decoder"):
                    shapes[f"{stack}_l{i}_{name}"] = _layer_shape(name, d, f)
        return shapes


def _layer_shape(name: str, d_model: int, d_ff: int) -> tuple[int, int]:
    """Marian's shape of one layer weight (``self_Wq``: (D, D), ``ffn_W1``: (D, F), a bias or a
    LayerNorm vector: (1, n))."""
    ffn = {"ffn_W1": (d_model, d_ff), "ffn_b1": (1, d_ff), "ffn_W2": (d_ff, d_model)}
    if name in ffn:
        return ffn[name]
    return (1, d_model) if "_ln_" in name or "_b" in name else (d_model, d_model)


def model_options(npz: Mapping[str, np.ndarray], where: str) -> dict[str, Any]:
    """The ``special:model.yml`` an npz carries (Marian's options, NUL-terminated text).

    Raises:
        CheckpointError: the npz has none, or it is not YAML.
    """
    if MODEL_YML_KEY not in npz:
        raise CheckpointError(
            f"{where}: has no {MODEL_YML_KEY} (the options Marian saves with every model); "
            "is it a Marian model?"
        )
    text = np.asarray(npz[MODEL_YML_KEY]).astype(np.uint8).tobytes().decode("utf-8", "replace")
    return read_yaml(text.rstrip("\0"), f"{where} ({MODEL_YML_KEY})")


def check_weights(
    npz: Mapping[str, np.ndarray], options: MarianOptions, src_size: int, tgt_size: int, where: str
) -> None:
    """Every weight the options call for is there with its shape, and nothing else is.

    Args:
        npz: the arrays by Marian name.
        options: the checked ``model.yml``.
        src_size, tgt_size: the vocabularies' sizes (without ``<pad>``).
        where: the npz's name for messages.

    Raises:
        CheckpointError: one line naming the npz and every missing, misshapen or unexpected
            weight (an unexpected one is a part of the network anuvad would leave out).
    """
    expected = options.expected_shapes(src_size, tgt_size)
    missing = [name for name in expected if name not in npz]
    misshapen = [
        f"{name} has shape {tuple(npz[name].shape)}, expected {shape}"
        for name, shape in expected.items()
        if name in npz and tuple(npz[name].shape) != shape
        and not (len(shape) == 2 and shape[0] == 1 and tuple(npz[name].shape) == shape[1:])
    ]  # fmt: skip
    unexpected = [name for name in npz if name not in expected and name != MODEL_YML_KEY]
    problems = []
    if missing:
        problems.append(f"lacks {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
    problems += misshapen[:8]
    if unexpected:
        problems.append(
            f"holds weights anuvad does not compute: {', '.join(sorted(unexpected)[:8])}"
        )
    if problems:
        raise CheckpointError(
            f"{where}: " + "; ".join(problems) + " (for the shape its model.yml gives: "
            f"d_model {options.d_model}, {options.encoder_layers}+{options.decoder_layers} "
            f"layers, d_ff {options.d_ff}, vocabularies {src_size} / {tgt_size})"
        )


def _with_pad_row(matrix: np.ndarray) -> Tensor:
    """(V, n) → (V + 1, n): the zero row the conversion appends for ``<pad>``."""
    tensor = torch.from_numpy(np.asarray(matrix, dtype=np.float32))
    return torch.cat([tensor, tensor.new_zeros(1, tensor.shape[1])])


def hf_state(npz: Mapping[str, np.ndarray], options: MarianOptions) -> dict[str, Tensor]:
    """Marian's (checked) weights under ``MarianMTModel``'s names and layout, as ``transformers``'
    conversion loads them (float32; embeddings and the logit bias with the ``<pad>`` entry).

    Returns:
        ``model.encoder.layers.*`` / ``model.decoder.layers.*``, ``model.shared.weight`` (shared
        embeddings) or ``model.encoder.embed_tokens.weight`` and
        ``model.decoder.embed_tokens.weight``, ``lm_head.weight`` and ``final_logits_bias``.
    """
    state: dict[str, Tensor] = {}
    for stack, count in (("encoder", options.encoder_layers), ("decoder", options.decoder_layers)):
        for i in range(count):
            for marian, hf in layer_names(stack == "decoder").items():
                array = np.asarray(npz[f"{stack}_l{i + 1}_{marian}"], dtype=np.float32)
                tensor = torch.from_numpy(np.ascontiguousarray(array.T))  # (in, out) → (out, in)
                if hf.endswith("bias") or "layer_norm" in hf:
                    tensor = tensor.reshape(-1)
                state[f"model.{stack}.layers.{i}.{hf}"] = tensor
    if options.shared_embeddings:
        tgt_embed = state["model.shared.weight"] = _with_pad_row(npz["Wemb"])
    else:
        state["model.encoder.embed_tokens.weight"] = _with_pad_row(npz["encoder_Wemb"])
        tgt_embed = state["model.decoder.embed_tokens.weight"] = _with_pad_row(npz["decoder_Wemb"])
    state["lm_head.weight"] = (
        tgt_embed if options.tied_output else _with_pad_row(np.asarray(npz[OUTPUT_WEIGHT]).T)
    )
    bias = _with_pad_row(np.asarray(npz[OUTPUT_BIAS]).reshape(-1, 1))  # (V_tgt + 1, 1)
    state["final_logits_bias"] = bias.T.contiguous()  # (1, V_tgt + 1)
    return state


def hf_config(
    options: MarianOptions, src_size: int, tgt_size: int, eos: int, beam_size: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``config.json`` and ``generation_config.json`` ``transformers``' conversion writes.

    Args:
        options: the checked ``model.yml``.
        src_size, tgt_size: the vocabularies' sizes without ``<pad>`` (its id, appended: the
            target's is the config's ``pad_token_id`` and decoder start).
        eos: the id of ``</s>``.
        beam_size: ``decoder.yml``'s ``beam-size``.

    Returns:
        (config, generation config). Positions: ``max_position_embeddings`` is ``dim-emb``, as
        the conversion sets it (Marian's sinusoids have no limit; Hugging Face's table does).
    """
    pad = tgt_size
    config = {
        "model_type": "marian",
        "vocab_size": src_size + 1,
        "decoder_vocab_size": tgt_size + 1,
        "share_encoder_decoder_embeddings": options.shared_embeddings,
        "tie_word_embeddings": options.tied_output,
        "d_model": options.d_model,
        "encoder_layers": options.encoder_layers,
        "decoder_layers": options.decoder_layers,
        "encoder_attention_heads": options.num_heads,
        "decoder_attention_heads": options.num_heads,
        "encoder_ffn_dim": options.d_ff,
        "decoder_ffn_dim": options.d_ff,
        "activation_function": options.activation,
        "max_position_embeddings": options.d_model,
        "scale_embedding": True,
        "normalize_embedding": False,
        "static_position_embeddings": True,
        "pad_token_id": pad,
        "eos_token_id": eos,
        "forced_eos_token_id": eos,
        "bos_token_id": 0,
        "decoder_start_token_id": pad,
    }
    generation = {
        "num_beams": beam_size,
        "max_length": 512,
        "bad_words_ids": [[pad]],
        "pad_token_id": pad,
        "eos_token_id": eos,
        "forced_eos_token_id": eos,
        "decoder_start_token_id": pad,
    }
    return config, generation
