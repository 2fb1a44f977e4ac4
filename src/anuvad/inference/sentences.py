"""Sentences of one line: Moses' rules, made robust to lower case and capitals, or the
punctuation rule of languages Moses has no rules for; and where each sentence stands in its line.

Splitting, by measurement (``bench/sentence_split.py``, docs/benchmarks.md): Moses' rules
(the ``sentence-splitter`` package: per-language non-breaking prefixes such as "Dr." or "U.S.")
had the best boundary precision on NTREX-128 news paragraphs (0.994, F1 0.956; blingfire 0.988 /
0.951, syntok 0.990 / 0.953, pysbd 0.944 / 0.866, sentencex 0.941 / 0.879, a naive regex 0.926 /
0.871) and needs no model download. Languages it has no rules for (Hindi among them) are split
after "।", "॥" or "|" (the danda as typed on keyboards without one), with or without a space after
it, after "?" or "!" before a space or a letter, and after "." before a space, except after an
abbreviation (:data:`RULE_ABBREVIATIONS`: "डॉ.", "रु."). A newline always ends a sentence. Moses'
rules get the abbreviations of Indian English they lack (:data:`EXTRA_PREFIXES`: "Rs.", "Smt.");
and a sentence-final mark with no space before the next sentence ("He came.She left.", a common
slip) ends a sentence when a capitalised word follows it (:data:`_GLUED`), not inside an address
("www.example.Com") or after an abbreviation.

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

from anuvad.inference.addresses import address_spans
from anuvad.inference.symbols import blank_symbols, symbol_mask

__all__ = [
    "ABBREVIATIONS",
    "locate",
    "moses_prefixes",
    "sentence_case_view",
    "sentence_splitter",
    "split_glued",
]

_SPACE = re.compile(r"\s")
# White space other than a space or a newline (str.isspace's, spelled out: the page's JavaScript
# "\s" is another set).
_OTHER_SPACE = re.compile(
    "[\t\v\f\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
# After sentence-final punctuation (and closing quotes/brackets), before the next sentence: a
# danda before a space, or with none before anything but another danda, a closing mark or a
# digit (a verse number: "॥१॥"); "?" or "!" before a space or a letter; "." before a space.
_CLOSING = "\"'”’»)\\]"
_RULE = re.compile(
    rf"(?<=[।॥|])[{_CLOSING}]*(?:\s+|(?=[^\s\d।॥|{_CLOSING}]))"
    rf"|(?<=[?!])[{_CLOSING}]*\s*(?=[^\W\d_])"
    rf"|(?<=[?!.])[{_CLOSING}]*\s+"
)
# Abbreviations after which "." does not end a sentence in the rule's languages (Devanagari: Dr.,
# Rs., Prof., Kumari, samvat, page, serial number, number, Mr., Shri, late, AD / BC, district;
# and a few Latin ones Hindi text writes).
RULE_ABBREVIATIONS = (
    "डॉ", "रु", "प्रो", "कु", "सं", "पृ", "क्र", "नं", "मि", "श्री", "स्व", "ई", "पू", "जि", "पं",
    "Dr", "Mr", "Mrs", "Ms", "Prof", "Rs", "No", "St",
)  # fmt: skip
# Every word whose full stop ends no sentence, in lower case: the rule's, Indian English's
# honorifics and abbreviations (:data:`EXTRA_PREFIXES`) and a few of reference and business
# writing; what other modules ask when a full stop may be an abbreviation's
# (:func:`anuvad.inference.punctuation.phrases_before_mark`, the runs of
# :mod:`anuvad.inference.target_script`).
ABBREVIATIONS = frozenset(
    {a.lower() for a in RULE_ABBREVIATIONS}
    | {"shri", "smt", "sh", "kum", "hon", "rs", "re", "approx", "govt", "dept", "pvt", "retd"}
    | {"estd", "jr", "sr", "vs", "etc", "co", "ltd", "inc", "fig", "figs", "sec", "vol", "tel"}
    | {"ext", "nos", "art", "para", "viz"}
)
# A Devanagari syllable as written: a consonant with the consonants joined to it by a virama,
# or a vowel, then its signs ("डब्ल्यू" is two: "ड", "ब्ल्यू").
_CONSONANT = r"[\u0915-\u0939\u0958-\u095f\u0979-\u097f]"
_AKSHARA = (
    rf"(?:{_CONSONANT}(?:\u094d{_CONSONANT})*|[\u0904-\u0914\u0960\u0961\u0972-\u0977])"
    r"[\u0900-\u0903\u093a-\u094c\u094e\u094f\u0955-\u0957\u0962\u0963]*"
)
# The text before a rule match ends with one of them and its full stop (in any case; after a
# space, a bracket, a quote or another abbreviation's stop: "ई.पू."), or with a Devanagari
# initialism, two or more groups of one or two syllables, each with its stop ("यू.पी.", "बी.ए.",
# "आई.ए.एस.", "डब्ल्यू.एच.ओ.": "यू.पी.
# में चुनाव हैं।" was cut after "यू.पी." and came out "iPhone There are elections."). Read in the
# 16 characters before the match only: the search from the text's start made long texts
# quadratic.
_RULE_ABBREVIATION = re.compile(
    r"(?:^|[\s(\"'“‘.])(?:" + "|".join(map(re.escape, RULE_ABBREVIATIONS)) + r")\.$"
    rf"|(?:^|[\s(\"'“‘])(?:(?:{_AKSHARA}){{1,2}}\.){{2,}}$",
    re.IGNORECASE,
)
_ABBREVIATION_WINDOW = 16
# Abbreviations of Indian English that Moses' English prefixes lack, as written and in lower
# case (chat text: "rs. 500"): honorifics, after which no sentence ends ("default", as after
# "Mr."), and words that end no sentence before a number ("numeric": "Rs. 500", but "It costs
# 500 Rs. The shop …" is two sentences).
EXTRA_PREFIXES: dict[str, dict[str, str]] = {
    lang: {
        form: kind
        for word, kind in words.items()
        for form in (word, word.lower())
    }
    for lang, words in {
        "en": {
            **dict.fromkeys(("Shri", "Smt", "Sh", "Kum", "Hon"), "default"),
            **dict.fromkeys(("Rs", "Re", "Approx", "Govt", "Dept", "Pvt", "Retd", "Estd",
                             "Ext", "Tel"), "numeric"),
        },
    }.items()
}  # fmt: skip
# Where Moses' sentences are cut further: after a danda (and closing quotes) before a space
# (a Hindi sentence in an English text); and after a sentence-final mark glued to the next
# sentence: a word of letters (not inside an address: nothing of a link before it), the mark,
# then a capitalised word ending at a space, punctuation other than "."
# ("System.Console.WriteLine") or the line's end, not an address's ending ("Flipkart.Com",
# "Node.Js"); and after a temperature's unit before a capital ("It was -5 °C. He came home.":
# Moses reads "C." as an initial and joined the two). The cut falls at the match's end.
_GLUED = re.compile(
    rf"[।॥][{_CLOSING}]*(?=\s+\S)"
    r"|(?:°\s?[CFK]|[℃℉])\.(?=\s+[\"'“‘(\[]*[A-Z])"
    r"|(?<![\w.@/:\-])(?P<word>[^\W\d_]{2,})(?P<mark>[.?!])"
    r"(?=(?!(?:Com|Net|Org|In|Io|Ai|Co|Js|Gov|Edu)\b)[A-Z][a-z]+(?:[\s,;:?!\"')\]]|$))"
)
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
    addresses = address_spans(text)
    for match in _RULE.finditer(text):
        before = text[max(0, match.start() - _ABBREVIATION_WINDOW) : match.start()]
        if _RULE_ABBREVIATION.search(before) or any(a < match.start() < b for a, b in addresses):
            continue  # "डॉ. राम", "…/search?q=…"
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


def moses_prefixes(lang: str) -> dict[str, str] | None:
    """Moses' non-breaking prefixes of ``lang`` as the splitter reads them ("default", or
    "numeric": only before a number), with :data:`EXTRA_PREFIXES`; None where
    ``sentence-splitter`` has no file for ``lang``."""
    import sentence_splitter

    path = Path(sentence_splitter.__file__).parent / "non_breaking_prefixes" / f"{lang}.txt"
    if not path.is_file():
        return None
    found: dict[str, str] = {}
    for row in path.read_text(encoding="utf-8").splitlines():
        kind = "numeric" if "#NUMERIC_ONLY#" in row else "default"
        word = re.sub(r"#.*", "", row, flags=re.DOTALL).strip()
        if word:
            found[word] = kind
    return found | EXTRA_PREFIXES.get(lang, {})


def _abbreviations(lang: str) -> frozenset[str]:
    """The words after which Moses does not end a sentence in ``lang`` (its non-breaking
    prefixes that apply before any word), lower-cased."""
    prefixes = moses_prefixes(lang) or {}
    return frozenset(word.lower() for word, kind in prefixes.items() if kind == "default")


def split_glued(sentence: str, abbreviations: frozenset[str]) -> list[str]:
    """``sentence`` cut after each danda and each sentence-final mark glued to the next
    sentence (:data:`_GLUED`), except after an abbreviation (lower case) or initials."""
    pieces, start = [], 0
    for match in _GLUED.finditer(sentence):
        word = (match.group("word") or "").lower()
        if word and (word in abbreviations or _INITIALS.match(word)):
            continue
        pieces.append(sentence[start : match.end()])
        start = match.end()
    return [*pieces, sentence[start:]] if pieces else [sentence]


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
        found = split(line)
        if view != line:
            spans = locate(split(view), view)
            if spans is not None:
                found = [line[start:end] for start, end in spans]
        return [piece for sentence in found for piece in split_glued(sentence, abbreviations)]

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
    # The package reads one prefix file; the extra abbreviations go into what it read (the
    # constructor's only store of them).
    known = moses._SentenceSplitter__non_breaking_prefixes
    kinds = {"default": SentenceSplitter.PrefixType.DEFAULT,
             "numeric": SentenceSplitter.PrefixType.NUMERIC_ONLY}  # fmt: skip
    for word, kind in EXTRA_PREFIXES.get(lang, {}).items():
        known[word] = kinds[kind]
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
