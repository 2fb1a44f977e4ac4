"""Shouted and title-case input, recased before translation (issue 34).

The models learned from text in sentence case: "THE TRAIN IS LATE." splits into rare capital
pieces and came back as "ट्रेन पार्क किया गया है।" ("the train has been parked"). A sentence
written mostly in capitals, or with nearly every word capitalised, is recased word by word
before it is tokenised; any other sentence is left exactly as it is (an acronym in a normal
sentence, a name, "iPhone").

Each word takes the casing the model's own source vocabulary knows best: of its lower-case,
capitalised and written forms, the one that splits into the fewest pieces (an unknown piece
counting as many), lower case winning ties inside the sentence and the capitalised form at its
start. Names and acronyms the vocabulary holds in capitals ("Delhi", "NASA") keep them; function
words ("THE", "Is") become lower case. No casing model or extra data: the tokenizer is the
model's memory of how words are written.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

from anuvad.data.tokenizer import UNK_ID, Tokenizer

# A run of letters (no digits or underscores): the unit that gets one casing.
WORD = re.compile(r"[^\W\d_]+")
SHOUTED_SHARE = 0.7  # capitals among the cased letters from which a sentence counts as shouted
TITLE_SHARE = 0.8  # capitalised words among the words from which a sentence counts as a title
MIN_WORDS = 2  # words of two or more letters a sentence needs before its casing is judged
UNKNOWN_COST = 10  # an unknown piece weighs as much as this many known ones


def needs_recasing(text: str) -> bool:
    """Whether ``text`` is shouted (mostly capitals) or title case (nearly every word
    capitalised), judged on its words of two or more cased letters; False for text without
    enough of them (a caseless script, a short label)."""
    words = [w for w in WORD.findall(text) if len(w) >= 2 and w.lower() != w.upper()]
    if len(words) < MIN_WORDS:
        return False
    letters = "".join(words)
    capitals = sum(c.isupper() for c in letters)
    if capitals >= SHOUTED_SHARE * len(letters):
        return True
    capitalised = sum(w[0].isupper() for w in words)
    return len(words) > MIN_WORDS and capitalised >= TITLE_SHARE * len(words)


def recase(text: str, tokenizer: Tokenizer) -> str:
    """``text`` with every word in the casing ``tokenizer`` knows best when the sentence is
    shouted or title case (see the module docstring); otherwise ``text`` unchanged."""
    if not needs_recasing(text):
        return text
    first = WORD.search(text)
    start = first.start() if first is not None else -1

    def cost(word: str) -> int:
        ids = tokenizer.encode(word)
        return len(ids) + (UNKNOWN_COST - 1) * ids.count(UNK_ID)

    def best(match: re.Match[str]) -> str:
        word = match.group()
        if match.start() == start:  # the sentence's first word: capitalised unless it is known
            options = [word.capitalize(), word]  # better as written (an acronym)
        else:
            options = [word.lower(), word.capitalize(), word]
        return min(dict.fromkeys(options), key=cost)  # the first of equal costs wins

    return WORD.sub(best, text)


# Latin letters that Unicode does not decompose, with the base letters they are written as.
_BASE_LETTERS = dict(
    zip("ŁłØøĐđıÆæŒœßÞþÐð", ["L", "l", "O", "o", "D", "d", "i", "AE", "ae", "OE", "oe", "ss",
                          "Th", "th", "D", "d"], strict=True)
)  # fmt: skip


@functools.lru_cache(maxsize=8192)
def _unreadable(tokenizer: Tokenizer, char: str) -> bool:
    """Whether ``tokenizer`` reads ``char`` as its unknown piece (asked once per letter: every
    sentence of a Hindi text is non-ASCII)."""
    return UNK_ID in tokenizer.encode(char)


def fold_unreadable(text: str, tokenizer: Tokenizer) -> str:
    """``text`` with each letter ``tokenizer`` cannot read written as its base letter where the
    tokenizer reads that ("Škoda" → "Skoda", "Ça va" → "Ca va": the model read "⁇koda" and wrote
    "⁇ डा"); a letter whose base it cannot read either stays. The base is the letter's
    compatibility decomposition without its combining marks, or for the Latin letters Unicode
    does not decompose ("Ł", "ø", "ß") the letters they are written as (:data:`_BASE_LETTERS`)."""
    if text.isascii():
        return text
    folded = []
    for char in text:
        if char.isascii() or not char.isalpha() or not _unreadable(tokenizer, char):
            folded.append(char)
            continue
        decomposed = unicodedata.normalize("NFKD", char)
        base = _BASE_LETTERS.get(char) or "".join(
            c for c in decomposed if not unicodedata.category(c).startswith("M")
        )
        readable = base and base != char and UNK_ID not in tokenizer.encode(base)
        folded.append(base if readable else char)
    return "".join(folded)


def recaser(tokenizer: Tokenizer) -> Callable[[str], str]:
    """:func:`recase` bound to a model's source ``tokenizer``."""
    return lambda text: recase(text, tokenizer)


__all__ = ["fold_unreadable", "needs_recasing", "recase", "recaser"]
