"""Symbols and other characters the target vocabulary cannot spell, carried from the source
into the translation after the search (issue 34): the model drops them ("Great job! 🎉" →
"महान नौकरी!") or writes the unknown piece, which SentencePiece shows as "⁇".

:func:`carried_runs` finds what must be carried, :func:`carry_symbols` puts each run where it
belongs, :func:`write_symbols` does it for a batch of results (called by
:func:`anuvad.inference.post_search.finish`). A character the tokenizer reads in its
compatibility form ("½" as "1⁄2", "℃" as "°C") is carried once: the output's "1 ½ 2" (the model
copied "1 ⁇ 2") becomes "½", and "100°C" already holds "100 ℃"'s sign.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from anuvad.data.cleaning import SCRIPTS
from anuvad.data.tokenizer import UNK_ID, UNK_SURFACE, Tokenizer
from anuvad.inference.dates import CURRENCY_SIGNS
from anuvad.inference.final_mark import SPACE_BEFORE_MARK, SPACES, before_final_mark
from anuvad.inference.symbols import free_run, is_symbol, symbol_runs
from anuvad.inference.translation import Translation, relocate_words
from anuvad.inference.verbatim import Verbatim, per_text_policies, to_digits

_NUMBER_BEFORE = re.compile(r"(?<![\d.,])(\d+) $")  # the whole number before "½" in "2 ½"
# Categories of the characters carried when the target vocabulary cannot spell them: symbols
# (math, modifiers, currency, other: "×", "≥", "€", "°"), private use, numbers that are not
# digits ("½", "Ⅳ") and other punctuation ("§", "¶", "•", "′"); "|", "।" and "॥" are dandas,
# which the punctuation rules handle.
_CARRIED_CATEGORIES = ("Sm", "Sk", "Sc", "So", "Co", "No", "Nl", "Po")
_DANDAS = "|।॥"
# A currency sign right before a number ("₹2", "₹ 500"): copied with the number or written back
# before it, not carried (carried, "₹" went before "2" where the model wrote "Rs 2 crore").
_SIGN_OF_NUMBER = re.compile(
    rf"[{re.escape(CURRENCY_SIGNS)}] ?[0-9\u0966-\u096f]"
)  # number_extent's
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
        if _written(output, run) < counts[run]:
            missing.append((a, b))
    if not missing:
        return output
    covered = {i for a, b in runs for i in range(a, b)}
    others = [c for i, c in enumerate(source) if i not in covered and not c.isspace()]
    text = output
    taken: list[str] = []
    if UNK_SURFACE in text and spellable("".join(others)):  # the marks are the runs'
        parts = text.split(UNK_SURFACE)
        text = parts[0]
        for part in parts[1:]:
            if missing:
                a, b = missing.pop(0)
                text += source[a:b]
                taken.append(source[a:b])
            text += part
        for run in set(taken):
            text = _fold_compatible(text, run, spellable)
        text = SPACES.sub(" ", text).strip()
        text = SPACE_BEFORE_MARK.sub("", text)
    leading: list[str] = []
    for a, b in missing:
        run = source[a:b]
        if not free_run(source, a, b):
            text = _next_to_its_word(text, source, a, b)
        elif not (is_symbol(run[0]) or run[0].isalpha()):
            # A free math sign or fraction away from its place ("… 12 था ×।") misleads; a
            # fraction after its whole number goes after that number's copy ("2 ½").
            text = _after_its_number(text, source, a, run)
        elif not any(c.isalnum() for c in source[b:]):
            text = f"{text} {run}" if text else run
        elif not any(c.isalnum() for c in source[:a]):
            leading.append(run)
        else:
            text = before_final_mark(text, [run])
    return " ".join([*leading, text] if text else leading) if leading else text


def _written(output: str, run: str) -> int:
    """How often ``output`` holds ``run``: as written, or in its compatibility form ("℃" as
    "°C": a required "100 ℃" is written "100°C"), unless that is only letters or digits ("™"
    as "TM", "²" as "2")."""
    count = output.count(run)
    compatible = unicodedata.normalize("NFKC", run)
    if compatible != run and compatible.strip() and not compatible.isalnum():
        count += output.count(compatible)
    return count


def _fold_compatible(text: str, run: str, spellable: Callable[[str], bool]) -> str:
    """``text`` with the model's copy of ``run``'s compatibility form written ``run`` again:
    the tokenizer reads "½" as "1⁄2" and cannot read "⁄", so the model copies "1 ⁇ 2", whose
    mark became "½" ("1 ½ 2" → "½")."""
    compatible = unicodedata.normalize("NFKC", run)
    if compatible == run:
        return text
    pieces: list[str] = []  # the readable characters, and the run for each unreadable stretch
    for char in compatible:
        if "0" <= char <= "9":  # in either script: the digits may be written already
            pieces.append(f"[{char}{chr(ord('०') + int(char))}]")
        elif spellable(char):
            pieces.append(re.escape(char))
        elif not pieces or pieces[-1] != re.escape(run):
            pieces.append(re.escape(run))
    if len(pieces) < 2 or re.escape(run) not in pieces:
        return text
    before = r"(?<!\d)" if compatible[0].isdigit() else ""
    after = r"(?!\d)" if compatible[-1].isdigit() else ""
    return re.sub(before + r"\s*".join(pieces) + after, lambda _: run, text)


def _after_its_number(text: str, source: str, a: int, run: str) -> str:
    """``text`` with ``run`` (a fraction, "½") after the one copy of the whole number it follows
    in the source ("Add 2 ½ cups" → "… 2 ½ कप …", in either script's digits); ``text`` as it
    was when ``run`` is no fraction, follows no number, or the number is not there once."""
    number = _NUMBER_BEFORE.search(to_digits(source, "latin"), 0, a)
    if unicodedata.category(run[0]) != "No" or number is None:
        return text
    latin = to_digits(text, "latin")  # the same length: positions hold
    copies = list(re.finditer(rf"(?<![\d.,]){number.group(1)}(?![\d.,]?\d)", latin))
    if len(copies) != 1:
        return text
    at = copies[0].end()
    return f"{text[:at]} {run}{text[at:]}"


def _next_to_its_word(text: str, source: str, a: int, b: int) -> str:
    """``text`` with ``source[a:b]`` (a run that touches a word) next to that word's one copy
    in ``text``; ``text`` as it was where it has no such copy."""
    run = source[a:b]
    before = _WORD_BEFORE.search(source, 0, a) if a and not source[a - 1].isspace() else None
    after = _WORD_AFTER.match(source, b) if b < len(source) else None
    for word, after_it in ((before, True), (after, False)):
        if word is None:
            continue
        pattern = rf"(?<![^\W_]){re.escape(word.group())}(?![^\W_])"
        copies = list(re.finditer(pattern, to_digits(text, "latin")))
        if len(copies) == 1:  # a whole word, once ("2" is not in "1024")
            at = copies[0].end() if after_it else copies[0].start()
            return text[:at] + run + text[at:]
    return text


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
        if policy.numbers:  # a number's currency sign is the number's (post_search.write_signs)
            runs = [(a, b) for a, b in runs if not _SIGN_OF_NUMBER.match(result.source, a)]
        if not runs:
            continue
        for candidate in result.nbest:
            before = candidate.text
            candidate.text = carry_symbols(result.source, before, spellable, languages, runs)
            if candidate.quality is not None and candidate.text != before:
                relocate_words(candidate.quality.words, candidate.text)
        result.text = (
            result.nbest[0].text
            if result.nbest
            else carry_symbols(result.source, result.text, spellable, languages, runs)
        )


__all__ = ["carried_runs", "carry_symbols", "readable_and_spelled", "write_symbols"]
