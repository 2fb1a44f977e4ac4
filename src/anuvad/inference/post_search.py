"""What a translation gets after its search: signs, digits, reports, and the checks both
engines make on every result.

:mod:`anuvad.inference.verbatim` finds what a translation must copy and turns it into required
phrases for the search; what the search cannot write is written here, after it:

* a currency sign the target vocabulary cannot spell ("₹" is in neither shipped one) is required
  without it (:func:`unsigned`) and put back before its number (:func:`write_signs`,
  :func:`signed`);
* the digits are written in the chosen script (:func:`write_digits`): the search always writes
  Latin ones, since forcing "८" into it changed the words around it;
* an engine that cannot require phrases reports what arrived anyway (:func:`report_unrequired`);
* a symbol the target vocabulary cannot spell (emoji, "©", "™": in neither shipped one) is
  carried from the source (:mod:`anuvad.inference.carrying`);
* :func:`finish` is what both engines run last on every batch of results: digits, symbols, n-best
  lists of distinct texts again (a repair can make two candidates one), the length check.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from anuvad.data.cleaning import SCRIPTS
from anuvad.data.tokenizer import UNK_SURFACE
from anuvad.decoding.boundaries import holds
from anuvad.inference.carrying import write_symbols
from anuvad.inference.currency import named_after, named_before, write_currencies
from anuvad.inference.dates import (
    CURRENCY_SIGNS,
    NUMBER_SIGNS,
    OPERATORS,
    PARTS_OF_DAY,
    without_invented_halves,
)
from anuvad.inference.frontend import distinct
from anuvad.inference.length_check import flag_short
from anuvad.inference.translation import Translation, rewrite
from anuvad.inference.verbatim import (
    NUMERIC_KINDS,
    Digits,
    Span,
    Verbatim,
    copied_report,
    find_spans,
    per_text_policies,
    to_digits,
)

_MARK_BEFORE = re.compile(rf"{UNK_SURFACE}\s*$")  # the model's unknown mark for a sign
# "<10", ">=18", "× 3", "§ 12" (inference.dates.number_extent)
_COMPARISON = re.compile(rf"(?:[<>]=?|[{OPERATORS}] ?)")
# A part of the day right before a time the output holds (with "को" or "के" between).
_PART_OF_DAY_BEFORE = re.compile(
    rf"(?<![\w\u0900-\u097f])(?:{'|'.join(PARTS_OF_DAY)})(?:\s+(?:को|के))?\s*$"
)
_SIGNS = re.compile(f"[{re.escape(NUMBER_SIGNS)}]?[{re.escape(CURRENCY_SIGNS)}]?")


def unsigned(span: Span, spellable: Callable[[str], bool]) -> Span:
    """``span`` as the search can require it: a number whose currency sign the target
    vocabulary cannot spell ("₹80": neither shipped vocabulary has "₹") is required bare
    ("80") and gets its sign back after the search (:func:`write_signs`), with a plus or minus
    before it ("-₹80": "80", "-₹"; "−5" where "−" cannot be spelled: "5", "−"); others
    unchanged. A comparison before a number ("<10", ">=18") is always written back so: a small
    model made to write "<" wrote junk around it ("… >15. <s> <10।")."""
    comparison = _COMPARISON.match(span.target) if span.kind == "number" else None
    if comparison is not None:
        bare = unsigned(replace(span, target=span.target[comparison.end() :]), spellable)
        return replace(bare, sign=comparison.group() + bare.sign)
    if span.kind != "number" or spellable(span.target):
        return span
    prefix = _SIGNS.match(span.target)
    if prefix is None or not prefix.group():
        return span
    return replace(span, target=span.target[prefix.end() :], sign=prefix.group())


def write_signs(text: str, spans: Sequence[Span]) -> str:
    """``text`` with each signed span's sign put back before the first bare occurrence of its
    number (:func:`unsigned`), in the place of the unknown mark the model wrote for it right
    before the number ("Pay ₹500 now." came out " ⁇  ₹500 अब तक।", now "₹500 अब तक।") or of the
    plus or minus the model wrote ("-5" with an unspellable "−": "−5", not "-−5"); no currency
    sign where the model wrote the currency in words ("Rs. 500", "500 rupees", "30 यूरो")."""
    for span in spans:
        if not span.sign or re.search(rf"{re.escape(span.sign)} ?{re.escape(span.target)}", text):
            continue  # written already ("< 10" as the model wrote it holds "<10")
        for match in re.finditer(re.escape(span.target), text):
            window = text[max(0, match.start() - 1) : match.end() + 1]  # it and its neighbours
            if not holds(window, span.target, span.boundary):
                continue
            head, tail = text[: match.start()], text[match.start() :]
            if span.sign[:1].isalpha() and _PART_OF_DAY_BEFORE.search(head):
                continue  # this time has its part of the day ("रात को 8 बजे", another time's)
            currency = next((c for c in span.sign if c in CURRENCY_SIGNS), "")
            if named_before(head, currency) or named_after(tail, currency):
                break
            mark = _MARK_BEFORE.search(head)
            if mark is not None:  # the mark the model wrote for the sign goes
                kept = head[: mark.start()].rstrip()
                head = kept + (" " if kept and kept[-1] not in "([{\"'“‘" else "")
            elif span.sign[0] in NUMBER_SIGNS and head[-1:] in NUMBER_SIGNS:
                head = head[:-1]  # the model's own plus or minus: the source's stands for it
            text = head + span.sign + tail
            break
    return text


def write_digits(
    results: Sequence[Translation], verbatim: Verbatim | Sequence[Verbatim | None] | None
) -> None:
    """Write every digit of each result (its text, n-best candidates, words and copied
    targets) in its policy's :attr:`Verbatim.digits`, in place, except inside what is copied
    as written (:func:`digits_outside_links`). The digits change, nothing else: one
    character for one, so word offsets stay right."""
    policies = per_text_policies(verbatim, len(results))
    for result, policy in zip(results, policies, strict=True):
        if policy is None or policy.digits == "latin":
            continue
        digits = policy.digits
        result.text = digits_outside_links(result.text, digits)
        for candidate in result.nbest:
            candidate.text = digits_outside_links(candidate.text, digits)
            if candidate.quality is not None:
                for word in candidate.quality.words:
                    word.text = digits_outside_links(word.text, digits)
        if result.quality is not None and result.quality is not result.nbest[0].quality:
            for word in result.quality.words:
                word.text = digits_outside_links(word.text, digits)
        result.copied = [
            replace(span, target=to_digits(span.target, digits))
            if span.kind in NUMERIC_KINDS
            else span
            for span in result.copied
        ]


def digits_outside_links(text: str, digits: Digits) -> str:
    """``text`` with its digits written in ``digits``, except inside links, e-mail addresses,
    format placeholders, identifiers and names ("page2", "care123@…", "{0}", "AI302" are
    written as they are)."""
    if digits == "latin" and text.isascii():
        return text
    links = find_spans(text, Verbatim(numbers=False))  # and codes, identifiers, names
    out, pos = [], 0
    for span in links:
        out.append(to_digits(text[pos : span.start], digits))
        out.append(text[span.start : span.end])
        pos = span.end
    out.append(to_digits(text[pos:], digits))
    return "".join(out)


def report_unrequired(
    results: Sequence[Translation],
    verbatim: Verbatim | Sequence[Verbatim | None],
    note: str,
    spellable: Callable[[str], bool] = lambda text: True,
) -> None:
    """Set each result's ``copied`` for an engine that cannot require phrases: every span
    found in its source (by its policy, one for all or one per result), ``required`` False
    with ``note``, and whether it arrived anyway; a currency sign the vocabulary cannot spell
    (``spellable``) is put back before its number (:func:`write_signs`)."""
    for result, policy in zip(results, per_text_policies(verbatim, len(results)), strict=True):
        if policy is None:
            continue
        spans = [unsigned(span, spellable) for span in find_spans(result.source, policy)]
        signed(result, spans)
        result.copied = copied_report(spans, result.source, result.text, [False] * len(spans), note)


def signed(result: Translation, spans: Sequence[Span]) -> None:
    """:func:`write_signs` on ``result``'s text and candidates, in place. A sign is one
    character more: the word scores point at their words again."""
    if any(span.sign for span in spans):
        rewrite(result, functools.partial(write_signs, spans=spans))


def finish(
    results: Sequence[Translation],
    verbatim: Verbatim | Sequence[Verbatim | None] | None,
    src_lang: str,
    tgt_lang: str,
    spellable: Callable[[str], bool] | None = None,
) -> None:
    """What both engines do last to a call's results, in place: the chosen digits
    (:func:`write_digits`; into a language written in Devanagari only: an English translation
    keeps Latin digits), the symbols the target vocabulary cannot spell (with ``spellable``:
    :func:`write_symbols`), one currency for each amount
    (:func:`anuvad.inference.currency.write_currencies`), n-best lists of distinct texts after
    the repairs, and the length check (:func:`anuvad.inference.length_check.flag_short`).
    From Hindi into English, no half of the day the source does not give
    (:func:`anuvad.inference.dates.without_invented_halves`)."""
    if src_lang == "hi" and tgt_lang == "en":
        for result in results:
            rewrite(result, functools.partial(without_invented_halves, source=result.source))
    if verbatim is not None:
        if SCRIPTS.get(tgt_lang) is SCRIPTS["hi"]:  # Devanagari digits in Devanagari text only
            write_digits(results, verbatim)
        if spellable is not None:
            write_symbols(results, verbatim, spellable, (src_lang, tgt_lang))
        write_currencies(
            [r for r, p in zip(results, per_text_policies(verbatim, len(results)), strict=True)
             if p is not None and p.numbers]
        )  # fmt: skip
        for result in results:
            result.nbest = distinct(result.nbest, len(result.nbest))
    flag_short(results, src_lang, tgt_lang)


__all__ = [
    "digits_outside_links",
    "finish",
    "report_unrequired",
    "signed",
    "unsigned",
    "write_digits",
    "write_signs",
]
