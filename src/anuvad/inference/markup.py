"""HTML in, HTML out: the text between the tags is translated, the markup is kept byte for byte
(issue 34: an uploaded ``.html`` document, LibreTranslate's ``format: "html"``).

The document is cut into markup (tags, comments, doctype, ``<script>``/``<style>`` bodies) and
text runs. Each run with letters in it is unescaped (``&amp;`` → ``&``), its white space read
as the page shows it (a line break inside a paragraph is a space), stripped of its surrounding
white space, translated as a document (the caller splits it into sentences), and escaped again
between the same white space. Nothing is translated inside ``<code>``, ``<pre>``,
``<kbd>``, ``<samp>``, ``<var>``, ``<textarea>``, or an element marked ``translate="no"`` or
``class="notranslate"`` (the HTML and Google conventions), down to its end tag. Attribute values
(``title``, ``alt``) are markup and stay as written.

Text runs joined by inline elements (``<b>``, ``<a href>``, ``<span>``: :data:`INLINE_ELEMENTS`)
are one unit, translated whole: "Visit <b>Delhi</b> today" is one sentence to the model, and the
bold goes around the translated word that came from "Delhi" (:mod:`anuvad.inference.inline`,
with the word alignment the caller gives; word order without one). Every element of the unit is
in its translation, well nested; the inline tags are written as they were, only their places
among the words change. A unit whose inline elements do not open and close inside it (an
``<a>`` around a ``<div>``) is translated run by run, its markup byte for byte.
"""

from __future__ import annotations

import functools
import html
import html.entities
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from anuvad.inference.documents import DocumentTranslation
from anuvad.inference.inline import (
    TAG_REST,
    Block,
    Element,
    PlacedSentence,
    Stack,
    UnitTranslation,
    render,
)
from anuvad.inference.translation import Translation

# Markup that holds no translatable text, then any tag; everything between is text. A tag
# whose quotes do not close, or with a "<" inside, ends at its first ">".
_MARKUP = re.compile(
    rf"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<(script|style)\b{TAG_REST}>.*?</\1\s*>"
    rf"|<[!?/]?[A-Za-z]{TAG_REST}>|<[!?/]?[A-Za-z][^>]*>",
    re.DOTALL | re.IGNORECASE,
)
_START = re.compile(rf"<([A-Za-z][\w:-]*)({TAG_REST}|[^>]*)>")
_END = re.compile(r"</([A-Za-z][\w:-]*)\s*>")
_NO_TRANSLATE = re.compile(
    r"""\btranslate\s*=\s*["']?no\b|\bclass\s*=\s*["'][^"']*\bnotranslate\b""", re.IGNORECASE
)
# One character of a text run as written: an entity (``&nbsp;``, ``&#160;``, HTML5's names that
# need no semicolon, ``&nbsp``, matched as far as the name goes) or a character.
_UNIT = re.compile(
    r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|"
    + "|".join(re.escape(name) for name in sorted(html.entities.html5, key=len, reverse=True))
    + ")|.",
    re.DOTALL,
)
KEEP_ELEMENTS = frozenset({"code", "pre", "kbd", "samp", "var", "textarea"})
# Elements that sit inside a sentence: the text around them is one unit.
INLINE_ELEMENTS = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "big", "cite", "data", "del", "dfn", "em", "font", "i",
     "ins", "label", "mark", "nobr", "q", "s", "small", "span", "strike", "strong", "sub", "sup",
     "time", "tt", "u"}
)  # fmt: skip
VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip


@dataclass(frozen=True)
class Piece:
    """A stretch of the document: markup or text, whether its text is to be translated, and
    whether an enclosing element keeps it as written."""

    raw: str
    translate: bool = False
    text: bool = False
    kept: bool = False


@dataclass(frozen=True)
class Unit:
    """What is translated as one text: a text run, or runs joined by inline elements.

    Attributes:
        first: the index of its first piece (of :func:`split_html`'s).
        last: the index of its last piece.
        text: what the model is given: unescaped, white space as the page shows it, stripped.
        block: the unit's text with its inline elements; None for a single run.
        offset: where ``text`` begins in ``block.text``.
    """

    first: int
    last: int
    text: str
    block: Block | None = None
    offset: int = 0


def split_html(document: str) -> list[Piece]:
    """``document`` cut into markup and text pieces (joined, they give it back exactly); a text
    piece is marked for translation when it has a letter and no enclosing element keeps it."""
    return list(_split(document))


# A document is read by several steps (its units, their lines, its translation; an e-book's
# chapters by texts, places and the rewrite): each is cut once. The pieces and units are
# frozen; callers get their own list of them.
@functools.lru_cache(maxsize=4)
def _split(document: str) -> tuple[Piece, ...]:
    pieces: list[Piece] = []
    kept: list[str] = []  # open elements whose text is kept (innermost last)
    position = 0
    for match in _MARKUP.finditer(document):
        if match.start() > position:
            pieces.append(_text(document[position : match.start()], bool(kept)))
        tag = match.group()
        pieces.append(Piece(tag))
        if (start := _START.fullmatch(tag)) is not None:
            name = start.group(1).lower()
            closed = tag.endswith("/>") or name in VOID_ELEMENTS
            if not closed and (
                kept or name in KEEP_ELEMENTS or _NO_TRANSLATE.search(start.group(2))
            ):
                kept.append(name)
        elif (end := _END.fullmatch(tag)) is not None and end.group(1).lower() in kept:
            while kept and kept.pop() != end.group(1).lower():
                pass  # an element left open inside a kept one closes with it
        position = match.end()
    if position < len(document):
        pieces.append(_text(document[position:], bool(kept)))
    return tuple(pieces)


def _text(raw: str, kept: bool) -> Piece:
    letters = any(c.isalpha() for c in html.unescape(raw))
    return Piece(raw, translate=not kept and letters, text=True, kept=kept)


def html_units(document: str) -> list[Unit]:
    """The units :func:`translate_html` translates, in document order."""
    return list(_units(document))


@functools.lru_cache(maxsize=4)
def _units(document: str) -> tuple[Unit, ...]:
    pieces = split_html(document)
    units: list[Unit] = []
    group: list[int] = []  # text and inline tags not yet in a unit
    opened: list[str] = []  # the group's inline elements not yet closed
    for index, piece in enumerate(pieces):
        name = _inline_tag(piece.raw)
        stray = name is not None and piece.raw.startswith("</") and name not in opened
        if (piece.text and not piece.kept) or (name is not None and not stray):
            group.append(index)
            if name is not None and piece.raw.startswith("</"):
                opened.reverse()
                opened.remove(name)  # the innermost of that name
                opened.reverse()
            elif name is not None:
                opened.append(name)
            continue
        # anything else ends the group: markup, kept text, or an end tag whose start is not in
        # it (a translate="no" span's, an element around a block)
        units.extend(_group_units(pieces, group))
        group, opened = [], []
    units.extend(_group_units(pieces, group))
    return tuple(units)


def _inline_tag(raw: str) -> str | None:
    """The name of an inline element whose start or end tag ``raw`` is (None: another tag, or
    one of an element kept as written)."""
    if (start := _START.fullmatch(raw)) is not None:
        name = start.group(1).lower()
        if name in INLINE_ELEMENTS and not raw.endswith("/>") and not _NO_TRANSLATE.search(raw):
            return name
    elif (end := _END.fullmatch(raw)) is not None and end.group(1).lower() in INLINE_ELEMENTS:
        return end.group(1).lower()
    return None


def _group_units(pieces: list[Piece], group: list[int]) -> list[Unit]:
    """The units of a stretch of text and inline tags: one, when its elements open and close
    inside it and it has tags; else each translatable run alone."""
    runs = [i for i in group if pieces[i].translate]
    if not runs:
        return []
    block = _block(pieces, group) if any(not pieces[i].text for i in group) else None
    if block is None:
        return [Unit(i, i, _run_text(pieces[i].raw)) for i in runs]
    text = block.text.strip()
    return [Unit(group[0], group[-1], text, block, len(block.text) - len(block.text.lstrip()))]


def _block(pieces: list[Piece], group: list[int]) -> Block | None:
    """The group's text and elements (None: an element opened and not closed in it, or
    closed and not opened)."""
    block = Block()
    stack: Stack = ()
    names: list[str] = []
    for index in group:
        raw = pieces[index].raw
        if pieces[index].text:
            text = _HTML_SPACE.sub(" ", html.unescape(raw))
            if block.text.endswith(" "):
                text = text.lstrip(" ")  # a space on the page: the one before stands
            block.append(text, stack)
            continue
        name = _inline_tag(raw)
        assert name is not None
        if raw.startswith("</"):
            if not names or names[-1] != name:
                return None
            names.pop()
            element = stack[-1]
            block.elements[element] = Element(block.elements[element].start, raw)
            stack = stack[:-1]
        else:
            names.append(name)
            stack = block.open(Element(raw, ""), stack)
    if names or block.glued():  # an element inside a word: the unit run by run
        return None
    return block


def translate_html(
    document: str,
    translate: Callable[[Sequence[str]], Sequence[str | UnitTranslation]],
    lang: str | None = None,
) -> str:
    """``document`` with every unit's text replaced by its translation.

    Args:
        document: an HTML document or fragment.
        translate: the units' texts (:func:`html_texts`; each may hold several sentences) in,
            their translations out, in order; called once with every unit of the document. A
            unit with inline elements is placed by its translation's sentences and alignments
            when given (:class:`UnitTranslation`), else as one sentence in word order.
        lang: the translation's language, which the root element's ``lang`` and ``xml:lang``
            then declare where it has them (:func:`with_language`).

    Returns:
        The document with its markup as it was (a unit's inline tags placed among the
        translated words) and its text translated.
    """
    pieces = split_html(document)
    units = html_units(document)
    translated = list(translate([u.text for u in units]) if units else [])
    out = [piece.raw for piece in pieces]
    for unit, translation in zip(units, translated, strict=True):
        done = (
            translation
            if isinstance(translation, UnitTranslation)
            else UnitTranslation(translation)
        )
        if unit.block is None:
            lead, trail = _white_edges(pieces[unit.first].raw)
            out[unit.first] = lead + html.escape(done.text, quote=False) + trail
            continue
        sentences = done.sentences or [PlacedSentence(0, len(unit.text), done.text)]
        moved = [
            PlacedSentence(s.start + unit.offset, s.end + unit.offset, s.text, s.alignment)
            for s in sentences
        ]
        for index in range(unit.first, unit.last + 1):
            out[index] = ""
        out[unit.first] = render(unit.block, moved)
    translated_document = "".join(out)
    return with_language(translated_document, lang) if lang else translated_document


_ROOT = re.compile(r"<html\b[^>]*>", re.IGNORECASE)
_LANG = re.compile(r"(\s(?:xml:)?lang\s*=\s*)([\"'])[^\"'<>]*\2", re.IGNORECASE)


def with_language(document: str, lang: str) -> str:
    """``document`` with its root ``<html>`` element's ``lang`` and ``xml:lang`` attributes
    saying ``lang`` (a page translated into Hindi kept ``<html lang="en">``, which screen
    readers, fonts and search engines read); a document without them as it was."""
    root = _ROOT.search(document)
    if root is None:
        return document
    tag = _LANG.sub(lambda m: f"{m.group(1)}{m.group(2)}{lang}{m.group(2)}", root.group())
    return document[: root.start()] + tag + document[root.end() :]


def unit_translations(
    inline: Sequence[bool],
    documents: Sequence[DocumentTranslation[Translation]],
    align: Callable[[Translation], list[int] | None],
) -> list[UnitTranslation]:
    """Each unit's translation for :func:`translate_html`: its text, and for a unit with inline
    elements (``inline``) its sentences placed, each with ``align``'s word alignment of its
    translation."""
    return [
        UnitTranslation(
            document.text,
            [
                PlacedSentence(segment.start, segment.end, result.text, align(result))
                for segment, result in zip(document.segments, document.sentences, strict=True)
            ]
            if has_inline
            else (),
        )
        for has_inline, document in zip(inline, documents, strict=True)
    ]


def _white_edges(raw: str) -> tuple[str, str]:
    """The white space that begins and ends a text run, as written: what ``strip`` takes from
    the unescaped run, entities included (``&nbsp;&nbsp;Indented`` keeps its two ``&nbsp;``)."""
    units = _UNIT.findall(raw)
    white = [html.unescape(u).isspace() for u in units]
    first = next((i for i, w in enumerate(white) if not w), len(units))
    last = next((i for i in range(len(units) - 1, -1, -1) if not white[i]), first - 1)
    return "".join(units[:first]), "".join(units[last + 1 :])


# An HTML document's declared character set (<meta charset=...> or http-equiv's content=...).
_CHARSET = re.compile(r"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([\w.:-]+)", re.IGNORECASE)


def declares_other_charset(document: str) -> bool:
    """Whether ``document`` declares a character set other than UTF-8 in its first ``<meta>``
    tag that declares one (not in a comment or a script). An ASCII page that says latin-1 reads
    as UTF-8, but its translation, saved, would be read as latin-1: a byte-order mark in front
    overrides the declaration in every browser."""
    for piece in split_html(document):
        if piece.raw[:5].lower() == "<meta" and (declared := _CHARSET.search(piece.raw)):
            return declared.group(1).lower() not in ("utf-8", "utf8")
    return False


def run_lines(document: str) -> list[int]:
    """The line (from 1) on which each unit of :func:`html_texts` begins its text."""
    pieces = split_html(document)
    starts, position = [], 0
    for piece in pieces:
        starts.append(position)
        position += len(piece.raw)
    lines: list[int] = []
    counted, line = 0, 1
    for unit in html_units(document):
        first = next(i for i in range(unit.first, unit.last + 1) if pieces[i].translate)
        start = starts[first] + len(_white_edges(pieces[first].raw)[0])  # as the run is stripped
        line += document.count("\n", counted, start)
        counted = start
        lines.append(line)
    return lines


def html_texts(document: str) -> list[str]:
    """The texts :func:`translate_html` would translate (each unit's), unescaped, white space
    as the page shows it, stripped."""
    return [unit.text for unit in html_units(document)]


# HTML's white space (not the no-break space): a line break in a paragraph's source is a space
# on the page, so a sentence wrapped across lines is one sentence, not two (a newline ends a
# sentence in a plain text).
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


def _run_text(raw: str) -> str:
    """A text run as the page shows it: unescaped, its white space runs one space, stripped."""
    return _HTML_SPACE.sub(" ", html.unescape(raw)).strip()


__all__ = [
    "INLINE_ELEMENTS",
    "KEEP_ELEMENTS",
    "Piece",
    "Unit",
    "UnitTranslation",
    "declares_other_charset",
    "html_texts",
    "html_units",
    "run_lines",
    "split_html",
    "translate_html",
    "unit_translations",
    "with_language",
]
