"""Sentences of one line: Moses' rules, made robust to lower case and capitals, or the
punctuation rule of languages Moses has no rules for; and where each sentence stands in its line.

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
from pathlib import Path

from anuvad.inference.symbols import blank_symbols, symbol_mask

__all__ = ["locate", "sentence_case_view", "sentence_splitter"]

_SPACE = re.compile(r"\s")
# White space other than a space or a newline (str.isspace's, spelled out: the page's JavaScript
# "\s" is another set).
_OTHER_SPACE = re.compile(
    "[\t\v\f\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
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
        # Moses' rules split at spaces only: a tab, a vertical tab (Word's manual line break) or
        # U+2028 after a full stop would join two sentences, so they are spaces in the view; so
        # are symbols ("Great job! 🎉 See you." is two sentences with an emoji between), before
        # the case is read (in "great news! 🎉 we won." the emoji hid the next sentence's start).
        plain = _OTHER_SPACE.sub(" ", line)
        view = sentence_case_view(plain if plain.isascii() else blank_symbols(plain), abbreviations)
        if view == line:
            return split(line)
        spans = locate(split(view), view)
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


def locate(sentences: Sequence[str], line: str) -> list[tuple[int, int]] | None:
    """(start, end) of each sentence in ``line``, matching non-space characters in order
    (splitters may change inner spacing; symbols between sentences are left out of both, as
    the case-robust splitter leaves them); None when the splitter changed other characters."""
    spans: list[tuple[int, int]] = []
    symbols = symbol_mask(line)
    pos = 0
    for sentence in sentences:
        chars = _SPACE.sub("", sentence)
        if not chars:
            continue
        while pos < len(line) and (line[pos].isspace() or symbols[pos]):
            if line[pos] == chars[0]:
                break  # a sentence that begins with a symbol
            pos += 1
        start = pos
        for char in chars:
            while pos < len(line) and line[pos].isspace():
                pos += 1
            if pos >= len(line) or line[pos] != char:
                return None
            pos += 1
        spans.append((start, pos))
    if any(not (line[i].isspace() or symbols[i]) for i in range(pos, len(line))):
        return None  # the splitter dropped text
    return spans
