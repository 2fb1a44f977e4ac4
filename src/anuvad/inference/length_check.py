"""An output much shorter than its source is likely wrong (issue 40 item 1b).

A small model that meets a sentence it cannot handle often stops early: a 279-word sentence
came back as 7 Hindi words with ``finished: true`` and nothing said. Translations of one pair
have a typical length ratio (characters of the translation per character of the source); an
output under half of what that ratio predicts is flagged. Ratios: the median over NTREX-128 dev
(1,997 news sentences per direction): English→Hindi 1.05, Hindi→English 0.95. Of the
references themselves, 0.05 % (en→hi) and 0.10 % (hi→en) fall under half the median.

Short sources vary more: of the English→Hindi references (NTREX-128 and the Hindi Visual Genome
dev captions) of 20–29 source characters, 0.74 % fall under half the prediction, of 30–39
characters 1.32 % ("The meeting is tomorrow." → "बैठक कल है।", right, was flagged), and under
0.4 of it 0.18 % and none; from 40 characters on none falls under half. A source under
:data:`SHORT_SOURCE_CHARS` characters is flagged under :data:`SHORT_SOURCE_FACTOR` of its
prediction.
"""

from __future__ import annotations

from collections.abc import Sequence

from anuvad.inference.translation import Translation

LENGTH_RATIOS: dict[tuple[str, str], float] = {("en", "hi"): 1.05, ("hi", "en"): 0.95}
SHORT_FACTOR = 0.5  # flagged under half the expected length
MIN_SOURCE_CHARS = 20  # shorter sources vary too much ("Yes." → "जी हाँ।")
SHORT_SOURCE_CHARS = 40
SHORT_SOURCE_FACTOR = 0.4


def much_shorter(source: str, output: str, src_lang: str, tgt_lang: str) -> bool:
    """Whether ``output`` is under half the length the pair's ratio predicts for ``source``
    (under 0.4 of it for sources under :data:`SHORT_SOURCE_CHARS` characters; sources under
    :data:`MIN_SOURCE_CHARS` characters are never flagged)."""
    length = len(source.strip())
    if length < MIN_SOURCE_CHARS:
        return False
    ratio = LENGTH_RATIOS.get((src_lang, tgt_lang), 1.0)
    factor = SHORT_SOURCE_FACTOR if length < SHORT_SOURCE_CHARS else SHORT_FACTOR
    return len(output.strip()) < factor * ratio * length


def flag_short(results: Sequence[Translation], src_lang: str, tgt_lang: str) -> None:
    """Set each result's ``short`` (:func:`much_shorter` of its best output), in place."""
    for result in results:
        result.short = much_shorter(result.source, result.text, src_lang, tgt_lang)


__all__ = ["LENGTH_RATIOS", "flag_short", "much_shorter"]
