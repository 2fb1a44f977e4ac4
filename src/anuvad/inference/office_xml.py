"""The text of one XML part of an office document, paragraph by paragraph, and the part written
back with each paragraph's translation (:mod:`anuvad.inference.office` holds the containers).

A part is cut into markup and character data, as :mod:`anuvad.inference.markup` cuts HTML, so
whatever is not translated stays byte for byte. Each paragraph (Word's ``w:p``, DrawingML's
``a:p``, OpenDocument's ``text:p`` / ``text:h``, a spreadsheet's shared string ``x:si``) is one
piece of text, cut further where a tab or a line break stands in it; a piece is translated
whole, so a sentence that Word stores in several runs (a spell-check mark, a bold word) reaches
the model as one sentence. Its translation goes into the run that held most of its letters and
the piece's other runs are emptied: the paragraph keeps its style and its runs, and a sentence
keeps the formatting of most of its text; a bold word inside it is not carried over (that needs
a word alignment).

Elements whose text is not prose are left as they are: field codes and their results (a page
number, a date), deleted text of tracked changes, footnote marks, phonetic guides. Prefixes are
read from each part's namespace declarations, so a producer that writes ``ns0:p`` for Word's
namespace is read as one that writes ``w:p``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from anuvad.inference.inline import TAG_REST, PlacedSentence, UnitTranslation, render
from anuvad.inference.office_dialects import NAMESPACES, OPEN_DOCUMENT, Dialect
from anuvad.inference.office_runs import (
    WORD_RUNS,
    RunBlock,
    run_block,
    run_start,
    span_block,
    with_complex_script,
)

# Markup that holds no character data, then any tag; everything between is character data.
_MARKUP = re.compile(
    rf"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>|<![A-Za-z][^>]*>|<[^>\s]{TAG_REST}>|<[^>]+>",
    re.DOTALL,
)
_TAG = re.compile(rf"<(/?)([\w.-]+(?::[\w.-]+)?)((?:\s{TAG_REST})?)(?<!/)(/?)>", re.DOTALL)
_NAMESPACE = re.compile(r"""\bxmlns(?::([\w.-]+))?\s*=\s*["']([^"']*)["']""")
_SPACES = re.compile(r"[ \t\r\n]+")  # OpenDocument's white space (not a no-break space)
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # no XML 1.0 may hold
_FIELD = re.compile(r"""\bfldCharType\s*=\s*["'](begin|end)["']""")
_COUNT = re.compile(r"""\bc\s*=\s*["'](\d+)["']""")


@dataclass
class Piece:
    """A stretch of one paragraph translated whole: the character data tokens it is made of.

    Attributes:
        paragraph: the paragraph's number in its part (from 1, every paragraph counted).
        tokens: indices of its tokens in the part (text, and ``text:s`` tags).
        values: what each token adds to the piece's text.
        holders: for each token, the index of the start tag of the element holding it (-1: none).
        wrapped: for each token, whether it is inside one of the dialect's ``wrappers``.
        span: the paragraph's start and end tag indices when the piece is all of it (not cut
            by a break, a field or a nested paragraph's end); None otherwise.
    """

    paragraph: int
    tokens: list[int] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    holders: list[int] = field(default_factory=list)
    wrapped: list[bool] = field(default_factory=list)
    span: tuple[int, int] | None = None


class XmlPart:
    """One XML part cut into tokens, with its translatable pieces."""

    def __init__(self, xml: str, dialect: Dialect) -> None:
        self.tokens: list[str] = _tokens(xml)
        self.dialect = dialect
        prefixes = _prefixes(xml)
        self._name_of = lambda raw: _name(raw, prefixes)
        self.pieces: list[Piece] = [
            p for p in _pieces(self.tokens, dialect, prefixes) if _has_letter(p)
        ]
        self.blocks: list[RunBlock | None] = [self._block(p) for p in self.pieces]

    def _block(self, piece: Piece) -> RunBlock | None:
        """The piece's inline formatting as a block (None: none to carry, or not plain)."""
        if self.dialect.runs is not None:
            return run_block(self.tokens, piece.tokens, self.dialect.runs, self._name_of)
        if self.dialect is OPEN_DOCUMENT and piece.span is not None:
            return span_block(self.tokens, *piece.span, self._name_of)
        return None

    def inline(self) -> list[bool]:
        """For each piece, whether its runs differ in formatting (a bold word, a link): a word
        alignment carries them into its translation."""
        return [block is not None for block in self.blocks]

    def texts(self) -> list[str]:
        """Each piece's text (white space at its edges taken off)."""
        return [self._joined(piece).strip() for piece in self.pieces]

    def _joined(self, piece: Piece) -> str:
        """The piece's text: OpenDocument's white space collapsed; a line break in a Word or
        Excel text (Alt+Enter in a cell) a space, each, so offsets stay."""
        joined = "".join(piece.values)
        if self.dialect.collapse:
            return _SPACES.sub(" ", joined)
        return joined.replace("\r", " ").replace("\n", " ")

    def translated(self, translations: Sequence[str | UnitTranslation]) -> str:
        """The part with each piece's text replaced by its translation (in piece order), and
        (an OpenDocument part) its styles made for complex-script text too."""
        out = self._translated(translations)
        return with_complex_styles(out, word=False) if self.dialect is OPEN_DOCUMENT else out

    def _translated(self, translations: Sequence[str | UnitTranslation]) -> str:
        """The part with each piece's text replaced by its translation (in piece order): a
        piece of differing runs given its sentences' word alignments as formatted runs, any
        other in the run with most of its letters."""
        if len(translations) != len(self.pieces):
            raise ValueError(f"{len(self.pieces)} pieces, {len(translations)} translations")
        tokens = list(self.tokens)
        for piece, block, given in zip(self.pieces, self.blocks, translations, strict=True):
            joined = self._joined(piece)
            if block is not None and isinstance(given, UnitTranslation) and given.aligned:
                _write_runs(tokens, block, given, len(joined) - len(joined.lstrip()))
                continue
            translation = _NOT_XML.sub(
                "", given.text if isinstance(given, UnitTranslation) else given
            )
            stripped = joined.strip()
            lead = joined[: len(joined) - len(joined.lstrip())]
            trail = joined[len(joined.rstrip()) :]
            carrier = max(
                range(len(piece.tokens)),
                key=lambda i: (not piece.wrapped[i], sum(not c.isspace() for c in piece.values[i])),
            )  # the first of the tokens with most letters (outside a link or an insertion if
            # any is): its run keeps the whole translation
            for index in piece.tokens:
                tokens[index] = ""
            text = lead + translation + trail if stripped else joined
            tokens[piece.tokens[carrier]] = html.escape(text, quote=False)
            holder = piece.holders[carrier]
            word = self.dialect.runs is WORD_RUNS
            if word and holder >= 0 and (text != text.strip() or "  " in text):
                tokens[holder] = _preserving_space(tokens[holder])
            if word and holder >= 0:  # Devanagari's bold is bCs
                start = run_start(tokens, holder, self._name_of)
                if start is not None:
                    with_complex_script(tokens, start + 1, holder, self._name_of)
        return "".join(tokens)


# OpenDocument's text properties and their complex-script twins (Devanagari is bold by
# style:font-weight-complex, not fo:font-weight)
_ODF_TWINS = {
    "fo:font-weight": "style:font-weight-complex",
    "fo:font-style": "style:font-style-complex",
    "fo:font-size": "style:font-size-complex",
}
_ATTRIBUTE = re.compile(r"""\s([\w.-]+:[\w.-]+)\s*=\s*("[^"]*"|'[^']*')""")


def with_complex_styles(xml: str, word: bool) -> str:
    """A styles part (Word's ``styles.xml``; an OpenDocument's ``styles.xml`` or automatic
    styles) whose bold, italic and sized text is so for complex-script text too: the text a
    translation into Hindi writes. Every other byte as it was."""
    tokens = _tokens(xml)
    if word:
        prefixes = _prefixes(xml)

        def name_of(raw: str) -> str:
            return _name(raw, prefixes)

        start = None
        for index, token in enumerate(tokens):
            tag = _TAG.fullmatch(token) if token.startswith("<") else None
            if tag is None or name_of(tag.group(2)) != "w:rPr":
                continue
            if tag.group(1):  # </w:rPr>
                if start is not None:
                    with_complex_script(tokens, start + 1, index, name_of)
                start = None
            elif not tag.group(4):
                start = index
        return "".join(tokens)
    for index, token in enumerate(tokens):
        if not token.startswith("<style:text-properties"):
            continue
        attributes = dict(_ATTRIBUTE.findall(token))
        extra = "".join(
            f" {twin}={attributes[plain]}"
            for plain, twin in _ODF_TWINS.items()
            if plain in attributes and twin not in attributes
        )
        if extra:
            end = -2 if token.endswith("/>") else -1
            tokens[index] = token[:end].rstrip() + extra + token[end:]
    return "".join(tokens)


def _write_runs(tokens: list[str], runs: RunBlock, given: UnitTranslation, lead: int) -> None:
    """The piece's runs replaced by its translation's, each word in the formatting of its
    source word (``lead``: the white space before the piece's text, which sentences skip)."""
    placed = [
        PlacedSentence(s.start + lead, s.end + lead, _NOT_XML.sub("", s.text), s.alignment)
        for s in given.sentences
    ]
    for index in range(runs.first, runs.last + 1):
        tokens[index] = ""
    tokens[runs.first] = "".join(runs.kept) + render(runs.block, placed)


def _tokens(xml: str) -> list[str]:
    """``xml`` cut into markup and character data (joined, they give it back exactly)."""
    tokens: list[str] = []
    position = 0
    for match in _MARKUP.finditer(xml):
        if match.start() > position:
            tokens.append(xml[position : match.start()])
        tokens.append(match.group())
        position = match.end()
    if position < len(xml):
        tokens.append(xml[position:])
    return tokens


def _prefixes(xml: str) -> dict[str, str]:
    """Each prefix the part declares for a namespace the dialects know → the dialects' prefix
    ("" is the default namespace)."""
    return {
        prefix or "": NAMESPACES[uri]
        for prefix, uri in _NAMESPACE.findall(xml)
        if uri in NAMESPACES
    }


def _name(raw: str, prefixes: dict[str, str]) -> str:
    prefix, _, local = raw.rpartition(":")
    return f"{prefixes.get(prefix, prefix)}:{local}" if prefix or "" in prefixes else local


@dataclass
class _Open:
    name: str
    start: int  # the index of its start tag


def _pieces(tokens: list[str], dialect: Dialect, prefixes: dict[str, str]) -> list[Piece]:
    """Every piece of every paragraph, in document order (nested paragraphs apart from the
    paragraph around them)."""
    pieces: list[Piece] = []
    stack: list[_Open] = []
    paragraphs: list[Piece] = []  # the open paragraphs' current pieces, innermost last
    skipping = 0  # how many open elements are in ``skip``
    fields = 0  # how deep in Word's complex fields (fldChar begin ... end): their text is codes
    wrapping = 0  # how many open elements are in ``wrappers``
    counted = 0
    for index, token in enumerate(tokens):
        tag = _TAG.fullmatch(token) if token.startswith("<") else None
        if tag is None:
            if token.startswith("<") or not paragraphs or skipping or fields:
                continue
            holder = stack[-1] if stack else None
            if dialect.text and (holder is None or holder.name not in dialect.text):
                continue
            piece = paragraphs[-1]
            piece.tokens.append(index)
            piece.values.append(html.unescape(token))
            piece.holders.append(holder.start if holder and dialect.text else -1)
            piece.wrapped.append(wrapping > 0)
            continue
        closing, raw_name, attributes, empty = tag.groups()
        name = _name(raw_name, prefixes)
        if closing:
            while stack:
                top = stack.pop()
                skipping -= top.name in dialect.skip
                wrapping -= top.name in dialect.wrappers
                if top.name in dialect.paragraph:
                    done = paragraphs.pop()
                    if done.span is not None:
                        done.span = (done.span[0], index)
                    pieces.append(done)
                if top.name == name:
                    break
            continue
        if paragraphs and name == "w:fldChar" and (kind := _FIELD.search(attributes)):
            fields = max(0, fields + (1 if kind.group(1) == "begin" else -1))
            _cut(paragraphs, pieces)  # the text before and after a field: two pieces
            continue
        if paragraphs and name in dialect.skip and not skipping:
            _cut(paragraphs, pieces)
        if name in dialect.paragraph:
            counted += 1  # an empty paragraph too: the numbers are those a reader counts
        if name in dialect.paragraph and not empty:
            if paragraphs:  # the outer paragraph is no longer whole
                paragraphs[-1].span = None
            paragraphs.append(Piece(counted, span=(index, -1)))
            stack.append(_Open(name, index))
        elif paragraphs and not skipping and name in dialect.breaks:
            _cut(paragraphs, pieces)
        elif paragraphs and not skipping and name == dialect.spaces and dialect.spaces:
            count = _COUNT.search(attributes)
            piece = paragraphs[-1]
            piece.tokens.append(index)
            piece.values.append(" " * int(count.group(1) if count else 1))
            piece.holders.append(-1)
            piece.wrapped.append(wrapping > 0)
        elif not empty:
            stack.append(_Open(name, index))
            skipping += name in dialect.skip
            wrapping += name in dialect.wrappers
    return pieces + paragraphs[::-1]  # paragraphs left open at the end of a broken part


def _cut(paragraphs: list[Piece], pieces: list[Piece]) -> None:
    """The innermost open paragraph's piece ends here and a new one begins; neither is the
    whole paragraph."""
    paragraphs[-1].span = None
    pieces.append(paragraphs[-1])
    paragraphs[-1] = Piece(paragraphs[-1].paragraph)


def _has_letter(piece: Piece) -> bool:
    return any(c.isalpha() for value in piece.values for c in value)


def _preserving_space(start_tag: str) -> str:
    """A text element's start tag that keeps white space at the text's edges (Word drops it
    without ``xml:space="preserve"``)."""
    if "xml:space" in start_tag:
        return start_tag
    return start_tag[:-1] + ' xml:space="preserve">'


__all__ = ["Piece", "XmlPart", "with_complex_styles"]
