"""Hugging Face M2M100 / NLLB-200 model folders: the files, the vocabulary (fairseq's ids) and
the language tokens, read and checked (the weight mapping: :mod:`anuvad.interop.m2m100`).

Both families hold ``config.json`` (``model_type: m2m_100``), ``model.safetensors`` or
``pytorch_model.bin``, the SentencePiece model ``sentencepiece.bpe.model`` and optionally
``generation_config.json``, ``tokenizer_config.json`` and the model card ``README.md``. Their
vocabularies differ:

* **NLLB-200** (``NllbTokenizer``): ``tokenizer.json`` gives every id: fairseq's four specials,
  the SentencePiece pieces, the language codes (``eng_Latn``, ``hin_Deva``: added special tokens)
  and ``<mask>``.
* **M2M100** (``M2M100Tokenizer``): ``vocab.json`` maps the specials and pieces; the language
  tokens (``__en__``, ``__hi__``) follow it in the order of their list (``tokenizer_config.json``'s
  special tokens, or the list ``language_codes`` names), then fairseq's made-up words.

An id no file names (made-up words, rows padding the embedding) gets a placeholder piece that
the SentencePiece model does not know, as unknown to anuvad's tokenizer as to Hugging Face's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch import Tensor

from anuvad.errors import CheckpointError
from anuvad.interop.hf_folder import (
    CARD_FILE,
    CONFIG_FILE,
    GENERATION_FILE,
    PYTORCH_FILE,
    SAFETENSORS_FILE,
    TOKENIZER_CONFIG_FILE,
    VOCAB_FILE,
    read_card,
    read_json,
    read_optional_json,
    read_weights,
)

SPM_FILE = "sentencepiece.bpe.model"
TOKENIZER_FILE = "tokenizer.json"
REQUIRED = (CONFIG_FILE, SPM_FILE)
OPTIONAL = (TOKENIZER_FILE, VOCAB_FILE, GENERATION_FILE, TOKENIZER_CONFIG_FILE, CARD_FILE)
FAMILY = "an M2M100 / NLLB model"
# fairseq's M2M100 language lists (transformers' M2M100Tokenizer, ``language_codes``), for
# folders whose tokenizer_config.json does not list the language tokens.
M2M100_LANGUAGES = {
    "m2m100": [
        "af", "am", "ar", "ast", "az", "ba", "be", "bg", "bn", "br", "bs", "ca", "ceb", "cs",
        "cy", "da", "de", "el", "en", "es", "et", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl",
        "gu", "ha", "he", "hi", "hr", "ht", "hu", "hy", "id", "ig", "ilo", "is", "it", "ja", "jv",
        "ka", "kk", "km", "kn", "ko", "lb", "lg", "ln", "lo", "lt", "lv", "mg", "mk", "ml", "mn",
        "mr", "ms", "my", "ne", "nl", "no", "ns", "oc", "or", "pa", "pl", "ps", "pt", "ro", "ru",
        "sd", "si", "sk", "sl", "so", "sq", "sr", "ss", "su", "sv", "sw", "ta", "th", "tl", "tn",
        "tr", "uk", "ur", "uz", "vi", "wo", "xh", "yi", "yo", "zh", "zu",
    ],
    "wmt21": ["en", "ha", "is", "ja", "cs", "ru", "zh", "de"],
}  # fmt: skip
_M2M100_TOKEN = re.compile(r"__([A-Za-z_-]+)__$")


@dataclass
class M2M100Folder:
    """What an M2M100 / NLLB folder holds, read and checked.

    Attributes:
        name: what the user gave (a hub id or the folder), for messages.
        config: ``config.json``; ``generation`` and ``tokenizer_config`` their files ({}: absent).
        state: the weights, by Hugging Face name.
        spm: ``sentencepiece.bpe.model``'s bytes.
        vocab: fairseq's id → piece, ``config.vocab_size`` entries.
        languages: language code → its token (``eng_Latn`` → ``eng_Latn``, ``en`` → ``__en__``),
            in vocabulary order.
        specials: the pieces Hugging Face's tokenizer skips when decoding (``<s>``, ``<mask>``,
            the language tokens) besides padding, ``</s>`` and ``<unk>``.
        unk: ``<unk>``'s id.
        card: the model card's text ("" when absent).
        files: which weights file was read (``weights``) and which vocabulary (``vocabulary``).
    """

    name: str
    config: dict[str, Any]
    generation: dict[str, Any]
    tokenizer_config: dict[str, Any]
    state: dict[str, Tensor]
    spm: bytes
    vocab: list[str]
    languages: dict[str, str]
    specials: list[str]
    unk: int
    card: str = ""
    files: dict[str, str] = field(default_factory=dict)


def is_m2m100_folder(folder: Path) -> bool:
    """Whether ``folder``'s ``config.json`` names an M2M100 / NLLB model (``m2m_100``)."""
    path = folder / CONFIG_FILE
    return path.is_file() and read_json(path, "the model config").get("model_type") == "m2m_100"


def _special_names(tokenizer_config: dict[str, Any]) -> dict[str, str]:
    defaults = {
        "bos_token": "<s>",
        "pad_token": "<pad>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "mask_token": "<mask>",
    }
    named = {}
    for key, default in defaults.items():
        value = tokenizer_config.get(key, default)
        named[key] = str(value.get("content", default) if isinstance(value, dict) else value)
    return named


def _listed_specials(tokenizer_config: dict[str, Any]) -> list[str]:
    """The extra special tokens ``tokenizer_config.json`` lists (transformers 5:
    ``extra_special_tokens``; before: ``additional_special_tokens``)."""
    listed: list[str] = []
    for key in ("extra_special_tokens", "additional_special_tokens"):
        value = tokenizer_config.get(key) or []
        if isinstance(value, list):
            listed += [str(v.get("content") if isinstance(v, dict) else v) for v in value]
    return listed


def _nllb_vocab(path: Path, size: int) -> tuple[list[str | None], list[str]]:
    """``tokenizer.json`` → (id → piece with None where it names no id, its special tokens)."""
    data = read_json(path, "the tokenizer")
    model = data.get("model") or {}
    pieces: list[str | None] = [None] * size
    vocab = model.get("vocab")
    entries: list[tuple[str, Any]] = []
    if isinstance(vocab, dict):  # BPE / WordPiece: piece → id
        entries = list(vocab.items())
    elif isinstance(vocab, list):  # Unigram: [piece, score] in id order
        entries = [(str(item[0]), i) for i, item in enumerate(vocab)]
    specials = []
    for token in data.get("added_tokens") or []:
        entries.append((str(token.get("content")), token.get("id")))
        if token.get("special"):
            specials.append(str(token.get("content")))
    for piece, index in entries:
        if not isinstance(index, int) or not 0 <= index < size:
            raise CheckpointError(
                f"{path}: piece {piece!r} has id {index!r}, outside the model's vocabulary "
                f"(0 .. {size - 1}); the tokenizer does not belong to these weights"
            )
        pieces[index] = piece
    return pieces, specials


def _m2m100_vocab(
    path: Path, size: int, tokenizer_config: dict[str, Any]
) -> tuple[list[str | None], list[str]]:
    """``vocab.json`` and the language tokens after it → (id → piece, language tokens)."""
    mapping = read_json(path, "the vocabulary")
    pieces: list[str | None] = [None] * size
    for piece, index in mapping.items():
        if not isinstance(index, int) or not 0 <= index < size:
            raise CheckpointError(
                f"{path}: piece {piece!r} has id {index!r}, outside the model's vocabulary "
                f"(0 .. {size - 1}); the vocabulary does not belong to these weights"
            )
        pieces[index] = piece
    tokens = [t for t in _listed_specials(tokenizer_config) if _M2M100_TOKEN.match(t)]
    if not tokens:
        codes = str(tokenizer_config.get("language_codes") or "m2m100")
        if codes not in M2M100_LANGUAGES:
            raise CheckpointError(
                f"{path.parent}: tokenizer_config.json's language_codes {codes!r} is none of "
                f"{', '.join(M2M100_LANGUAGES)} and it lists no __xx__ language tokens"
            )
        tokens = [f"__{code}__" for code in M2M100_LANGUAGES[codes]]
    start = len(mapping)
    if start + len(tokens) > size:
        raise CheckpointError(
            f"{path}: {start} pieces and {len(tokens)} language tokens do not fit the model's "
            f"{size} embedding rows; the vocabulary does not belong to these weights"
        )
    for i, token in enumerate(tokens):
        pieces[start + i] = token
    return pieces, tokens


def _language_tokens(
    pieces: list[str], specials: list[str], named: dict[str, str]
) -> dict[str, str]:
    """Language code → token, in vocabulary order: the special tokens that are not the named
    ones (``<s>``, ``<pad>``, ``</s>``, ``<unk>``, ``<mask>``); ``__en__`` names ``en``."""
    others = set(specials) - set(named.values())
    languages = {}
    for piece in pieces:
        if piece in others:
            match = _M2M100_TOKEN.match(piece)
            languages[match.group(1) if match else piece] = piece
    return languages


def read_m2m100_folder(folder: str | Path, name: str | None = None) -> M2M100Folder:
    """Read and check an M2M100 / NLLB folder.

    Raises:
        CheckpointError: the folder lacks a file the model needs (named, with the fix), a file
            is unreadable, or the vocabulary does not fit the weights; one line each.
    """
    folder = Path(folder)
    config = read_json(folder / CONFIG_FILE, "the model config")
    size = int(config.get("vocab_size") or 0)
    missing = [f for f in REQUIRED if not (folder / f).is_file()]
    has_vocab = (folder / TOKENIZER_FILE).is_file() or (folder / VOCAB_FILE).is_file()
    if missing or not has_vocab:
        wanted = [*missing, *([] if has_vocab else [f"{TOKENIZER_FILE} (NLLB) or {VOCAB_FILE}"])]
        raise CheckpointError(
            f"{folder}: missing {', '.join(wanted)}; an M2M100 / NLLB folder needs "
            f"{', '.join(REQUIRED)}, the weights ({SAFETENSORS_FILE} or {PYTORCH_FILE}) and "
            f"{TOKENIZER_FILE} (NLLB) or {VOCAB_FILE} (M2M100): download the model's files "
            "again, or copy them from the hub's model page (transformers 5's save_pretrained "
            f"writes no {SPM_FILE}: copy the original one beside it)"
        )
    tokenizer_config = read_optional_json(folder / TOKENIZER_CONFIG_FILE, "the tokenizer config")
    generation = read_optional_json(folder / GENERATION_FILE, "the generation config")
    named = _special_names(tokenizer_config)
    if (folder / TOKENIZER_FILE).is_file():
        found, specials = _nllb_vocab(folder / TOKENIZER_FILE, size)
        vocabulary = TOKENIZER_FILE
    else:
        found, specials = _m2m100_vocab(folder / VOCAB_FILE, size, tokenizer_config)
        vocabulary = VOCAB_FILE
    # Ids no file names (made-up words, padding rows): pieces nothing encodes to.
    pieces = [p if p is not None else f"<unused-{i}>" for i, p in enumerate(found)]
    if len(set(pieces)) != len(pieces):
        raise CheckpointError(f"{folder}: {vocabulary} gives one piece two ids")
    for key in ("pad_token", "eos_token", "unk_token"):
        if named[key] not in pieces:
            raise CheckpointError(f"{folder}: the vocabulary has no {named[key]!r} ({key})")
    languages = _language_tokens(pieces, specials, named)
    if not languages:
        raise CheckpointError(
            f"{folder}: no language tokens found ({vocabulary} and tokenizer_config.json name "
            "none); is it a translation model?"
        )
    skipped = [named["bos_token"], named["mask_token"], *languages.values()]
    state, weights_file = read_weights(folder, "M2M100 / NLLB")
    return M2M100Folder(
        name=name or str(folder),
        config=config,
        generation=generation,
        tokenizer_config=tokenizer_config,
        state=state,
        spm=(folder / SPM_FILE).read_bytes(),
        vocab=pieces,
        languages=languages,
        specials=[p for p in skipped if p in pieces],
        unk=pieces.index(named["unk_token"]),
        card=read_card(folder),
        files={"weights": weights_file, "vocabulary": vocabulary},
    )
