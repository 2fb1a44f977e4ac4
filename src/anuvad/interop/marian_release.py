"""Marian's own release format: the ``.zip`` (or the folder it unpacks to) that OPUS-MT and
Tatoeba-MT publish, read onto the :class:`~anuvad.interop.hf_folder.MarianFolder` a Hugging Face
Marian folder gives, so that ``anuvad import`` maps it exactly as it maps ``transformers``'
conversion of the same files (:func:`anuvad.interop.importer.import_marian_folder`).

A release holds ``decoder.yml`` (Marian's decoding options: ``models`` names the ``.npz``,
``vocabs`` the source and target vocabularies, ``beam-size``), the weights
(:mod:`anuvad.interop.marian_npz`), ``source.spm`` and ``target.spm``, one ``*.vocab.yml``
shared by both sides (``opus.spm32k-spm32k.vocab.yml``) or two (``*.src.vocab.yml``,
``*.trg.vocab.yml``), and usually ``README.md`` and ``LICENSE``. A multilingual model's
vocabulary has target-language tokens (``>>hin<<``): a sentence starts with the one of the
language wanted, as with ``MarianTokenizer``. Imported for named target languages (``--tgt-lang
hin``, ``--pairs eng-hin,eng-mar``) the file puts it there itself: its metadata's
``language_tokens`` (:class:`~anuvad.data.language_tokens.LanguageTokens`, ``target_in_source``)
make it a source prefix with no forced target token, and each pair is served as a model of its
own (:mod:`anuvad.inference.pairs`). An http(s) URL of a zip is downloaded into the user cache
first (:mod:`anuvad.interop.release_download`).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from anuvad.data.download import Progress
from anuvad.data.language_tokens import METADATA_KEY, LanguageTokens, common_code
from anuvad.errors import CheckpointError, ConfigError
from anuvad.interop.hf_folder import MarianFolder
from anuvad.interop.importer import ImportedModel, import_marian_folder, single_pair
from anuvad.interop.marian_npz import (
    MarianOptions,
    check_weights,
    hf_config,
    hf_state,
    model_options,
    read_yaml,
)
from anuvad.interop.release_download import download_release, is_release_url

DECODER_YML = "decoder.yml"
SOURCE_SPM = "source.spm"
TARGET_SPM = "target.spm"
CARD_FILE = "README.md"
LICENSE_FILE = "LICENSE"
PAD_PIECE = "<pad>"  # what the conversion appends to each vocabulary (Marian has no padding)
MARIAN_BEAM_SIZE = 12  # Marian's default beam-size, for a decoder.yml that names none
_LANGUAGE_TOKEN = re.compile(r"^>>.+<<$")
_CARD_LANGUAGES = re.compile(r"^\*\s*(source|target) language\(s\):\s*(.+?)\s*$", re.MULTILINE)
_PAIR_FOLDER = re.compile(r"^([a-z]{2,3}(?:_[A-Za-z]+)?)-([a-z]{2,3}(?:_[A-Za-z]+)?)$")


class ReleaseFiles:
    """The files of a release zip or folder, named relative to the folder of its ``decoder.yml``
    (a zip may keep everything in one subfolder).

    Args:
        path: the ``.zip`` or the folder.

    Raises:
        CheckpointError: it is neither, or it holds no ``decoder.yml`` (or several).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = path.is_file()
        if self.zip:
            try:
                with zipfile.ZipFile(path) as archive:
                    names = [n for n in archive.namelist() if not n.endswith("/")]
            except (zipfile.BadZipFile, OSError) as exc:
                raise CheckpointError(f"{path}: not a readable zip file ({exc})") from exc
        elif path.is_dir():
            names = [p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()]
        else:
            raise CheckpointError(f"{path}: no such file or folder")
        found = sorted(n for n in names if PurePosixPath(n).name == DECODER_YML)
        if not found:
            raise CheckpointError(
                f"{path}: no {DECODER_YML}; a Marian release (an OPUS-MT / Tatoeba-MT .zip) has "
                f"{DECODER_YML} naming its .npz weights and vocabularies"
            )
        if len(found) > 1:
            raise CheckpointError(f"{path}: several {DECODER_YML} ({', '.join(found)}); give one")
        self.root = PurePosixPath(found[0]).parent
        inside = [PurePosixPath(n) for n in names if PurePosixPath(n).is_relative_to(self.root)]
        self.names = {str(n.relative_to(self.root)) for n in inside}

    def has(self, name: str) -> bool:
        """Whether the release holds ``name`` (relative to ``decoder.yml``'s folder)."""
        return name in self.names

    def where(self, name: str) -> str:
        """``name`` as messages show it (``model.zip:decoder.yml``, ``folder/decoder.yml``)."""
        inner = str(self.root / name)
        return f"{self.path}:{inner}" if self.zip else str(self.path / inner)

    def read(self, name: str) -> bytes:
        """The bytes of ``name`` (which :meth:`has`)."""
        inner = str(self.root / name)
        if not self.zip:
            return (self.path / inner).read_bytes()
        with zipfile.ZipFile(self.path) as archive:
            return archive.read(inner)

    def text(self, name: str) -> str:
        """``name`` as UTF-8 text ("" when the release lacks it)."""
        return self.read(name).decode("utf-8", "replace") if self.has(name) else ""


@dataclass(frozen=True)
class MarianRelease:
    """A release read onto Hugging Face's Marian layout.

    Attributes:
        folder: what the Hugging Face import reads (config, weights, tokenizer files).
        languages: (source, target) language codes its README or folder name gives (None:
            neither says, or it names several).
        source_language: the one source language its README or folder name gives (None:
            neither says, or it names several).
        language_tokens: a multilingual model's target-language tokens (``>>hin<<``), in
            vocabulary order; () for a model of one target language.
        license: the licence its ``LICENSE`` names (``cc-by-4.0``), None when unknown.
    """

    folder: MarianFolder
    languages: tuple[str, str] | None
    source_language: str | None
    language_tokens: tuple[str, ...]
    license: str | None


def is_marian_release(source: str) -> bool:
    """Whether ``source`` is a release: an http(s) URL (of a zip), a ``.zip`` file, or a folder
    with ``decoder.yml`` or an ``.npz`` and no Hugging Face ``config.json``."""
    if is_release_url(source):
        return True
    path = Path(source)
    if path.is_file():
        return path.suffix.lower() == ".zip"
    return (
        path.is_dir()
        and not (path / "config.json").is_file()
        and ((path / DECODER_YML).is_file() or any(path.glob("*.npz")))
    )


def _names(decoder: dict[str, Any], key: str, where: str) -> list[str]:
    value = decoder.get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise CheckpointError(f"{where}: has no {key} list (Marian's {DECODER_YML} names them)")
    return value


def read_vocab(files: ReleaseFiles, name: str) -> list[str]:
    """A ``vocab.yml`` (piece: id) as id → piece, every id from 0 to its size - 1 once.

    Raises:
        CheckpointError: naming the file: not Marian's YAML vocabulary, ids not 0 .. n - 1,
            ``<pad>`` already taken, or no ``</s>`` / ``<unk>``.
    """
    where = files.where(name)
    if not name.endswith((".yml", ".yaml")):
        raise CheckpointError(
            f"{where}: a vocabulary anuvad cannot read; it reads Marian's vocab.yml (piece: id)"
        )
    mapping = read_yaml(files.read(name).decode("utf-8", "replace"), where)
    pieces: list[str | None] = [None] * len(mapping)
    for piece, index in mapping.items():
        if not isinstance(index, int) or not 0 <= index < len(mapping) or pieces[index]:
            raise CheckpointError(
                f"{where}: piece {piece!r} has id {index!r}; ids must be 0 .. {len(mapping) - 1}, "
                "each once"
            )
        pieces[index] = piece
    problems = [f"no {p}" for p in ("</s>", "<unk>") if p not in mapping]
    if PAD_PIECE in mapping:
        problems.append(f"a piece {PAD_PIECE} (the conversion adds its own)")
    if problems:
        raise CheckpointError(f"{where}: the vocabulary has {', '.join(problems)}")
    return [str(p) for p in pieces]


def card_sides(card: str) -> dict[str, list[str]]:
    """The languages of a release README's ``* source language(s): eng`` and ``* target
    language(s): hin mar`` lines, by side (``source``, ``target``; a side absent: no key)."""
    return {side: value.split() for side, value in _CARD_LANGUAGES.findall(card)}


def card_languages(card: str) -> tuple[str, str] | None:
    """(source, target) of a release README's language lines (None: absent, or a side lists
    several languages)."""
    found = card_sides(card)
    source, target = found.get("source", []), found.get("target", [])
    return (source[0], target[0]) if len(source) == 1 and len(target) == 1 else None


def folder_languages(path: Path) -> tuple[str, str] | None:
    """(source, target) of the nearest folder named like Tatoeba-MT's (``eng-hin``, ``en-hi``)."""
    for part in reversed(path.resolve().parts):
        match = _PAIR_FOLDER.match(part)
        if match:
            return match.group(1), match.group(2)
    return None


def license_of(text: str) -> str | None:
    """The licence a ``LICENSE`` file's text names (Tatoeba-MT's and OPUS-MT's: CC-BY 4.0)."""
    if re.search(r"Attribution 4\.0 International", text):
        return "cc-by-4.0"
    return None


def _vocabularies(
    files: ReleaseFiles, vocabs: Sequence[str], shared: bool, where: str
) -> tuple[list[str], list[str]]:
    """The source and target vocabularies (one list object when the embedding is shared), each
    with ``<pad>`` appended as the conversion appends it."""
    src = read_vocab(files, vocabs[0])
    if shared:
        if vocabs[1] != vocabs[0] and read_vocab(files, vocabs[1]) != src:
            raise CheckpointError(
                f"{where}: its model.yml ties the source and target embeddings "
                f"(tied-embeddings-src), but {DECODER_YML} names two different vocabularies"
            )
        src.append(PAD_PIECE)
        return src, src
    tgt = read_vocab(files, vocabs[1])
    return [*src, PAD_PIECE], [*tgt, PAD_PIECE]


def read_marian_release(source: str | Path, name: str | None = None) -> MarianRelease:
    """Read and check a release zip or folder.

    Args:
        source: the ``.zip`` or folder.
        name: how messages and the model file name it (default: ``source``).

    Returns:
        The release on Hugging Face's Marian layout (config, generation settings, weights and
        vocabularies as ``transformers``' conversion makes them).

    Raises:
        CheckpointError: one line naming the file and what is wrong: no ``decoder.yml``, a file
            it names missing, an ensemble, a model.yml option or weight anuvad cannot compute,
            a weight missing or misshapen.
    """
    path = Path(source)
    files = ReleaseFiles(path)
    decoder_where = files.where(DECODER_YML)
    decoder = read_yaml(files.text(DECODER_YML), decoder_where)
    models = _names(decoder, "models", decoder_where)
    vocabs = _names(decoder, "vocabs", decoder_where)
    if len(models) > 1:
        raise CheckpointError(
            f"{decoder_where}: an ensemble of {len(models)} models; anuvad imports one (list one "
            "in its models)"
        )
    if len(vocabs) != 2:
        raise CheckpointError(
            f"{decoder_where}: vocabs lists {len(vocabs)} files; a translation model has two "
            "(source, target)"
        )
    needed = [models[0], *dict.fromkeys(vocabs), SOURCE_SPM, TARGET_SPM]
    missing = [n for n in needed if not files.has(n)]
    if missing:
        raise CheckpointError(
            f"{path}: lacks {', '.join(missing)} (a Marian release has the .npz and "
            f"vocabularies {DECODER_YML} names, {SOURCE_SPM} and {TARGET_SPM})"
        )
    npz_where = files.where(models[0])
    try:
        with np.load(io.BytesIO(files.read(models[0])), allow_pickle=False) as archive:
            npz = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise CheckpointError(f"{npz_where}: not a readable .npz file ({exc})") from exc
    options = MarianOptions.from_yaml(model_options(npz, npz_where), npz_where)
    src_vocab, tgt_vocab = _vocabularies(files, vocabs, options.shared_embeddings, npz_where)
    src_size, tgt_size = len(src_vocab) - 1, len(tgt_vocab) - 1
    check_weights(npz, options, src_size, tgt_size, npz_where)
    beam = decoder.get("beam-size", MARIAN_BEAM_SIZE)
    if not isinstance(beam, int) or beam < 1:
        raise CheckpointError(f"{decoder_where}: beam-size is {beam!r}, not a positive number")
    config, generation = hf_config(options, src_size, tgt_size, tgt_vocab.index("</s>"), beam)
    card = files.text(CARD_FILE)
    folder = MarianFolder(
        name=name or str(source),
        config=config,
        generation=generation,
        tokenizer_config={"separate_vocabs": not options.shared_embeddings},
        state=hf_state(npz, options),
        source_spm=files.read(SOURCE_SPM),
        target_spm=files.read(TARGET_SPM),
        src_vocab=src_vocab,
        tgt_vocab=tgt_vocab,
        card=card,
        files={"weights": models[0]},
    )
    named = folder_languages(path)
    card_source = card_sides(card).get("source", [])
    return MarianRelease(
        folder=folder,
        languages=card_languages(card) or named,
        source_language=card_source[0] if len(card_source) == 1 else named and named[0],
        language_tokens=tuple(p for p in src_vocab if _LANGUAGE_TOKEN.match(p)),
        license=license_of(files.text(LICENSE_FILE)),
    )


def target_tokens(
    release: MarianRelease, pairs: Sequence[tuple[str, str]], name: str
) -> LanguageTokens:
    """The language tokens of a multilingual-target release imported for ``pairs``, each pair's
    target named by its token's code (``hin``), a two-letter code (``hi``) or the token itself
    (``>>hin<<``), its source as given.

    Raises:
        CheckpointError: a target the release has no token for (its target languages listed).
    """
    tokens = tuple((token[2:-2], token) for token in release.language_tokens)
    names = {alias: code for code, token in tokens for alias in (common_code(code), token)}
    names.update({code: code for code, _ in tokens})  # a code itself wins over an alias
    resolved = tuple((src, names.get(tgt, tgt)) for src, tgt in pairs)
    languages = LanguageTokens(tokens, resolved, target_in_source=True)
    try:
        languages.check_pairs(resolved)
    except ConfigError as exc:
        raise CheckpointError(f"{name}: {exc}") from exc
    return languages


def import_marian_release(
    source: str,
    out: str | Path | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    progress: Progress | None = None,
) -> ImportedModel:
    """Import a Marian release (a ``.zip``, its folder or the URL of the zip) into one anuvad
    model file, as :func:`anuvad.interop.importer.import_marian` imports the Hugging Face
    conversion of it.

    Args:
        source: the ``.zip`` or folder, or an http(s) URL of the zip (downloaded into the user
            cache first: :func:`~anuvad.interop.release_download.download_release`).
        out: the file to write, or a folder for the default name; None: ``data/trained_models/``.
        src_lang, tgt_lang: language codes (default: the README's ``source language(s)`` and
            ``target language(s)``, else a folder named ``eng-hin``, as two-letter codes where
            there are: ``en``, ``hi``). A multilingual-target release given ``tgt_lang`` puts
            that language's token before each source itself.
        pairs: (source, target) pairs instead: one for a release of one target language, any
            number (the default first) for a multilingual-target one.
        progress: told (bytes so far, total or None) while a URL downloads.

    Raises:
        CheckpointError: one line naming what is wrong; nothing is written then.
        DataError: the URL cannot be downloaded (one line saying what to do).
    """
    path = download_release(source, progress) if is_release_url(source) else Path(source)
    release = read_marian_release(path, name=source)
    if not pairs and tgt_lang is not None and release.language_tokens:
        source_lang = src_lang or release.source_language
        if source_lang is None:
            raise CheckpointError(
                f"{source}: neither its README nor its folder name says its source language; "
                "give --src-lang"
            )
        pairs = [(source_lang, tgt_lang)]
    metadata: dict[str, Any] = {"marian_language_tokens": list(release.language_tokens)}
    if pairs and release.language_tokens:
        languages = target_tokens(release, pairs, source)
        metadata[METADATA_KEY] = languages.to_metadata()
        src_lang, tgt_lang = languages.pairs[0]
    elif pairs:
        src_lang, tgt_lang = single_pair(source, pairs)
    if src_lang is None or tgt_lang is None:
        if release.languages is None:
            labels = f" (its target tokens: {' '.join(release.language_tokens)})"
            raise CheckpointError(
                f"{source}: neither its README nor its folder name says its languages; give "
                f"--src-lang and --tgt-lang{labels if release.language_tokens else ''}"
            )
        # The README's codes (eng, hin) as two-letter ones where there are: the sentence rules,
        # punctuation, script detection and a server's clients speak those (en, hi).
        named = (common_code(release.languages[0]), common_code(release.languages[1]))
        src_lang, tgt_lang = src_lang or named[0], tgt_lang or named[1]
    if release.license is not None:
        metadata["license"] = release.license
    return import_marian_folder(
        release.folder, out, src_lang, tgt_lang, import_format="marian_release",
        extra_metadata=metadata,
    )  # fmt: skip
