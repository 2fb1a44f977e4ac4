"""LibreTranslate's file translation, read and written: ``POST translate_file`` takes a
multipart form (``file``, ``source``, ``target``, ``api_key``); its document, a ``.txt`` or
``.html`` file in UTF-8, is translated as ``translate`` translates its text (HTML: the text
between the tags, the markup kept byte for byte) and kept in the server's
:class:`~anuvad.server.file_store.TranslatedFiles`; the answer is the URL of
``GET download_file/<token>.<target><ext>``, which sends it back under the name the page gives
a translated upload ("report.html" → "report.hi.html"). LibreTranslate's other formats (.docx,
.odt, .odp, .pptx, .epub) are refused with a 400 that says what to send instead. An error met
while translating names the file, not LibreTranslate's ``q`` (which the uploader never sent).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from fastapi import Request
from starlette.datastructures import FormData, UploadFile

from anuvad.inference.markup import declares_other_charset
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
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Upload:
    """The document of a ``translate_file`` request and the form's other fields."""

    name: str  # the file's own name, without the client's folders
    text: str  # decoded, its byte-order mark removed
    bom: bool  # whether the file began with one (the translation does too)
    fields: dict[str, str]  # source, target, api_key

    @property
    def suffix(self) -> str:
        """The file's extension in lower case (".txt", ".html", ".htm")."""
        return PurePosixPath(self.name).suffix.lower()

    @property
    def format(self) -> str:
        """The translate request's ``format``: "text" or "html"."""
        return FORMATS[self.suffix][0]

    @property
    def media_type(self) -> str:
        """The download's Content-Type."""
        return FORMATS[self.suffix][1]

    def translated_name(self, target: str) -> str:
        """The translation's file name: the language before the extension."""
        path = PurePosixPath(self.name)
        return f"{path.stem}.{target}{path.suffix}"


async def read_form(request: Request) -> FormData:
    """The form of a ``translate_file`` request (its file not yet checked: the API key first).

    Raises:
        LibreTranslateError: 400 for a body that is not a form.
    """
    declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if declared not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise LibreTranslateError(
            400, "Invalid request: translate_file takes a multipart/form-data body with the "
            "document in its file field (curl -F file=@report.txt -F source=en -F target=hi)",
        )  # fmt: skip
    return await request.form()


async def read_upload(form: FormData) -> Upload:
    """The document and fields of a ``translate_file`` form.

    Raises:
        LibreTranslateError: 400 naming the file and what to change: no file, a file without a
            name, a format the server does not translate, not UTF-8 (with the line), empty,
            longer than one text may be.
    """
    upload = form.get("file")
    if not isinstance(upload, UploadFile):  # a form without one, or with text in its place
        raise LibreTranslateError(
            400, "Invalid request: missing file parameter (send the document as a multipart "
            "file field: curl -F file=@report.txt)",
        )  # fmt: skip
    data = await upload.read()
    # a browser may send C:\...\report.txt; a name's control characters cannot go in a header
    name = _CONTROL.sub("", PureWindowsPath(upload.filename or "").name)
    if not name:
        raise LibreTranslateError(
            400, "Invalid request: missing file parameter" if not data else "Invalid request: "
            "file has no name: send it with its name and extension (curl -F file=@report.txt)",
        )  # fmt: skip
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in FORMATS:
        raise LibreTranslateError(
            400, f"Invalid request: file: {name}: the server translates {', '.join(FORMATS)} "
            "files in UTF-8; save it as plain text or HTML (.docx, .odt, .odp, .pptx and .epub "
            "are not supported)",
        )  # fmt: skip
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
    if FORMATS[suffix][0] == "html":
        bom = bom or declares_other_charset(text)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    return Upload(name, text, bom, fields)


def for_the_file(error: LibreTranslateError, name: str) -> LibreTranslateError:
    """``error`` met translating the file's text, naming the file where it names ``q`` (the
    whole text: "q: text[0] (its text run 3): ..." or "q is written in Hindi, ...")."""
    message = re.sub(r"\bq(: text\[0\])?(?=[: ])", f"file: {name}", str(error), count=1)
    return LibreTranslateError(error.status, message)


def content_disposition(name: str) -> str:
    """An ``attachment`` header that saves the file as ``name``: an ASCII fallback for old
    clients and the exact name in UTF-8 (RFC 6266)."""
    fallback = name.encode("ascii", "replace").decode().replace("?", "_").replace('"', "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


__all__ = [
    "BOM",
    "FORMATS",
    "Upload",
    "content_disposition",
    "for_the_file",
    "read_form",
    "read_upload",
]
