"""Numbers carried back into the output of an engine that cannot constrain its search.

The CTranslate2 engine translates freely, and a small model changes numbers: "Call 139" →
"1399 या ...", "March 3, 2025" → "मार्च 30252" (issue 40 item 2). The torch engine requires every
source number in its search (:mod:`anuvad.inference.verbatim`); for the other engine,
:func:`carry_numbers` repairs the output after the search, as IndicTrans2's text processor puts
back the numbers it set aside:

1. a number of the output that is one of the source's (not yet used) stays;
2. a number the source lacks is replaced, in order, by the next source number the output lost
   (the model wrote *a* number there: "1399" where "139" was meant), and removed when none is
   left;
3. a source number still missing goes before the final punctuation.

The output then holds each source number as often as the source does, and no other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from anuvad.inference.final_mark import before_final_mark
from anuvad.inference.ordinals import small_ordinals
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import PHONE, Verbatim, find_spans, to_digits

# A telephone number written in groups, one number with its "+" and spaces ("+91 98765 43210":
# the page wrote "(अंक 98765 43210 … 91)"; verbatim's telephone rule); else digits (any script)
# with separators only between digits, as the torch engine requires them (glued to letters
# too: "5km", "G20", "1990s", "जी20"). A currency sign stays the model's: taken with the number,
# "5 डॉलर" for "$5" became "$5 डॉलर".
_NUMBER = re.compile(PHONE.pattern + r"|(?<!\d)(?<!\d[.,:/])\d+(?:[.,:/-]\d+)*")
_EMPTY = re.compile(r"\(\s*\)|\[\s*\]")  # brackets a removed number leaves empty
_BEFORE_MARK = re.compile(r" +(?=[।.!?,;:)\]]+)")  # and before a closing bracket
_LINKS = Verbatim(numbers=False, codes=False)


def _numbers(text: str) -> list[re.Match[str]]:
    """The numbers of ``text`` outside its links and e-mail addresses ("page2" is an address's)."""
    links = [(s.start, s.end) for s in find_spans(text, _LINKS)]
    ordinals = {start for start, _ in small_ordinals(text)}  # "2nd" is a word (inference.ordinals)
    return [
        m
        for m in _NUMBER.finditer(text)
        if not any(a <= m.start() < b for a, b in links) and m.start() not in ordinals
    ]


def source_numbers(text: str) -> list[str]:
    """The numbers of ``text`` in Latin digits, in order (what :func:`carry_numbers` keeps)."""
    return [to_digits(m.group(), "latin") for m in _numbers(text)]


def carry_numbers(text: str, numbers: Sequence[str]) -> str:
    """``text`` holding each of ``numbers`` (the source's in Latin digits, in source order:
    :func:`source_numbers`) as often as it is listed, and no other number outside its links
    (see the module docstring); numbers are compared whatever their digits' script."""
    wanted = Counter(numbers)
    found = _numbers(text)
    if not numbers and not found:
        return text
    present = Counter(to_digits(m.group(), "latin") for m in found)
    lost = [n for n in dict.fromkeys(numbers) for _ in range(max(0, wanted[n] - present[n]))]
    out: list[str] = []
    pos, removed = 0, False
    used: Counter[str] = Counter()
    for match in found:
        number = to_digits(match.group(), "latin")
        out.append(text[pos : match.start()])
        if used[number] < wanted[number]:
            used[number] += 1
            out.append(match.group())
        elif lost:
            replacement = lost.pop(0)
            used[replacement] += 1
            out.append(replacement)
        else:
            removed = True
        pos = match.end()
    out.append(text[pos:])
    fixed = "".join(out)
    if removed:  # what the removed number leaves: empty brackets, a space before a mark
        fixed = _BEFORE_MARK.sub("", re.sub(r" {2,}", " ", _EMPTY.sub("", fixed))).strip()
    return before_final_mark(fixed, lost) if lost else fixed


def put_numbers_back(results: Sequence[Translation], policies: Sequence[Verbatim | None]) -> None:
    """:func:`carry_numbers` on every candidate of each result whose policy copies numbers,
    in place (the engine's search could not be made to write them)."""
    for result, policy in zip(results, policies, strict=True):
        if policy is not None and policy.numbers:
            numbers = source_numbers(result.source)
            for candidate in result.nbest:
                candidate.text = carry_numbers(candidate.text, numbers)
            result.text = result.nbest[0].text


__all__ = ["carry_numbers", "put_numbers_back", "source_numbers"]
