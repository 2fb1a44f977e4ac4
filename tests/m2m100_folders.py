"""Hugging Face M2M100 / NLLB-200 model folders built here, offline, for the import tests:
random weights of a chosen shape (``M2M100ForConditionalGeneration``), a SentencePiece BPE model
trained on the tests' own sentences, and the tokenizer files either family writes: NLLB's
``tokenizer.json`` (``NllbTokenizer``: fairseq's specials, the pieces, the language codes) or
M2M100's ``vocab.json`` with ``__xx__`` language tokens after it (``M2M100Tokenizer``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sentencepiece as spm
import torch

from conftest import EN_HI_PAIRS
from hf_model_folders import ModelShape, train_spm, tune_eos

ENGLISH = [en for en, _ in EN_HI_PAIRS if not any(c.isdigit() for c in en)]
HINDI = [hi for _, hi in EN_HI_PAIRS if not any(c.isdigit() for c in hi)]
NLLB_LANGUAGES = ["eng_Latn", "hin_Deva", "deu_Latn", "fra_Latn"]


@dataclass(frozen=True)
class Shape(ModelShape):
    """One M2M100 model shape to build."""

    nllb: bool = True  # NLLB's tokenizer (tokenizer.json); False: M2M100's (vocab.json)

    @property
    def name(self) -> str:
        e, d = self.layers
        return f"{'nllb' if self.nllb else 'm2m100'}_d{self.d_model}_h{self.heads}_L{e}-{d}"


_SPM: dict[str, bytes] = {}


def spm_model() -> bytes:
    """A SentencePiece BPE model (fairseq's ids: unk 0, bos 1, eos 2), trained once."""
    if "bpe" not in _SPM:
        _SPM["bpe"] = train_spm([s for pair in EN_HI_PAIRS for s in pair], 200, "bpe")
    return _SPM["bpe"]


def _write_tokenizer(folder: Path, nllb: bool) -> Any:
    """Write the tokenizer files as the hub has them; return the tokenizer."""
    from transformers import M2M100Tokenizer, NllbTokenizer

    (folder / "sentencepiece.bpe.model").write_bytes(spm_model())
    if nllb:
        tokenizer = NllbTokenizer.from_pretrained(
            str(folder), additional_special_tokens=NLLB_LANGUAGES, src_lang="eng_Latn"
        )
        tokenizer.save_pretrained(str(folder))  # tokenizer.json, tokenizer_config.json
        return tokenizer
    processor = spm.SentencePieceProcessor()
    processor.LoadFromSerializedProto(spm_model())
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(3, processor.GetPieceSize()):  # fairseq's dictionary: the pieces after
        vocab[processor.IdToPiece(i)] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = M2M100Tokenizer(
        vocab_file=str(folder / "vocab.json"),
        spm_file=str(folder / "sentencepiece.bpe.model"),
        src_lang="en",
        tgt_lang="hi",
    )
    tokenizer.save_pretrained(str(folder))
    # As facebook/m2m100_418M's tokenizer_config.json: the language tokens listed as special
    # (transformers 5's save_pretrained leaves them out, and its decode then shows them).
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["additional_special_tokens"] = list(tokenizer.lang_token_to_id)
    config_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return type(tokenizer).from_pretrained(str(folder))


def vocab_size(tokenizer: Any, nllb: bool) -> int:
    """The embedding rows: NLLB's every token; M2M100's also fairseq's 8 made-up words."""
    return len(tokenizer) if nllb else len(tokenizer.encoder) + len(tokenizer.lang_token_to_id) + 8


def write_m2m100_folder(folder: Path, shape: Shape, texts: list[str], tgt_token: str) -> Path:
    """Write a random-weight M2M100 model of ``shape`` to ``folder`` as ``save_pretrained``
    does, with the tokenizer's files; the EOS direction tuned so that greedy outputs of
    ``texts`` (into the language of ``tgt_token``) end at varied lengths. Returns the folder."""
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _write_tokenizer(folder, shape.nllb)
    encoder_layers, decoder_layers = shape.layers
    config = M2M100Config(
        vocab_size=vocab_size(tokenizer, shape.nllb), d_model=shape.d_model,
        encoder_layers=encoder_layers, decoder_layers=decoder_layers,
        encoder_attention_heads=shape.heads, decoder_attention_heads=shape.heads,
        encoder_ffn_dim=shape.ffn, decoder_ffn_dim=shape.ffn, max_position_embeddings=128,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, encoder_layerdrop=0.0,
        decoder_layerdrop=0.0, init_std=0.2, scale_embedding=True, pad_token_id=1,
        bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
    )  # fmt: skip
    torch.manual_seed(shape.seed)
    model = M2M100ForConditionalGeneration(config).eval()
    _tune_eos(model, tokenizer, texts, int(tokenizer.convert_tokens_to_ids(tgt_token)))
    model.generation_config.num_beams = 4  # as facebook/m2m100_418M's (NLLB's: greedy)
    model.save_pretrained(str(folder))
    return folder


def _tune_eos(model: Any, tokenizer: Any, texts: list[str], forced: int) -> None:
    """Push the decoder's last LayerNorm bias along EOS's embedding row so that greedy outputs
    end on their own at varied lengths where the random weights allow it (some shapes' outputs
    either end at once or loop): the strength on a grid with the most outputs of 2 to 20
    tokens, the most lengths next."""
    eos_row = model.model.shared.weight[2].detach().clone()
    direction = eos_row / eos_row.norm() ** 2  # adds 1 to EOS's logit per unit
    batch = tokenizer(texts, return_tensors="pt", padding=True)

    def set_bias(strength: float) -> None:
        model.model.decoder.layer_norm.bias.copy_(direction * strength)

    def greedy_rows() -> list[list[int]]:
        out = model.generate(
            **batch, num_beams=1, max_new_tokens=24, forced_bos_token_id=forced,
            suppress_tokens=[1],
        )  # fmt: skip
        return [row.tolist()[2:] for row in out]  # after the start and the forced token

    tune_eos(set_bias, greedy_rows, eos=2, grid=[step * 0.25 for step in range(30)])


def load_m2m100(folder: Path, nllb: bool, src_lang: str) -> tuple[Any, Any]:
    """The folder's model (eval mode) and tokenizer (source language ``src_lang``)."""
    from transformers import M2M100ForConditionalGeneration, M2M100Tokenizer, NllbTokenizer

    kind = NllbTokenizer if nllb else M2M100Tokenizer
    model = M2M100ForConditionalGeneration.from_pretrained(str(folder)).eval()
    return model, kind.from_pretrained(str(folder), src_lang=src_lang)
