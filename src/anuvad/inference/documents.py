"""Documents in, documents out: sentence splitting that keeps the layout, and reassembly.

A model translates one sentence at a time; a pasted paragraph given to it whole comes back as one
garbled sentence. :func:`split_document` cuts a text into sentences and remembers where each one
stands (character offsets), :func:`~anuvad.inference.assembly.assemble` puts the translations
back in the same places: every newline, blank line and the spacing between sentences and around
the text stay as they were.

Sentences are found per line by :func:`anuvad.inference.sentences.sentence_splitter` (Moses'
rules on a sentence-case view, or the danda rule; measured there). A newline always ends a
sentence. A sentence written in another script than the document's language (a Hindi line in
an English text) is kept as written, as layout: a model given it writes nonsense
(:func:`anuvad.inference.language.wrong_script`); :func:`left_as_written` lists such parts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from anuvad.errors import InputTooLongError
from anuvad.inference.assembly import assemble
from anuvad.inference.cells import cell_spans
from anuvad.inference.language import wrong_script
from anuvad.inference.sentences import locate, sentence_splitter
from anuvad.inference.symbols import without_edge_symbols

__all__ = [
    "DocumentTranslation",
    "Segment",
    "assemble",
    "assemble_documents",
    "count_sentences",
    "fit_segment",
    "left_as_written",
    "line_marker",
    "sentence_splitter",
    "split_document",
    "translate_documents",
    "whole_text",
]


@dataclass(frozen=True)
class Segment:
    """One sentence of a document.

    Attributes:
        start: offset of its first character in the document.
        end: offset just after its last character (``document[start:end] == text``).
        text: the sentence as it stands in the document (inner spacing kept).
        line: the 0-based line of the document it is on.
    """

    start: int
    end: int
    text: str
    line: int


# Where a sentence too long for the model may be cut: after a comma, semicolon or colon, or
# before a dash between spaces; inside a clause still too long, before a conjunction; inside a
# part still too long, at a space.
_CLAUSE = re.compile(r"(?<=[,;:،])\s+|\s+(?=[–—-]\s)")
_CONJUNCTIONS = {
    "en": "and|but|or|because|while|whereas|although|though|which|so|then|until",
    "hi": "और|लेकिन|परंतु|परन्तु|किंतु|किन्तु|क्योंकि|जबकि|तथा|या|जो|इसलिए|ताकि",
}
_SPACES = re.compile(r"\s+")
_FENCE = re.compile(r" {0,3}(?:```|~~~)")  # a line that opens or closes a Markdown code block


@functools.lru_cache(maxsize=8)
def _conjunction(lang: str) -> re.Pattern[str]:
    words = _CONJUNCTIONS.get(lang, _CONJUNCTIONS["en"])
    return re.compile(rf"\s+(?=(?:{words})\s)", re.IGNORECASE)


def _cut(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """``[start, end)`` of ``text`` cut where ``pattern`` matches (each cut at a match's start)."""
    cuts = [start, *(start + m.start() for m in pattern.finditer(text[start:end])), end]
    return [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1) if cuts[i] < cuts[i + 1]]


def fit_segment(segment: Segment, fits: Callable[[str], bool], lang: str = "en") -> list[Segment]:
    """``segment`` if the model takes it well, else its parts grouped into the fewest pieces
    that it does (in order, each a whole number of parts): parts are its clauses (after ``,``
    ``;`` ``:``, before a dash), a clause that does not fit is cut before its conjunctions
    ("and", "but", "which" ...; "और", "लेकिन" ... in Hindi), a part still too long at spaces.
    A single word longer than ``fits`` allows is a piece of its own.
    """
    text = segment.text
    if fits(text):
        return [segment]
    units = _cut(text, 0, len(text), _CLAUSE)
    for pattern in (_conjunction(lang), _SPACES):
        if all(fits(text[a:b].strip()) for a, b in units):
            break
        units = [
            part
            for a, b in units
            for part in ([(a, b)] if fits(text[a:b].strip()) else _cut(text, a, b, pattern))
        ]
    pieces: list[Segment] = []
    start = end = 0
    for unit_start, unit_end in units:
        if start != unit_start and not fits(text[start:unit_end].strip()):
            pieces.append(_piece(segment, start, end))
            start = unit_start
        end = unit_end
    pieces.append(_piece(segment, start, end))
    return pieces


def _piece(segment: Segment, start: int, end: int) -> Segment:
    """The part ``[start, end)`` of ``segment``, without surrounding spaces."""
    part = segment.text[start:end]
    left = len(part) - len(part.lstrip())
    right = len(part.rstrip())
    first = segment.start + start + left
    return Segment(first, first + right - left, part[left:right], segment.line)


# A list item's marker at the start of a line ("- ", "* ", "• ", "1. ", "2) ", "(a) ", "b) "),
# a Markdown heading's or quotation's ("## ", "> "): layout, kept as written; the item after it
# is translated ("## Summary" came back as "# #4").
_LIST_MARKER = re.compile(
    r"\s*(?:[-*•◦▪‣·–—]|\(?\d{1,3}[.)]|\(?[A-Za-z][)]|\([A-Za-z]\)|#{1,6}|>(?:\s*>)*)\s+(?=\S)"
)


def split_document(
    text: str,
    lang: str,
    split: Callable[[str], list[str]] | None = None,
    fits: Callable[[str], bool] | None = None,
    must_fit: Callable[[str], bool] | None = None,
    other_scripts: bool = False,
) -> list[Segment]:
    """Cut ``text`` into sentences, each with its place in the text.

    Every line is split on its own (a newline always ends a sentence), and every cell of a line
    (a table's columns: "1<TAB>The train is late.<TAB>It will come soon.", "Home | Contact":
    :mod:`anuvad.inference.cells`); blank
    lines and a Markdown code block (from a line opening with three backticks or tildes to the
    next such line) give no segment; a list marker at the start of a line or cell ("- ",
    "1. ", "(a) ", "## "), symbols before or after a sentence (emoji:
    :mod:`anuvad.inference.symbols`) and a sentence in another script than ``lang``'s are
    layout, left out of the segments and kept as written.
    Sentences are in document order and never overlap; the text between two segments (and
    before the first and after the last) is whitespace, a list marker, symbols or such a
    sentence.

    Args:
        text: the document.
        lang: its language (picks the splitter).
        split: a splitter to use instead (sentences of one line).
        fits: whether the model translates a sentence well whole; one that it does not is cut
            at its clause boundaries (:func:`fit_segment`).
        must_fit: whether the model can take a sentence at all (default: ``fits``); checked on
            every segment.
        other_scripts: also the sentences in another script than ``lang``'s (to count them).

    Returns:
        The segments; ``[]`` for a blank text.

    Raises:
        InputTooLongError: a segment ``must_fit`` refuses (a word longer than the model takes).
    """
    splitter = split or sentence_splitter(lang)
    segments: list[Segment] = []
    offset = 0
    fenced = False
    for number, line in enumerate(text.split("\n")):
        fence = _FENCE.match(line) is not None
        if fence or fenced:  # a Markdown code block (its fences and lines) is kept as written
            fenced = fenced != fence
            offset += len(line) + 1
            continue
        # Cells (a tab, a table's pipes: inference.cells), after the line's list marker
        # ("1.<TAB>The train is late.": a marker followed by a tab is one).
        lead = _LIST_MARKER.match(line)
        rest = lead.end() if lead else 0
        for first, last in cell_spans(line[rest:], lang):
            cell, base = line[rest + first : rest + last], offset + rest + first
            marker = _LIST_MARKER.match(cell)
            skip = marker.end() if marker else 0
            body = cell[skip:]
            if body.strip():
                spans = locate(splitter(body), body)
                if spans is None:  # keep the cell whole rather than lose or change text
                    left = len(body) - len(body.lstrip())
                    spans = [(left, len(body.rstrip()))]
                for start, end in ((skip + a, skip + b) for a, b in spans):
                    start, end = without_edge_symbols(cell, start, end)  # symbols: layout
                    if start == end or (not other_scripts and wrong_script(cell[start:end], lang)):
                        continue
                    segment = Segment(base + start, base + end, cell[start:end], number)
                    segments.extend(fit_segment(segment, fits, lang) if fits else [segment])
        offset += len(line) + 1
    check = must_fit or fits
    for segment in segments:
        if check is not None and not check(segment.text):
            detail = (
                f"{segment.text[:40]!r} is a word of {len(segment.text)} characters, longer "
                f"than the model can translate. Fix: break it with spaces, or leave it out"
            )
            error = InputTooLongError(f"line {segment.line + 1}: {detail}")
            error.detail = detail
            raise error
    return segments


def count_sentences(text: str, lang: str) -> int:
    """How many sentences ``text`` holds, those in another script (kept as written) too: what
    a check that lets one sentence through counts (a model given the text whole stops after
    its first sentence, whichever language the rest is in)."""
    return len(split_document(text, lang, other_scripts=True))


def left_as_written(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The parts of ``text`` between its segments (their ``(start, end)``, in order) that hold
    words (two letters or more): sentences in another script than the document's, which
    :func:`split_document` keeps as written (list markers and symbols hold fewer letters)."""
    parts, pos = [], 0
    for start, end in [*spans, (len(text), len(text))]:
        for line in text[pos:start].split("\n"):
            marker = _LIST_MARKER.match(line)
            part = line[marker.end() if marker else 0 :].strip()
            if sum(char.isalpha() for char in part) >= 2:
                parts.append(part)
        pos = end
    return parts


class _HasText(Protocol):
    @property
    def text(self) -> str: ...


ResultT = TypeVar("ResultT", bound=_HasText)


@dataclass(frozen=True)
class DocumentTranslation(Generic[ResultT]):
    """A translated document and how its sentences line up.

    Attributes:
        source: the document as given.
        text: the translation, with the source's layout (newlines, blank lines, spacing).
        segments: the source sentences and their places in ``source``.
        sentences: the engine's result for each segment (text, score, n-best, ...).
    """

    source: str
    text: str
    segments: list[Segment]
    sentences: list[ResultT]


def line_marker(text: str) -> str:
    """What begins ``text`` as layout, kept as written: a list item's or a Markdown heading's
    marker with the spaces around it ("- ", "  2) ", "## "); "" where there is none."""
    marker = _LIST_MARKER.match(text)
    return marker.group() if marker else ""


def whole_text(text: str) -> list[Segment]:
    """``text`` as one segment (surrounding whitespace and a leading list marker,
    :func:`line_marker`, outside it), for callers that translate texts unsplit; ``[]`` for a
    blank text."""
    skip = len(line_marker(text))
    left = skip + len(text[skip:]) - len(text[skip:].lstrip())
    right = len(text.rstrip())
    if right <= left:
        return []
    return [Segment(left, right, text[left:right], text.count("\n", 0, left))]


def assemble_documents(
    documents: Sequence[str], plans: Sequence[Sequence[Segment]], results: Sequence[ResultT]
) -> list[DocumentTranslation[ResultT]]:
    """Reassemble documents from the results of all their sentences, in order.

    Args:
        documents: the texts.
        plans: each text's segments (:func:`split_document` or :func:`whole_text`).
        results: one result per segment, all documents' segments in order.

    Raises:
        ValueError: the number of results differs from the number of segments.
    """
    expected = sum(len(plan) for plan in plans)
    if len(results) != expected:
        raise ValueError(f"{expected} sentences but {len(results)} results")
    out: list[DocumentTranslation[ResultT]] = []
    pos, every = 0, [r.text for r in results]  # list markers: the digits of all of them
    for document, plan in zip(documents, plans, strict=True):
        mine = list(results[pos : pos + len(plan)])
        pos += len(plan)
        text = assemble(document, plan, [r.text for r in mine], every)
        out.append(DocumentTranslation(document, text, list(plan), mine))
    return out


def translate_documents(
    documents: Sequence[str],
    lang: str,
    translate: Callable[[list[str]], list[ResultT]],
    split: Callable[[str], list[str]] | None = None,
    fits: Callable[[str], bool] | None = None,
    must_fit: Callable[[str], bool] | None = None,
) -> list[DocumentTranslation[ResultT]]:
    """Split every document into sentences, translate all sentences of all documents in one
    call (so the engine batches them together), and reassemble each document.

    Args:
        documents: texts of any length and layout.
        lang: their language (picks the sentence splitter).
        translate: sentences → one result per sentence, in order (e.g. an engine's
            ``translate`` with the search settings bound).
        split: a sentence splitter to use instead of :func:`sentence_splitter`.
        fits: whether the model translates a sentence well whole (see :func:`split_document`).
        must_fit: whether it can take one at all (default: ``fits``).

    Returns:
        One :class:`DocumentTranslation` per document, in order.

    Raises:
        InputTooLongError: a word longer than the model takes (``document``: in which).
    """
    plans = []
    for index, document in enumerate(documents):
        try:
            plans.append(split_document(document, lang, split, fits, must_fit))
        except InputTooLongError as exc:
            exc.document = index
            raise
    sentences = [segment.text for plan in plans for segment in plan]
    results = translate(sentences) if sentences else []
    return assemble_documents(documents, plans, results)
