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

Each text run is translated on its own, so a sentence cut by an inline tag ("Visit <b>Delhi</b>
today") is translated in pieces: markup is never moved or dropped, at some cost in fluency.
"""

from __future__ import annotations

import html
import html.entities
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Markup that holds no translatable text, then any tag; everything between is text.
_MARKUP = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<(script|style)\b[^>]*>.*?</\1\s*>|<[!?/]?[A-Za-z][^>]*>",
    re.DOTALL | re.IGNORECASE,
)
_START = re.compile(r"<([A-Za-z][\w:-]*)([^>]*)>")
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
VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip


@dataclass(frozen=True)
class Piece:
    """A stretch of the document: markup or text, and whether its text is to be translated."""

    raw: str
    translate: bool = False


def split_html(document: str) -> list[Piece]:
    """``document`` cut into markup and text pieces (joined, they give it back exactly); a text
    piece is marked for translation when it has a letter and no enclosing element keeps it."""
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
    return pieces


def _text(raw: str, kept: bool) -> Piece:
    return Piece(raw, translate=not kept and any(c.isalpha() for c in html.unescape(raw)))


def translate_html(document: str, translate: Callable[[Sequence[str]], Sequence[str]]) -> str:
    """``document`` with every translatable text run replaced by its translation.

    Args:
        document: an HTML document or fragment.
        translate: texts in (each may hold several sentences), their translations out, in order;
            called once with every run of the document.

    Returns:
        The document with its markup as it was and its text translated.
    """
    pieces = split_html(document)
    runs = [_run_text(p.raw) for p in pieces if p.translate]
    translated = iter(translate(runs) if runs else [])
    out: list[str] = []
    for piece in pieces:
        if not piece.translate:
            out.append(piece.raw)
            continue
        lead, trail = _white_edges(piece.raw)
        out.append(lead + html.escape(next(translated), quote=False) + trail)
    return "".join(out)


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
    """The line (from 1) on which each text run of :func:`html_texts` begins its text."""
    lines: list[int] = []
    position, counted, line = 0, 0, 1
    for piece in split_html(document):
        if piece.translate:
            start = position + len(_white_edges(piece.raw)[0])  # as the run is stripped
            line += document.count("\n", counted, start)
            counted = start
            lines.append(line)
        position += len(piece.raw)
    return lines


def html_texts(document: str) -> list[str]:
    """The text runs :func:`translate_html` would translate, unescaped and stripped."""
    return [_run_text(p.raw) for p in split_html(document) if p.translate]


# HTML's white space (not the no-break space): a line break in a paragraph's source is a space
# on the page, so a sentence wrapped across lines is one sentence, not two (a newline ends a
# sentence in a plain text).
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


def _run_text(raw: str) -> str:
    """A text run as the page shows it: unescaped, its white space runs one space, stripped."""
    return _HTML_SPACE.sub(" ", html.unescape(raw)).strip()


__all__ = [
    "KEEP_ELEMENTS",
    "Piece",
    "declares_other_charset",
    "html_texts",
    "run_lines",
    "split_html",
    "translate_html",
]
