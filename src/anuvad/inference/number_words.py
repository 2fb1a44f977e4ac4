"""Hindi numbers written in words, read as digits before the search ("ढाई सौ" → "250").

The small models copy digits exactly but mistranslate numbers spelled out in Hindi: "उसने ढाई
सौ किताबें खरीदीं।" came out "He bought 800 books.", "डेढ़ लाख रुपये" "millions of rupees",
"कक्षा में पच्चीस बच्चे हैं।" "The class has a mature child.", "साढ़े तीन बजे" "at three",
"सवा सौ लोग" "Sawa hundred people"; with digits ("250 किताबें", "1.5 लाख") the same model writes
"250 books" and "Rs 1.5 lakh". So where a sentence's numbers are copied, the words of a number are
read as its digits (:func:`read_number_words`), and the copied numbers then carry them:

- a count of 11 to 99 but the tens ("पच्चीस" → "25"; "बीस" stays "twenty", which the model
  knows), any count before सौ, हज़ार, लाख or करोड़ ("दो सौ
  पचास" → "250", "तीन लाख पचास हज़ार" → "3,50,000"), and the fractions डेढ़ (1½), ढाई (2½),
  सवा (+¼), साढ़े (+½) and पौने (−¼) ("डेढ़ घंटे" → "1.5 घंटे", "सवा सौ" → "125");
- a number ending in लाख or करोड़ keeps the word, as Indian English does ("डेढ़ लाख" →
  "1.5 लाख", which the model writes "1.5 lakh");
- a clock with a fraction before बजे ("साढ़े तीन बजे" → "3:30 बजे"; a whole hour stays in words:
  "दस बजे" is "ten o'clock") and any hour before बजकर ("दो बजकर पच्चीस मिनट" → "2 बजकर 25 मिनट").

Left as words: one to ten counting alone ("दो लड़के": the model says "two boys"), a multiplier
with no count ("लाख कोशिशों", "हज़ारों"), अरब (also "Arab"), two numbers in a row, a range ("दो
तीन सौ", "दो-तीन सौ", "बीस—पच्चीस": two to three hundred, whose halves read differently; "नौ दो
ग्यारह"), a number beside digits ("2 लाख पचास हज़ार"), and the words of a glossary term or a
kept name ("चार सौ बीस").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

from anuvad.inference.glossary import Glossary
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import Verbatim, per_text_policies

# 1 to 99, each with the spellings met in news text (nukta and chandrabindu are folded: _key).
_COUNTS = (
    "एक", "दो", "तीन", "चार", "पांच", "छह छः छ छै", "सात", "आठ", "नौ", "दस",
    "ग्यारह", "बारह", "तेरह", "चौदह", "पंद्रह पन्द्रह", "सोलह", "सत्रह सत्तरह", "अठारह अट्ठारह",
    "उन्नीस", "बीस", "इक्कीस", "बाईस बाइस", "तेईस तेइस", "चौबीस", "पच्चीस", "छब्बीस", "सत्ताईस",
    "अट्ठाईस अठ्ठाईस अठाईस", "उनतीस उन्तीस", "तीस", "इकतीस इकत्तीस", "बत्तीस",
    "तैंतीस तेंतीस", "चौंतीस चौतीस", "पैंतीस पैतीस", "छत्तीस", "सैंतीस सैतीस", "अड़तीस",
    "उनतालीस उन्तालीस उनतालिस", "चालीस चालिस", "इकतालीस इकतालिस", "बयालीस बियालीस बयालिस",
    "तैंतालीस तेंतालीस तैंतालिस", "चवालीस चौवालीस चौंतालीस चवालिस", "पैंतालीस पैतालीस पैंतालिस",
    "छियालीस छियालिस", "सैंतालीस सैतालीस सैंतालिस", "अड़तालीस अड़तालिस",
    "उनचास उन्चास", "पचास", "इक्यावन", "बावन", "तिरेपन तिरपन", "चौवन चव्वन", "पचपन", "छप्पन",
    "सत्तावन", "अट्ठावन अठावन", "उनसठ", "साठ", "इकसठ", "बासठ", "तिरसठ तिरेसठ", "चौंसठ चौसठ",
    "पैंसठ पैसठ", "छियासठ", "सड़सठ सरसठ", "अड़सठ", "उनहत्तर", "सत्तर", "इकहत्तर", "बहत्तर",
    "तिहत्तर", "चौहत्तर", "पचहत्तर", "छिहत्तर", "सतहत्तर", "अठहत्तर", "उन्यासी उनासी", "अस्सी",
    "इक्यासी", "बयासी", "तिरासी", "चौरासी", "पचासी", "छियासी", "सत्तासी", "अट्ठासी अठासी",
    "नवासी", "नब्बे", "इक्यानवे इक्यानबे", "बानवे बानबे", "तिरानवे तिरानबे", "चौरानवे चौरानबे",
    "पचानवे पचानबे", "छियानवे छियानबे", "सत्तानवे सत्तानबे", "अट्ठानवे अट्ठानबे",
    "निन्यानवे निन्यानबे",
)  # fmt: skip
_HUNDRED = ("सौ",)
_LARGE = {"हजार": 1000, "लाख": 100_000, "करोड": 10_000_000}  # keys (_key)
_WHOLE = {"डेढ": Fraction(3, 2), "ढाई": Fraction(5, 2)}  # keys
_SHIFT = {"सवा": Fraction(1, 4), "साढे": Fraction(1, 2), "पौने": Fraction(-1, 4)}  # keys
_CLOCK = ("बजे", "बजकर")  # a whole hour is read before the second only
# Numbers that keep their word: what Indian English says ("1.5 lakh", "3 crore").
_KEPT_WORD = 100_000

Kind = Literal["count", "whole", "shift", "hundred", "large"]


# U+0958 … U+095F (a letter with its nukta, precomposed) to the letter, nukta and chandrabindu
# dropped to what they sit on: one table for every word's key.
_FOLD = str.maketrans(
    {chr(0x0958 + i): base for i, base in enumerate("कखगजडढफय")} | {"\u093c": None, "ँ": "ं"}
)


def _key(word: str) -> str:
    """``word`` with its nukta dropped and chandrabindu as anusvara ("करोड़" and "करोड",
    "पाँच" and "पांच" are one key)."""
    return word.translate(_FOLD)


def _table() -> dict[str, tuple[Kind, Fraction]]:
    table: dict[str, tuple[Kind, Fraction]] = {}
    for value, spellings in enumerate(_COUNTS, start=1):
        for spelling in spellings.split():
            table[_key(spelling)] = ("count", Fraction(value))
    table |= {_key(w): ("hundred", Fraction(100)) for w in _HUNDRED}
    table |= {_key(w): ("large", Fraction(v)) for w, v in _LARGE.items()}
    table |= {_key(w): ("whole", v) for w, v in _WHOLE.items()}
    table |= {_key(w): ("shift", v) for w, v in _SHIFT.items()}
    return table


_WORDS = _table()
_WORD = re.compile(r"[\u0900-\u0963\u0971-\u097f]+")
_JOINERS = "-–—/"  # a range's halves ("दो-तीन", "बीस—पच्चीस", "दो/तीन")
_GAP = re.compile(r"[ \u00a0]+")  # between the words of one number


@dataclass(frozen=True)
class Reading:
    """A source and what the model reads: ``text`` with each number's words replaced by its
    digits; ``edits``: per replacement (start, end) in ``source`` and (start, end) in ``text``."""

    source: str
    text: str
    edits: tuple[tuple[int, int, int, int], ...] = ()

    def original(self, start: int, end: int) -> tuple[int, int]:
        """``text[start:end]`` as a span of ``source``: over a whole replacement where it
        touches one, shifted by the replacements before it otherwise."""
        return self._to_source(start, False), self._to_source(end, True)

    def _to_source(self, position: int, end: bool) -> int:
        delta = 0
        for a, b, c, d in self.edits:
            if position < c or (end and position == c):
                return position - delta
            if position < d or (end and position == d):
                return b if end else a
            delta = d - b
        return position - delta


def _parse(words: Sequence[tuple[Kind, Fraction]]) -> tuple[Fraction, int, bool, int]:
    """The number that ``words`` begin with: (value, how many words, whether it is spelled
    with a multiplier or fraction, its largest multiplier from हज़ार on or 0); (0, 0, False, 0)
    where they begin with none."""
    total, group, hundreds, tail, last = Fraction(0), None, False, False, Fraction(0)
    largest, n, spelled = 0, 0, False
    while n < len(words):
        kind, value = words[n]
        if group is None:
            if kind in ("count", "whole"):
                group, n, spelled = value, n + 1, spelled or kind == "whole"
                continue
            following = words[n + 1][0] if n + 1 < len(words) else None
            if kind == "shift" and following == "count":
                base = words[n + 1][1]
                if value < 0 and base < 2:
                    break  # "पौने एक"
                group, n, spelled = base + value, n + 2, True
                continue
            if kind == "shift" and value > 0 and following in ("hundred", "large"):
                group, n, spelled = 1 + value, n + 1, True  # "सवा सौ": 1¼ hundred
                continue
            if kind == "large" and largest == 1000 and value == 10**7:  # "दो हज़ार करोड़"
                total, largest, last, n = total * value, int(value), value, n + 1
                continue  # (once: "लाख करोड़" stays words, as Indian English says "5 lakh crore")
            break
        if kind == "hundred" and not hundreds and group < 100:
            group, hundreds, n, spelled = group * 100, True, n + 1, True
            continue
        if kind == "count" and hundreds and not tail and value < 100:
            group, tail, n = group + value, True, n + 1
            continue
        if kind == "large" and (not largest or value < last) and group < value:
            total += group * value
            group, hundreds, tail, last = None, False, False, value
            largest, n, spelled = largest or int(value), n + 1, True
            continue
        break
    if total and group is not None and group.denominator != 1:
        return Fraction(0), 0, False, 0  # a fraction after a multiplier: "दो हज़ार डेढ़"
    return total + (group or 0), n, spelled, largest


def _digits(value: Fraction) -> str:
    """``value`` in digits: Indian grouping from 1,00,000, "25,000" below, a decimal for a
    fraction ("1.5", "2.25")."""
    if value.denominator != 1:
        return f"{float(value):.2f}".rstrip("0").rstrip(".")
    whole = str(int(value))
    if len(whole) <= 4:
        return whole
    head, tail = whole[:-3], whole[-3:]
    pairs = [head[max(0, i - 2) : i] for i in range(len(head), 0, -2)][::-1]
    return ",".join([*pairs, tail])


def _written(
    value: Fraction, largest: int, words: list[str], clock: str
) -> tuple[str, bool] | None:
    """How a number of ``value`` is written for the model, and whether its last word stays
    after it ("डेढ़ लाख": "1.5", "लाख" kept); None to leave its words."""
    if clock:
        hours, minutes = divmod(value * 60, 60)
        if not 1 <= hours <= 24 or minutes.denominator != 1 or (not minutes and clock == "बजे"):
            return None  # a whole hour before बजे stays in words: "दस बजे" is "ten o'clock"
        return (f"{hours}:{int(minutes):02d}" if minutes else str(hours)), False
    kept = value / largest if largest >= _KEPT_WORD else None
    if kept is not None and (kept * 100).denominator == 1:  # "1.5 लाख", "1.1 करोड़"
        if _LARGE.get(_key(words[-1])) == largest:
            return _digits(kept), True
        word = next(w for w in words if _LARGE.get(_key(w)) == largest)
        return f"{_digits(kept)} {word}", False
    return _digits(value), False


def _beside_other(text: str, start: int, end: int, protected: Sequence[tuple[int, int]]) -> bool:
    """Whether ``text[start:end]`` is half of a range or beside digits ("दो-तीन सौ", "बीस—पच्चीस",
    "दो/तीन", "2 पच्चीस"), or overlaps a ``protected`` span."""
    edges = (text[start - 1 : start], text[end : end + 1])
    before, after = text[:start].rstrip(" \u00a0")[-1:], text[end:].lstrip(" \u00a0")[:1]
    return (
        any(c and c in _JOINERS for c in edges)
        or any(c.isdecimal() for c in (before, after))
        or any(a < end and start < b for a, b in protected)
    )


def read_number_words(
    text: str, src_lang: str, protected: Sequence[tuple[int, int]] = ()
) -> Reading:
    """``text`` with each Hindi number in words as digits (see the module docstring), but
    where a number overlaps a ``protected`` span (a glossary term's, a kept name's); other
    languages' texts unchanged."""
    if src_lang != "hi":
        return Reading(text, text)
    found = [(m.start(), m.end(), _WORDS.get(_key(m[0]))) for m in _WORD.finditer(text)]
    out: list[str] = []
    edits: list[tuple[int, int, int, int]] = []
    position, i, length = 0, 0, 0
    while i < len(found):
        run = i  # the words of one number: known words with only spaces between them
        while run + 1 < len(found) and found[run + 1][2] and found[run][2]:
            if not _GAP.fullmatch(text[found[run][1] : found[run + 1][0]]):
                break
            run += 1
        if found[i][2] is None:
            i += 1
            continue
        words = [w for _, _, w in found[i : run + 1] if w is not None]
        value, n, spelled, largest = _parse(words)
        start, end = found[i][0], found[i + n - 1][1] if n else found[i][1]
        if n < len(words) or not n or _beside_other(text, start, end, protected):
            i = run + 1  # two numbers in a row ("दो तीन सौ"), or no number: left as words
            continue
        gap = _GAP.match(text, end)
        following = _WORD.match(text, gap.end()) if gap else None
        clock = following[0] if following is not None and following[0] in _CLOCK else ""
        big = spelled or (value > 10 and value % 10 != 0)  # the tens alone are known words
        names = [text[a:b] for a, b, _ in found[i : i + n]]
        written = _written(value, largest, names, clock) if big or clock else None
        if written is not None:
            replacement, word_kept = written
            if word_kept:  # "डेढ़ लाख": "डेढ़" read as "1.5"
                end = found[i + n - 2][1]
            out += [text[position:start], replacement]
            at = start + length
            edits.append((start, end, at, at + len(replacement)))
            length += len(replacement) - (end - start)
            position = end
        i = run + 1
    return Reading(text, "".join([*out, text[position:]]), tuple(edits))


def read_sources(
    texts: Sequence[str],
    verbatim: Verbatim | Sequence[Verbatim | None] | None,
    src_lang: str,
    glossary: Glossary | Sequence[Glossary | None] | None = None,
) -> list[Reading]:
    """Per text, :func:`read_number_words` where its policy copies numbers and reads their
    words (:attr:`Verbatim.number_words`), its glossary's terms and its kept names left as
    written; the text as it is otherwise."""
    glossaries = (
        [glossary] * len(texts) if glossary is None or isinstance(glossary, Glossary) else glossary
    )
    readings = []
    for text, policy, own in zip(
        texts, per_text_policies(verbatim, len(texts)), glossaries, strict=True
    ):
        if not (policy and policy.numbers and policy.number_words):
            readings.append(Reading(text, text))
            continue
        protected = own.match_spans(text) if own else []
        for name in policy.keep:
            protected += [(m.start(), m.end()) for m in re.finditer(re.escape(name), text)]
        readings.append(read_number_words(text, src_lang, protected))
    return readings


def restore_sources(results: Sequence[Translation], readings: Sequence[Reading]) -> None:
    """Each result's ``source`` as the user wrote it, in place: what the model read becomes
    ``read`` where it differs, and the copied spans point into the source ("ढाई सौ" for the
    copied "250")."""
    for result, reading in zip(results, readings, strict=True):
        if not reading.edits:
            continue
        result.read = result.read or result.source
        result.source = reading.source
        spans = []
        for span in result.copied:
            start, end = reading.original(span.start, span.end)
            spans.append(replace(span, source=reading.source[start:end], start=start, end=end))
        result.copied = spans


__all__ = ["Reading", "read_number_words", "read_sources", "restore_sources"]
