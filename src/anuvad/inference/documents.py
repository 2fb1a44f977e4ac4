"""Documents in, documents out: sentence splitting that keeps the layout, and reassembly.

A model translates one sentence at a time; a pasted paragraph given to it whole comes back as one
garbled sentence. :func:`split_document` cuts a text into sentences and remembers where each one
stands (character offsets), :func:`assemble` puts the translations back in the same places: every
newline, blank line and the spacing between sentences and around the text stay as they were.

Splitting, by measurement (``bench/sentence_split.py``, docs/benchmarks.md): Moses' rules
(the ``sentence-splitter`` package: per-language non-breaking prefixes such as "Dr." or "U.S.")
had the best boundary precision on NTREX-128 news paragraphs (0.994, F1 0.956; blingfire 0.988 /
0.951, syntok 0.990 / 0.953, pysbd 0.944 / 0.866, sentencex 0.941 / 0.879, a naive regex 0.926 /
0.871) and needs no model download. Languages it has no rules for (Hindi among them) are split
after "।", "॥", "?", "!" or "." followed by a space. A newline always ends a sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from anuvad.errors import InputTooLongError

__all__ = [
    "DocumentTranslation",
    "Segment",
    "assemble",
    "assemble_documents",
    "fit_segment",
    "sentence_splitter",
    "split_document",
    "translate_documents",
    "whole_text",
]

_SPACE = re.compile(r"\s")
# After sentence-final punctuation (and closing quotes/brackets), before the next sentence.
_RULE = re.compile(r"(?<=[।॥?!.])[\"'”’»)\]]*\s+")


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


def _rule_split(text: str) -> list[str]:
    pieces, start = [], 0
    for match in _RULE.finditer(text):
        end = match.start() + len(match.group(0).rstrip())
        pieces.append(text[start:end])
        start = match.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


@functools.lru_cache(maxsize=8)
def sentence_splitter(lang: str) -> Callable[[str], list[str]]:
    """The sentence splitter of ``lang`` (ISO 639-1): Moses' rules where ``sentence-splitter``
    has them (en, de, fr, es, ...), else the punctuation rule of the module docstring."""
    from sentence_splitter import SentenceSplitter, SentenceSplitterException

    try:
        moses = SentenceSplitter(language=lang)
    except SentenceSplitterException:
        return _rule_split
    split: Callable[[str], list[str]] = moses.split
    return split


def _locate(sentences: Sequence[str], line: str) -> list[tuple[int, int]] | None:
    """(start, end) of each sentence in ``line``, matching non-space characters in order
    (splitters may change inner spacing); None when the splitter changed other characters."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for sentence in sentences:
        chars = _SPACE.sub("", sentence)
        if not chars:
            continue
        while pos < len(line) and line[pos].isspace():
            pos += 1
        start = pos
        for char in chars:
            while pos < len(line) and line[pos].isspace():
                pos += 1
            if pos >= len(line) or line[pos] != char:
                return None
            pos += 1
        spans.append((start, pos))
    if line[pos:].strip():
        return None  # the splitter dropped text
    return spans


# Where a sentence too long for the model may be cut: after a comma, semicolon or colon, or
# before a dash between spaces.
_CLAUSE = re.compile(r"(?<=[,;:،])\s+|\s+(?=[–—-]\s)")


def fit_segment(segment: Segment, fits: Callable[[str], bool]) -> list[Segment]:
    """``segment`` if the model can take it, else its clauses grouped into the fewest pieces
    that fit (in order, each a whole number of clauses).

    Raises:
        InputTooLongError: a single clause does not fit (naming the line and how to fix it).
    """
    if fits(segment.text):
        return [segment]
    cuts = [0, *(m.start() for m in _CLAUSE.finditer(segment.text)), len(segment.text)]
    clauses = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]
    pieces: list[Segment] = []
    start = end = 0
    for clause_start, clause_end in clauses:
        text = segment.text[start:clause_end].strip()
        if start != clause_start and not fits(text):
            pieces.append(_piece(segment, start, end))
            start = clause_start
        end = clause_end
        if not fits(segment.text[start:end].strip()):
            raise InputTooLongError(
                f"line {segment.line + 1}: the sentence starting {segment.text[:40]!r} has a part "
                f"of {end - start} characters without a comma, semicolon or colon that is longer "
                f"than the model can translate. Fix: split it into shorter sentences"
            )
    pieces.append(_piece(segment, start, end))
    return pieces


def _piece(segment: Segment, start: int, end: int) -> Segment:
    """The part ``[start, end)`` of ``segment``, without surrounding spaces."""
    part = segment.text[start:end]
    left = len(part) - len(part.lstrip())
    right = len(part.rstrip())
    first = segment.start + start + left
    return Segment(first, first + right - left, part[left:right], segment.line)


def split_document(
    text: str,
    lang: str,
    split: Callable[[str], list[str]] | None = None,
    fits: Callable[[str], bool] | None = None,
) -> list[Segment]:
    """Cut ``text`` into sentences, each with its place in the text.

    Every line is split on its own (a newline always ends a sentence); blank lines give no
    segment. Sentences are in document order and never overlap; the text between two segments
    (and before the first and after the last) is whitespace only.

    Args:
        text: the document.
        lang: its language (picks the splitter).
        split: a splitter to use instead (sentences of one line).
        fits: whether the model can take a sentence; one that it cannot is cut at its clause
            boundaries (:func:`fit_segment`).

    Returns:
        The segments; ``[]`` for a blank text.

    Raises:
        InputTooLongError: with ``fits``, a clause the model cannot take.
    """
    splitter = split or sentence_splitter(lang)
    segments: list[Segment] = []
    offset = 0
    for number, line in enumerate(text.split("\n")):
        if line.strip():
            spans = _locate(splitter(line), line)
            if spans is None:  # keep the line whole rather than lose or change text
                left = len(line) - len(line.lstrip())
                spans = [(left, len(line.rstrip()))]
            for start, end in spans:
                segment = Segment(offset + start, offset + end, line[start:end], number)
                segments.extend(fit_segment(segment, fits) if fits else [segment])
        offset += len(line) + 1
    return segments


def assemble(text: str, segments: Sequence[Segment], translations: Sequence[str]) -> str:
    """Put ``translations`` in the places of ``segments`` in ``text``; everything between the
    segments (spaces, newlines, blank lines) is kept.

    Raises:
        ValueError: different numbers of segments and translations.
    """
    if len(segments) != len(translations):
        raise ValueError(f"{len(segments)} segments but {len(translations)} translations")
    out, pos = [], 0
    for segment, translation in zip(segments, translations, strict=True):
        out.append(text[pos : segment.start])
        out.append(translation)
        pos = segment.end
    out.append(text[pos:])
    return "".join(out)


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


def whole_text(text: str) -> list[Segment]:
    """``text`` as one segment (surrounding whitespace outside it), for callers that translate
    texts unsplit; ``[]`` for a blank text."""
    left = len(text) - len(text.lstrip())
    right = len(text.rstrip())
    return [Segment(left, right, text[left:right], text.count("\n", 0, left))] if right else []


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
    pos = 0
    for document, plan in zip(documents, plans, strict=True):
        mine = list(results[pos : pos + len(plan)])
        pos += len(plan)
        text = assemble(document, plan, [r.text for r in mine])
        out.append(DocumentTranslation(document, text, list(plan), mine))
    return out


def translate_documents(
    documents: Sequence[str],
    lang: str,
    translate: Callable[[list[str]], list[ResultT]],
    split: Callable[[str], list[str]] | None = None,
    fits: Callable[[str], bool] | None = None,
) -> list[DocumentTranslation[ResultT]]:
    """Split every document into sentences, translate all sentences of all documents in one
    call (so the engine batches them together), and reassemble each document.

    Args:
        documents: texts of any length and layout.
        lang: their language (picks the sentence splitter).
        translate: sentences → one result per sentence, in order (e.g. an engine's
            ``translate`` with the search settings bound).
        split: a sentence splitter to use instead of :func:`sentence_splitter`.
        fits: whether the model can take a sentence (see :func:`split_document`).

    Returns:
        One :class:`DocumentTranslation` per document, in order.

    Raises:
        InputTooLongError: with ``fits``, a clause the model cannot take.
    """
    plans = [split_document(document, lang, split, fits) for document in documents]
    sentences = [segment.text for plan in plans for segment in plan]
    results = translate(sentences) if sentences else []
    return assemble_documents(documents, plans, results)
