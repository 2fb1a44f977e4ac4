"""Translation quality: sacreBLEU BLEU and chrF++ on detokenized text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF


@dataclass
class Scores:
    """Corpus-level scores and the sacreBLEU signatures that make them reproducible."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str

    def to_dict(self) -> dict[str, float | str]:
        """Plain data for JSON logs."""
        return {
            "bleu": self.bleu,
            "chrf": self.chrf,
            "bleu_signature": self.bleu_signature,
            "chrf_signature": self.chrf_signature,
        }


def corpus_scores(
    hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a"
) -> Scores:
    """Cased, detokenized corpus BLEU and chrF++ (word order 2) with sacreBLEU.

    Args:
        hypotheses: system outputs, one per segment.
        references: one reference per segment.
        tokenize: sacreBLEU's tokenizer ("13a" default; "intl" for Hindi so "।" is split).

    Raises:
        ValueError: the two lists differ in length.
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    bleu = BLEU(tokenize=tokenize)
    chrf = CHRF(word_order=2)
    refs = [list(references)]
    bleu_score = bleu.corpus_score(list(hypotheses), refs)
    chrf_score = chrf.corpus_score(list(hypotheses), refs)
    return Scores(
        bleu=float(bleu_score.score),
        chrf=float(chrf_score.score),
        bleu_signature=str(bleu.get_signature()),
        chrf_signature=str(chrf.get_signature()),
    )
