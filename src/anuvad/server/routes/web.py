"""``GET /web/{model}/{path}``: a served model's web export (``anuvad serve --web DIR``), read
only, so that the page can translate in the browser (issue 42 item 4).

Only files inside the export's folder are answered: a path with ``..``, an absolute path, a
hidden name or a link leading out of the folder gets the same 404 as a missing file. Which
export belongs to which model: :func:`anuvad.web.served.match_exports`; ``GET /models`` gives
each model's ``web`` (url and download size) or null.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse

from anuvad.server.answer_schemas import ErrorResponse
from anuvad.server.model_schemas import WebExportInfo
from anuvad.server.state import ServerState
from anuvad.web.served import WebExport, match_exports, read_export

# Set explicitly: the system's MIME table may lack .wasm, and a module script must be
# JavaScript for the browser to run it.
MEDIA_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".html": "text/html",
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".gz": "application/gzip",  # the packed graphs, SentencePiece models and WASM (no encoding)
}
OTHER = "application/octet-stream"
FILE_ANSWER: dict[str, Any] = {
    "description": "the file (its type by its extension)",
    "content": {media: {} for media in sorted({*MEDIA_TYPES.values(), OTHER})},
}

router = APIRouter()


def export_file(folder: Path, path: str) -> Path | None:
    """The file ``path`` names inside ``folder`` (resolved), or None: missing, not a file, or
    not inside (``..``, absolute, hidden names, links leading out)."""
    parts = PurePosixPath(path).parts
    if not parts or any(p in ("", ".", "..") or p.startswith((".", "/", "\\")) for p in parts):
        return None
    if "/".join(parts) != path:  # "model.json/", "a//b", "model.json/.": one name, one spelling
        return None
    if "\\" in path or "\0" in path:
        return None
    full = folder.joinpath(*parts).resolve()
    if not full.is_relative_to(folder) or not full.is_file():
        return None
    return full


@router.get(
    "/web/{model}/{path:path}",
    response_class=FileResponse,
    responses={
        200: FILE_ANSWER,
        404: {"model": ErrorResponse, "description": "no such model export, or no such file in it"},
    },
)
async def web_file(model: str, path: str, request: Request) -> FileResponse:
    """A file of model `model`'s web export (`GET /models` gives its `web.url`), for the page's
    "Translate in this browser"; 404 for a model without one and for any path outside it."""
    exports: dict[str, WebExport] = request.app.state.web_exports
    export = exports.get(model)
    found = export_file(export.folder, path) if export is not None else None
    if found is None:
        raise HTTPException(404, f"no file {path!r} in a web export of model {model!r}")
    return FileResponse(found, media_type=MEDIA_TYPES.get(found.suffix, OTHER))


def add_web(app: FastAPI, state: ServerState, folders: Sequence[str | Path]) -> None:
    """Serve the exports in ``folders`` beside their models and name them in ``GET /models``.

    Raises:
        CheckpointError: a folder is not a web export, or matches no served model.
    """
    exports = [read_export(folder) for folder in folders]
    models = {model_id: m.engine.model_path for model_id, m in state.models.items()}
    matched = match_exports(exports, models) if exports else {}
    for model_id, export in matched.items():
        state.models[model_id].info.web = WebExportInfo(
            url=f"/web/{model_id}/",
            download_bytes=export.download_bytes,
            version=export.version,
        )
    app.state.web_exports = matched
    app.include_router(router)
