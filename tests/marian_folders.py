"""Hugging Face Marian model folders built here, offline, for the import/export tests: random
weights of a chosen shape (``MarianMTModel`` from ``transformers``), SentencePiece models trained
on the tests' own sentences with Marian's special ids, and ``vocab.json`` laid out as the OPUS-MT
conversions lay it out (``</s>`` 0, ``<unk>`` 1, the pieces, ``<pad>`` last)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sentencepiece as spm
import torch

from conftest import EN_HI_PAIRS
from hf_model_folders import ModelShape, train_spm, tune_eos

SOURCES = [en for en, _ in EN_HI_PAIRS]
TARGETS = [hi for _, hi in EN_HI_PAIRS]
# Sentences without digits: the translator's number copying would (rightly) steer the search
# away from what plain generate does.
TEXTS = [s for s in SOURCES if not any(c.isdigit() for c in s)][:8]


@dataclass(frozen=True)
class Shape(ModelShape):
    """One Marian model shape to build."""

    activation: str = "swish"
    shared_vocab: bool = True  # one vocab.json and one embedding for encoder and decoder
    tied: bool = True  # the output layer is the (decoder) embedding
    max_positions: int = 128

    @property
    def name(self) -> str:
        e, d = self.layers
        return (
            f"L{e}-{d}_{self.activation}_{'shared' if self.shared_vocab else 'separate'}_"
            f"{'tied' if self.tied else 'untied'}"
        )


def _train_spm(lines: list[str], vocab_size: int) -> bytes:
    """A SentencePiece model with Marian's special ids (unk 0, bos 1, eos 2, no pad)."""
    return train_spm(lines, vocab_size, "unigram", seed_sentencepiece_size=100_000)


_SPM_CACHE: dict[str, tuple[bytes, bytes]] = {}


def spm_models() -> tuple[bytes, bytes]:
    """(source.spm, target.spm) bytes, trained once per session."""
    if "pair" not in _SPM_CACHE:
        _SPM_CACHE["pair"] = (_train_spm(SOURCES, 120), _train_spm(TARGETS, 140))
    return _SPM_CACHE["pair"]


def _pieces(model: bytes) -> list[str]:
    processor = spm.SentencePieceProcessor()
    processor.LoadFromSerializedProto(model)
    return [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]


def _marian_vocab(*pieces_lists: list[str], pad_last: bool = True) -> dict[str, int]:
    """OPUS-MT's layout: ``</s>`` 0, ``<unk>`` 1, every other piece once, ``<pad>`` last (or
    third: separate vocabularies of unequal sizes need one pad id valid in both)."""
    ordered = ["</s>", "<unk>"] if pad_last else ["</s>", "<unk>", "<pad>"]
    for pieces in pieces_lists:
        ordered += [p for p in pieces if p not in ("<s>", "</s>", "<unk>") and p not in ordered]
    return {piece: i for i, piece in enumerate([*ordered, "<pad>"] if pad_last else ordered)}


def write_marian_folder(folder: Path, shape: Shape, tune_eos: bool = True) -> Path:
    """Write a random-weight Marian model of ``shape`` to ``folder`` as ``save_pretrained`` and
    ``MarianTokenizer.save_pretrained`` do (``tune_eos``: with an EOS bias that ends greedy
    outputs at varied lengths); returns the folder."""
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    source_spm, target_spm = spm_models()
    (folder / "source.spm").write_bytes(source_spm)
    (folder / "target.spm").write_bytes(target_spm)
    if shape.shared_vocab:
        vocab = _marian_vocab(_pieces(source_spm), _pieces(target_spm))
        target_vocab = vocab
        (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    else:
        vocab = _marian_vocab(_pieces(source_spm), pad_last=False)
        target_vocab = _marian_vocab(_pieces(target_spm), pad_last=False)
        (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
        (folder / "target_vocab.json").write_text(json.dumps(target_vocab, ensure_ascii=False))
    pad = vocab["<pad>"]
    tokenizer = MarianTokenizer(
        source_spm=str(folder / "source.spm"),
        target_spm=str(folder / "target.spm"),
        vocab=str(folder / "vocab.json"),
        target_vocab_file=str(folder / "target_vocab.json") if not shape.shared_vocab else None,
        separate_vocabs=not shape.shared_vocab,
    )
    tokenizer.save_pretrained(str(folder))
    encoder_layers, decoder_layers = shape.layers
    settings: dict[str, Any] = dict(
        vocab_size=len(vocab), decoder_vocab_size=len(target_vocab), d_model=shape.d_model,
        encoder_layers=encoder_layers, decoder_layers=decoder_layers,
        encoder_attention_heads=shape.heads, decoder_attention_heads=shape.heads,
        encoder_ffn_dim=shape.ffn, decoder_ffn_dim=shape.ffn,
        activation_function=shape.activation, max_position_embeddings=shape.max_positions,
        scale_embedding=True, share_encoder_decoder_embeddings=shape.shared_vocab,
        tie_word_embeddings=shape.tied, pad_token_id=pad, eos_token_id=0,
        decoder_start_token_id=pad, forced_eos_token_id=0, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, init_std=0.2,
    )  # fmt: skip
    torch.manual_seed(shape.seed)
    model = MarianMTModel(MarianConfig(**settings)).eval()
    if tune_eos:
        _tune_eos_bias(model, tokenizer)
    # What OPUS-MT's generation_config.json holds (its conversion writes these).
    model.generation_config.num_beams = 4
    model.generation_config.max_length = 512
    model.generation_config.bad_words_ids = [[pad]]
    model.save_pretrained(str(folder))
    return folder


def _tune_eos_bias(model: Any, tokenizer: Any) -> None:
    """Set EOS's logit bias (``final_logits_bias``) so that most greedy outputs of the test
    sentences end on their own at varied lengths (a random model either never ends or ends at
    once): the bias on a grid with the most outputs of 2 to 20 tokens, the most lengths next."""
    batch = tokenizer(TEXTS, return_tensors="pt", padding=True)

    def set_bias(strength: float) -> None:
        model.final_logits_bias[0, 0] = strength

    def greedy_rows() -> list[list[int]]:
        out = model.generate(**batch, num_beams=1, max_new_tokens=24)
        return [row.tolist()[1:] for row in out]

    # (deep random models may still never end)
    tune_eos(set_bias, greedy_rows, eos=0, grid=[step * 0.2 for step in range(40)])


def load_marian(folder: Path) -> tuple[Any, Any]:
    """The folder's ``MarianMTModel`` (eval mode) and ``MarianTokenizer``."""
    from transformers import MarianMTModel, MarianTokenizer

    return MarianMTModel.from_pretrained(str(folder)).eval(), MarianTokenizer.from_pretrained(
        str(folder)
    )
