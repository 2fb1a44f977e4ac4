"""Small office documents and e-books built from their XML, as the applications write them:
the parts a reader needs to open the file (content types, relationships, manifests), the
text in the layouts Word, PowerPoint, Excel, LibreOffice and EPUB tools use (runs, fields,
tabs, notes, spans, text boxes)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
X = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def zipped(entries: list[tuple[str, str | bytes]], stored_first: bool = False) -> bytes:
    """A ZIP of ``entries`` in order (the first stored uncompressed when ``stored_first``: an
    EPUB's or an OpenDocument's ``mimetype``), the others deflated."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for i, (name, data) in enumerate(entries):
            method = zipfile.ZIP_STORED if stored_first and i == 0 else zipfile.ZIP_DEFLATED
            archive.writestr(zipfile.ZipInfo(name, (2024, 6, 12, 8, 0, 0)), data, method)
    return out.getvalue()


def docx(body: str, prefix: str = "w", header: str = "", image: bytes = b"") -> bytes:
    """A Word document whose body is ``body`` (``w:p`` elements, written with ``prefix``), a
    header with ``header``'s paragraphs when given, and an image (``image``'s bytes, or a small
    one)."""
    ns = f'xmlns:{prefix}="{W}" xmlns:r="{R}"'
    types = (
        f'{DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.document.main+xml"/>'
        + (
            '<Override PartName="/word/header1.xml" ContentType="application/vnd.openxml'
            'formats-officedocument.wordprocessingml.header+xml"/>'
            if header
            else ""
        )
        + "</Types>"
    )
    rels = (
        f'{DECL}<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="http://schemas.'
        'openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
        'Target="word/document.xml"/></Relationships>'
    )
    sect = ""
    entries: list[tuple[str, str | bytes]] = [("[Content_Types].xml", types), ("_rels/.rels", rels)]
    if header:
        sect = (
            f'<{prefix}:sectPr><{prefix}:headerReference {prefix}:type="default" r:id="rH"/>'
            f"</{prefix}:sectPr>"
        )
        entries.append(
            (
                "word/_rels/document.xml.rels",
                f'{DECL}<Relationships xmlns="{PKG}"><Relationship Id="rH" Type="http://schemas.'
                'openxmlformats.org/officeDocument/2006/relationships/header" '
                'Target="header1.xml"/></Relationships>',
            )
        )
        entries.append(("word/header1.xml", f"{DECL}<{prefix}:hdr {ns}>{header}</{prefix}:hdr>"))
    document = (
        f"{DECL}<{prefix}:document {ns}><{prefix}:body>{body}{sect}</{prefix}:body>"
        f"</{prefix}:document>"
    )
    entries.insert(2, ("word/document.xml", document))
    picture = image or b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    entries.append(("word/media/image1.png", picture))
    return zipped(entries)


def pptx(slides: list[str], notes: str = "") -> bytes:
    """A presentation with one slide per ``slides`` entry (the ``a:p`` elements of its one text
    box) and, when given, notes on the first slide."""
    types = (
        f'{DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>'
    )
    entries: list[tuple[str, str | bytes]] = [
        ("[Content_Types].xml", types),
        ("ppt/presentation.xml", f'{DECL}<p:presentation xmlns:p="{P}"/>'),
    ]
    for number, paragraphs in enumerate(slides, start=1):
        entries.append(
            (
                f"ppt/slides/slide{number}.xml",
                f'{DECL}<p:sld xmlns:a="{A}" xmlns:p="{P}"><p:cSld><p:spTree><p:sp><p:txBody>'
                f"<a:bodyPr/>{paragraphs}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>",
            )
        )
    if notes:
        entries.append(
            (
                "ppt/notesSlides/notesSlide1.xml",
                f'{DECL}<p:notes xmlns:a="{A}" xmlns:p="{P}"><p:cSld><p:spTree><p:sp><p:txBody>'
                f"{notes}</p:txBody></p:sp></p:spTree></p:cSld></p:notes>",
            )
        )
    return zipped(entries)


def xlsx(strings: str) -> bytes:
    """A workbook whose shared strings are ``strings`` (``si`` elements)."""
    return zipped(
        [
            ("xl/workbook.xml", f'{DECL}<workbook xmlns="{X}"/>'),
            ("xl/sharedStrings.xml", f'{DECL}<sst xmlns="{X}">{strings}</sst>'),
            ("xl/worksheets/sheet1.xml", f'{DECL}<worksheet xmlns="{X}"/>'),
        ]
    )


ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.3"'
)


def odf(body: str, kind: str = "text") -> bytes:
    """An OpenDocument ``kind`` ("text" or "presentation") whose ``office:body`` holds
    ``body``."""
    media = f"application/vnd.oasis.opendocument.{kind}"
    manifest = (
        f'{DECL}<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:'
        'manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" '
        f'manifest:media-type="{media}"/><manifest:file-entry manifest:full-path="content.xml" '
        'manifest:media-type="text/xml"/></manifest:manifest>'
    )
    content = (
        f"{DECL}<office:document-content {ODF_NS}><office:body><office:{kind}>{body}"
        f"</office:{kind}></office:body></office:document-content>"
    )
    return zipped(
        [("mimetype", media), ("content.xml", content), ("META-INF/manifest.xml", manifest)],
        stored_first=True,
    )


def epub(chapters: dict[str, str], toc: list[str]) -> bytes:
    """An EPUB 2 book with ``chapters`` (name → the body of its XHTML) and a table of contents
    with ``toc``'s titles."""
    container = (
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
        '"application/oebps-package+xml"/></rootfiles></container>'
    )
    items = "".join(
        f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, name in enumerate(chapters)
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Trains</dc:title>'
        f'</metadata><manifest>{items}<item id="ncx" href="toc.ncx" media-type="application/'
        'x-dtbncx+xml"/></manifest><spine toc="ncx">'
        + "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        + "</spine></package>"
    )
    points = "".join(
        f'<navPoint id="n{i}"><navLabel><text>{title}</text></navLabel>'
        f'<content src="{list(chapters)[min(i, len(chapters) - 1)]}"/></navPoint>'
        for i, title in enumerate(toc)
    )
    ncx = (
        '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
        f"<navMap>{points}</navMap></ncx>"
    )
    entries: list[tuple[str, str | bytes]] = [
        ("mimetype", "application/epub+zip"),
        ("META-INF/container.xml", container),
        ("OEBPS/content.opf", opf),
        ("OEBPS/toc.ncx", ncx),
    ]
    for name, body in chapters.items():
        entries.append(
            (
                f"OEBPS/{name}",
                '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/'
                f'xhtml"><head><title>{name}</title></head><body>{body}</body></html>',
            )
        )
    return zipped(entries, stored_first=True)


def run(text: str, bold: bool = False, prefix: str = "w") -> str:
    """A Word run holding ``text`` (bold when asked)."""
    props = f"<{prefix}:rPr><{prefix}:b/></{prefix}:rPr>" if bold else ""
    space = ' xml:space="preserve"' if text != text.strip() else ""
    return f"<{prefix}:r>{props}<{prefix}:t{space}>{text}</{prefix}:t></{prefix}:r>"


def paragraph(*runs: str, prefix: str = "w") -> str:
    """A Word paragraph of ``runs``."""
    return f"<{prefix}:p>{''.join(runs)}</{prefix}:p>"


def translated_as_served(translator: Any, document: Any) -> bytes:
    """``document`` (an :class:`~anuvad.inference.office.OfficeDocument`) translated as the
    server's translate_file and ``anuvad translate`` translate it: each piece a document of
    sentences in the model's own search, a piece with inline formatting placed by the model's
    word alignment."""
    from anuvad.inference.alignment import word_alignment
    from anuvad.inference.documents import translate_documents
    from anuvad.inference.markup import unit_translations

    documents = translate_documents(
        document.texts(), "en", lambda s: translator.translate(s, translator.decode)
    )
    placed = unit_translations(
        document.inline(), documents, lambda r: word_alignment(translator.attention_of(r))
    )
    result: bytes = document.translated(placed)
    return result
