"""Where each office format keeps its prose: the paragraph, text, break and skipped elements
of Word, DrawingML (PowerPoint), Excel's shared strings, OpenDocument and an EPUB's table of
contents, by the prefixes the dialects use (:mod:`anuvad.inference.office_xml` maps a part's own
prefixes onto these)."""

from __future__ import annotations

from dataclasses import dataclass

from anuvad.inference.office_runs import DRAWING_RUNS, EXCEL_RUNS, WORD_RUNS, RunNames

# The namespaces the dialects name, with the prefix the dialects use for them.
NAMESPACES = {
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main": "w",
    "http://schemas.openxmlformats.org/drawingml/2006/main": "a",
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main": "x",
    "urn:oasis:names:tc:opendocument:xmlns:text:1.0": "text",
    "urn:oasis:names:tc:opendocument:xmlns:office:1.0": "office",
    "http://www.w3.org/2000/svg": "svg",
    "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0": "svg",
    "http://www.daisy.org/z3986/2005/ncx/": "ncx",
}


@dataclass(frozen=True)
class Dialect:
    """Where one family of XML parts keeps its prose.

    Attributes:
        paragraph: the elements that are paragraphs (a piece of text each, nested ones apart).
        text: the elements whose character data is text; empty: all character data inside a
            paragraph is (OpenDocument).
        breaks: empty elements that cut a paragraph into pieces translated apart (tab, line
            break).
        skip: elements whose character data is never translated (fields, deleted text); one
            inside a paragraph also cuts it (the text around a page number is two pieces).
        wrappers: elements a carrier run had better not be inside (an insertion a reviewer
            may reject, a link): another run of the piece carries its translation if any can.
        spaces: OpenDocument's ``text:s`` (``c`` spaces); "" where the dialect has none.
        collapse: white space collapses to one space, as OpenDocument reads it (Word keeps it).
        runs: the dialect's runs, whose formatting a word alignment carries across
            (:mod:`anuvad.inference.office_runs`); None: the whole translation in one run.
        marker: a part of this dialect is read for text only when it holds this ("": always);
            one without it is written back as it was, however large (a worksheet of numbers).
    """

    paragraph: frozenset[str]
    text: frozenset[str] = frozenset()
    breaks: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    spaces: str = ""
    collapse: bool = False
    runs: RunNames | None = None
    marker: str = ""


WORD = Dialect(
    paragraph=frozenset({"w:p"}),
    text=frozenset({"w:t"}),
    breaks=frozenset({"w:tab", "w:br", "w:cr", "w:ptab"}),
    # w:moveFrom: text moved away (its copy is in w:moveTo); w:rt: a ruby guide over a word
    skip=frozenset({"w:instrText", "w:delText", "w:fldSimple", "w:moveFrom", "w:rt"}),
    wrappers=frozenset({"w:ins", "w:moveTo", "w:hyperlink"}),
    runs=WORD_RUNS,
)
DRAWING = Dialect(  # PowerPoint's slides and notes
    paragraph=frozenset({"a:p"}),
    text=frozenset({"a:t"}),
    breaks=frozenset({"a:br"}),
    skip=frozenset({"a:fld"}),
    runs=DRAWING_RUNS,
)
SHARED_STRINGS = Dialect(  # Excel's cell texts
    paragraph=frozenset({"x:si"}),
    text=frozenset({"x:t"}),
    skip=frozenset({"x:rPh", "x:phoneticPr"}),
    runs=EXCEL_RUNS,
)
# A worksheet's own cell texts (``t="inlineStr"``), where a program other than Excel (openpyxl,
# and so pandas' to_excel) writes them instead of the shared strings.
INLINE_STRINGS = Dialect(
    paragraph=frozenset({"x:is"}),
    text=frozenset({"x:t"}),
    skip=SHARED_STRINGS.skip,
    runs=EXCEL_RUNS,
    marker="inlineStr",
)
OPEN_DOCUMENT = Dialect(
    paragraph=frozenset({"text:p", "text:h"}),
    breaks=frozenset({"text:tab", "text:line-break"}),
    skip=frozenset(
        {
            "text:note-citation",
            "text:page-number",
            "text:page-count",
            "text:date",
            "text:time",
            "text:sequence",
            "text:sequence-ref",
            "text:bookmark-ref",
            "text:reference-ref",
            "text:note-ref",
            "text:chapter",
            "text:file-name",
            "svg:title",
            "svg:desc",
            "office:annotation",
            "office:annotation-end",
        }
    ),
    wrappers=frozenset({"text:a"}),
    spaces="text:s",
    collapse=True,
)
NCX = Dialect(paragraph=frozenset({"ncx:text"}))  # an EPUB's table of contents


__all__ = [
    "DRAWING",
    "INLINE_STRINGS",
    "NAMESPACES",
    "NCX",
    "OPEN_DOCUMENT",
    "SHARED_STRINGS",
    "WORD",
    "Dialect",
]
