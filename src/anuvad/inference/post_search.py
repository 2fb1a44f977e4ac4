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
  carried from the source (:func:`carry_symbols`): the model drops it ("Great job! 🎉" →
  "महान नौकरी!") or writes the unknown piece, which SentencePiece shows as "⁇";
* :func:`finish` is what both engines run last on every batch of results: digits, symbols, n-best
  lists of distinct texts again (a repair can make two candidates one), the length check.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace

from anuvad.data.cleaning import SCRIPTS
from anuvad.data.tokenizer import UNK_ID, UNK_SURFACE, Tokenizer
from anuvad.decoding.boundaries import holds
from anuvad.inference.dates import CURRENCY_SIGNS, NUMBER_SIGNS
from anuvad.inference.frontend import distinct
from anuvad.inference.length_check import flag_short
from anuvad.inference.symbols import free_run, is_symbol, symbol_runs
from anuvad.inference.translation import Translation, WordScore
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

# The rupee in words right before or after a number ("Rs. 500", "INR 500", "500 rupees").
_RUPEES_BEFORE = re.compile(r"(?:\b(?:Rs|INR)\.?|रु\.?|रुपये)\s*$", re.IGNORECASE)
_RUPEES_AFTER = re.compile(r"[\d.,]+\s*(?:rupees?|रुपये|रुपए)\b", re.IGNORECASE)
_MARK_BEFORE = re.compile(rf"{UNK_SURFACE}\s*$")  # the model's unknown mark for a sign
_SIGNS = re.compile(f"[{re.escape(NUMBER_SIGNS)}]?[{re.escape(CURRENCY_SIGNS)}]?")
_FINAL = re.compile(r"[\s।.!?|\"'”’)\]]*$")  # a sentence's final marks and closing quotes
_SPACES = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_MARK = re.compile(r" +(?=[।.!?,])")  # where a mark stood before punctuation


def before_final_mark(text: str, words: Sequence[str]) -> str:
    """``text`` with ``words`` put before its final punctuation and closing quotes ("… है" +
    ["139"] → "… है 139।")."""
    end = _FINAL.search(text)
    cut = end.start() if end is not None else len(text)
    return " ".join(p for p in [text[:cut].rstrip(), *words] if p) + text[cut:].lstrip()


def unsigned(span: Span, spellable: Callable[[str], bool]) -> Span:
    """``span`` as the search can require it: a number whose currency sign the target
    vocabulary cannot spell ("₹80": neither shipped vocabulary has "₹") is required bare
    ("80") and gets its sign back after the search (:func:`write_signs`), with a plus or minus
    before it ("-₹80": "80", "-₹"; "−5" where "−" cannot be spelled: "5", "−"); others
    unchanged."""
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
    plus or minus the model wrote ("-5" with an unspellable "−": "−5", not "-−5"); no rupee
    sign where the model wrote the currency in words ("Rs. 500", "500 rupees")."""
    for span in spans:
        if not span.sign or span.written in text:
            continue
        for match in re.finditer(re.escape(span.target), text):
            window = text[max(0, match.start() - 1) : match.end() + 1]  # it and its neighbours
            if not holds(window, span.target, span.boundary):
                continue
            head, tail = text[: match.start()], text[match.start() :]
            if "₹" in span.sign and (_RUPEES_BEFORE.search(head) or _RUPEES_AFTER.match(tail)):
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
    targets) in its policy's :attr:`Verbatim.digits`, in place, except inside links and
    e-mail addresses (:func:`digits_outside_links`). The digits change, nothing else: one
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
    """``text`` with its digits written in ``digits``, except inside links, e-mail addresses
    and format placeholders ("page2", "care123@…", "{0}" are written as they are)."""
    if digits == "latin" and text.isascii():
        return text
    links = find_spans(text, Verbatim(numbers=False))  # and codes ("{0}" stays)
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
    if not any(span.sign for span in spans):
        return
    for candidate in result.nbest:
        before = candidate.text
        candidate.text = write_signs(before, spans)
        if candidate.quality is not None and candidate.text != before:
            _relocate_words(candidate.quality.words, candidate.text)
    result.text = result.nbest[0].text if result.nbest else write_signs(result.text, spans)


# Categories of the characters carried when the target vocabulary cannot spell them: symbols
# (math, modifiers, currency, other: "×", "≥", "€", "°"), private use, numbers that are not
# digits ("½", "Ⅳ") and other punctuation ("§", "¶", "•", "′"); "|", "।" and "॥" are dandas,
# which the punctuation rules handle.
_CARRIED_CATEGORIES = ("Sm", "Sk", "Sc", "So", "Co", "No", "Nl", "Po")
_DANDAS = "|।॥"
_WORD_BEFORE = re.compile(r"[^\W_]+$")
_WORD_AFTER = re.compile(r"[^\W_]+")


def readable_and_spelled(
    src_tokenizer: Tokenizer, spellable: Callable[[str], bool]
) -> Callable[[str], bool]:
    """What :func:`finish` needs as ``spellable``: text the source tokenizer reads without an
    unknown piece and the target vocabulary spells. A character the model cannot read comes out
    as "⁇" even where the target could spell it ("See §3 and ¶2." → "देखें ⁇ 3 और ⁇ -2।"), so it
    is carried as one the target lacks."""
    known: dict[str, bool] = {}

    def check(text: str) -> bool:
        if text not in known:
            known[text] = spellable(text) and UNK_ID not in src_tokenizer.encode(text)
        return known[text]

    return check


def carried_runs(
    source: str, spellable: Callable[[str], bool], languages: Sequence[str] = ()
) -> list[tuple[int, int]]:
    """(start, end) of each run of ``source``'s characters that a translation must carry
    because the target vocabulary cannot spell them (``spellable`` False for the character):
    symbols (:mod:`anuvad.inference.symbols`: emoji with their joiners), the other characters
    of :data:`_CARRIED_CATEGORIES`, and letters of no script of ``languages`` ("你好" in an
    English text). Letters of the languages' scripts are the model's to translate."""
    scripts = [SCRIPTS[lang] for lang in languages if lang in SCRIPTS]
    known: dict[str, bool] = {}

    def carried(char: str) -> bool:
        if char not in known:
            category = unicodedata.category(char)
            kind = (
                is_symbol(char)
                or (category in _CARRIED_CATEGORIES and char not in _DANDAS)
                or (
                    category.startswith("L")
                    and bool(scripts)
                    and not any(a <= ord(char) <= b for ranges in scripts for a, b in ranges)
                )
            )
            known[char] = kind and not spellable(char)
        return known[char]

    symbols = symbol_runs(source)
    covered = {i for a, b in symbols for i in range(a, b)}
    runs = [(a, b) for a, b in symbols if not spellable(source[a:b])]
    start = None
    for i, char in enumerate([*source, " "]):
        inside = i < len(source) and i not in covered and carried(char)
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            runs.append((start, i))
            start = None
    return sorted(runs)


def carry_symbols(
    source: str,
    output: str,
    spellable: Callable[[str], bool],
    languages: Sequence[str] = (),
    runs: Sequence[tuple[int, int]] | None = None,
) -> str:
    """``output`` with the runs of ``source`` that it must carry (:func:`carried_runs`, or
    ``runs`` when the caller has them for all its candidates) and has fewer times than
    ``source``. Each run takes the
    place of a mark the model wrote, in order (only when the source holds nothing else the
    vocabulary cannot spell, which the mark could stand for); those left go where they stood
    in the source: a symbol or a word that stands alone (no letter or digit touches it: "I ❤
    it", an emoji, "你好") after the translation when no letter or digit followed it, before it
    (in their order) when none came before, else before its final punctuation (a math sign or
    fraction that stands alone is not moved: "3 × 4 = 12" read "… 12 था ×।"); a run that touches a
    word ("5°", "+91") next to that word's copy in ``output`` (after the word before it, or
    before the word after it, where ``output`` has that word once), else nowhere ("Google®"
    translated as "गूगल": no place is right). Marks left over are removed (when the marks were
    taken as the runs'). ``output`` as it was when no run is missing."""
    runs = carried_runs(source, spellable, languages) if runs is None else runs
    missing: list[tuple[int, int]] = []
    counts: dict[str, int] = {}
    for a, b in runs:
        run = source[a:b]
        counts[run] = counts.get(run, 0) + 1
        if output.count(run) < counts[run]:
            missing.append((a, b))
    if not missing:
        return output
    covered = {i for a, b in runs for i in range(a, b)}
    others = [c for i, c in enumerate(source) if i not in covered and not c.isspace()]
    text = output
    if UNK_SURFACE in text and spellable("".join(others)):  # the marks are the runs'
        parts = text.split(UNK_SURFACE)
        text = parts[0]
        for part in parts[1:]:
            if missing:
                a, b = missing.pop(0)
                text += source[a:b]
            text += part
        text = _SPACES.sub(" ", text).strip()
        text = _SPACE_BEFORE_MARK.sub("", text)
    leading: list[str] = []
    for a, b in missing:
        run = source[a:b]
        if not free_run(source, a, b):
            text = _next_to_its_word(text, source, a, b)
        elif not (is_symbol(run[0]) or run[0].isalpha()):
            continue  # a free math sign or fraction away from its place ("… 12 था ×।") misleads
        elif not any(c.isalnum() for c in source[b:]):
            text = f"{text} {run}" if text else run
        elif not any(c.isalnum() for c in source[:a]):
            leading.append(run)
        else:
            text = before_final_mark(text, [run])
    return " ".join([*leading, text] if text else leading) if leading else text


def _next_to_its_word(text: str, source: str, a: int, b: int) -> str:
    """``text`` with ``source[a:b]`` (a run that touches a word) next to that word's one copy
    in ``text``; ``text`` as it was where it has no such copy."""
    run = source[a:b]
    before = _WORD_BEFORE.search(source, 0, a) if a and not source[a - 1].isspace() else None
    after = _WORD_AFTER.match(source, b) if b < len(source) else None
    for word, after_it in ((before, True), (after, False)):
        if word is None:
            continue
        copies = list(re.finditer(rf"(?<![^\W_]){re.escape(word.group())}(?![^\W_])", text))
        if len(copies) == 1:  # a whole word, once ("2" is not in "1024")
            at = copies[0].end() if after_it else copies[0].start()
            return text[:at] + run + text[at:]
    return text


def _relocate_words(words: Sequence[WordScore], text: str) -> None:
    """Point each word at its place in ``text`` (words in order; one not found gets -1)."""
    position = 0
    for word in words:
        found = text.find(word.text, position)
        if found < 0:
            word.start = word.end = -1
            continue
        word.start, word.end = found, found + len(word.text)
        position = word.end


def write_symbols(
    results: Sequence[Translation],
    verbatim: Verbatim | Sequence[Verbatim | None],
    spellable: Callable[[str], bool],
    languages: Sequence[str] = (),
) -> None:
    """:func:`carry_symbols` on each result (its text and n-best candidates) whose policy
    copies symbols, in place (``languages``: the pair's, whose letters are not carried); the
    word scores point at their words again."""
    for result, policy in zip(results, per_text_policies(verbatim, len(results)), strict=True):
        if policy is None or not policy.symbols:
            continue
        runs = carried_runs(result.source, spellable, languages)  # once for all candidates
        if not runs:
            continue
        for candidate in result.nbest:
            before = candidate.text
            candidate.text = carry_symbols(result.source, before, spellable, languages, runs)
            if candidate.quality is not None and candidate.text != before:
                _relocate_words(candidate.quality.words, candidate.text)
        result.text = (
            result.nbest[0].text
            if result.nbest
            else carry_symbols(result.source, result.text, spellable, languages, runs)
        )


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
    :func:`write_symbols`), n-best lists of distinct texts after the repairs, and the length
    check (:func:`anuvad.inference.length_check.flag_short`)."""
    if verbatim is not None:
        if SCRIPTS.get(tgt_lang) is SCRIPTS["hi"]:  # Devanagari digits in Devanagari text only
            write_digits(results, verbatim)
        if spellable is not None:
            write_symbols(results, verbatim, spellable, (src_lang, tgt_lang))
        for result in results:
            result.nbest = distinct(result.nbest, len(result.nbest))
    flag_short(results, src_lang, tgt_lang)


__all__ = [
    "before_final_mark",
    "carried_runs",
    "carry_symbols",
    "digits_outside_links",
    "finish",
    "readable_and_spelled",
    "report_unrequired",
    "signed",
    "unsigned",
    "write_digits",
    "write_signs",
    "write_symbols",
]
