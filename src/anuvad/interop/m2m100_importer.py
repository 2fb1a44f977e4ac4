"""``anuvad import`` of an M2M100 / NLLB-200 model (hub id or folder) → one anuvad model file
for the language pairs asked for.

The file is an ordinary anuvad model with one tokenizer for both sides (fairseq's vocabulary,
reordered; the language tokens, ``<s>`` and ``<mask>`` silent when decoding) and the model's
language tokens in its metadata (:mod:`anuvad.data.language_tokens`): every command translates
its first pair, and ``Translator(..., pair=...)`` any other. Its search settings are those
``generate`` would use (:func:`anuvad.interop.importer.decode_settings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from anuvad.data.language_tokens import METADATA_KEY, LanguageTokens
from anuvad.data.tokenizer import Tokenizer
from anuvad.errors import CheckpointError, ConfigError
from anuvad.interop.hf_folder import download_files, looks_like_hub_id
from anuvad.interop.importer import ImportedModel, checked_import, save_import
from anuvad.interop.m2m100 import M2M100Shape, fairseq_order, m2m100_to_anuvad
from anuvad.interop.m2m100_folder import FAMILY, OPTIONAL, REQUIRED, read_m2m100_folder


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
    src_lang, tgt_lang = pairs[0]
    model, config = checked_import(folder, model_config, state, src_lang, tgt_lang)
    tokenizer = Tokenizer(folder.spm, vocab=order.pieces, silent=folder.specials)
    return save_import(
        folder,
        model,
        config,
        (tokenizer, tokenizer),
        out=out,
        revision=revision,
        import_format="m2m100",
        extra_metadata={METADATA_KEY: languages.to_metadata()},
    )
