"""Words a source already writes in its translation's script: a Latin brand, name or acronym in
Hindi text ("मैंने Samsung Galaxy S24 खरीदा।", "AM", "MWP"), a Hindi word in English text ("I
said नमस्ते to him."). The translation copies them as written (:mod:`anuvad.inference.verbatim`,
kind ``name``), and the torch engine's model reads them as placeholders like names a user marks
(:mod:`anuvad.inference.placeholders`): made to spell them, the Hindi→English model wrote junk
around them; left free, it rewrote them ("AM" → "Aam", "twp" → "tape"). On the 187 NTREX-128
dev sentences whose Hindi holds Latin words, Hindi→English chrF++ 36.46 → 39.71
(``bench/target_script.py``; docs/benchmarks.md, "Addresses behind placeholders").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from anuvad.data.cleaning import SCRIPTS

__all__ = ["target_script_runs"]

_INNER = ".&'’_-"  # inside a word of the run ("U.S.", "AT&T", "e-mail")


@functools.cache
def _run_pattern(lang: str) -> re.Pattern[str]:
    """Runs of words of ``lang``'s script (digits and :data:`_INNER` inside them), one space
    or more between them."""
    letters = "".join(f"\\u{a:04x}-\\u{b:04x}" if b <= 0xFFFF else "" for a, b in SCRIPTS[lang])
    word = f"[{letters}][{letters}0-9{re.escape(_INNER)}]*"
    return re.compile(rf"(?<![\w{letters}]){word}(?:[ ]+{word})*")


def target_script_runs(
    text: str, src_lang: str, tgt_lang: str, skip: Sequence[tuple[int, int]] = ()
) -> list[tuple[int, int]]:
    """(start, end) of each run of words in ``tgt_lang``'s script in ``text`` (written in
    ``src_lang``), without the punctuation that ends it ("Twitter." → "Twitter", but "U.S."
    whole) and never across a ``skip`` range (a link's: "Samsung www.a.in" is a run and a
    link); [] when the two languages share a script or either is unknown."""
    source, target = SCRIPTS.get(src_lang), SCRIPTS.get(tgt_lang)
    if source is None or target is None or source == target:
        return []
    for a, b in skip:
        text = text[:a] + "\x00" * (b - a) + text[b:]
    runs = []
    for match in _run_pattern(tgt_lang).finditer(text):
        run = match.group()
        if "." not in run.rstrip(_INNER):  # a final stop is the sentence's, not an initial's
            run = run.rstrip(_INNER)
        if run:
            runs.append((match.start(), match.start() + len(run)))
    return runs
