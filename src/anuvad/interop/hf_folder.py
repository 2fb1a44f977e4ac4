"""Hugging Face Marian model folders: reading one (local or downloaded from the hub) and
writing one, with everything but the weight mapping (:mod:`anuvad.interop.marian`).

A Marian folder holds ``config.json``, ``model.safetensors`` (or ``pytorch_model.bin``), the
two SentencePiece models ``source.spm`` and ``target.spm``, ``vocab.json`` (piece → id; with
``separate_vocabs`` also ``target_vocab.json``), and optionally ``generation_config.json``,
``tokenizer_config.json`` and the model card ``README.md``.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import torch
from torch import Tensor

from anuvad.errors import CheckpointError

CONFIG_FILE = "config.json"
GENERATION_FILE = "generation_config.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SAFETENSORS_FILE = "model.safetensors"
PYTORCH_FILE = "pytorch_model.bin"
SOURCE_SPM = "source.spm"
TARGET_SPM = "target.spm"
VOCAB_FILE = "vocab.json"
TARGET_VOCAB_FILE = "target_vocab.json"
CARD_FILE = "README.md"
REQUIRED = (CONFIG_FILE, SOURCE_SPM, TARGET_SPM, VOCAB_FILE)
OPTIONAL = (GENERATION_FILE, TOKENIZER_CONFIG_FILE, TARGET_VOCAB_FILE, CARD_FILE)
WEIGHT_FILES = (SAFETENSORS_FILE, PYTORCH_FILE)


@dataclass
class MarianFolder:
    """What a Marian folder holds, read and checked.

    Attributes:
        name: what the user gave (a hub id or the folder), for messages and the model card.
        config: ``config.json``.
        generation: ``generation_config.json`` ({} when absent).
        tokenizer_config: ``tokenizer_config.json`` ({} when absent).
        state: the weights, by Hugging Face name.
        source_spm, target_spm: the SentencePiece models' bytes.
        src_vocab: id → piece of ``vocab.json``; ``tgt_vocab`` the target's (the same list
            unless ``separate_vocabs``).
        card: the model card's text ("" when absent).
    """

    name: str
    config: dict[str, Any]
    generation: dict[str, Any]
    tokenizer_config: dict[str, Any]
    state: dict[str, Tensor]
    source_spm: bytes
    target_spm: bytes
    src_vocab: list[str]
    tgt_vocab: list[str]
    card: str = ""
    files: dict[str, str] = field(default_factory=dict)


def read_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON object file (``what`` names it in messages).

    Raises:
        CheckpointError: it is unreadable, not JSON, or not an object.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CheckpointError(f"{path}: {what} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: {what} must be a JSON object")
    return data


def read_optional_json(path: Path, what: str) -> dict[str, Any]:
    """:func:`read_json` of a file a folder may lack ({} when it is absent).

    Raises:
        CheckpointError: it is there but unreadable, not JSON, or not an object.
    """
    return read_json(path, what) if path.is_file() else {}


def read_card(folder: Path) -> str:
    """The folder's model card (``README.md``) as text, "" when it has none."""
    card = folder / CARD_FILE
    return card.read_text(encoding="utf-8", errors="replace") if card.is_file() else ""


def _vocab_list(path: Path, expected: int) -> list[str]:
    """A ``vocab.json`` (piece → id) as id → piece, every id from 0 to ``expected`` - 1 once."""
    mapping = read_json(path, "the vocabulary")
    pieces: list[str | None] = [None] * len(mapping)
    for piece, index in mapping.items():
        if not isinstance(index, int) or not 0 <= index < len(mapping) or pieces[index]:
            raise CheckpointError(
                f"{path}: piece {piece!r} has id {index!r}; ids must be 0 .. {len(mapping) - 1}, "
                f"each once"
            )
        pieces[index] = piece
    if len(mapping) != expected:
        raise CheckpointError(
            f"{path}: {len(mapping)} pieces, but the model's embedding has {expected} rows; "
            "the vocabulary does not belong to these weights"
        )
    return [str(p) for p in pieces]


def read_weights(folder: Path, family: str = "Marian") -> tuple[dict[str, Tensor], str]:
    """The folder's weights (safetensors preferred) and the file they came from.

    Raises:
        CheckpointError: neither weights file is there, or the one there is unreadable.
    """
    safetensors_path, pytorch_path = folder / SAFETENSORS_FILE, folder / PYTORCH_FILE
    if safetensors_path.is_file():
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            return dict(load_file(str(safetensors_path))), SAFETENSORS_FILE
        except (SafetensorError, OSError, ValueError) as exc:
            raise CheckpointError(
                f"{safetensors_path}: not a readable safetensors file ({exc}); an interrupted "
                "download? delete it and import again"
            ) from exc
    if pytorch_path.is_file():
        try:
            state = torch.load(pytorch_path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch.load raises many types for a bad file
            raise CheckpointError(
                f"{pytorch_path}: not a readable PyTorch weights file: {str(exc).splitlines()[0]}"
            ) from exc
        if not isinstance(state, Mapping):
            raise CheckpointError(f"{pytorch_path}: holds no state dict")
        return dict(state), PYTORCH_FILE
    raise CheckpointError(
        f"{folder}: no weights ({SAFETENSORS_FILE} or {PYTORCH_FILE}); a {family} folder needs one"
    )


def read_marian_folder(folder: str | Path, name: str | None = None) -> MarianFolder:
    """Read and check a Hugging Face Marian folder.

    Raises:
        CheckpointError: the folder is missing, lacks a file a Marian model needs (named), or a
            file is unreadable; one line each.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: no such folder (give a Marian model folder or hub id)")
    missing = [f for f in REQUIRED if not (folder / f).is_file()]
    if CONFIG_FILE in missing:
        raise CheckpointError(
            f"{folder}: not a Hugging Face model folder (no {CONFIG_FILE}); a Marian folder has "
            f"{', '.join(REQUIRED)} and {SAFETENSORS_FILE} or {PYTORCH_FILE}"
        )
    config = read_json(folder / CONFIG_FILE, "the model config")
    from anuvad.interop.marian_config import MarianShape

    shape = MarianShape.from_config(config, str(folder))  # refuses other architectures first
    if missing:
        raise CheckpointError(
            f"{folder}: missing {', '.join(missing)} (a Marian model's tokenizer files: "
            f"{SOURCE_SPM}, {TARGET_SPM}, {VOCAB_FILE})"
        )
    tokenizer_config = read_optional_json(folder / TOKENIZER_CONFIG_FILE, "the tokenizer config")
    generation = read_optional_json(folder / GENERATION_FILE, "the generation config")
    src_vocab = _vocab_list(folder / VOCAB_FILE, shape.vocab_size)
    if tokenizer_config.get("separate_vocabs"):
        if not (folder / TARGET_VOCAB_FILE).is_file():
            raise CheckpointError(
                f"{folder}: tokenizer_config.json says separate_vocabs but {TARGET_VOCAB_FILE} "
                "is missing"
            )
        tgt_vocab = _vocab_list(folder / TARGET_VOCAB_FILE, shape.decoder_vocab_size)
    else:
        tgt_vocab = src_vocab
    state, weights_file = read_weights(folder)
    return MarianFolder(
        name=name or str(folder),
        config=config,
        generation=generation,
        tokenizer_config=tokenizer_config,
        state=state,
        source_spm=(folder / SOURCE_SPM).read_bytes(),
        target_spm=(folder / TARGET_SPM).read_bytes(),
        src_vocab=src_vocab,
        tgt_vocab=tgt_vocab,
        card=read_card(folder),
        files={"weights": weights_file},
    )


# ----------------------------------------------------------------------------------------------
# The hub
# ----------------------------------------------------------------------------------------------


def looks_like_hub_id(source: str) -> bool:
    """Whether ``source`` names a hub model (``owner/name``) rather than a local folder."""
    return (
        not Path(source).exists() and source.count("/") == 1 and not source.startswith((".", "/"))
    )


def reachable(url: str, timeout: float = 5.0) -> bool:
    """Whether a TCP connection to ``url``'s host and port opens within ``timeout`` seconds."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def download_marian(repo_id: str, revision: str | None = None) -> Path:
    """Fetch a Marian model's files from the Hugging Face hub (:func:`download_files`).

    Raises:
        CheckpointError: as :func:`download_files`.
    """
    return download_files(repo_id, revision, REQUIRED, OPTIONAL, "a Marian model")


def download_files(
    repo_id: str,
    revision: str | None,
    required: tuple[str, ...],
    optional: tuple[str, ...],
    family: str,
) -> Path:
    """Fetch a model's ``required`` files, its weights and whichever ``optional`` files it has
    from the Hugging Face hub (``HF_ENDPOINT``, ``HF_HOME`` / the hub cache and
    ``HF_HUB_OFFLINE`` are respected) and return the local folder; ``family`` ("a Marian
    model") names what a missing file suggests it is not.

    Raises:
        CheckpointError: one line: the hub cannot be reached (and what to do offline), the model
            does not exist, a required file is missing, or a download broke off (the cache
            keeps nothing half-written; the next try starts that file again).
    """
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import (
            EntryNotFoundError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )
    except ImportError as exc:
        raise CheckpointError(
            f"downloading {repo_id} needs huggingface_hub (pip install huggingface_hub), or give "
            "a local model folder"
        ) from exc
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    # Unreachable (offline, a firewall): answer from the hub cache at once rather than after the
    # client's retries, and say so when the cache lacks the model.
    cache_only = not reachable(endpoint)
    for chatty in ("huggingface_hub", "httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(chatty).setLevel(logging.ERROR)  # retries and every request
    folder: Path | None = None

    def fetch(filename: str) -> Path | None:
        nonlocal folder
        try:
            path = Path(
                hf_hub_download(
                    repo_id,
                    filename,
                    revision=revision,
                    endpoint=os.environ.get("HF_ENDPOINT") or None,
                    cache_dir=os.environ.get("HF_HUB_CACHE") or None,
                    local_files_only=cache_only,
                )
            )
        except LocalEntryNotFoundError as exc:  # before EntryNotFoundError: its subclass
            raise CheckpointError(
                f"{repo_id}: cannot reach {endpoint} to download {filename} and it is not in "
                "the hub cache; connect (or set HF_ENDPOINT to a mirror), or import a local "
                "folder of it"
            ) from exc
        except EntryNotFoundError:
            return None
        except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
            raise CheckpointError(
                f"{repo_id}: no such model{f' revision {revision}' if revision else ''} on "
                f"{endpoint} ({type(exc).__name__})"
            ) from exc
        except Exception as exc:  # connection reset, short read, disk full: the client's types
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CheckpointError(
                f"{repo_id}: downloading {filename} from {endpoint} failed ({first}); run the "
                "import again (finished files are cached)"
            ) from exc
        folder = path.parent
        return path

    for filename in required:
        if fetch(filename) is None:
            raise CheckpointError(f"{repo_id}: has no {filename}; is it {family}?")
    if not any(fetch(filename) is not None for filename in WEIGHT_FILES):
        raise CheckpointError(f"{repo_id}: has neither {' nor '.join(WEIGHT_FILES)}")
    for filename in optional:
        fetch(filename)
    assert folder is not None
    return folder
