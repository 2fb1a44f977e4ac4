"""What an exported CTranslate2 folder says about its model, and one language pair's view of it.

An exported folder (``anuvad export MODEL --format ctranslate2``) keeps the model file's config,
tokenizers and metadata beside CTranslate2's ``model.bin`` (:mod:`anuvad.inference.ct2.export`).
A multilingual model's metadata names its language tokens and pairs
(:mod:`anuvad.data.language_tokens`); :func:`pair_view` picks one pair as
:class:`anuvad.inference.translator.Translator` does: the source-language token goes before the
source pieces, the target-language token is forced after the decoder start.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anuvad.config import ExperimentConfig, config_from_dict
from anuvad.data.language_tokens import resolve_pair
from anuvad.data.tokenizer import Tokenizer
from anuvad.errors import CheckpointError, ConfigError
from anuvad.inference.ct2 import missing_ctranslate2
from anuvad.inference.ct2.export import (
    SRC_TOKENIZER_FILE,
    TGT_TOKENIZER_FILE,
    read_ct2_metadata,
)

try:
    import ctranslate2
except ImportError as exc:  # an optional dependency
    raise missing_ctranslate2(exc) from exc


@dataclass
class ExportedModel:
    """What an exported folder says about its model (the fields of :class:`ModelFile` that
    describe it; the weights live in CTranslate2's ``model.bin``)."""

    config: ExperimentConfig
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    metadata: dict[str, Any] = field(default_factory=dict)


def load_ct2_tokenizers(folder: str | Path) -> tuple[Tokenizer, Tokenizer]:
    """The source and target SentencePiece models stored in an exported folder, with the
    pieces ``anuvad.json`` names silent (decoded to nothing).

    Raises:
        CheckpointError: the folder is not an anuvad CTranslate2 export, or a tokenizer is
            unreadable.
    """
    folder = Path(folder)
    silent = read_ct2_metadata(folder).get("silent_pieces", {})
    tokenizers = []
    for side, name in (("source", SRC_TOKENIZER_FILE), ("target", TGT_TOKENIZER_FILE)):
        tokenizer = Tokenizer.load(folder / name)
        pieces = silent.get(side, []) if isinstance(silent, dict) else []
        if pieces:
            tokenizer = Tokenizer(tokenizer.model_proto, tokenizer.vocab, pieces)
        tokenizers.append(tokenizer)
    return tokenizers[0], tokenizers[1]


def load_exported_model(folder: str | Path) -> ExportedModel:
    """Read the config, tokenizers and metadata of an exported folder.

    Raises:
        CheckpointError: not an anuvad CTranslate2 folder, or its config is invalid.
    """
    info = read_ct2_metadata(folder)
    try:
        config = config_from_dict(info["config"])
        config.validate(training=False)
    except (KeyError, ConfigError) as exc:
        raise CheckpointError(f"{folder}: its stored config is invalid: {exc}") from exc
    src, tgt = load_ct2_tokenizers(folder)
    metadata = dict(info.get("metadata", {}))
    metadata["ct2_quantization"] = info.get("quantization")
    return ExportedModel(config, src, tgt, metadata)


def resolve_ct2_device(name: str) -> tuple[str, int]:
    """``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` → CTranslate2's (device, index).

    Raises:
        ConfigError: an unknown device name.
    """
    if name == "auto":
        return ("cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"), 0
    kind, _, index = name.partition(":")
    if kind not in ("cpu", "cuda") or (index and not index.isdigit()):
        raise ConfigError(f"unknown device {name!r}; use auto, cpu, cuda or cuda:N")
    return kind, int(index or 0)


@dataclass(frozen=True)
class PairView:
    """One language pair of an exported model, as an engine translates it.

    Attributes:
        model: the exported model with the pair's languages in its config (two-letter codes
            where there is one: the sentence rules, dates and a server's clients speak those).
        pair: the pair in the model's own codes (``eng_Latn``, ``hin_Deva``); None: a
            one-pair model.
        src_prefix: source ids before the pieces (the source-language token; empty: none).
        tgt_prefix: target ids forced after the decoder start (the target-language token).
    """

    model: ExportedModel
    pair: tuple[str, str] | None
    src_prefix: list[int]
    tgt_prefix: list[int]


def pair_view(exported: ExportedModel, pair: tuple[str, str] | None) -> PairView:
    """``exported`` translating ``pair`` (the model's codes or two-letter ones; None: the
    file's default), as :class:`anuvad.inference.translator.Translator` resolves it.

    Raises:
        ConfigError: ``pair`` is not one the model offers (or the model has one pair only).
        CheckpointError: the language tokens are malformed or missing from a tokenizer.
    """
    resolved = resolve_pair(
        exported.metadata,
        exported.config.data,
        exported.src_tokenizer,
        exported.tgt_tokenizer,
        pair,
    )
    if resolved.pair is None:
        return PairView(exported, None, [], [])
    config = dataclasses.replace(exported.config, data=resolved.data)
    return PairView(
        dataclasses.replace(exported, config=config),
        resolved.pair,
        resolved.src_prefix,
        resolved.tgt_prefix,
    )
