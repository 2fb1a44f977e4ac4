"""What a translation must copy from its source: numbers, links, e-mail addresses, marked names,
format placeholders.

A small model invents numbers and addresses ("250 trains" → "2500 रन", "Visit
https://indianrail.gov.in" → "http://www.nic.in/prh3993"; issue 34, item 4). :func:`find_spans`
finds in a source sentence what must reach the output unchanged, and :class:`PhraseEncoder`
turns each span into a :class:`~anuvad.decoding.terms.RequiredPhrase` for the torch engine's
search, which then guarantees it (together with the glossary's terms).

**What is found** (:class:`Verbatim` chooses which kinds):

* ``url``: ``http://``, ``https://`` or ``www.`` addresses, and bare domains ending in a common
  top-level domain (``indianrail.gov.in``), with their paths; closing punctuation after them is
  not part of them;
* ``email``: ``name@domain.tld``;
* ``code``: a format placeholder or a tag written as text (``{name}``, ``%s``, ``{{user}}``,
  ``<div>``: :mod:`anuvad.inference.codes`);
* ``number``: a run of digits (any script), with ``.``, ``,``, ``:``, ``/`` or ``-`` between
  digits kept inside one number (``3.5``, ``1,20,000``, ``10:30``, ``12/06/2024``, ``2019-20``),
  with a currency sign before it or a per cent sign after it (``₹80``, ``5.4%``: a model kept
  the digits and dropped the sign), a degree sign and its scale after it (``-5 °C``), Hindi's
  rupee abbreviation before it, written "₹" in another language (``रु. 500`` → ``₹500``),
  and a plus or minus sign that no word or number touches
  (``-5``, ``+2%``; not ``धारा-370`` or ``10 -15``); a telephone number written in groups is one
  number, its spaces kept (``+91 98765 43210``, ``011 2345 6789``).
* ``date``: a day or year next to a month name, written in the target language ("12 June
  2024" → "12 जून 2024", :mod:`anuvad.inference.dates`; the month was dropped).
  A number glued to a letter on its left is part of a name or code (``SS19``, ``HER2``,
  ``G20``): it is taken too, and may stay glued to a letter in the output (``जी20``). Only the
  digits (and the signs and degrees above) are required: other units and ordinal suffixes are
  the model's to translate (``12th`` → ``12वीं``, ``80 kg`` → ``80 किलो``); the number must not
  be glued to other digits (``250`` is not in ``2500``).
  The digits are written in the reader's script (:attr:`Verbatim.digits`; Latin by default, as
  Hindi news mostly writes them), after the search, which writes Latin ones (:func:`in_latin`,
  :func:`write_digits`): a forced "८" changed the words around it ("at 8 pm" → "८ मई को");
* ``name``: each whole-word, case-sensitive occurrence of a :attr:`Verbatim.keep` string (a
  glossary entry translated as itself does the same), each run of words the source writes in
  the target's script (:attr:`Verbatim.target_script`: "मैंने Samsung Galaxy S24 Ultra खरीदा।"
  → "I bought Samsung Galaxy S24 Ultra."), each identifier of letters and digits ("AI302":
  :mod:`anuvad.inference.identifiers`, with :attr:`Verbatim.codes`). Required as written it
  drew junk ("… S SMM 24 1000,0090 SAMTTA …"), free it was rewritten ("aulpt 24"); behind a
  placeholder (:mod:`anuvad.inference.placeholders`) it is copied.

Where spans overlap, a glossary term wins over all (its translation covers the numbers in it),
then a marked name (one inside a link is copied with the link), a link or a code, a number.
Each distinct target is required once. Links, e-mail addresses, file names, codes and marked
names reach the torch engine's model as placeholders (:mod:`anuvad.inference.placeholders`).

**No number the source lacks**: a small model also writes digits of its own around the required
numbers ("80 जून 2024 को 2424 12"). Where every digit of the source is in a required phrase, the
output may write digits only inside those phrases, also where the source has no digit but
has a phrase to hold (:attr:`Verbatim.only_source_numbers`,
:mod:`anuvad.decoding.source_numbers`). A sentence in which nothing is found is searched exactly
as without a policy.

**What cannot be required** is reported, not forced: a span whose characters the target
vocabulary cannot spell (it could only come out as ⁇) is skipped, with a note saying so, and the
CTranslate2 engine (no output constraints) only reports whether each span arrived
(:class:`~anuvad.inference.translation.CopiedSpan`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from anuvad.data.tokenizer import UNK_ID, Tokenizer
from anuvad.decoding.boundaries import Boundary, BoundaryTable, holds
from anuvad.decoding.terms import RequiredPhrase
from anuvad.errors import ConfigError
from anuvad.inference.addresses import EMAIL, FILE, URL, URL_TRAILING
from anuvad.inference.codes import CODE
from anuvad.inference.currency import find_amounts
from anuvad.inference.dates import OPERATORS, find_dates, number_extent
from anuvad.inference.identifiers import find_identifiers
from anuvad.inference.ordinals import small_ordinals
from anuvad.inference.target_script import target_script_runs
from anuvad.inference.translation import CopiedSpan

Kind = Literal["number", "date", "url", "email", "name", "code"]
NUMERIC_KINDS = ("number", "date")
Digits = Literal["latin", "devanagari"]
DIGITS: tuple[Digits, ...] = ("latin", "devanagari")
UNSPELLABLE_SPAN = "not required: the model's target vocabulary cannot spell it (it would be ⁇)"
UNCONSTRAINED_ENGINE = (
    "not required: this engine cannot constrain its search (CTranslate2); it was translated "
    "freely and the source's numbers put back after it (anuvad.inference.numbers_back); serve "
    "the model with the torch engine to carry everything through"
)
MAX_KEEP = 200  # marked names per call, as many as glossary terms
MAX_KEEP_CHARS = 200

# Digits, and separators only between digits: a whole number, never the tail of one.
_NUMBER = re.compile(r"(?<!\d)(?<!\d[.,:/])\d+(?:[.,:/-]\d+)*")
# A telephone number written in groups ("+91 98765 43210", "98765 43210", "011 2345 6789",
# "+44 20 7946 0958"): one span, spaces kept, so that its groups stay together and in order
# (they came out as "C + 98765 43210 … 91"). With "+", eight digits or more; without, a mobile
# number's two groups of five or a number beginning with its area code's 0 (not a list of
# years or scores: "1947 1950 1962").
PHONE = re.compile(
    r"(?<![\w.,+-])(?:\+\d{1,3}(?:[ -]\d{2,5}){1,4}|\d{5} \d{5}|0\d{2,4}(?: \d{3,4}){1,2})"
    r"(?![\w.,]?\d)"
)
_KIND_ORDER: dict[Kind, int] = {
    "name": 0, "url": 1, "email": 1, "code": 1, "date": 2, "number": 3
}  # fmt: skip


@dataclass(frozen=True)
class Verbatim:
    """What translations must copy from their sources (one object for a call, like a glossary).

    Attributes:
        numbers: numbers are copied (in ``digits``).
        links: URLs and e-mail addresses are copied as written.
        digits: "latin" (0-9, the default: what Hindi news mostly uses) or "devanagari" (०-९):
            the script numbers are written in.
        keep: strings copied as written wherever they occur as whole words (case-sensitive):
            names the user marks.
        codes: format placeholders and tags written as text ("{name}", "%s", "{{user}}",
            "<div>": :mod:`anuvad.inference.codes`) and identifiers of letters and digits
            ("AI302": :mod:`anuvad.inference.identifiers`) are copied as written.
        target_script: words the source already writes in the target's script ("AM" in
            Hindi text, "नमस्ते" in English) are copied as written, as marked names are
            (:mod:`anuvad.inference.target_script`; needs ``langs``).
        symbols: symbols the target vocabulary cannot spell (emoji, "©", "™") are carried
            from the source after the search (:func:`anuvad.inference.carrying.carry_symbols`).
        only_source_numbers: in a sentence with required phrases whose every digit (if it has
            any) is in one of them, the output may write no other digit (no number the source
            lacks: a small model invents them around the required ones;
            :mod:`anuvad.decoding.source_numbers`).
        number_words: with ``numbers``, a Hindi number in words is read as its digits, then
            copied ("ढाई सौ" as "250": :mod:`anuvad.inference.number_words`).
        langs: the source and target languages (set by the engine, :func:`search_policies`):
            with both in :data:`anuvad.inference.dates.MONTHS`, a number next to a month name
            is copied as a date in the target's words ("12 June 2024" → "12 जून 2024").

    Raises:
        ConfigError: an unknown ``digits``, or an empty, too long or too many ``keep`` strings
            (every problem named).
    """

    numbers: bool = True
    links: bool = True
    digits: Digits = "latin"
    keep: tuple[str, ...] = field(default=())
    codes: bool = True
    target_script: bool = True
    symbols: bool = True
    only_source_numbers: bool = True
    number_words: bool = True
    langs: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.digits not in DIGITS:
            problems.append(f"digits: expected one of {', '.join(DIGITS)}, got {self.digits!r}")
        if len(self.keep) > MAX_KEEP:
            problems.append(f"keep: {len(self.keep)} strings; the limit is {MAX_KEEP}")
        for i, name in enumerate(self.keep):
            if not name.strip():
                problems.append(f"keep.{i}: an empty string; leave it out")
            elif len(name) > MAX_KEEP_CHARS:
                problems.append(f"keep.{i}: {len(name)} characters; the limit is {MAX_KEEP_CHARS}")
        if problems:
            raise ConfigError("; ".join(problems))


@dataclass(frozen=True)
class Span:
    """A part of a source sentence its translation must copy.

    Attributes:
        kind: "number", "date", "url", "email", "name" or "code" (a format placeholder).
        start: offset of its first character in the source.
        end: offset just after it.
        target: what the output must hold (a number in the chosen digits; else the span).
        boundary: where it must begin and end in the output (a number right after a letter
            is part of a code: ``CODE``).
        sign: what goes before ``target`` after the search, which requires ``target`` alone:
            a currency or comparison sign (:func:`anuvad.inference.post_search.unsigned`), a
            time's part of the day ("रात " of "रात 8 बजे").
    """

    kind: Kind
    start: int
    end: int
    target: str
    boundary: Boundary
    sign: str = ""

    @property
    def written(self) -> str:
        """What the output holds once :func:`write_signs` has run: ``sign + target``."""
        return self.sign + self.target


def to_digits(number: str, digits: Digits) -> str:
    """``number`` with every decimal digit (any script) written in ``digits``; separators stay."""
    zero = "0" if digits == "latin" else "०"
    return "".join(
        chr(ord(zero) + unicodedata.digit(c)) if unicodedata.category(c) == "Nd" else c
        for c in number
    )


def search_policies(
    verbatim: Verbatim | Sequence[Verbatim | None] | None,
    count: int,
    langs: tuple[str, str] | None = None,
) -> list[Verbatim | None]:
    """One policy per text (:func:`per_text_policies`) as the search uses it: Latin digits
    (:func:`write_digits` writes the chosen ones afterwards) and the model's languages
    ``langs`` (source, target: dates are written with the target's month names)."""
    return [
        None if policy is None else replace(policy, digits="latin", langs=langs)
        for policy in per_text_policies(verbatim, count)
    ]


def _bracketed(text: str, kind: Kind, start: int, end: int) -> Span:
    """An address's span, over the angle brackets around it when it has them ("<a@b.in>", as
    mail headers write it: the model wrote "* 'जेड … '" for the brackets around its
    placeholder, which now stands for both); its target is the address alone."""
    target = text[start:end]
    if text[start - 1 : start] == "<" and text[end : end + 1] == ">":
        start, end = start - 1, end + 1
    return Span(kind, start, end, target, Boundary.LINK)


def find_spans(text: str, verbatim: Verbatim, taken: Sequence[tuple[int, int]] = ()) -> list[Span]:
    """The spans of ``text`` its translation must copy (see the module docstring), in order.

    Args:
        text: one source sentence.
        verbatim: which kinds to find, the digits, the marked names.
        taken: (start, end) character ranges already covered (glossary terms): spans
            overlapping them are left out.

    Returns:
        Non-overlapping spans sorted by start.
    """
    found: list[Span] = []
    for name in sorted(set(verbatim.keep), key=len, reverse=True):
        pattern = rf"(?<![^\W_]){re.escape(name.strip())}(?![^\W_])"
        found.extend(
            Span("name", m.start(), m.end(), m.group(), Boundary.WORD)
            for m in re.finditer(pattern, text)
        )
    if verbatim.links:
        for m in EMAIL.finditer(text):
            found.append(_bracketed(text, "email", m.start(), m.end()))
        for m in URL.finditer(text):
            url = m.group().rstrip(URL_TRAILING)
            if "(" in url and m.group()[len(url) : len(url) + 1] == ")":
                url += ")"  # a bracket the address opened (Wikipedia paths) is its own
            found.append(_bracketed(text, "url", m.start(), m.start() + len(url)))
        for m in FILE.finditer(text):  # a file name is copied as a link is
            found.append(Span("url", m.start(), m.end(), m.group(), Boundary.LINK))
    if verbatim.codes:
        for m in CODE.finditer(text):  # "{name}", "%s", "<div>"
            found.append(Span("code", m.start(), m.end(), m.group(), Boundary.LINK))
    if verbatim.numbers:
        for a in find_amounts(text, *verbatim.langs) if verbatim.langs else []:
            target = to_digits(a.target, verbatim.digits)
            found.append(Span("number", a.start, a.end, target, Boundary.NUMBER))
        for d in find_dates(text, *verbatim.langs) if verbatim.langs else []:
            boundary = Boundary.NUMBER if d.target[-1].isdigit() else Boundary.WORD
            target = to_digits(d.target, verbatim.digits)
            found.append(Span("date", d.start, d.end, target, boundary, sign=d.before))
        for m in PHONE.finditer(text):
            if m.group()[0] != "+" or sum(c.isdigit() for c in m.group()) >= 8:
                target = to_digits(m.group(), verbatim.digits)
                found.append(Span("number", m.start(), m.end(), target, Boundary.NUMBER))
        ordinals = {start for start, _ in small_ordinals(text)}  # "2nd": a word to translate
        for m in _NUMBER.finditer(text):
            if m.start() in ordinals:
                continue
            glued = m.start() > 0 and text[m.start() - 1].isalpha()  # SS19, HER2: a code
            boundary = Boundary.CODE if glued else Boundary.NUMBER
            start, end = number_extent(text, m.start(), m.end())
            target = "".join(text[start:end].split())  # "₹ 80" → "₹80"
            if text[start] in OPERATORS and text[start + 1 : start + 2].isspace():
                target = f"{target[0]} {target[1:]}"  # "× 3", "§ 12" as written
            target = target.replace("℃", "°C").replace("℉", "°F")  # as the vocabulary reads it
            found.append(Span("number", start, end, to_digits(target, verbatim.digits), boundary))
    if verbatim.target_script and verbatim.langs:  # "Samsung" in Hindi, "नमस्ते" in English
        # A number's own letters are its ("45°C", "USD 20"), not a name of their own; a number
        # inside a run is the run's ("Galaxy S24").
        held = [
            *taken,
            *((s.start, s.end) for s in found if s.kind != "number" or _has_letter(text, s)),
        ]
        for first, last in target_script_runs(text, *verbatim.langs, skip=held):
            found.append(Span("name", first, last, text[first:last], Boundary.WORD))
    if verbatim.codes:  # "AI302", "SAVE50", "XK47Q9": after the runs, which may hold them
        for first, last in find_identifiers(text):
            found.append(Span("name", first, last, text[first:last], Boundary.WORD))
    links = [(s.start, s.end) for s in found if s.kind in ("url", "email")]
    # A marked name inside a link ("irctc.co.in" of "care@irctc.co.in") is copied with it.
    found = [
        s for s in found
        if s.kind != "name" or not any(a <= s.start and s.end <= b for a, b in links)
    ]  # fmt: skip
    chosen: list[Span] = []
    occupied = list(taken)
    # Names first, then links, then numbers; within a kind the longer, then the earlier.
    for span in sorted(found, key=lambda s: (_KIND_ORDER[s.kind], s.start - s.end, s.start)):
        if any(span.start < b and a < span.end for a, b in occupied):
            continue
        occupied.append((span.start, span.end))
        chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def _has_letter(text: str, span: Span) -> bool:
    """Whether the source text of ``span`` holds a letter ("45°C", "USD 20")."""
    return any(c.isalpha() for c in text[span.start : span.end])


class PhraseEncoder:
    """Target phrases as the search needs them, for one target vocabulary.

    Args:
        tokenizer: the model's target tokenizer.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        pieces = tokenizer.id_to_piece(list(range(tokenizer.vocab_size)))
        self.table = BoundaryTable.from_pieces(pieces)
        self._ids = {piece: i for i, piece in enumerate(pieces)}

    def spellable(self, text: str) -> bool:
        """Whether the target vocabulary writes ``text`` without ``<unk>``."""
        return UNK_ID not in self.tokenizer.encode(text)

    def term(self, target: str) -> RequiredPhrase:
        """A glossary translation: its pieces, ending at a word boundary."""
        return RequiredPhrase(tuple(self.tokenizer.encode(target)), Boundary.WORD)

    def span(self, span: Span) -> RequiredPhrase | None:
        """The phrase that makes the output copy ``span``; None when the target vocabulary
        cannot spell it (``<unk>`` in its pieces)."""
        ids = tuple(self.tokenizer.encode(span.target))
        if not ids or UNK_ID in ids:
            return None
        starts: frozenset[int] = frozenset()
        if span.kind in NUMERIC_KINDS and self.tokenizer.id_to_piece([ids[0]])[0] == "▁":
            # SentencePiece wrote the word start as a piece of its own: the digits may also
            # follow "▁(", "$", "-" ... (a number in brackets, an amount, a range), and a
            # code's after a letter.
            code = span.boundary is Boundary.CODE
            starts = self.table.code_starts if code else self.table.number_starts
        return RequiredPhrase(ids, span.boundary, starts)


def copied_report(
    spans: Sequence[Span], text: str, output: str, required: Sequence[bool], note: str = ""
) -> list[CopiedSpan]:
    """What became of each span in ``output``.

    Args:
        spans: the spans found in the source ``text``.
        text: the source sentence.
        output: its translation (the best one).
        required: per span, whether the search was made to write it.
        note: said of the spans not required (unless a span's own reason is known).

    Returns:
        One :class:`CopiedSpan` per span, in order.
    """
    return [
        CopiedSpan(
            kind=span.kind,
            source=text[span.start : span.end],
            target=span.written,
            start=span.start,
            end=span.end,
            required=need,
            present=holds(output, span.written, span.boundary),
            note="" if need else note,
        )
        for span, need in zip(spans, required, strict=True)
    ]


def per_text_policies(
    verbatim: Verbatim | Sequence[Verbatim | None] | None, count: int
) -> list[Verbatim | None]:
    """One policy (or None) per text, from one for all or a list of one per text.

    Raises:
        ValueError: a list whose length is not ``count``.
    """
    if verbatim is None or isinstance(verbatim, Verbatim):
        return [verbatim] * count
    policies = list(verbatim)
    if len(policies) != count:
        raise ValueError(f"{len(policies)} verbatim policies for {count} texts")
    return policies
