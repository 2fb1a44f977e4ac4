"""Words a source already writes in its translation's script: a Latin name, brand, acronym or
phrase in Hindi text ("मैंने Samsung Galaxy S24 खरीदा।", "AM", "MWP"), a Hindi word in English
text ("I said नमस्ते to him."). The translation copies them as written
(:mod:`anuvad.inference.verbatim`, kind ``name``), and the torch engine's model reads them as
placeholders like names a user marks (:mod:`anuvad.inference.placeholders`): made to spell them,
the Hindi→English model wrote junk around them; left free, it rewrote them ("AM" → "Aam", "twp"
→ "tape"). On the 187 NTREX-128 dev sentences whose Hindi holds Latin words, Hindi→English
chrF++ 36.46 → 39.73 (``bench/target_script.py``; docs/benchmarks.md, "Addresses behind
placeholders").

A run is words of the target's letters (a word may begin with "@" or "#" and hold digits and
".&'’_-" inside: "@user", "S24", "U.S.", "AT&T"), one space or more between them, or a lone
"&" ("A & B कंपनी" came out "A B company", "Johnson & Johnson" is one run); it ends at a
full stop that ends a sentence ("Hello world. Bye" is two runs), and a final stop is the
sentence's unless its word is an abbreviation or initials ("Twitter." → "Twitter", "Mr." and
"U.S." whole). Digits and the dandas are no letters ("I paid ५०० rupees." holds no run).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

from anuvad.data.cleaning import SCRIPTS
from anuvad.inference.sentences import ABBREVIATIONS

__all__ = ["target_script_runs"]

_INNER = ".&'’_-"  # inside a word of the run ("U.S.", "AT&T", "e-mail")


@functools.cache
def _run_pattern(lang: str) -> re.Pattern[str]:
    """Runs of words of ``lang``'s letters (category L or M within its script's ranges)."""
    codes = [
        code
        for first, last in SCRIPTS[lang]
        for code in range(first, min(last, 0xFFFF) + 1)
        if unicodedata.category(chr(code))[0] in "LM"
    ]
    spans: list[list[int]] = []
    for code in codes:
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    letters = "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in spans)
    word = f"[@#]?[{letters}][{letters}0-9{re.escape(_INNER)}]*"
    return re.compile(rf"(?<![\w@#{letters}]){word}(?:[ ]+(?:&[ ]+)?{word})*")


def _own_stop(word: str) -> bool:
    """Whether ``word``'s final full stop is its own: an abbreviation or initials."""
    core = word.rstrip(".")
    return core.lower() in ABBREVIATIONS or "." in core or len(core) == 1


def _pieces(run: str, start: int) -> list[tuple[int, int]]:
    """``run`` (at ``start``) cut after each full stop that ends a sentence, each piece without
    the punctuation that ends it."""
    pieces, first = [], 0
    for stop in re.finditer(r"\.(?= +\S)", run):
        word = run[first : stop.end()].split()[-1]
        if not _own_stop(word):
            pieces.append((first, stop.start()))
            first = stop.end() + len(run[stop.end() :]) - len(run[stop.end() :].lstrip())
    pieces.append((first, len(run)))
    found = []
    for a, b in pieces:
        piece = run[a:b]
        words = piece.split()
        if words and not (piece.endswith(".") and _own_stop(words[-1])):
            piece = piece.rstrip(_INNER)
        if piece:
            found.append((start + a, start + a + len(piece)))
    return found


def target_script_runs(
    text: str, src_lang: str, tgt_lang: str, skip: Sequence[tuple[int, int]] = ()
) -> list[tuple[int, int]]:
    """(start, end) of each run of words in ``tgt_lang``'s script in ``text`` (written in
    ``src_lang``; see the module docstring), never across a ``skip`` range (a link's:
    "Samsung www.a.in" is a run and a link); [] when the two languages share a script or
    either is unknown."""
    source, target = SCRIPTS.get(src_lang), SCRIPTS.get(tgt_lang)
    if source is None or target is None or source == target:
        return []
    for a, b in skip:
        text = text[:a] + "\x00" * (b - a) + text[b:]
    return [
        piece
        for match in _run_pattern(tgt_lang).finditer(text)
        for piece in _pieces(match.group(), match.start())
    ]
