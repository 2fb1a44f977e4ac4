"""LibreTranslate's file translation, read and written: ``POST translate_file`` takes a
multipart form (``file``, ``source``, ``target``, ``api_key``); its document is translated as
``translate`` translates text (a ``.txt`` file in UTF-8 as its text; ``.html`` the text between
the tags, the markup kept byte for byte; a Word, PowerPoint, Excel, OpenDocument or EPUB file
paragraph by paragraph, everything else in it kept: :mod:`anuvad.inference.office`; subtitles
cue by cue, their timing kept: :mod:`anuvad.inference.subtitles`) and kept in
the server's :class:`~anuvad.server.file_store.TranslatedFiles`; the answer is the URL of
``GET download_file/<token>.<target><ext>``, which sends it back under the name the page gives
a translated upload ("report.docx" → "report.hi.docx"). An error met while translating names
the file (and the paragraph), not LibreTranslate's ``q`` (which the uploader never sent).
"""

from __future__ import annotations

import asyncio
import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from fastapi import Request
from starlette.datastructures import FormData, UploadFile

from anuvad.inference.inline import PlacedSentence
from anuvad.inference.markup import UnitTranslation, declares_other_charset
from anuvad.inference.office import FORMATS as OFFICE_FORMATS
from anuvad.inference.office import OfficeDocument, OfficeError, read_office
from anuvad.inference.subtitles import FORMATS as SUBTITLE_FORMATS
from anuvad.inference.subtitles import SubtitleError, Subtitles, read_subtitles
from anuvad.server.answer_schemas import SentenceOut
from anuvad.server.libretranslate_bodies import LibreTranslateError
from anuvad.server.limits import MAX_DOCUMENT_CHARS, MAX_TEXT_CHARS
from anuvad.server.schemas import is_blank

# extension → (the translate request's format, the download's media type)
FORMATS = {
    ".txt": ("text", "text/plain; charset=utf-8"),
    ".html": ("html", "text/html; charset=utf-8"),
    ".htm": ("html", "text/html; charset=utf-8"),
    **{suffix: ("text", media) for suffix, (_, media, _) in OFFICE_FORMATS.items()},
    **{suffix: ("text", f"{media}; charset=utf-8") for suffix, media in SUBTITLE_FORMATS.items()},
}
BOM = "\ufeff"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Upload:
    """The document of a ``translate_file`` request and the form's other fields."""

    name: str  # the file's own name, without the client's folders
    text: str  # decoded, its byte-order mark removed (an office file's pieces, one per line)
    bom: bool  # whether the file began with one (the translation does too)
    fields: dict[str, str]  # source, target, api_key
    document: OfficeDocument | Subtitles | None = None  # an office or subtitle file, read

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

    @property
    def inline(self) -> bool:
        """Whether a line of :attr:`text` holds inline elements (an EPUB paragraph with a <b>
        or a link): its translation is asked with word alignments, to place them."""
        return self.document is not None and any(self.document.inline())

    def translated_file(self, translation: str, sentences: Sequence[SentenceOut] = ()) -> bytes:
        """The file to download, given the translation of :attr:`text` (and its sentences,
        with word alignments, for an office file's inline elements)."""
        if self.document is None:
            return ((BOM if self.bom else "") + translation).encode("utf-8")
        lines = translation.split("\n")
        if len(lines) != len(self.document.texts()):  # a newline always ends a sentence
            raise RuntimeError(f"{len(self.document.texts())} pieces, {len(lines)} translated")
        if isinstance(self.document, Subtitles):
            return ((BOM if self.bom else "") + self.document.translated(lines)).encode("utf-8")
        starts = [0]
        for line in self.text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        placed: list[list[PlacedSentence]] = [[] for _ in lines]
        for s in sentences:
            i = bisect.bisect_right(starts, s.start) - 1  # the line the sentence is on
            placed[i].append(
                PlacedSentence(s.start - starts[i], s.end - starts[i], s.text, s.alignment)
            )
        return self.document.translated(
            [UnitTranslation(line, mine) for line, mine in zip(lines, placed, strict=True)]
        )

    def places(self) -> list[str]:
        """What each line of :attr:`text` is in the file ("word/document.xml, paragraph 3",
        "line 3"); empty for an HTML file (whose places its errors name)."""
        if self.document is not None:
            return self.document.places()
        return [] if self.format == "html" else [f"line {i}" for i in range(1, self.lines + 1)]

    @property
    def lines(self) -> int:
        """How many lines :attr:`text` has."""
        return self.text.count("\n") + 1

    def parts(self) -> list[tuple[int, int, str]]:
        """:attr:`text` in parts of at most ``MAX_TEXT_CHARS`` (what one translation takes),
        cut at line ends: (first line's index, offset, part). HTML is one part."""
        if self.format == "html" or len(self.text) <= MAX_TEXT_CHARS:
            return [(0, 0, self.text)]
        parts: list[tuple[int, int, str]] = []
        first, offset, current = 0, 0, list[str]()
        size = 0
        for index, line in enumerate(self.text.split("\n")):
            if current and size + len(line) + 1 > MAX_TEXT_CHARS:
                parts.append((first, offset, "\n".join(current)))
                offset += size
                first, current, size = index, [], 0
            current.append(line)
            size += len(line) + 1
        parts.append((first, offset, "\n".join(current)))
        return parts


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
            "files (text and HTML in UTF-8); save it as one of them",
        )  # fmt: skip
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    if suffix in OFFICE_FORMATS:  # unpacking and parsing are CPU work: off the event loop
        return await asyncio.to_thread(_office_upload, data, name, fields)
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
    if suffix in SUBTITLE_FORMATS:
        try:
            subtitles = read_subtitles(text, name)
        except SubtitleError as exc:
            raise LibreTranslateError(400, f"Invalid request: file: {exc}") from None
        return _document_upload(name, subtitles, bom, fields)
    html = FORMATS[suffix][0] == "html"
    _check_size(name, text, MAX_TEXT_CHARS if html else MAX_DOCUMENT_CHARS)
    if not html:
        _check_lines(name, text, [])
    if FORMATS[suffix][0] == "html":
        bom = bom or declares_other_charset(text)
    return Upload(name, text, bom, fields)


def _office_upload(data: bytes, name: str, fields: dict[str, str]) -> Upload:
    """An office file's upload: its pieces of text, one per line (a newline always ends a
    sentence, so each comes back on its own line)."""
    try:
        document = read_office(data, name)
    except OfficeError as exc:
        raise LibreTranslateError(400, f"Invalid request: file: {exc}") from None
    return _document_upload(name, document, False, fields)


def _document_upload(
    name: str, document: OfficeDocument | Subtitles, bom: bool, fields: dict[str, str]
) -> Upload:
    """A document's upload: its pieces of text, one per line (a newline always ends a
    sentence, so each comes back on its own line; a newline inside one, never in a unit's
    text, becomes a space)."""
    text = "\n".join(piece.replace("\r", " ").replace("\n", " ") for piece in document.texts())
    _check_size(name, text, MAX_DOCUMENT_CHARS)
    _check_lines(name, text, document.places())
    return Upload(name, text, bom, fields, document)


def _check_lines(name: str, text: str, places: list[str]) -> None:
    """No line (a paragraph, a cue's sentence) longer than one translation takes."""
    for index, line in enumerate(text.split("\n")):
        if len(line) > MAX_TEXT_CHARS:
            where = places[index] if index < len(places) else f"line {index + 1}"
            raise LibreTranslateError(
                400, f"Invalid request: file: {name}: {where} has {len(line)} characters; a "
                f"line or paragraph may have {MAX_TEXT_CHARS} (break it into several)",
            )  # fmt: skip


def _check_size(name: str, text: str, limit: int) -> None:
    if is_blank(text):
        raise LibreTranslateError(400, f"Invalid request: file: {name} has no text to translate")
    if len(text) > limit:
        raise LibreTranslateError(
            400, f"Invalid request: file: {name} has {len(text)} characters of text; the limit "
            f"is {limit} (split it into several files)",
        )  # fmt: skip


def for_the_file(
    error: LibreTranslateError, name: str, places: list[str] | None = None
) -> LibreTranslateError:
    """``error`` met translating the file's text, naming the file where it names ``q`` (the
    whole text: "q: text[0] (its text run 3): ..." or "q is written in Hindi, ..."), and for an
    office file the place of the line it names ("line 4" → "word/document.xml, paragraph 7")."""
    message = re.sub(r"\bq(: text\[0\])?(?=[: ])", f"file: {name}", str(error), count=1)
    if places:
        message = re.sub(
            r"\bline (\d+)\b",
            lambda m: places[int(m.group(1)) - 1] if int(m.group(1)) <= len(places) else m[0],
            message,
        )
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
