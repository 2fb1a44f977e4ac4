"""Translation quality: sacreBLEU BLEU and chrF++ on detokenized text, and the paper's
tokenized BLEU with compound splitting (clearly labelled: the two are not comparable)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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


# --------------------------------------------------------------------------------------------
# The paper's BLEU: tokenized, with compounds split (tensor2tensor's get_ende_bleu.sh)
# --------------------------------------------------------------------------------------------

PAPER_BLEU_LABEL = (
    "tokenized BLEU as in the paper (Moses tokenizer, hyphenated compounds split "
    "'a-b' -> 'a ##AT##-##AT## b', multi-bleu; tensor2tensor get_ende_bleu.sh), "
    "not comparable with sacreBLEU"
)
_COMPOUND = re.compile(r"(\S)-(\S)")


def sentence_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """Sentence-level chrF++ (sacreBLEU, word order 2) of each hypothesis against its reference.

    Raises:
        ValueError: the two lists differ in length.
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    chrf = CHRF(word_order=2)
    return [
        float(chrf.sentence_score(h, [r]).score)
        for h, r in zip(hypotheses, references, strict=True)
    ]


def split_compounds(text: str) -> str:
    """``a-b`` → ``a ##AT##-##AT## b``, left to right without overlap like the perl one-liner
    ``s{(\\S)-(\\S)}{$1 ##AT##-##AT## $2}g`` of get_ende_bleu.sh (so ``a-b-c`` splits once)."""
    return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", text)


def paper_tokenize(text: str, lang: str) -> str:
    """Moses ``tokenizer.perl -l lang`` (sacremoses, with its default escaping) + compounds."""
    return split_compounds(_moses(lang).tokenize(text, return_str=True, escape=True))


@functools.cache
def _moses(lang: str) -> Any:
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang=lang)


@dataclass
class PaperBleu:
    """The paper's kind of BLEU (its 27.3 base / 28.4 big on WMT14 English→German)."""

    bleu: float
    label: str
    lang: str

    def to_dict(self) -> dict[str, float | str]:
        """Plain data for JSON."""
        return {"paper_bleu": self.bleu, "paper_bleu_label": self.label, "lang": self.lang}


def paper_bleu(hypotheses: Sequence[str], references: Sequence[str], lang: str = "de") -> PaperBleu:
    """Cased BLEU on Moses-tokenized, compound-split text (no further tokenization).

    Args:
        hypotheses: detokenized system outputs.
        references: detokenized references, one per segment.
        lang: the target language for the Moses tokenizer ("de" for the paper's EN→DE).

    Raises:
        ValueError: the two lists differ in length.
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    hyps = [paper_tokenize(h, lang) for h in hypotheses]
    refs = [paper_tokenize(r, lang) for r in references]
    bleu = BLEU(tokenize="none", force=True)  # the text is tokenized already, as multi-bleu's
    return PaperBleu(float(bleu.corpus_score(hyps, [refs]).score), PAPER_BLEU_LABEL, lang)


def default_tokenize(tgt_lang: str | None) -> str:
    """sacreBLEU's tokenizer for a target language: "intl" for Hindi (splits the danda "।",
    which 13a leaves attached to words), else sacreBLEU's default "13a"."""
    return "intl" if tgt_lang in ("hi", "hin") else "13a"


@dataclass
class Evaluation:
    """Everything ``anuvad evaluate`` reports for a translation test set."""

    sentences: int
    scores: Scores
    tokenize: str
    paper: PaperBleu | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        data: dict[str, Any] = {"task": "translation", "sentences": self.sentences}
        data.update(self.scores.to_dict())
        data["tokenize"] = self.tokenize
        if self.paper is not None:
            data.update(self.paper.to_dict())
        if self.settings:
            data["settings"] = self.settings
        return data

    def to_table(self) -> str:
        """A markdown table: metric, score, how it was computed."""
        rows = [
            ("BLEU (sacreBLEU)", f"{self.scores.bleu:.2f}", self.scores.bleu_signature),
            ("chrF++ (sacreBLEU)", f"{self.scores.chrf:.2f}", self.scores.chrf_signature),
        ]
        if self.paper is not None:
            rows.append(("BLEU (paper, tokenized)", f"{self.paper.bleu:.2f}", self.paper.label))
        lines = ["| metric | score | how |", "|---|---|---|"]
        lines += [f"| {name} | {score} | {how} |" for name, score, how in rows]
        lines.append(f"\n{self.sentences} sentences")
        return "\n".join(lines)


def evaluate_translations(
    hypotheses: Sequence[str],
    references: Sequence[str],
    tokenize: str = "13a",
    paper_bleu_lang: str | None = None,
    settings: dict[str, Any] | None = None,
) -> Evaluation:
    """sacreBLEU BLEU and chrF++, and the paper's tokenized BLEU when a language is given.

    Raises:
        ValueError: the two lists differ in length.
    """
    scores = corpus_scores(hypotheses, references, tokenize)
    paper = paper_bleu(hypotheses, references, paper_bleu_lang) if paper_bleu_lang else None
    return Evaluation(len(hypotheses), scores, tokenize, paper, dict(settings or {}))
