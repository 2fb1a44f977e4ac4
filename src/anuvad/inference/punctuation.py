"""The output's punctuation, made consistent (issue 34 item 7).

The training data writes the Hindi full stop both as the danda "।" and as ".", and some corpora
type the danda as "|"; a model trained on them mixes all three, and now and then opens a
quotation it never closes. Every candidate a search returns goes through :func:`punctuate`:

* Hindi (and other languages that end sentences with the danda): a "." or "|" that ends the
  sentence after a letter or digit, a "|" standing alone between words and a "." standing
  alone at the end ("धन्यवाद .") become "।"; a "." inside a word or number ("3.5", "gov.in")
  is left alone; no space goes before a danda ("है ।" → "है।", as the references write it) and
  a final run of stops with a danda is one ("आएगा।।", "आएगा।." → "आएगा।").
* Any language: a source that does not end a sentence (a part of a long sentence cut at a
  comma or a space, a headline, a list item) gets no full stop: the output's final "।" or "."
  becomes the source's final ",", ";" or ":", or goes where the source ends in a word ("?" and
  "!" stay). A long sentence cut into parts read "… पिछले वर्ष से ही था। और जुलाई …".
* Any language: an unpaired straight double quote (an odd number of them) is closed at the
  end of the sentence, before its final punctuation, when the source quotes something, and
  removed otherwise (the source had no quotation to carry). Curly quotes are paired the same
  way. Single quotes and marks after the sentence's final mark, where the source has no single
  quote, go ("… खर्च हो गया।'।'", an n-best candidate, is "… खर्च हो गया।"). Each language
  keeps its own quotation marks: NTREX-128's Hindi quotes with curly marks, its English with
  straight ones (made curly like the source's, Hindi→English lost 0.05 chrF++ there). The
  inch mark of a height (5'8") is no quotation mark.
* Any language: a source that ends in a run of "?" and "!" ("???", "?!"; not inside a quote
  or bracket) ends its translation with the same run (the model wrote one "?").
* A language whose sentences begin with a capital, from a source whose first letter has no
  case: a first word in lower case gets its capital ("राम" → "ram" → "Ram"; a sentence, heading
  or cell, not a part of a long sentence cut at its clauses); a capital "X" standing alone
  before an acronym goes where the source has none ("(X RBI)" for "(RBI)").
* Any language: a symbol standing alone ("*", "$", "#") that the source does not have goes
  ("* ग्रुप पंडित और …" for "Conservative sites such as Gateway Pundit …"): 4 of NTREX-128's
  1,997 English→Hindi outputs at beam 4 and 10 Hindi→English ones had one.

Then :func:`anuvad.inference.links.carry_links` gives the output each of the source's links
exactly once and removes link-like text the source lacks. The candidates' word probabilities
and offsets are computed on the text after this step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from anuvad.inference.final_mark import FINAL
from anuvad.inference.links import carry_links, source_links
from anuvad.inference.sentences import ABBREVIATIONS
from anuvad.inference.translation import Candidate

DANDA_LANGUAGES = frozenset({"hi", "ne", "sa"})
# Languages whose sentences begin with a capital: a translation into one from a text whose
# first letter has no case (Hindi) begins with one ("राम" came back "ram", a cell "गंगा" "ganga",
# a heading "rain in Delhi"); a first word with capitals of its own stays ("iPhone").
CAPITALISED = frozenset({"en", "de", "fr", "es"})
_LOWER_START = re.compile(r"^([\"'“‘(\[¡¿]*)([a-z]+)(?![A-Za-z])")
# A capital "X" standing alone before an acronym, which the model writes before one it copies
# ("भारतीय रिज़र्व बैंक (RBI)" → "(X RBI)"), where the source has no X of its own ("Malcolm X",
# "एक्स"); not a numeral or a sign ("Class X", "3 X 4").
_LONE_X = re.compile(r"(?<![\w\-.'’])X (?=[A-Z]{2,}(?![a-z]))")
_SOURCE_X = re.compile(r"(?<![A-Za-z])[Xx](?![A-Za-z])|एक्स")
DANDA = "।"
# A final "." or "|" after a letter, digit, mark (Devanagari vowel signs are marks) or "%", before
# any closing quotes or brackets.
# (not a danda: "आएगा।." is one danda, below)
_FINAL_STOP = re.compile(r"(?<=\w|[\u0900-\u0963\u0966-\u097f%])[.|](?=[\"'”’)\]]*\s*$)")
# A "|" standing alone between words, or a "." standing alone at the end ("धन्यवाद ."): "।".
_LONE_PIPE = re.compile(r"(?<=\S) \|(?= |$)|(?<=[\w\u0900-\u097f]) \.(?=[\"'”’)\]]*\s*$)")
# Spaces before a danda ("है ।": the dev sets' references write none, 1,803 to 1 in NTREX-128),
# and a final run of stops with a danda in it ("आएगा।।", "आएगा।.", n-best candidates): one danda.
_SPACE_BEFORE_DANDA = re.compile(r"(?<=\S)[ \u00a0]+(?=।)")
_DANDA_RUN = re.compile(r"[.|]*।[।.|]*(?=[\"'”’)\]]*\s*$)")
_TRAILING = re.compile(r"[\s।.!?|]*$")
# A source that ends without a sentence-final mark: in ",", ";", ":" (group 1) or anything
# else but a mark ("जीता", whose last character is a vowel sign, not a word character).
_SOURCE_END = re.compile(r"(?:([,;:])|[^\s.!?।॥|…,;:\"'”’)\]])[\"'”’)\]]*\s*$")
# An output's final full stop(s), and a comma, semicolon or colon before them, before any
# closing quotes or brackets.
_OUTPUT_STOP = re.compile(r"\s*[,;:]?\s*[।.|]+(?=[\"'”’)\]]*\s*$)")
# A source's final run of two or more "?" and "!" ("???", "?!"), and an output's final marks.
_SOURCE_MARKS = re.compile(r"([?!][?!]+)\s*$")  # at the very end: not a quote's or bracket's
_OUTPUT_MARKS = re.compile(r"[?!.।]+(?=\s*$)")
# A run of symbols standing alone, a word of its own before a space, a mark or the end ("*",
# "$."): gone where the source has none of them (greedy search, kept from a number it wanted,
# wrote "… और  $. , , जो …"); not a currency sign before a number ("$ 25") nor an operator
# ("x = 5", "a + b": not in the set).
_LONE_SYMBOLS = re.compile(
    r"(?<!\S)[*#@^~_\[\]{}\\$€£¥₹]+(?=[\s,.;:!?।]|$)(?! ?[0-9\u0966-\u096f])"
)
# A height in feet and inches (5'8"), whose inch mark is no quotation mark, and what stands
# for that mark while quotes are paired.
_HEIGHT = re.compile(r"(?<![0-9])[0-9]+'[0-9]{1,2}(?:\.[0-9]+)?\"")
_INCH = "\ue000"
# Single quotes (and marks among them) after a sentence's final mark, at the end.
_STRAY_QUOTES = re.compile(r"(?<=[।.!?])\s*['‘’](?:\s*['‘’।.!?])*\s*$")


def punctuate(text: str, source: str, tgt_lang: str) -> str:
    """``text`` (a translation of ``source`` into ``tgt_lang``) with consistent sentence-final
    punctuation and paired quotation marks (see the module docstring), without the spaces a
    final "▁" piece leaves at its end ("… ₹5 ")."""
    text = _without_lone_symbols(text.strip(), source)
    if tgt_lang in CAPITALISED and not _SOURCE_X.search(source):
        text = _LONE_X.sub("", text)
    if tgt_lang in CAPITALISED and _uncased_start(source) and _begins_sentence(source):
        text = _LOWER_START.sub(lambda m: m[1] + m[2].capitalize(), text, count=1)
    if tgt_lang in DANDA_LANGUAGES:
        text = _LONE_PIPE.sub(DANDA, _FINAL_STOP.sub(DANDA, text))
        text = _SPACE_BEFORE_DANDA.sub("", _DANDA_RUN.sub(DANDA, text))
    unended = _SOURCE_END.search(source)
    if unended is not None:  # no full stop where the source has none
        text = _OUTPUT_STOP.sub(unended.group(1) or "", text)
    if not any(q in source for q in "'‘’"):
        text = _STRAY_QUOTES.sub("", text)
    marks = _SOURCE_MARKS.search(source)
    if marks is not None:  # "तुम कहाँ जा रहे हो???" came out "Where are you going?"
        text = _OUTPUT_MARKS.sub(marks.group(1), text, count=1)
    inches = _HEIGHT.sub(lambda m: m.group()[:-1] + _INCH, text)  # 5'8": no quotation mark
    text = _pair(inches, _HEIGHT.sub("", source), '"', '"').replace(_INCH, '"')
    return _pair(text, source, "“", "”")


def _begins_sentence(source: str) -> bool:
    """Whether ``source`` is a sentence, a heading or a cell rather than the continuation of a
    long sentence cut for the model (a clause of many words that ends without a final mark:
    its translation's first word stays as the model wrote it)."""
    return len(source.split()) <= 8 or bool(re.search(r"[।॥.?!][\"'”’)\]]*\s*$", source))


def _uncased_start(source: str) -> bool:
    """Whether ``source``'s first letter has no case (a Devanagari letter)."""
    first = next((c for c in source if c.isalpha()), "")
    return bool(first) and first.upper() == first.lower()


def _without_lone_symbols(text: str, source: str) -> str:
    """``text`` without each symbol run standing alone (:data:`_LONE_SYMBOLS`) that ``source``
    has none of, with a space beside it ("* ग्रुप पंडित …"); a run between two numbers stays
    ("5 * 3"), and ``text`` stays as it was where nothing else would be left."""
    out = text
    for lone in reversed(list(_LONE_SYMBOLS.finditer(text))):
        a, b = lone.span()
        before, after = text[a - 2 : a - 1] if a >= 2 else "", text[b + 1 : b + 2]
        between_numbers = before.isdecimal() and after.isdecimal()
        if not set(lone.group()) & set(source) and not between_numbers:
            a, b = (a - 1, b) if a and out[a - 1] == " " else (a, b + (out[b : b + 1] == " "))
            out = out[:a] + out[b:]
    return out if any(c.isalnum() for c in out) else text


def punctuate_candidates(
    found: list[list[Candidate]], sources: Sequence[str], tgt_lang: str
) -> list[list[Candidate]]:
    """:func:`punctuate` every candidate of every source (``found[i]`` translates
    ``sources[i]``), and carry the source's links (:func:`~anuvad.inference.links.carry_links`),
    in place; returns ``found``. Both engines call it on each batch's search results, before
    the word probabilities and the checks on the text are computed."""
    for candidates, source in zip(found, sources, strict=True):
        links = source_links(source)  # once for all of the source's candidates
        for candidate in candidates:
            text = punctuate(candidate.text, source, tgt_lang)
            candidate.text = carry_links(text, source, links)
    return found


# A mark that ends a sentence before more text: a danda, "?" or "!", or a full stop after a
# Devanagari word or a lower-case word of three letters or more, with a space after it; not an
# abbreviation's ("No. 13", "Rs. 500", "Jan. 2024", "fig. 3", "डॉ. 5": ``ABBREVIATIONS``).
_MARK_THEN = re.compile(
    r"(?P<mark>[।?!])(?=\s+\S)"
    r"|(?<![\w.])(?P<word>[a-z]{3,}|[\u0900-\u097f]+) ?(?P<stop>\.)(?=\s+\S)"
)  # (a full stop alone after a Devanagari word: "है . 13")


def phrases_before_mark(text: str, phrases: Sequence[str]) -> str:
    """``text`` with what follows its last sentence-final mark put before the mark when that is
    nothing but ``phrases`` (what the output had to hold): greedy search writes a phrase it
    missed where its model would have ended, after the sentence's full stop ("… घायल हो गया था.
    13" → "… घायल हो गया था 13."); ``text`` as it was otherwise."""
    marks = [
        m
        for m in (_MARK_THEN.finditer(text) if phrases else ())
        if m.group("mark") or m.group("word").lower() not in ABBREVIATIONS
    ]
    if not marks:
        return text
    last = marks[-1]
    tail = text[last.end() :].strip()
    end = FINAL.search(tail)  # its own final marks and closing quotes
    core = tail[: end.start()] if end is not None else tail
    rest = core
    for phrase in sorted(set(phrases), key=len, reverse=True):
        rest = rest.replace(phrase, " ")
    if not core or any(c.isalnum() for c in rest):
        return text
    at = last.start("mark") if last.group("mark") else last.start("stop")
    head, mark = text[:at].rstrip(), text[at]
    closing = tail[len(core) :].strip()  # its own final mark, else the one it followed
    if not any(c in ".।?!" for c in closing):
        closing += mark
    return f"{head} {core}{closing}"


def close_candidates(
    found: list[list[Candidate]], wanted: Sequence[Sequence[str]]
) -> list[list[Candidate]]:
    """Greedy search's candidates with the phrases written after the sentence's final mark put
    before it (:func:`phrases_before_mark`), in place; ``wanted``: each sentence's required
    texts. Returns ``found``."""
    for own, phrases in zip(found, wanted, strict=True):
        for candidate in own:
            candidate.text = phrases_before_mark(candidate.text, phrases)
    return found


def _pair(text: str, source: str, opening: str, closing: str) -> str:
    """Close or drop the one unpaired quotation mark of ``text`` (see the module docstring)."""
    if opening == closing:
        unpaired = text.count(opening) % 2 == 1
    else:
        unpaired = text.count(opening) == text.count(closing) + 1
        if text.count(closing) == text.count(opening) + 1 and opening not in source:
            return _drop(text, text.rfind(closing))  # a stray closing mark
    if not unpaired:
        return text
    if opening in source or closing in source:
        end = _TRAILING.search(text)
        cut = end.start() if end is not None else len(text)
        return text[:cut] + closing + text[cut:]
    return _drop(text, text.rfind(opening))


def _drop(text: str, index: int) -> str:
    """``text`` without the character at ``index`` (and without a space it leaves doubled)."""
    before, after = text[:index], text[index + 1 :]
    if before.endswith(" ") and (after.startswith(" ") or not after):
        before = before[:-1]
    return before + after


__all__ = [
    "DANDA",
    "DANDA_LANGUAGES",
    "close_candidates",
    "phrases_before_mark",
    "punctuate",
    "punctuate_candidates",
]
