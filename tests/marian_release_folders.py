"""Marian release folders (OPUS-MT / Tatoeba-MT's own layout) built here, offline, for the import
tests, and the reference they are compared with: ``transformers``' conversion of the same files.

A folder holds random weights under Marian's names and shapes in an ``.npz`` with its
``special:model.yml``, the tests' SentencePiece models (:func:`marian_folders.spm_models`),
``vocab.yml`` files laid out as OPUS-MT's (``</s>`` 0, ``<unk>`` 1, the pieces), ``decoder.yml``
and a ``README.md`` naming the languages.

transformers does not ship ``convert_marian_to_pytorch.py`` in its wheel, so
:func:`reference_conversion` follows its mapping here, step by step (``OpusState``: vocab.json
= the vocab.yml with ``<pad>`` appended; transposed, flattened layer weights; a zero ``<pad>``
row appended to each embedding and a zero logit bias; ``max_position_embeddings`` = dim-emb;
the decoder starting from ``<pad>``), on the model it builds in memory: the script then saves it
in float16, a rounding the comparison leaves out. One extension, marked: an untied output layer
(``decoder_ff_logit_out_W``), which the script refuses, is loaded as ``lm_head``.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sentencepiece as spm
import torch
import yaml

from conftest import EN_HI_PAIRS
from marian_folders import spm_models

# Twenty sentences without digits (the translator's number copying would steer its search away
# from plain generate's, rightly).
SENTENCES = [en for en, _ in EN_HI_PAIRS if not any(c.isdigit() for c in en)][:20]
TUNE_TEXTS = SENTENCES[:8]


@dataclass(frozen=True)
class ReleaseShape:
    """One release to build: the model.yml options that shape it."""

    layers: tuple[int, int] = (2, 2)
    d_model: int = 32
    heads: int = 4
    ffn: int = 64
    activation: str = "swish"
    shared_vocab: bool = True  # tied-embeddings-src: one vocab.yml and one Wemb for both sides
    tied_output: bool = True  # tied-embeddings: the output layer is the target embedding
    language_tokens: tuple[str, ...] = ()  # a multilingual target: ">>hin<<", ...
    beam_size: int = 4  # decoder.yml's beam-size
    seed: int = 0
    extra_options: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def name(self) -> str:
        e, d = self.layers
        return (
            f"L{e}-{d}_{self.activation}_{'shared' if self.shared_vocab else 'two-vocabs'}_"
            f"{'tied' if self.tied_output else 'untied'}"
            f"{'_multilingual' if self.language_tokens else ''}"
        )


def _pieces(model: bytes) -> list[str]:
    processor = spm.SentencePieceProcessor()
    processor.LoadFromSerializedProto(model)
    return [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]


def _vocab(*piece_lists: list[str], size: int = 0) -> list[str]:
    """OPUS-MT's vocab.yml order: ``</s>``, ``<unk>``, every other piece once; filler pieces no
    SentencePiece model makes up to ``size`` (two vocabularies of one size, as the reference
    conversion needs)."""
    ordered = ["</s>", "<unk>"]
    for pieces in piece_lists:
        ordered += [p for p in pieces if p not in ("<s>", "</s>", "<unk>") and p not in ordered]
    ordered += [f"▁filler{i}" for i in range(size - len(ordered))]
    return ordered


def vocabularies(shape: ReleaseShape) -> tuple[list[str], list[str]]:
    """The source and target vocabularies (the same list for a shared one)."""
    source_spm, target_spm = spm_models()
    codes = list(shape.language_tokens)
    if shape.shared_vocab:
        one = _vocab(codes, _pieces(source_spm), _pieces(target_spm))
        return one, one
    src, tgt = _vocab(codes, _pieces(source_spm)), _vocab(_pieces(target_spm))
    size = max(len(src), len(tgt))
    return _vocab(src, size=size), _vocab(tgt, size=size)


def model_yml(shape: ReleaseShape, src_size: int, tgt_size: int) -> str:
    """The options Marian saves in an npz (``special:model.yml``), as a transformer has them."""
    encoder_layers, decoder_layers = shape.layers
    options: dict[str, Any] = {
        "type": "transformer", "dim-emb": shape.d_model, "dim-vocabs": [src_size, tgt_size],
        "enc-depth": encoder_layers, "dec-depth": decoder_layers,
        "transformer-heads": shape.heads, "transformer-dim-ffn": shape.ffn,
        "transformer-ffn-activation": shape.activation, "transformer-ffn-depth": 2,
        "transformer-aan-depth": 2, "transformer-aan-nogate": False,
        "transformer-no-projection": False, "transformer-postprocess-emb": "d",
        "transformer-postprocess": "dan", "transformer-preprocess": "",
        "transformer-train-position-embeddings": False,
        "transformer-decoder-autoreg": "self-attention", "transformer-tied-layers": [],
        "transformer-dropout": 0.1, "tied-embeddings": shape.tied_output,
        "tied-embeddings-src": shape.shared_vocab,
        "tied-embeddings-all": shape.shared_vocab and shape.tied_output,
        "layer-normalization": False, "right-left": False, "ulr-dim-emb": 0,
        "dec-cell-base-depth": 2, "dec-cell-high-depth": 1, "version": "v1.10.0",
    }  # fmt: skip
    options.update(dict(shape.extra_options))
    return yaml.safe_dump(options, sort_keys=False)


def random_weights(shape: ReleaseShape, src_size: int, tgt_size: int) -> dict[str, np.ndarray]:
    """Random weights under Marian's names, in Marian's shapes ((in, out) projections,
    (1, n) vectors), with the options as ``special:model.yml``."""
    rng = np.random.default_rng(shape.seed)
    d, f = shape.d_model, shape.ffn

    def normal(*size: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(size) * scale).astype(np.float32)

    npz: dict[str, np.ndarray] = {}
    for stack, count in (("encoder", shape.layers[0]), ("decoder", shape.layers[1])):
        for i in range(1, count + 1):
            for role in ("self", "context") if stack == "decoder" else ("self",):
                for p in "qkvo":
                    npz[f"{stack}_l{i}_{role}_W{p}"] = normal(d, d)
                    npz[f"{stack}_l{i}_{role}_b{p}"] = normal(1, d, scale=0.1)
                npz[f"{stack}_l{i}_{role}_Wo_ln_scale"] = 1 + normal(1, d, scale=0.1)
                npz[f"{stack}_l{i}_{role}_Wo_ln_bias"] = normal(1, d, scale=0.1)
            npz[f"{stack}_l{i}_ffn_W1"], npz[f"{stack}_l{i}_ffn_b1"] = normal(d, f), normal(1, f)
            npz[f"{stack}_l{i}_ffn_W2"], npz[f"{stack}_l{i}_ffn_b2"] = normal(f, d), normal(1, d)
            npz[f"{stack}_l{i}_ffn_ffn_ln_scale"] = 1 + normal(1, d, scale=0.1)
            npz[f"{stack}_l{i}_ffn_ffn_ln_bias"] = normal(1, d, scale=0.1)
    if shape.shared_vocab:
        npz["Wemb"] = normal(src_size, d)
    else:
        npz["encoder_Wemb"], npz["decoder_Wemb"] = normal(src_size, d), normal(tgt_size, d)
    if not shape.tied_output:
        npz["decoder_ff_logit_out_W"] = normal(d, tgt_size)
    npz["decoder_ff_logit_out_b"] = normal(1, tgt_size, scale=0.1)
    text = model_yml(shape, src_size, tgt_size) + "\0"
    npz["special:model.yml"] = np.frombuffer(text.encode("ascii"), dtype=np.int8)
    return npz


def _write_vocab(path: Path, pieces: list[str]) -> None:
    path.write_text(
        yaml.safe_dump({p: i for i, p in enumerate(pieces)}, allow_unicode=True, sort_keys=False),
        encoding="utf-8",
    )


def write_release(folder: Path, shape: ReleaseShape, tune_eos: bool = True) -> Path:
    """Write a random release of ``shape`` to ``folder`` (``tune_eos``: an EOS logit bias with
    which most greedy outputs end on their own at varied lengths); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    source_spm, target_spm = spm_models()
    (folder / "source.spm").write_bytes(source_spm)
    (folder / "target.spm").write_bytes(target_spm)
    src, tgt = vocabularies(shape)
    stem = "opus.spm32k-spm32k"
    if shape.shared_vocab:
        vocabs = [f"{stem}.vocab.yml"] * 2
        _write_vocab(folder / vocabs[0], src)
    else:
        vocabs = [f"{stem}.src.vocab.yml", f"{stem}.trg.vocab.yml"]
        _write_vocab(folder / vocabs[0], src)
        _write_vocab(folder / vocabs[1], tgt)
    npz_name = f"{stem}.transformer-align.model1.npz.best-perplexity.npz"
    decoder = {
        "models": [npz_name], "vocabs": vocabs, "beam-size": shape.beam_size, "normalize": 1,
        "word-penalty": 0, "mini-batch": 16, "maxi-batch": 100, "maxi-batch-sort": "src",
        "relative-paths": True,
    }  # fmt: skip
    (folder / "decoder.yml").write_text(yaml.safe_dump(decoder, sort_keys=False))
    targets = " ".join(c[2:-2] for c in shape.language_tokens) or "hin"
    (folder / "README.md").write_text(
        f"# {npz_name}\n\n* dataset: opus\n* model: transformer-align\n"
        f"* source language(s): eng\n* target language(s): {targets}\n"
        "* pre-processing: normalization + SentencePiece (spm32k,spm32k)\n"
    )
    (folder / "LICENSE").write_text("Attribution 4.0 International (CC BY 4.0)\n")
    npz = random_weights(shape, len(src), len(tgt))
    np.savez(folder / npz_name, **npz)  # type: ignore[arg-type]
    if tune_eos:
        model, tokenizer = reference_conversion(folder)
        eos = tgt.index("</s>")
        npz["decoder_ff_logit_out_b"][0, eos] = _tuned_eos_bias(model, tokenizer, eos)
        np.savez(folder / npz_name, **npz)  # type: ignore[arg-type]
    return folder


def _tuned_eos_bias(model: Any, tokenizer: Any, eos: int) -> float:
    """The EOS logit bias (on a grid) with the most greedy outputs of 2 to 20 tokens that end
    on their own, the most distinct lengths next."""
    batch = tokenizer(TUNE_TEXTS, return_tensors="pt", padding=True)
    best: tuple[int, int, float] = (-1, -1, 0.0)
    with torch.no_grad():
        for step in range(40):
            model.final_logits_bias[0, eos] = step * 0.2
            out = model.generate(**batch, num_beams=1, max_new_tokens=24, forced_eos_token_id=None)
            rows = [row.tolist()[1:] for row in out]
            ended = [row.index(eos) for row in rows if eos in row and 2 <= row.index(eos) <= 20]
            best = max(best, (len(ended), len(set(ended)), -step * 0.2))
    return -best[2]


def zip_release(folder: Path, zip_path: Path, inner: str = "") -> Path:
    """``folder`` as a release zip (its files under ``inner/`` when given)."""
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, f"{inner}/{path.name}" if inner else path.name)
    return zip_path


# ----------------------------------------------------------------------------------------------
# The reference: transformers' conversion (convert_marian_to_pytorch.py's OpusState)
# ----------------------------------------------------------------------------------------------

_HF_LAYER = {
    "self_W{p}": "self_attn.{proj}.weight", "self_b{p}": "self_attn.{proj}.bias",
    "context_W{p}": "encoder_attn.{proj}.weight", "context_b{p}": "encoder_attn.{proj}.bias",
}  # fmt: skip
_HF_FIXED = {
    "self_Wo_ln_scale": "self_attn_layer_norm.weight",
    "self_Wo_ln_bias": "self_attn_layer_norm.bias",
    "context_Wo_ln_scale": "encoder_attn_layer_norm.weight",
    "context_Wo_ln_bias": "encoder_attn_layer_norm.bias",
    "ffn_W1": "fc1.weight",
    "ffn_b1": "fc1.bias",
    "ffn_W2": "fc2.weight",
    "ffn_b2": "fc2.bias",
    "ffn_ffn_ln_scale": "final_layer_norm.weight",
    "ffn_ffn_ln_bias": "final_layer_norm.bias",
}


def _converter() -> dict[str, str]:
    table = dict(_HF_FIXED)
    for theirs, ours in _HF_LAYER.items():
        for p, proj in zip("qkvo", ("q_proj", "k_proj", "v_proj", "out_proj"), strict=True):
            table[theirs.format(p=p)] = ours.format(proj=proj)
    return table


def _hf_vocab(path: Path) -> dict[str, int]:
    vocab = {str(k): int(v) for k, v in yaml.load(path.read_text("utf-8"), yaml.BaseLoader).items()}
    vocab.setdefault("<pad>", max(vocab.values()) + 1)
    return vocab


def reference_conversion(folder: Path) -> tuple[Any, Any]:
    """``transformers``' conversion of a release folder: the ``MarianMTModel`` it builds (eval
    mode, float32) and the ``MarianTokenizer`` it saves beside it."""
    from torch import nn
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    npz = dict(np.load(next(folder.glob("*.npz"))))
    text = bytes(npz["special:model.yml"].astype(np.uint8)).decode()[:-1]
    cfg = {k: v for k, v in yaml.load(text, yaml.BaseLoader).items()}
    truth = {"true": True, "false": False}
    cfg = {k: truth.get(v, v) if isinstance(v, str) else v for k, v in cfg.items()}
    if cfg["tied-embeddings-all"]:
        cfg["tied-embeddings-src"] = cfg["tied-embeddings"] = True
    shared = bool(cfg["tied-embeddings-src"])
    hf = folder.parent / f"{folder.name}-converted"
    hf.mkdir(exist_ok=True)
    for name in ("source.spm", "target.spm"):
        shutil.copy(folder / name, hf / name)
    if shared:
        vocab = _hf_vocab(next(folder.glob("*vocab.yml")))
        (hf / "vocab.json").write_text(json.dumps(vocab))
    else:
        vocab = _hf_vocab(next(folder.glob("*src.vocab.yml")))
        (hf / "vocab.json").write_text(json.dumps(vocab))
        (hf / "target_vocab.json").write_text(
            json.dumps(_hf_vocab(next(folder.glob("*trg.vocab.yml"))))
        )
    (hf / "tokenizer_config.json").write_text(
        json.dumps({"source_lang": "eng", "target_lang": "hin", "separate_vocabs": not shared})
    )
    tokenizer = MarianTokenizer.from_pretrained(str(hf))
    zero_row = np.zeros((1, int(cfg["dim-emb"])), dtype=np.float32)
    wemb = np.concatenate([npz["Wemb" if shared else "encoder_Wemb"], zero_row])
    bias = np.concatenate([npz["decoder_ff_logit_out_b"], np.zeros((1, 1), np.float32)], axis=1)
    pad = wemb.shape[0] - 1
    eos = tokenizer.eos_token_id
    config = MarianConfig(
        vocab_size=pad + 1, decoder_vocab_size=pad + 1, share_encoder_decoder_embeddings=shared,
        decoder_layers=int(cfg["dec-depth"]), encoder_layers=int(cfg["enc-depth"]),
        decoder_attention_heads=int(cfg["transformer-heads"]),
        encoder_attention_heads=int(cfg["transformer-heads"]),
        decoder_ffn_dim=int(cfg["transformer-dim-ffn"]),
        encoder_ffn_dim=int(cfg["transformer-dim-ffn"]), d_model=int(cfg["dim-emb"]),
        activation_function=cfg["transformer-ffn-activation"], pad_token_id=pad,
        eos_token_id=eos, forced_eos_token_id=eos, bos_token_id=0,
        max_position_embeddings=int(cfg["dim-emb"]), scale_embedding=True,
        normalize_embedding=False, static_position_embeddings=True,
        tie_word_embeddings=bool(cfg["tied-embeddings"]), dropout=0.1,
        decoder_start_token_id=pad,
    )  # fmt: skip
    torch.manual_seed(0)
    model = MarianMTModel(config)
    converter = _converter()
    for stack, layers in (("encoder", model.model.encoder.layers), ("decoder", model.model.decoder.layers)):  # fmt: skip # noqa: E501
        for i, layer in enumerate(layers):
            prefix = f"{stack}_l{i + 1}_"
            sd = {
                converter[k[len(prefix) :]]: torch.tensor(v.T).squeeze()
                for k, v in npz.items()
                if k.startswith(prefix)
            }
            missing, unexpected = layer.load_state_dict(sd, strict=False)
            assert not unexpected and not missing, (missing, unexpected)
    if shared:
        model.model.shared.weight = nn.Parameter(torch.FloatTensor(wemb))
        model.model.encoder.embed_tokens = model.model.decoder.embed_tokens = model.model.shared
    else:
        model.model.encoder.embed_tokens.weight = nn.Parameter(torch.FloatTensor(wemb))
        dec = np.concatenate([npz["decoder_Wemb"], zero_row])
        model.model.decoder.embed_tokens.weight = nn.Parameter(torch.FloatTensor(dec))
    if cfg["tied-embeddings"]:
        model.lm_head.weight.data = model.model.decoder.embed_tokens.weight.data.clone()
    else:  # the extension: Marian's own output layer, (D, V) → (V + 1, D)
        out = np.concatenate([npz["decoder_ff_logit_out_W"].T, zero_row])
        model.lm_head.weight.data = torch.FloatTensor(out)
    with torch.no_grad():
        model.final_logits_bias.copy_(torch.FloatTensor(bias))
    generation = model.generation_config
    decoder = yaml.load((folder / "decoder.yml").read_text(), yaml.BaseLoader)
    generation.num_beams, generation.max_length = int(decoder["beam-size"]), 512
    generation.bad_words_ids = [[pad]]
    generation.decoder_start_token_id, generation.pad_token_id = pad, pad
    generation.eos_token_id = generation.forced_eos_token_id = eos
    return model.eval(), tokenizer
