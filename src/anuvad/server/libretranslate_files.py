"""LibreTranslate's file translation, read and written: ``POST translate_file`` takes a
multipart form (``file``, ``source``, ``target``, ``api_key``); its document, a ``.txt`` or
``.html`` file in UTF-8, is translated as ``translate`` translates its text (HTML: the text
between the tags, the markup kept byte for byte) and kept in the server's
:class:`~anuvad.server.file_store.TranslatedFiles`; the answer is the URL of
``GET download_file/<token>.<target><ext>``, which sends it back under the name the page gives
a translated upload ("report.html" → "report.hi.html"). LibreTranslate's other formats (.docx,
.odt, .odp, .pptx, .epub) are refused with a 400 that says what to send instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from fastapi import Request
from starlette.datastructures import UploadFile

from anuvad.server.libretranslate_bodies import LibreTranslateError
from anuvad.server.limits import MAX_TEXT_CHARS
from anuvad.server.schemas import is_blank

# extension → (the translate request's format, the download's media type)
FORMATS = {
    ".txt": ("text", "text/plain; charset=utf-8"),
    ".html": ("html", "text/html; charset=utf-8"),
    ".htm": ("html", "text/html; charset=utf-8"),
}
BOM = "\ufeff"


@dataclass(frozen=True)
class Upload:
    """The document of a ``translate_file`` request and the form's other fields."""

    name: str  # the file's own name, without the client's folders
    text: str  # decoded, its byte-order mark removed
    bom: bool  # whether the file began with one (the translation does too)
    fields: dict[str, str]  # source, target, api_key

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix.lower()

    @property
    def format(self) -> str:
        return FORMATS[self.suffix][0]

    @property
    def media_type(self) -> str:
        return FORMATS[self.suffix][1]

    def translated_name(self, target: str) -> str:
        """The translation's file name: the language before the extension."""
        path = PurePosixPath(self.name)
        return f"{path.stem}.{target}{path.suffix}"


async def read_upload(request: Request) -> Upload:
    """The document and fields of a ``translate_file`` request.

    Raises:
        LibreTranslateError: 400 naming the file and what to change: not a multipart form, no
            file, a format the server does not translate, not UTF-8 (with the line), empty,
            longer than one text may be.
    """
    declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if declared not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise LibreTranslateError(
            400, "Invalid request: translate_file takes a multipart/form-data body with the "
            "document in its file field (curl -F file=@report.txt -F source=en -F target=hi)",
        )  # fmt: skip
    form = await request.form()
    upload = form.get("file")
    if not isinstance(upload, UploadFile):  # a form without one, or with text in its place
        raise LibreTranslateError(
            400, "Invalid request: missing file parameter (send the document as a multipart "
            "file field: curl -F file=@report.txt)",
        )  # fmt: skip
    name = PureWindowsPath(upload.filename or "").name  # a browser may send C:\...\report.txt
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in FORMATS:
        raise LibreTranslateError(
            400, f"Invalid request: file: {name or 'the file (sent without a name)'}: the "
            f"server translates {', '.join(FORMATS)} files in UTF-8; save it as plain text or "
            "HTML (.docx, .odt, .odp, .pptx and .epub are not supported)",
        )  # fmt: skip
    data = await upload.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LibreTranslateError(
            400, f"Invalid request: file: {name}: not UTF-8 text (byte {exc.start + 1}, line "
            f"{line}); save it as UTF-8",
        ) from None  # fmt: skip
    bom = text.startswith(BOM)
    text = text.removeprefix(BOM)
    if is_blank(text):
        raise LibreTranslateError(400, f"Invalid request: file: {name} has no text to translate")
    if len(text) > MAX_TEXT_CHARS:
        raise LibreTranslateError(
            400, f"Invalid request: file: {name} has {len(text)} characters; the limit is "
            f"{MAX_TEXT_CHARS} (split it into several files)",
        )  # fmt: skip
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    return Upload(name, text, bom, fields)


def content_disposition(name: str) -> str:
    """An ``attachment`` header that saves the file as ``name``: an ASCII fallback for old
    clients and the exact name in UTF-8 (RFC 6266)."""
    fallback = name.encode("ascii", "replace").decode().replace("?", "_").replace('"', "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


__all__ = ["FORMATS", "Upload", "content_disposition", "read_upload"]
