"""``anuvad import`` of an M2M100 / NLLB-200 model (hub id or folder) → one anuvad model file
for the language pairs asked for.

The file is an ordinary anuvad model with one tokenizer for both sides (fairseq's vocabulary,
reordered; the language tokens, ``<s>`` and ``<mask>`` silent when decoding) and the model's
language tokens in its metadata (:mod:`anuvad.data.language_tokens`): every command translates
its first pair, and ``Translator(..., pair=...)`` any other. Its search settings are those
``generate`` would use (:func:`anuvad.interop.importer.decode_settings`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import torch

from anuvad.checkpoint import default_model_path, save_model
from anuvad.config import ExperimentConfig
from anuvad.data.language_tokens import METADATA_KEY, LanguageTokens
from anuvad.data.tokenizer import Tokenizer
from anuvad.data_config import DataConfig
from anuvad.errors import CheckpointError, ConfigError
from anuvad.interop.hf_folder import download_files, looks_like_hub_id
from anuvad.interop.importer import ImportedModel, card_license, decode_settings
from anuvad.interop.m2m100 import M2M100Shape, fairseq_order, m2m100_to_anuvad
from anuvad.interop.m2m100_folder import FAMILY, OPTIONAL, REQUIRED, read_m2m100_folder
from anuvad.model.transformer import build_model

logger = logging.getLogger(__name__)


def import_m2m100(
    source: str,
    out: str | Path | None,
    pairs: Sequence[tuple[str, str]],
    revision: str | None = None,
) -> ImportedModel:
    """Import an M2M100 / NLLB-200 model into one anuvad model file.

    Args:
        source: a hub id (``facebook/nllb-200-distilled-600M``; downloaded) or a local folder
            (``save_pretrained``'s files and the SentencePiece model).
        out: the file to write, or a folder for the default name; None: ``data/trained_models/``.
        pairs: the (source, target) language codes the file offers, the default first
            (``eng_Latn``-``hin_Deva`` for NLLB, ``en``-``hi`` for M2M100).
        revision: a hub revision (branch, tag or commit).

    Raises:
        CheckpointError: one line naming what is wrong (an unknown pair lists the model's
            language codes); nothing is written then.
    """
    folder_path = (
        download_files(source, revision, REQUIRED, OPTIONAL, FAMILY)
        if looks_like_hub_id(source)
        else Path(source)
    )
    folder = read_m2m100_folder(folder_path, name=source)
    shape = M2M100Shape.from_config(folder.config, source)
    languages = LanguageTokens(tuple(folder.languages.items()), tuple(pairs))
    if not pairs:
        raise CheckpointError(
            f"{source}: a multilingual model needs --pairs SRC-TGT[,SRC-TGT..] (e.g. "
            f"{'-'.join(languages.codes[:2])}); its language codes are "
            f"{', '.join(languages.codes)}"
        )
    try:
        languages.check_pairs(pairs)
    except ConfigError as exc:
        raise CheckpointError(f"{source}: {exc}") from exc
    order = fairseq_order(folder.vocab, shape, folder.unk)
    model_config, state = m2m100_to_anuvad(shape, folder.state, order, source)
    model = build_model(model_config)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[1 if "\n" in str(exc) else 0].strip()
        raise CheckpointError(f"{source}: its weights do not fit its config.json: {first}") from exc
    src_lang, tgt_lang = pairs[0]
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
    tokenizer = Tokenizer(folder.spm, vocab=order.pieces, silent=folder.specials)
    target = Path(out) if out is not None else Path("data/trained_models")
    if target.is_dir() or target.suffix != ".pt":
        target = default_model_path(config, target)
    metadata = {
        "imported_from": source,
        "revision": revision,
        "import_format": "m2m100",
        "weights_file": folder.files.get("weights"),
        "license": card_license(folder.card),
        "model_card": folder.card,
        "hf_config": folder.config,
        "hf_generation_config": folder.generation,
        METADATA_KEY: languages.to_metadata(),
    }
    with torch.no_grad():
        path = save_model(target, model, config, tokenizer, tokenizer, metadata)
    parameters = sum(p.numel() for p in model.parameters())
    logger.info("imported %s into %s (%d parameters)", source, path, parameters)
    return ImportedModel(path, source, src_lang, tgt_lang, parameters)
