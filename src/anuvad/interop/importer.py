"""``anuvad import``: a Hugging Face Marian model (hub id or folder) → an anuvad model file;
:func:`import_model` sends M2M100 / NLLB-200 models (``model_type: m2m_100``) to
:mod:`anuvad.interop.m2m100_importer` and Marian's own release zips and folders to
:mod:`anuvad.interop.marian_release`.

The written file is an ordinary anuvad model: every command takes it (translate, serve,
evaluate, calibrate, export to CTranslate2 or back to Hugging Face). Its search settings are
those ``MarianMTModel.generate`` would use (the model's ``generation_config.json``), written into
the file's ``decode`` section, so ``anuvad translate`` gives what ``generate`` gives.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from anuvad.checkpoint import default_model_path, save_model
from anuvad.config import ExperimentConfig, ModelConfig
from anuvad.data.download import Progress
from anuvad.data.tokenizer import Tokenizer
from anuvad.data_config import DataConfig
from anuvad.decode_config import DecodeConfig
from anuvad.errors import CheckpointError, ConfigError
from anuvad.interop.hf_folder import (
    CONFIG_FILE,
    MarianFolder,
    download_files,
    download_marian,
    looks_like_hub_id,
    read_json,
    read_marian_folder,
)
from anuvad.interop.m2m100_folder import M2M100Folder
from anuvad.interop.marian import VocabOrder, marian_to_anuvad
from anuvad.interop.marian_config import MarianShape
from anuvad.model.transformer import Transformer, build_model

logger = logging.getLogger(__name__)

# opus-mt-en-hi, opus-mt-tc-big-en-hi, opus-mt-en-ROMANCE: the languages a name gives
_PAIR = re.compile(r"opus-mt-(?:tc-(?:big|base)-)?([A-Za-z]+)-([A-Za-z_]+)$")


@dataclass(frozen=True)
class ImportedModel:
    """What an import wrote and what it read."""

    path: Path
    source: str
    src_lang: str
    tgt_lang: str
    parameters: int


def languages_of(name: str) -> tuple[str, str] | None:
    """(source, target) language codes an OPUS-MT name gives (``opus-mt-en-hi`` → en, hi)."""
    match = _PAIR.search(name.rstrip("/").split("/")[-1])
    return (match.group(1), match.group(2)) if match else None


def card_license(card: str) -> str | None:
    """The ``license:`` of a model card's YAML front matter (None when it names none)."""
    front = re.match(r"---\s*\n(.*?)\n---", card, re.DOTALL)
    if not front:
        return None
    found = re.search(r"^license:\s*(\S+)", front.group(1), re.MULTILINE)
    return found.group(1) if found else None


def vocab_orders(folder: MarianFolder, shape: MarianShape) -> tuple[VocabOrder, VocabOrder]:
    """The source and target vocabularies reordered for anuvad's special ids.

    Raises:
        CheckpointError: a vocabulary lacks ``<unk>`` or ``</s>``, or the config's special ids
            do not fit it.
    """
    where = folder.name
    unk_piece = str(folder.tokenizer_config.get("unk_token") or "<unk>")
    eos_piece = str(folder.tokenizer_config.get("eos_token") or "</s>")

    def index(vocab: list[str], piece: str, side: str) -> int:
        try:
            return vocab.index(piece)
        except ValueError:
            raise CheckpointError(f"{where}: the {side} vocabulary has no {piece!r}") from None

    tgt = folder.tgt_vocab
    for name, value in (("pad", shape.pad), ("eos", shape.eos), ("decoder_start", shape.start)):
        if not 0 <= value < len(tgt):
            raise CheckpointError(
                f"{where}: config.json's {name}_token_id {value} is outside the target "
                f"vocabulary (0 .. {len(tgt) - 1})"
            )
    tgt_order = VocabOrder.from_marian(
        tgt, pad=shape.pad, unk=index(tgt, unk_piece, "target"), eos=shape.eos, start=shape.start
    )
    if folder.src_vocab is tgt:
        return tgt_order, tgt_order
    src = folder.src_vocab
    pad = index(src, tgt[shape.pad], "source")
    start_piece = tgt[shape.start]
    src_order = VocabOrder.from_marian(
        src,
        pad=pad,
        unk=index(src, unk_piece, "source"),
        eos=index(src, eos_piece, "source"),
        start=src.index(start_piece) if start_piece in src else pad,
    )
    return src_order, tgt_order


def tokenizer_for(model_proto: bytes, pieces: tuple[str, ...]) -> Tokenizer:
    """A tokenizer whose ids are ``pieces``; a plain one when those are SentencePiece's own ids
    (an exported anuvad model coming back), so that a round trip gives the same file."""
    plain: Tokenizer | None = None
    with contextlib.suppress(CheckpointError):  # Marian's models have their own special ids
        plain = Tokenizer(model_proto)
    if plain is not None and plain.id_to_piece(range(plain.vocab_size)) == list(pieces):
        return plain
    return Tokenizer(model_proto, vocab=pieces)


def decode_settings(folder: MarianFolder | M2M100Folder) -> DecodeConfig:
    """The search ``generate`` runs by default for this model (its generation config, then its
    config, then Hugging Face's defaults), as anuvad settings.

    ``generate`` scores a finished beam hypothesis by log-probability / length^alpha, anuvad's
    ``length_normalization="power"``; it blocks no repeated n-grams unless asked.
    """
    settings: dict[str, Any] = {**folder.config, **folder.generation}
    beam = int(settings.get("num_beams") or 1)
    early = settings.get("early_stopping", False)
    return DecodeConfig(
        beam_size=beam,
        nbest=1,
        length_penalty=float(settings.get("length_penalty", 1.0)),
        length_normalization="power",
        early_stopping="finished" if early is True else "heuristic",
        no_repeat_ngram_size=int(settings.get("no_repeat_ngram_size") or 0),
    )


def checked_import(
    folder: MarianFolder | M2M100Folder,
    model_config: ModelConfig,
    state: dict[str, Tensor],
    src_lang: str,
    tgt_lang: str,
) -> tuple[Transformer, ExperimentConfig]:
    """The imported model with ``state`` loaded strictly, and its experiment config (the search
    ``generate`` runs: :func:`decode_settings`), checked; ``folder.name`` names it.

    Raises:
        CheckpointError: the weights do not fit ``model_config``, or the config is invalid.
    """
    source = folder.name
    model = build_model(model_config)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[1 if "\n" in str(exc) else 0].strip()
        raise CheckpointError(f"{source}: its weights do not fit its config.json: {first}") from exc
    config = ExperimentConfig(
        name=f"import of {source}",
        model=model_config,
        data=DataConfig(src_lang=src_lang, tgt_lang=tgt_lang),
        decode=decode_settings(folder),
    )
    try:
        config.validate()
    except ConfigError as exc:
        raise CheckpointError(f"{source}: {exc}") from exc
    return model, config


def save_import(
    folder: MarianFolder | M2M100Folder,
    model: Transformer,
    config: ExperimentConfig,
    tokenizers: tuple[Tokenizer, Tokenizer],
    *,
    out: str | Path | None,
    revision: str | None,
    import_format: str,
    extra_metadata: Mapping[str, Any] | None = None,
) -> ImportedModel:
    """Write the imported model file, with where it came from in its metadata.

    Args:
        folder: what was read (``folder.name``: the hub id or folder the user gave).
        model, config: from :func:`checked_import`.
        tokenizers: the source and the target tokenizer.
        out: the file to write, or a folder for the default name
            (``<pair>_d<D>_L<layers>_V<vocab>_<time>.pt``); None: ``data/trained_models/``.
        revision: the hub revision asked for (None: the default).
        import_format: the family read (``marian``, ``m2m100``).
        extra_metadata: what the family adds to the metadata.

    Returns:
        What was written.
    """
    source = folder.name
    target = Path(out) if out is not None else Path("data/trained_models")
    if target.is_dir() or target.suffix != ".pt":
        target = default_model_path(config, target)
    metadata = {
        "imported_from": source,
        "revision": revision,
        "import_format": import_format,
        "weights_file": folder.files.get("weights"),
        "license": card_license(folder.card),
        "model_card": folder.card,
        "hf_config": folder.config,
        "hf_generation_config": folder.generation,
        **(extra_metadata or {}),
    }
    with torch.no_grad():
        path = save_model(target, model, config, *tokenizers, metadata)
    parameters = sum(p.numel() for p in model.parameters())
    logger.info("imported %s into %s (%d parameters)", source, path, parameters)
    return ImportedModel(path, source, config.data.src_lang, config.data.tgt_lang, parameters)


def model_type(source: str, revision: str | None = None) -> str | None:
    """The ``model_type`` of a hub model's or a folder's ``config.json`` (None: no such file).

    Raises:
        CheckpointError: the hub cannot give the file, or it is not JSON.
    """
    if looks_like_hub_id(source):
        folder = download_files(source, revision, (CONFIG_FILE,), (), "a Hugging Face model")
    else:
        folder = Path(source)
    path = folder / CONFIG_FILE
    if not path.is_file():
        return None
    kind = read_json(path, "the model config").get("model_type")
    return str(kind) if kind is not None else None


def import_model(
    source: str,
    out: str | Path | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
    revision: str | None = None,
    pairs: list[tuple[str, str]] | None = None,
    progress: Progress | None = None,
) -> ImportedModel:
    """Import a translation model: a Marian release ``.zip``, folder or zip URL
    (:func:`anuvad.interop.marian_release.import_marian_release`: ``progress`` is told the
    download's bytes; several ``pairs`` for a multilingual-target release), or a Hugging Face
    model whose ``config.json`` picks the family: M2M100 / NLLB-200 (``m2m_100``:
    :func:`anuvad.interop.m2m100_importer.import_m2m100`, for ``pairs``, or
    ``src_lang``-``tgt_lang``) or Marian (:func:`import_marian`, one pair).

    Raises:
        CheckpointError: one line naming what is wrong; nothing is written then.
        DataError: a release URL cannot be downloaded.
    """
    from anuvad.interop.marian_release import import_marian_release, is_marian_release

    release = is_marian_release(source)  # Marian's own .zip / folder / zip URL
    if not release and model_type(source, revision) == "m2m_100":
        from anuvad.interop.m2m100_importer import import_m2m100

        if not pairs and src_lang and tgt_lang:
            pairs = [(src_lang, tgt_lang)]
        return import_m2m100(source, out, pairs or [], revision)
    if release:
        return import_marian_release(source, out, src_lang, tgt_lang, pairs, progress)
    if pairs:
        src_lang, tgt_lang = single_pair(source, pairs)
    return import_marian(source, out, src_lang, tgt_lang, revision)


def single_pair(source: str, pairs: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The one pair a Marian model of one target language translates.

    Raises:
        CheckpointError: more than one pair was given.
    """
    if len(pairs) > 1:
        raise CheckpointError(
            f"{source}: a Marian model of one target language translates one pair; give one "
            "--pairs SRC-TGT (or --src-lang and --tgt-lang)"
        )
    return pairs[0]


def import_marian(
    source: str,
    out: str | Path | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
    revision: str | None = None,
) -> ImportedModel:
    """Import a Marian model into one anuvad model file.

    Args:
        source: a Hugging Face model id (``Helsinki-NLP/opus-mt-en-hi``; downloaded) or a local
            folder in Hugging Face's Marian layout.
        out: the file to write, or a folder for the default name
            (``<pair>_d<D>_L<layers>_V<vocab>_<time>.pt``); None: ``data/trained_models/``.
        src_lang, tgt_lang: language codes (default: from an ``opus-mt-xx-yy`` name).
        revision: a hub revision (branch, tag or commit).

    Raises:
        CheckpointError: one line naming what is wrong; nothing is written then.
    """
    folder_path = download_marian(source, revision) if looks_like_hub_id(source) else Path(source)
    folder = read_marian_folder(folder_path, name=source)
    named = languages_of(source) or languages_of(str(folder_path.resolve()))
    if src_lang is None or tgt_lang is None:
        if named is None:
            raise CheckpointError(
                f"{source}: cannot tell its languages from the name; give --src-lang and "
                "--tgt-lang (e.g. --src-lang en --tgt-lang hi)"
            )
        src_lang, tgt_lang = src_lang or named[0], tgt_lang or named[1]
    return import_marian_folder(folder, out, src_lang, tgt_lang, revision=revision)


def import_marian_folder(
    folder: MarianFolder,
    out: str | Path | None,
    src_lang: str,
    tgt_lang: str,
    *,
    revision: str | None = None,
    import_format: str = "marian",
    extra_metadata: Mapping[str, Any] | None = None,
) -> ImportedModel:
    """Write the anuvad model file of a read Marian folder (Hugging Face's, or a Marian release
    read onto its layout: :mod:`anuvad.interop.marian_release`).

    Args:
        folder: what was read; ``folder.name`` names it.
        out: as :func:`import_marian`.
        src_lang, tgt_lang: language codes.
        revision: the hub revision asked for (None: the default or not the hub).
        import_format: the format read (``marian``, ``marian_release``), for the metadata.
        extra_metadata: what the format adds to the metadata.

    Raises:
        CheckpointError: one line naming what is wrong; nothing is written then.
    """
    shape = MarianShape.from_config(folder.config, folder.name)
    src_order, tgt_order = vocab_orders(folder, shape)
    model_config, state = marian_to_anuvad(shape, folder.state, src_order, tgt_order, folder.name)
    model, config = checked_import(folder, model_config, state, src_lang, tgt_lang)
    src_tokenizer = tokenizer_for(folder.source_spm, src_order.pieces)
    tgt_tokenizer = (
        src_tokenizer
        if folder.source_spm == folder.target_spm and src_order is tgt_order
        else tokenizer_for(folder.target_spm, tgt_order.pieces)
    )
    tokenizers = (src_tokenizer, tgt_tokenizer)
    return save_import(
        folder,
        model,
        config,
        tokenizers,
        out=out,
        revision=revision,
        import_format=import_format,
        extra_metadata=extra_metadata,
    )
