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
after "।", "॥", "|" (the danda as typed on keyboards without one), "?", "!" or "." followed by a
space. A newline always ends a sentence.

Moses' rules expect sentence case: a sentence starts with a capital letter, and a capital word
ending in a full stop ("U.S.", "IN.") is an acronym. Text in lower case (as typed in chats) or in
capitals is therefore split on a sentence-case view of it (:func:`sentence_case_view`): the same
characters, lower-cased where the text is in capitals, with a capital after every sentence-final
mark that does not end an abbreviation of the language ("dr.", "e.g.", "u.s."). Measured on
NTREX-128 paragraphs (``bench/sentence_split.py``), split exactly as written / in capitals / in
lower case: 76.9 % / 74.1 % / 0.4 % with Moses alone, 76.9 % / 76.1 % / 76.1 % on the view.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
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
_RULE = re.compile(r"(?<=[।॥|?!.])[\"'”’»)\]]*\s+")
# A sentence-final mark, closing quotes, space, opening quotes, then the next sentence's first
# letter (group "letter", looked ahead); group "word" is the word the mark ends, from its start
# (anchored: a lazy word tried from every position of a long token was quadratic).
_NEXT_START = re.compile(
    r"(?<!\S)(?P<word>\S*?)(?P<mark>[.?!…]+)"
    r"(?=[\"'”’»)\]]*\s+[\"'“‘«(\[¿¡]*(?P<letter>[^\W\d_]))"
)
# A word of single letters with full stops ("u.s", "p.m", "j"): an acronym or an initial.
_INITIALS = re.compile(r"^(?:[^\W\d_]\.)*[^\W\d_]$")


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


def _same_length(char: str, case: Callable[[str], str]) -> str:
    """``case(char)`` where it is one character (some letters change length: "İ".lower())."""
    changed = case(char)
    return changed if len(changed) == 1 else char


def sentence_case_view(line: str, abbreviations: frozenset[str]) -> str:
    """``line`` as a sentence-case splitter expects it, character for character (same length,
    only letter case changed).

    A line mostly in capitals is lower-cased first. Then, if most of its sentence starts (its
    first letter and each letter after a sentence-final mark) are in lower case, every such
    letter is capitalised, except after an ellipsis, an abbreviation of the language
    (``abbreviations``, lower case: "dr.", "e.g.") or initials ("u.s.", "j."). A line in
    sentence case comes back unchanged, so its splitting is Moses' own.
    """
    letters = [char for char in line if char.isalpha() and char.lower() != char.upper()]
    capitals = sum(char.isupper() for char in letters)
    view = line
    if len(letters) >= 8 and capitals > 0.6 * len(letters):
        view = "".join(_same_length(char, str.lower) for char in line)
    starts = [match for match in _NEXT_START.finditer(view) if _ends_sentence(match, abbreviations)]
    first = next((char for char in view if char.isalpha()), "")
    lower = sum(view[m.start("letter")].islower() for m in starts) + first.islower()
    if 2 * lower <= len(starts) + 1:
        return view
    chars = list(view)
    for match in starts:
        at = match.start("letter")
        chars[at] = _same_length(chars[at], str.upper)
    return "".join(chars)


def _ends_sentence(match: re.Match[str], abbreviations: frozenset[str]) -> bool:
    """Whether the mark of a :data:`_NEXT_START` match may end a sentence: not an ellipsis, not
    after an abbreviation or initials."""
    if ".." in match.group("mark") or "…" in match.group("mark"):
        return False
    word = match.group("word").lower().lstrip("\"'“‘«([")
    return word not in abbreviations and not _INITIALS.match(word)


def _abbreviations(lang: str) -> frozenset[str]:
    """The words after which Moses does not end a sentence in ``lang`` (its non-breaking
    prefixes that apply before any word), lower-cased."""
    import sentence_splitter

    path = Path(sentence_splitter.__file__).parent / "non_breaking_prefixes" / f"{lang}.txt"
    words = set()
    for row in path.read_text(encoding="utf-8").splitlines():
        row = row.strip()
        if row and not row.startswith("#") and "#NUMERIC_ONLY#" not in row:
            words.add(row.lower())
    return frozenset(words)


def _case_robust(split: Callable[[str], list[str]], lang: str) -> Callable[[str], list[str]]:
    """``split`` (a sentence-case splitter) run on :func:`sentence_case_view` of each line; the
    sentences are returned as written in the line."""
    abbreviations = _abbreviations(lang)

    def split_line(line: str) -> list[str]:
        view = sentence_case_view(line, abbreviations)
        if view == line:
            return split(line)
        spans = _locate(split(view), view)
        if spans is None:
            return split(line)
        return [line[start:end] for start, end in spans]

    return split_line


@functools.lru_cache(maxsize=8)
def sentence_splitter(lang: str) -> Callable[[str], list[str]]:
    """The sentence splitter of ``lang`` (ISO 639-1): Moses' rules where ``sentence-splitter``
    has them (en, de, fr, es, ...), made robust to lower case and capitals, else the
    punctuation rule of the module docstring."""
    from sentence_splitter import SentenceSplitter, SentenceSplitterException

    try:
        moses = SentenceSplitter(language=lang)
    except SentenceSplitterException:
        return _rule_split
    return _case_robust(moses.split, lang)


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
# before a dash between spaces; inside a clause still too long, before a conjunction; inside a
# part still too long, at a space.
_CLAUSE = re.compile(r"(?<=[,;:،])\s+|\s+(?=[–—-]\s)")
_CONJUNCTIONS = {
    "en": "and|but|or|because|while|whereas|although|though|which|so|then|until",
    "hi": "और|लेकिन|परंतु|परन्तु|किंतु|किन्तु|क्योंकि|जबकि|तथा|या|जो|इसलिए|ताकि",
}
_SPACES = re.compile(r"\s+")


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


# A list item's marker at the start of a line ("- ", "* ", "• ", "1. ", "2) ", "(a) ", "b) "):
# layout, kept as written; the item after it is translated.
_LIST_MARKER = re.compile(r"\s*(?:[-*•◦▪‣·–—]|\(?\d{1,3}[.)]|\(?[A-Za-z][)]|\([A-Za-z]\))\s+(?=\S)")


def split_document(
    text: str,
    lang: str,
    split: Callable[[str], list[str]] | None = None,
    fits: Callable[[str], bool] | None = None,
    must_fit: Callable[[str], bool] | None = None,
) -> list[Segment]:
    """Cut ``text`` into sentences, each with its place in the text.

    Every line is split on its own (a newline always ends a sentence); blank lines give no
    segment; a list marker at the start of a line ("- ", "1. ", "(a) ") is layout, left out of
    the segment and kept as written. Sentences are in document order and never overlap; the
    text between two segments (and before the first and after the last) is whitespace only.

    Args:
        text: the document.
        lang: its language (picks the splitter).
        split: a splitter to use instead (sentences of one line).
        fits: whether the model translates a sentence well whole; one that it does not is cut
            at its clause boundaries (:func:`fit_segment`).
        must_fit: whether the model can take a sentence at all (default: ``fits``); checked on
            every segment.

    Returns:
        The segments; ``[]`` for a blank text.

    Raises:
        InputTooLongError: a segment ``must_fit`` refuses (a word longer than the model takes).
    """
    splitter = split or sentence_splitter(lang)
    segments: list[Segment] = []
    offset = 0
    for number, line in enumerate(text.split("\n")):
        marker = _LIST_MARKER.match(line)
        skip = marker.end() if marker else 0
        body = line[skip:]
        if body.strip():
            spans = _locate(splitter(body), body)
            if spans is None:  # keep the line whole rather than lose or change text
                left = len(body) - len(body.lstrip())
                spans = [(left, len(body.rstrip()))]
            for start, end in ((skip + a, skip + b) for a, b in spans):
                segment = Segment(offset + start, offset + end, line[start:end], number)
                segments.extend(fit_segment(segment, fits, lang) if fits else [segment])
        offset += len(line) + 1
    check = must_fit or fits
    for segment in segments:
        if check is not None and not check(segment.text):
            raise InputTooLongError(
                f"line {segment.line + 1}: {segment.text[:40]!r} is a word of "
                f"{len(segment.text)} characters, longer than the model can translate. Fix: "
                f"break it with spaces, or leave it out"
            )
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
        InputTooLongError: a word longer than the model takes.
    """
    plans = [split_document(document, lang, split, fits, must_fit) for document in documents]
    sentences = [segment.text for plan in plans for segment in plan]
    results = translate(sentences) if sentences else []
    return assemble_documents(documents, plans, results)
