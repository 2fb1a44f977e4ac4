"""``anuvad export --format huggingface``: an anuvad model file → a Hugging Face Marian folder
that ``transformers.MarianMTModel.from_pretrained``, ``MarianTokenizer`` and
``pipeline("translation", ...)`` load, with the model card beside it.

What the folder computes is anuvad's network: the weights are mapped by
:func:`anuvad.interop.marian.anuvad_to_marian` (positions by the residual-stream reordering, the
decoder starting from anuvad's BOS through ``decoder_start_token_id``), the tokenizer files are
anuvad's SentencePiece models with ``vocab.json`` giving anuvad's ids, and the generation config
forbids ``<pad>`` and BOS as anuvad's search does. Two things Hugging Face cannot express:
anuvad's LayerNorm epsilon when it is not 1e-5 (Marian's is fixed; the difference is ~1e-6 in the
logits) and the GNMT length penalty (``generate`` divides by |Y|^alpha; the card says so).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from torch import Tensor

from anuvad.checkpoint import ModelFile, load_model
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer
from anuvad.errors import CheckpointError
from anuvad.interop.hf_folder import (
    CARD_FILE,
    CONFIG_FILE,
    GENERATION_FILE,
    SAFETENSORS_FILE,
    SOURCE_SPM,
    TARGET_SPM,
    TARGET_VOCAB_FILE,
    TOKENIZER_CONFIG_FILE,
    VOCAB_FILE,
)
from anuvad.interop.marian import VocabOrder, anuvad_to_marian, export_problems

_HF_ACTIVATIONS = {"relu": "relu", "swish": "swish", "gelu": "gelu"}


def _identity(tokenizer: Tokenizer) -> VocabOrder:
    pieces = tuple(tokenizer.id_to_piece(range(tokenizer.vocab_size)))
    return VocabOrder(tuple(range(len(pieces))), pieces)


def hf_config(loaded: ModelFile) -> dict[str, Any]:
    """``config.json`` of the exported model."""
    m = loaded.config.model
    return {
        "architectures": ["MarianMTModel"],
        "model_type": "marian",
        "vocab_size": m.src_vocab_size,
        "decoder_vocab_size": m.tgt_vocab_size,
        "d_model": m.d_model,
        "encoder_layers": m.num_encoder_layers,
        "decoder_layers": m.num_decoder_layers,
        "encoder_attention_heads": m.num_heads,
        "decoder_attention_heads": m.num_heads,
        "encoder_ffn_dim": m.d_ff,
        "decoder_ffn_dim": m.d_ff,
        "activation_function": _HF_ACTIVATIONS[m.activation],
        "max_position_embeddings": m.max_positions,
        "scale_embedding": True,
        "share_encoder_decoder_embeddings": m.share_source_embedding,
        "tie_word_embeddings": m.tie_output_embedding,
        "pad_token_id": PAD_ID,
        "eos_token_id": EOS_ID,
        "bos_token_id": BOS_ID,
        "decoder_start_token_id": BOS_ID,
        "forced_eos_token_id": None,
        "is_encoder_decoder": True,
        "dropout": m.dropout,
        "attention_dropout": m.attention_dropout,
        "activation_dropout": m.activation_dropout,
        "init_std": m.init_std or 0.02,
        "use_cache": True,
    }


def generation_config(loaded: ModelFile) -> dict[str, Any]:
    """``generation_config.json``: the model's own search settings, as far as ``generate`` has
    them (PAD and BOS are never generated, as in anuvad's search)."""
    d = loaded.config.decode
    return {
        "decoder_start_token_id": BOS_ID,
        "eos_token_id": EOS_ID,
        "pad_token_id": PAD_ID,
        "bos_token_id": BOS_ID,
        "forced_eos_token_id": None,
        "bad_words_ids": [[PAD_ID], [BOS_ID]],
        "num_beams": d.beam_size,
        "length_penalty": d.length_penalty,
        "early_stopping": d.early_stopping == "finished",
        "no_repeat_ngram_size": d.no_repeat_ngram_size,
        "max_length": loaded.config.model.max_positions,
    }


def _weights(loaded: ModelFile, config: dict[str, Any]) -> dict[str, Tensor]:
    """Marian's weights, each matrix stored once: tied names are left for Hugging Face to tie
    (as ``save_pretrained`` writes them), every tensor its own contiguous copy."""
    m = loaded.config.model
    src, tgt = _identity(loaded.src_tokenizer), _identity(loaded.tgt_tokenizer)
    state = {k: v.detach().float() for k, v in loaded.model.state_dict().items()}
    weights = anuvad_to_marian(m, state, src, tgt, m.src_vocab_size, m.tgt_vocab_size)
    if config["tie_word_embeddings"]:
        del weights["lm_head.weight"]
        if config["share_encoder_decoder_embeddings"]:
            del weights["model.encoder.embed_tokens.weight"]
            del weights["model.decoder.embed_tokens.weight"]
    elif not config["share_encoder_decoder_embeddings"]:
        weights.pop("model.shared.weight", None)
    return {name: tensor.clone().contiguous() for name, tensor in weights.items()}


def model_card(loaded: ModelFile, source: Path) -> str:
    """The exported folder's ``README.md``: languages, licence, what the model is, its scores
    and how to load it."""
    c, meta = loaded.config, loaded.metadata
    licence = meta.get("license") or "other"
    scores = {k: v for k, v in meta.items() if isinstance(v, int | float) and k != "steps"}
    lines = [
        "---",
        f"language:\n- {c.data.src_lang}\n- {c.data.tgt_lang}",
        f"license: {licence}",
        "library_name: transformers",
        "pipeline_tag: translation",
        "tags:\n- translation\n- marian\n- anuvad",
        "---",
        "",
        f"# {c.data.src_lang} → {c.data.tgt_lang}: {c.name}",
        "",
        f"Exported from the anuvad model file `{source.name}` with `anuvad export --format "
        "huggingface`. A post-LN Transformer (Vaswani et al., 2017) of "
        f"d_model {c.model.d_model}, {c.model.num_heads} heads, "
        f"{c.model.num_encoder_layers}+{c.model.num_decoder_layers} layers, "
        f"{meta.get('num_parameters', '?')} parameters.",
        "",
    ]
    if c.data.train:
        lines += [f"Trained on: {c.data.training_summary()}.", ""]
    if meta.get("imported_from"):
        lines += [f"Originally imported from `{meta['imported_from']}`.", ""]
    if scores:
        lines += ["| figure | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in sorted(scores.items())]
        lines.append("")
    lines += [
        "```python",
        "from transformers import pipeline",
        'translate = pipeline("translation", model="PATH_TO_THIS_FOLDER")',
        'print(translate("...")[0]["translation_text"])',
        "```",
        "",
        "Differences from anuvad's own decoding: `generate` scores a finished beam by "
        "log-probability / |Y|^alpha, anuvad by default by the GNMT penalty "
        "((5+|Y|)/6)^alpha, so beam outputs can differ where two candidates are close; "
        "greedy outputs are the same. Marian's LayerNorm epsilon is 1e-5"
        + (
            f" (this model was trained with {c.model.layer_norm_eps:g})."
            if c.model.layer_norm_eps != 1e-5
            else "."
        ),
        "",
    ]
    return "\n".join(lines)


def export_huggingface(model_path: str | Path, out: str | Path, force: bool = False) -> Path:
    """Write ``model_path`` as a Hugging Face Marian folder ``out`` (complete or not at all).

    Raises:
        CheckpointError: the model cannot be a Marian model (pre-LN, learned positions, a
            word-level vocabulary), ``out`` exists without ``force``, or the file is unusable.
    """
    from safetensors.torch import save_file

    model_path, out = Path(model_path), Path(out)
    loaded = load_model(model_path, device="cpu")
    problems = export_problems(loaded.config.model)
    if loaded.src_tokenizer.word_level or loaded.tgt_tokenizer.word_level:
        problems.append("a word-level vocabulary (a parsing model) has no Marian tokenizer")
    if problems:
        raise CheckpointError(
            f"{model_path}: cannot be a Hugging Face Marian model: " + "; ".join(problems)
        )
    if out.exists() and not force:
        raise CheckpointError(f"{out} exists; choose another --out or add --force to replace it")
    config = hf_config(loaded)
    # One vocabulary (ids → pieces) for both sides, even with two SentencePiece models (as in
    # Marian's own shared-vocabulary models), needs no target_vocab.json.
    separate = _vocab(loaded.src_tokenizer) != _vocab(loaded.tgt_tokenizer)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        save_file(_weights(loaded, config), str(building / SAFETENSORS_FILE), {"format": "pt"})
        for name, data in (
            (CONFIG_FILE, config),
            (GENERATION_FILE, generation_config(loaded)),
            (TOKENIZER_CONFIG_FILE, _tokenizer_config(loaded, separate)),
            (VOCAB_FILE, _vocab(loaded.src_tokenizer)),
        ):
            (building / name).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        if separate:
            (building / TARGET_VOCAB_FILE).write_text(
                json.dumps(_vocab(loaded.tgt_tokenizer), ensure_ascii=False, indent=2) + "\n"
            )
        (building / SOURCE_SPM).write_bytes(loaded.src_tokenizer.model_proto)
        (building / TARGET_SPM).write_bytes(loaded.tgt_tokenizer.model_proto)
        (building / CARD_FILE).write_text(model_card(loaded, model_path), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        building.rename(out)
    finally:
        if building.exists():
            shutil.rmtree(building)
    return out


def _vocab(tokenizer: Tokenizer) -> dict[str, int]:
    return {piece: i for i, piece in enumerate(tokenizer.id_to_piece(range(tokenizer.vocab_size)))}


def _tokenizer_config(loaded: ModelFile, separate: bool) -> dict[str, Any]:
    data = loaded.config.data
    return {
        "tokenizer_class": "MarianTokenizer",
        "source_lang": data.src_lang,
        "target_lang": data.tgt_lang,
        "separate_vocabs": separate,
        "unk_token": "<unk>",
        "eos_token": "</s>",
        "pad_token": "<pad>",
        # anuvad's decoder start: declared special, so that batch_decode(...,
        # skip_special_tokens=True) leaves it out whatever the SentencePiece model makes of it
        # (one without a "<s>" control symbol reads it as text: "<s> थी ving").
        "bos_token": "<s>",
        "model_max_length": loaded.config.model.max_positions,
    }


__all__ = ["export_huggingface", "generation_config", "hf_config", "model_card"]
