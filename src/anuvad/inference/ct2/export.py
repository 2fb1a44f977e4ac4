"""Export an anuvad model to a CTranslate2 model folder (issue 6), through CTranslate2's public
specification API (``ctranslate2.specs.TransformerSpec`` filled by a
``ctranslate2.converters.Converter``).

How each part of anuvad's Transformer is expressed (everything else is refused, see
:func:`conversion_problems`):

* post-LN (the paper) or pre-LN layers: ``pre_norm`` of the spec; CTranslate2 adds the residual
  and normalises after each sub-layer (post) or before it with a final LayerNorm (pre), as
  :class:`anuvad.model.layers.SublayerConnection` does. ``layer_norm_eps`` goes into the model
  config.
* fused projections: anuvad's self-attention (3D, D) ``qkv_proj`` and cross-attention (2D, D)
  ``kv_proj`` already have CTranslate2's layout (Q, K, V and K, V stacked), so they are copied.
* positions: CTranslate2's built-in sinusoids put all sines before all cosines; anuvad interleaves
  them (``PE(pos, 2i)`` = sin, ``PE(pos, 2i+1)`` = cos). The table is therefore always written
  explicitly (anuvad's own sinusoidal table, fairseq's for an imported M2M100 / NLLB model, or the
  learned one), ``max_positions`` rows.
* an imported M2M100 / NLLB model (issue 41 item 5): pre-LN with the final LayerNorms, fairseq's
  table from its first real position, and the vocabulary in anuvad's order, whose BOS is the
  copied decoder-start row (``</s>``'s embedding) and the decoder start token. The language
  tokens are ordinary pieces; the metadata that names them (``language_tokens``) is kept in
  ``anuvad.json``, and the engine passes them (:mod:`anuvad.inference.ct2.pairs`).
* embeddings scaled by sqrt(D) (``scale_embeddings``); tied output projection and three-way tying
  are the same tensor in several places, which CTranslate2 stores once (aliases).
* special tokens: the vocabularies are the SentencePiece pieces in id order, so ids agree
  (``<pad>`` 0, ``<unk>`` 1, ``<s>`` 2, ``</s>`` 3). anuvad's search never generates PAD or BOS
  (:func:`anuvad.decoding.search.forbid_special_tokens`); the export gives the output projection a
  bias of
  -inf on those two ids so CTranslate2 never does either. CTranslate2 then normalises the
  softmax over the other tokens, so its log-probabilities exceed anuvad's by
  -log(1 - p(PAD) - p(BOS)) per step (about 1e-6 for a trained model).
* the source EOS: ``add_source_eos`` is set, so the folder also translates correctly when used
  with CTranslate2 directly (source pieces without ``</s>``).

The folder holds CTranslate2's ``model.bin``, ``config.json`` and vocabularies, the two
SentencePiece models (``source.spm``, ``target.spm``) and ``anuvad.json`` (the experiment config,
the model file's metadata, the quantization).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from anuvad import __version__
from anuvad.checkpoint import ModelFile, load_model
from anuvad.config import ModelConfig, config_to_dict
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from anuvad.errors import CheckpointError
from anuvad.inference.ct2 import QUANTIZATIONS, missing_ctranslate2
from anuvad.model.layers import fairseq_sinusoidal_table, sinusoidal_table

try:
    import ctranslate2
    from ctranslate2.converters import Converter
    from ctranslate2.specs import common_spec, transformer_spec
except ImportError as exc:  # an optional dependency
    raise missing_ctranslate2(exc) from exc

logger = logging.getLogger(__name__)

CT2_FORMAT = "anuvad-ctranslate2"
CT2_FORMAT_VERSION = 1
METADATA_FILE = "anuvad.json"
SRC_TOKENIZER_FILE = "source.spm"
TGT_TOKENIZER_FILE = "target.spm"

# Every ModelConfig field and how the export honours it. A field missing here (a new
# architectural option) stops the export: converting it silently would translate wrongly.
_HANDLED_FIELDS = {
    "d_model": "weight shapes",
    "num_heads": "spec num_heads",
    "d_ff": "weight shapes",
    "num_encoder_layers": "spec layers",
    "num_decoder_layers": "spec layers",
    "dropout": "training only",
    "attention_dropout": "training only",
    "activation_dropout": "training only",
    "positional_encoding": "explicit position table",
    "max_positions": "position table rows",
    "norm_position": "spec pre_norm",
    "activation": "spec activation",
    "output_bias": "projection bias",
    "layer_norm_eps": "config layer_norm_epsilon",
    "src_vocab_size": "source vocabulary",
    "tgt_vocab_size": "target vocabulary",
    "tie_output_embedding": "projection = target embedding",
    "share_source_embedding": "source embedding = target embedding",
    "init_std": "training only",
}
_POSITIONS = ("sinusoidal", "learned", "sinusoidal_fairseq")
_ACTIVATION_SPECS = {
    "relu": common_spec.Activation.RELU,
    "swish": common_spec.Activation.SWISH,
    "gelu": common_spec.Activation.GELU,
}
_NORMS = ("post", "pre")


def conversion_problems(model_file: ModelFile) -> list[str]:
    """Everything that stops ``model_file`` from being expressed exactly in CTranslate2.

    Returns:
        One message per problem, naming the setting (empty: convertible).
    """
    m = model_file.config.model
    problems = [
        f"model.{f.name} is a setting the CTranslate2 export does not know; it cannot tell "
        f"whether CTranslate2 can express it (teach anuvad.inference.ct2.export about it first)"
        for f in dataclasses.fields(ModelConfig)
        if f.name not in _HANDLED_FIELDS
    ]
    if m.positional_encoding not in _POSITIONS:
        problems.append(
            f"model.positional_encoding={m.positional_encoding!r} cannot be exported; "
            f"CTranslate2 adds a position table, which covers {' and '.join(_POSITIONS)}"
        )
    if m.norm_position not in _NORMS:
        problems.append(
            f"model.norm_position={m.norm_position!r} cannot be exported; CTranslate2's "
            f"Transformer is post-LN or pre-LN ({', '.join(_NORMS)})"
        )
    if m.d_model % max(m.num_heads, 1):
        problems.append(f"model.d_model={m.d_model} is not divisible by num_heads={m.num_heads}")
    for side, tokenizer, field, size in (
        ("source", model_file.src_tokenizer, "src_vocab_size", m.src_vocab_size),
        ("target", model_file.tgt_tokenizer, "tgt_vocab_size", m.tgt_vocab_size),
    ):
        if tokenizer.vocab_size != size:
            problems.append(
                f"the {side} tokenizer has {tokenizer.vocab_size} pieces but "
                f"model.{field} is {size}"
            )
        pieces = tokenizer.id_to_piece(range(tokenizer.vocab_size))
        if len(set(pieces)) != len(pieces):
            problems.append(
                f"the {side} tokenizer has duplicate pieces; CTranslate2 looks tokens up by "
                f"their text, so ids would be ambiguous"
            )
    return problems


class _Weights:
    """The model's state dict; every entry must be used exactly by the spec."""

    def __init__(self, state: dict[str, Tensor]) -> None:
        # Copies: CTranslate2 quantizes the spec's arrays in place, and a float32 state dict
        # shares memory with the model (exporting a loaded model must leave it unchanged).
        self._state = {
            name: t.detach().to(torch.float32, copy=True).contiguous() for name, t in state.items()
        }
        self._used: set[str] = set()

    def __contains__(self, name: str) -> bool:
        return name in self._state

    def take(self, name: str) -> Tensor:
        self._used.add(name)
        return self._state[name]

    def unused(self) -> list[str]:
        return sorted(set(self._state) - self._used)


def _linear(spec: Any, weights: _Weights, prefix: str) -> None:
    spec.weight = weights.take(f"{prefix}.weight")
    if f"{prefix}.bias" in weights:
        spec.bias = weights.take(f"{prefix}.bias")


def _layer_norm(spec: Any, weights: _Weights, prefix: str) -> None:
    spec.gamma = weights.take(f"{prefix}.weight")
    spec.beta = weights.take(f"{prefix}.bias")


def _position_table(config: ModelConfig, weights: _Weights) -> Tensor:
    if config.positional_encoding == "learned":
        return weights.take("positions.embedding.weight")
    # The sinusoidal tables are non-persistent buffers (derivable): rebuild anuvad's own.
    if config.positional_encoding == "sinusoidal_fairseq":
        # Row i is fairseq's row i + 2 (positions after padding index 1): what CTranslate2's own
        # M2M100 converter stores (the table from the module's offset on).
        return fairseq_sinusoidal_table(config.max_positions, config.d_model)
    return sinusoidal_table(config.max_positions, config.d_model)


def _fill_encoder(spec: Any, weights: _Weights, pre_norm: bool, positions: Tensor) -> None:
    spec.embeddings[0].weight = weights.take("src_embed.weight")
    spec.position_encodings.encodings = positions
    for i, layer in enumerate(spec.layer):
        p = f"encoder_layers.{i}"
        _linear(layer.self_attention.linear[0], weights, f"{p}.self_attn.qkv_proj")  # (3D, D)
        _linear(layer.self_attention.linear[1], weights, f"{p}.self_attn.out_proj")
        _layer_norm(layer.self_attention.layer_norm, weights, f"{p}.attn_sublayer.norm")
        _linear(layer.ffn.linear_0, weights, f"{p}.ffn.linear1")
        _linear(layer.ffn.linear_1, weights, f"{p}.ffn.linear2")
        _layer_norm(layer.ffn.layer_norm, weights, f"{p}.ffn_sublayer.norm")
    if pre_norm:
        _layer_norm(spec.layer_norm, weights, "encoder_norm")


def _fill_decoder(
    spec: Any, weights: _Weights, config: ModelConfig, positions: Tensor, vocab_size: int
) -> None:
    spec.embeddings.weight = weights.take("tgt_embed.weight")
    spec.position_encodings.encodings = positions
    for i, layer in enumerate(spec.layer):
        p = f"decoder_layers.{i}"
        _linear(layer.self_attention.linear[0], weights, f"{p}.self_attn.qkv_proj")  # (3D, D)
        _linear(layer.self_attention.linear[1], weights, f"{p}.self_attn.out_proj")
        _layer_norm(layer.self_attention.layer_norm, weights, f"{p}.self_sublayer.norm")
        _linear(layer.attention.linear[0], weights, f"{p}.cross_attn.q_proj")
        _linear(layer.attention.linear[1], weights, f"{p}.cross_attn.kv_proj")  # (2D, D)
        _linear(layer.attention.linear[2], weights, f"{p}.cross_attn.out_proj")
        _layer_norm(layer.attention.layer_norm, weights, f"{p}.cross_sublayer.norm")
        _linear(layer.ffn.linear_0, weights, f"{p}.ffn.linear1")
        _linear(layer.ffn.linear_1, weights, f"{p}.ffn.linear2")
        _layer_norm(layer.ffn.layer_norm, weights, f"{p}.ffn_sublayer.norm")
    if config.norm_position == "pre":
        _layer_norm(spec.layer_norm, weights, "decoder_norm")
    tied = "output_proj.weight" not in weights
    spec.projection.weight = (
        weights.take("tgt_embed.weight") if tied else weights.take("output_proj.weight")
    )
    bias = torch.zeros(vocab_size)
    if "output_bias" in weights:
        bias += weights.take("output_bias")
    bias[[PAD_ID, BOS_ID]] = float("-inf")  # never generated, as in anuvad's search
    spec.projection.bias = bias


class AnuvadConverter(Converter):  # type: ignore[misc]  # ctranslate2 ships no type hints
    """A CTranslate2 converter whose ``_load`` builds the spec from an anuvad model file.

    Args:
        model_file: the loaded model (see :func:`anuvad.checkpoint.load_model`).

    Raises:
        CheckpointError: (from ``_load``) the model cannot be expressed exactly; every
            problem is listed.
    """

    def __init__(self, model_file: ModelFile) -> None:
        self.model_file = model_file

    def _load(self) -> Any:
        problems = conversion_problems(self.model_file)
        if problems:
            raise CheckpointError(
                "cannot export this model to CTranslate2:\n  - " + "\n  - ".join(problems)
            )
        config = self.model_file.config.model
        pre_norm = config.norm_position == "pre"
        spec = transformer_spec.TransformerSpec.from_config(
            (config.num_encoder_layers, config.num_decoder_layers),
            config.num_heads,
            pre_norm=pre_norm,
            activation=_ACTIVATION_SPECS[config.activation],
            # return_attention gives the last decoder layer averaged over all heads.
            alignment_layer=-1,
            alignment_heads=config.num_heads,
        )
        weights = _Weights(self.model_file.model.state_dict())
        positions = _position_table(config, weights)
        _fill_encoder(spec.encoder, weights, pre_norm, positions)
        _fill_decoder(spec.decoder, weights, config, positions, config.tgt_vocab_size)
        left = weights.unused()
        if left:
            raise CheckpointError(
                f"cannot export this model to CTranslate2: the spec has no place for the "
                f"weights {', '.join(left)}"
            )
        src, tgt = self.model_file.src_tokenizer, self.model_file.tgt_tokenizer
        spec.register_source_vocabulary(src.id_to_piece(range(src.vocab_size)))
        spec.register_target_vocabulary(tgt.id_to_piece(range(tgt.vocab_size)))
        unk, bos, eos = tgt.id_to_piece([UNK_ID, BOS_ID, EOS_ID])
        spec.config.unk_token, spec.config.bos_token, spec.config.eos_token = unk, bos, eos
        spec.config.decoder_start_token = bos
        spec.config.add_source_eos = True
        spec.config.layer_norm_epsilon = config.layer_norm_eps
        return spec


def export_ctranslate2(
    model: str | Path | ModelFile,
    out: str | Path,
    quantization: str = "float32",
    force: bool = False,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write a CTranslate2 model folder for an anuvad model.

    The folder is built beside ``out`` and renamed into place, so a failed export leaves no
    half-written folder.

    Args:
        model: a model file path, or a loaded :class:`ModelFile`.
        out: the folder to write.
        quantization: weight type, one of :data:`QUANTIZATIONS` ("int8" keeps float32
            activations on the CPU; CTranslate2 can also change it at load time).
        force: replace ``out`` if it exists.
        metadata: facts added to ``anuvad.json``'s metadata.

    Returns:
        The folder written.

    Raises:
        CheckpointError: unknown quantization, ``out`` exists (without ``force``), or the model
            cannot be expressed in CTranslate2 (every problem listed).
    """
    if quantization not in QUANTIZATIONS:
        raise CheckpointError(
            f"unknown quantization {quantization!r}; choose one of {', '.join(QUANTIZATIONS)}"
        )
    out = Path(out)
    if out.exists() and not force:
        raise CheckpointError(f"{out} already exists; choose another --out or pass --force")
    model_file = model if isinstance(model, ModelFile) else load_model(model, device="cpu")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        built = staging / "model"
        AnuvadConverter(model_file).convert(str(built), quantization=quantization)
        model_file.src_tokenizer.save(built / SRC_TOKENIZER_FILE)
        model_file.tgt_tokenizer.save(built / TGT_TOKENIZER_FILE)
        facts = {k: v for k, v in model_file.metadata.items() if k not in ("anuvad_version",)}
        facts.update(metadata or {})
        if not isinstance(model, ModelFile):
            facts["exported_from"] = Path(model).name
        info = {
            "format": CT2_FORMAT,
            "format_version": CT2_FORMAT_VERSION,
            "anuvad_version": __version__,
            "ctranslate2_version": ctranslate2.__version__,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "quantization": quantization,
            "config": config_to_dict(model_file.config),
            "metadata": facts,
            # Pieces that are no text (an imported model's language tokens): the .spm files
            # do not keep them, and decoding would show them.
            "silent_pieces": {
                "source": list(model_file.src_tokenizer.silent),
                "target": list(model_file.tgt_tokenizer.silent),
            },
        }
        (built / METADATA_FILE).write_text(
            json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if out.exists():
            shutil.rmtree(out)
        built.rename(out)
    except (OSError, RuntimeError, ValueError) as exc:
        raise CheckpointError(f"cannot write the CTranslate2 model {out}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info("exported %s weights to %s", quantization, out)
    return out


def read_ct2_metadata(folder: str | Path) -> dict[str, Any]:
    """Read and check ``anuvad.json`` of an exported folder.

    Raises:
        CheckpointError: the folder is not an anuvad CTranslate2 export, or a newer one.
    """
    folder = Path(folder)
    path = folder / METADATA_FILE
    if not folder.is_dir() or not path.is_file():
        raise CheckpointError(
            f"{folder} is not an anuvad CTranslate2 model folder (no {METADATA_FILE}); "
            f"write one with anuvad export MODEL.pt --format ctranslate2 --out {folder}"
        )
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path} is unreadable: {exc}") from exc
    if not isinstance(info, dict) or info.get("format") != CT2_FORMAT:
        raise CheckpointError(f"{path} does not describe an anuvad CTranslate2 export")
    version = info.get("format_version")
    if not isinstance(version, int) or version > CT2_FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has format version {version}; this anuvad ({__version__}) reads up to "
            f"{CT2_FORMAT_VERSION}: upgrade anuvad"
        )
    return dict(info)
