"""Web exports served beside their models (``anuvad serve --web DIR``, issue 42 item 4).

An export is matched to a served model by the SHA-256 of the model file it was made from, which
the export records in ``model.json`` (``source_sha256``): two models may share a config name and
languages, but not their bytes. Every problem with the folders is named at once, before the
server starts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from anuvad.data.download import sha256_of
from anuvad.errors import CheckpointError
from anuvad.web.settings import WEB_FORMAT

REEXPORT = "anuvad export MODEL --format web --out DIR --force"


@dataclass(frozen=True)
class WebExport:
    """A web export folder and what ``model.json`` says about it."""

    folder: Path  # resolved
    source_sha256: str  # the model file it was exported from
    source_model: str  # that file's name, for messages
    direction: str  # e.g. "en-hi"
    download_bytes: int  # what a page downloads to translate
    version: str  # SHA-256 of its model.json (the model's hash, dtype, settings): the cache key


def read_export(folder: str | Path) -> WebExport:
    """The export in ``folder``.

    Raises:
        CheckpointError: ``folder`` is not a folder, holds no readable ``model.json``, is not an
            anuvad web export, or records no source model hash (an export older than
            ``source_sha256``: export it again).
    """
    path = Path(folder)
    if not path.is_dir():
        raise CheckpointError(f"--web {path}: not a folder (give a folder made by {REEXPORT})")
    try:
        raw = (path / "model.json").read_bytes()
        settings = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(
            f"--web {path}: no readable model.json ({exc}); give a folder made by {REEXPORT}"
        ) from exc
    if not isinstance(settings, dict) or settings.get("format") != WEB_FORMAT:
        raise CheckpointError(f"--web {path}: model.json is not an anuvad web export's")
    sha = settings.get("source_sha256")
    if not isinstance(sha, str):
        raise CheckpointError(
            f"--web {path}: model.json does not record its model's SHA-256 (an older export); "
            f"export it again: {REEXPORT}"
        )
    return WebExport(
        folder=path.resolve(),
        source_sha256=sha,
        source_model=str(settings.get("source_model", "?")),
        direction=str(settings.get("direction", "?")),
        download_bytes=int(settings.get("download_bytes", 0)),
        version=hashlib.sha256(raw).hexdigest()[:16],
    )


def match_exports(
    exports: Sequence[WebExport], models: Mapping[str, Path | None]
) -> dict[str, WebExport]:
    """Each export's served model: ``models`` maps a served model id to its model file (None:
    no single file, e.g. a ctranslate2 folder; never matched).

    Returns:
        Served model id -> its export (models without one are absent).

    Raises:
        CheckpointError: an export matches no served model, or two exports the same one (all
            named, in one line).
    """
    hashes = {
        model_id: sha256_of(path)
        for model_id, path in models.items()
        if path is not None and path.is_file()
    }
    matched: dict[str, WebExport] = {}
    problems = []
    for export in exports:
        ids = [model_id for model_id, sha in hashes.items() if sha == export.source_sha256]
        if not ids:
            problems.append(
                f"--web {export.folder} ({export.direction}, exported from "
                f"{export.source_model}) matches no served model ({', '.join(models)}): serve "
                "the model file it was exported from, or export the served one"
            )
        for model_id in ids:
            if model_id in matched:
                problems.append(
                    f"--web {export.folder} and {matched[model_id].folder} are both exports of "
                    f"model {model_id}: give one"
                )
            matched[model_id] = export
    if problems:
        raise CheckpointError("; ".join(problems))
    return matched


__all__ = ["WebExport", "match_exports", "read_export"]
