"""Office documents and e-books in, the same documents out with their text translated: Word
(``.docx``), PowerPoint (``.pptx``), Excel's cell texts (``.xlsx``), OpenDocument text and
presentations (``.odt``, ``.odp``) and EPUB books (``.epub``), the formats LibreTranslate's
``translate_file`` takes (and ``.xlsx``, which it does not).

Each is a ZIP of XML parts. The parts that hold the prose (a Word file's body, headers, footers,
footnotes and endnotes; each slide and its notes; the shared strings of a workbook and the text
boxes on its sheets, and the cell texts a worksheet holds itself (as openpyxl and pandas
write them); the titles of charts and the texts of SmartArt graphics in all three; an
OpenDocument's content and styles (headers, footers, master pages) and its embedded objects
(a chart's titles and table); an EPUB's XHTML chapters and its table of contents) are cut into
paragraphs (:mod:`anuvad.inference.office_xml`; an EPUB's chapters as HTML,
:mod:`anuvad.inference.markup`); every other entry (images, styles, settings)
is written back unchanged, in the same order and with the same compression (an EPUB's or an
OpenDocument's uncompressed ``mimetype`` first, as readers require).

:func:`read_office` checks the file before anything is translated: a ZIP, not encrypted, the
parts its format needs, sizes that fit in memory. :meth:`OfficeDocument.texts` gives the pieces
to translate with :meth:`~OfficeDocument.places` naming each ("word/document.xml, paragraph
12"), and :meth:`~OfficeDocument.translated` writes the document with their translations.
"""

from __future__ import annotations

import contextlib
import io
import re
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from anuvad.inference.markup import (
    UnitTranslation,
    html_texts,
    html_units,
    run_lines,
    translate_html,
)
from anuvad.inference.office_dialects import (
    DRAWING,
    INLINE_STRINGS,
    NCX,
    OPEN_DOCUMENT,
    SHARED_STRINGS,
    WORD,
    Dialect,
)
from anuvad.inference.office_xml import XmlPart, with_complex_styles

# suffix → (what people call the format, its media type, the parts with text: pattern → dialect;
# None: an XHTML chapter, read as HTML)
# Word Online names its main part document2.xml (or document22.xml) at times
_WORD_PARTS = r"word/(document\d*|header\d*|footer\d*|footnotes|endnotes)\.xml"
# A chart's titles and a SmartArt graphic's texts are DrawingML paragraphs in every OOXML
# format: the graphic's data and the drawing Office shows until it lays the graphic out again.
# A chart's cached cell values (category and series names) come from its embedded workbook and
# are left to it.
_GRAPHICS = r"(charts/chart|diagrams/data|diagrams/drawing)\d+\.xml"
# Graphics whose text is a few titles: one too large to read (a chart of many points, whose
# cached values fill its part) is written back as it was instead of refusing the document.
_GRAPHIC_PARTS = rf"(word|ppt|xl)/{_GRAPHICS}|xl/drawings/drawing\d+\.xml|Object \d+/content\.xml"
# An OpenDocument's embedded objects (a chart: its titles, and the table it draws from) are
# folders of their own.
_ODF_PARTS: dict[str, Dialect | None] = {
    r"content\.xml": OPEN_DOCUMENT,
    r"styles\.xml": OPEN_DOCUMENT,
    r"Object \d+/content\.xml": OPEN_DOCUMENT,
}
FORMATS: dict[str, tuple[str, str, dict[str, Dialect | None]]] = {
    ".docx": (
        "a Word document",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        {_WORD_PARTS: WORD, rf"word/{_GRAPHICS}": DRAWING},
    ),
    ".pptx": (
        "a PowerPoint presentation",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        {
            r"ppt/slides/slide\d+\.xml": DRAWING,
            r"ppt/notesSlides/notesSlide\d+\.xml": DRAWING,
            rf"ppt/{_GRAPHICS}": DRAWING,
        },
    ),
    ".xlsx": (
        "an Excel workbook",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        {
            r"xl/sharedStrings\.xml": SHARED_STRINGS,
            r"xl/worksheets/sheet\d+\.xml": INLINE_STRINGS,
            r"xl/drawings/drawing\d+\.xml": DRAWING,  # text boxes and shapes on a sheet
            rf"xl/{_GRAPHICS}": DRAWING,
        },
    ),
    ".odt": (
        "an OpenDocument text",
        "application/vnd.oasis.opendocument.text",
        _ODF_PARTS,
    ),
    ".odp": (
        "an OpenDocument presentation",
        "application/vnd.oasis.opendocument.presentation",
        _ODF_PARTS,
    ),
    ".epub": (
        "an EPUB book",
        "application/epub+zip",
        {r"(?!META-INF/).*\.(xhtml|html|htm)": None, r".*\.ncx": NCX},
    ),
}
# The part without which a file is not of its format (what a renamed ZIP lacks): its name as
# messages say it, and the pattern of the names it may have.
_REQUIRED = {
    ".docx": ("word/document.xml", r"word/document\d*\.xml"),
    ".pptx": ("ppt/presentation.xml", r"ppt/presentation\.xml"),
    ".xlsx": ("xl/workbook.xml", r"xl/workbook\.xml"),
    ".odt": ("content.xml", r"content\.xml"),
    ".odp": ("content.xml", r"content\.xml"),
    ".epub": ("META-INF/container.xml", r"META-INF/container\.xml"),
}
MAX_ENTRIES = 20_000
MAX_UNPACKED_BYTES = 256 * 1024 * 1024  # every entry unpacked, as the file declares them
# The parts read for text, unpacked: a 20,000-character document's XML is well under a MB; a
# small upload that unpacks into a huge part would hold a worker for minutes.
MAX_TEXT_PART_BYTES = 8 * 1024 * 1024
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an encrypted Office file, or an old .doc/.ppt


class OfficeError(ValueError):
    """A file that cannot be read as its format: the message names it and says what to do."""


@dataclass
class _Entry:
    info: zipfile.ZipInfo
    data: bytes
    part: XmlPart | None = None  # an XML part with text
    chapter: str | None = None  # an XHTML chapter (its text)
    bom: bool = False  # the part began with a byte-order mark (written back with it)


class OfficeDocument:
    """A document of one of :data:`FORMATS`, read, with the pieces of text it holds."""

    def __init__(self, suffix: str, entries: list[_Entry]) -> None:
        self.suffix = suffix
        self._entries = entries

    @property
    def media_type(self) -> str:
        """The format's media type (the download's Content-Type)."""
        return FORMATS[self.suffix][1]

    def texts(self) -> list[str]:
        """The pieces of text to translate, in document order (a paragraph, or a part of one
        between tabs and line breaks; an EPUB's text runs)."""
        texts: list[str] = []
        for entry in self._entries:
            if entry.part is not None:
                texts.extend(entry.part.texts())
            elif entry.chapter is not None:
                texts.extend(html_texts(entry.chapter))
        return texts

    def inline(self) -> list[bool]:
        """For each of :meth:`texts`, whether it holds inline formatting (a Word paragraph's
        bold word or link, an EPUB paragraph's <b>), which a word alignment places in its
        translation."""
        inline: list[bool] = []
        for entry in self._entries:
            if entry.part is not None:
                inline.extend(entry.part.inline())
            elif entry.chapter is not None:
                inline.extend(unit.block is not None for unit in html_units(entry.chapter))
        return inline

    def places(self) -> list[str]:
        """Where each of :meth:`texts` is, for messages: "word/document.xml, paragraph 12",
        "OEBPS/chapter1.xhtml, line 40"."""
        places: list[str] = []
        for entry in self._entries:
            name = entry.info.filename
            if entry.part is not None:
                places.extend(f"{name}, paragraph {p.paragraph}" for p in entry.part.pieces)
            elif entry.chapter is not None:
                places.extend(f"{name}, line {line}" for line in run_lines(entry.chapter))
        return places

    def translated(self, translations: Sequence[str | UnitTranslation]) -> bytes:
        """The document with each of :meth:`texts` replaced by its translation (in order;
        with its sentences and word alignments, an inline text's elements are placed by them:
        :func:`~anuvad.inference.markup.translate_html`), every other byte of its parts and
        every other entry as it was."""
        given = iter(translations)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for entry in self._entries:
                data = entry.data
                bom = "\ufeff" if entry.bom else ""
                if entry.part is not None:
                    mine = [next(given) for _ in entry.part.pieces]
                    data = (bom + entry.part.translated(mine)).encode("utf-8")
                elif self.suffix == ".docx" and entry.info.filename == "word/styles.xml":
                    data = _word_styles(data)
                elif entry.chapter is not None:
                    chapter = translate_html(
                        entry.chapter, lambda runs: [next(given) for _ in runs]
                    )
                    data = (bom + chapter).encode("utf-8")
                archive.writestr(_fresh_info(entry.info), data)
        if next(given, None) is not None:
            raise ValueError("more translations than texts")
        return out.getvalue()


def _word_styles(data: bytes) -> bytes:
    """Word's styles, their bold, italic and sizes made so for complex-script text too (a
    character style "Strong" makes Hindi bold only with <w:bCs/>); as they were when they are
    not UTF-8."""
    try:
        return with_complex_styles(data.decode("utf-8"), word=True).encode("utf-8")
    except UnicodeDecodeError:
        return data


def is_office(name: str) -> bool:
    """Whether ``name``'s extension is one of :data:`FORMATS`."""
    return PurePosixPath(name).suffix.lower() in FORMATS


def read_office(data: bytes, name: str) -> OfficeDocument:
    """The document ``data``, of the format ``name``'s extension says.

    Raises:
        OfficeError: not a ZIP, encrypted, without the part its format needs, too large to
            unpack, or a text part not in UTF-8; the message names the file and what to do.
    """
    suffix = PurePosixPath(name).suffix.lower()
    kind, _, parts = FORMATS[suffix]
    if data.startswith(_OLE):
        raise OfficeError(
            f"{name}: the file is password-protected (or an older Office format renamed); "
            f"save it as {suffix} without a password"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError):
        raise OfficeError(
            f"{name}: not {kind}: the file is not a ZIP archive as {suffix} files are "
            f"(damaged, or another format renamed); save it again as {suffix}"
        ) from None
    with archive:
        infos = archive.infolist()
        required, pattern = _REQUIRED[suffix]
        if not any(re.fullmatch(pattern, info.filename) for info in infos):
            raise OfficeError(
                f"{name}: not {kind}: it has no {required}; save it again as {suffix}"
            )
        if len(infos) > MAX_ENTRIES or sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
            raise OfficeError(
                f"{name}: {len(infos)} entries of {sum(i.file_size for i in infos)} bytes "
                f"unpacked; at most {MAX_ENTRIES} entries and {MAX_UNPACKED_BYTES} bytes "
                "(split the document, or save its images smaller)"
            )
        if any(info.flag_bits & 0x1 for info in infos) or _odf_encrypted(archive, infos):
            raise OfficeError(f"{name}: the file is password-protected; save it without one")
        entries = [_entry(archive, info, parts, name) for info in infos]
    return OfficeDocument(suffix, entries)


def _odf_encrypted(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> bool:
    """Whether an OpenDocument declares its parts encrypted (a ZIP like any other, its
    manifest saying so)."""
    manifest = next((i for i in infos if i.filename == "META-INF/manifest.xml"), None)
    if manifest is None or manifest.file_size > MAX_TEXT_PART_BYTES:
        return False
    try:
        return b"encryption-data" in archive.read(manifest)
    except (zipfile.BadZipFile, OSError, zlib.error):
        return False


def _entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, parts: dict[str, Dialect | None], name: str
) -> _Entry:
    text_part = [d for p, d in parts.items() if re.fullmatch(p, info.filename, flags=re.IGNORECASE)]
    try:
        data = archive.read(info)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        OSError,
        zlib.error,
    ) as exc:
        raise OfficeError(
            f"{name}: {info.filename} cannot be unpacked ({exc}); save the document again"
        ) from None
    if not text_part:
        return _Entry(info, data)
    dialect = text_part[0]
    if dialect is not None and dialect.marker and dialect.marker.encode("ascii") not in data:
        return _Entry(info, data)  # no text of its own (a worksheet of numbers): as it was
    if info.file_size > MAX_TEXT_PART_BYTES:
        if re.fullmatch(_GRAPHIC_PARTS, info.filename, flags=re.IGNORECASE):
            return _Entry(info, data)  # a chart of many points: its titles stay as they were
        raise OfficeError(
            f"{name}: {info.filename} unpacks to {info.file_size} bytes; at most "
            f"{MAX_TEXT_PART_BYTES} for a part with text (split the document)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise OfficeError(
            f"{name}: {info.filename} is not UTF-8 (byte {exc.start + 1}, line {line}); "
            "save the document again"
        ) from None
    bom = text.startswith("\ufeff")
    text = text.removeprefix("\ufeff")
    if dialect is None:
        return _Entry(info, data, chapter=text, bom=bom)
    return _Entry(info, data, part=XmlPart(text, dialect), bom=bom)


def _fresh_info(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """An entry's name, time, compression and attributes, without the sizes, checksums and
    flags of the old data (written again for the new). A name stored in UTF-8 without the
    flag that says so (read as code page 437) is written as the UTF-8 it was."""
    filename = info.filename
    if not info.flag_bits & 0x800 and not filename.isascii():
        with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):  # real cp437: as read
            filename = filename.encode("cp437").decode("utf-8")
    fresh = zipfile.ZipInfo(filename, date_time=info.date_time)
    fresh.compress_type = info.compress_type
    fresh.external_attr = info.external_attr
    fresh.create_system = info.create_system
    fresh.comment = info.comment
    return fresh


__all__ = [
    "FORMATS",
    "MAX_UNPACKED_BYTES",
    "OfficeDocument",
    "OfficeError",
    "is_office",
    "read_office",
]
