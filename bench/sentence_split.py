"""Which sentence splitter for English documents? Accuracy on real paragraphs, measured.

Two measurements, no model downloads:

1. **NTREX-128 paragraphs with exact boundaries.** NTREX's 1,997 English lines are consecutive
   sentences of news articles, one per line. Consecutive lines are joined into pseudo-paragraphs
   of 2-6 sentences (seeded), so every true boundary is known. Reported: boundary precision,
   recall, F1 and the share of paragraphs split exactly right.
2. **WMT24 paragraphs, agreement with the reference.** The 997 English segments are real
   paragraphs (news, social, speech, literary); their Hindi references end sentences with
   "।", "?" or "!". Reported: the share of paragraphs where the splitter finds as many sentences
   as the Hindi reference has (a proxy: translators sometimes merge or split sentences).
3. **The same NTREX paragraphs in capitals, in lower case** (as typed in chats) **and with no
   space between the sentences** ("came.Sita went."): the share split exactly right; and NTREX's
   Hindi paragraphs with "|" typed for the danda and with no space after it, split by anuvad's
   Hindi rule.

Usage::

    python bench/sentence_split.py [--data ../shared/data] [--splitters pysbd sentencex ...]

Splitters that are not installed are skipped with a note (``pip install pysbd sentencex
blingfire sentence-splitter syntok`` for all of them).
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

Splitter = Callable[[str], list[str]]


def _pysbd() -> Splitter:
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)
    return lambda text: [s.strip() for s in segmenter.segment(text) if s.strip()]


def _sentencex() -> Splitter:
    from sentencex import segment

    return lambda text: [s.strip() for s in segment("en", text) if s.strip()]


def _blingfire() -> Splitter:
    import blingfire

    return lambda text: [s for s in blingfire.text_to_sentences(text).split("\n") if s.strip()]


def _moses() -> Splitter:
    from sentence_splitter import SentenceSplitter

    splitter = SentenceSplitter(language="en")
    return lambda text: [s for s in splitter.split(text) if s.strip()]


def _syntok() -> Splitter:
    from syntok import segmenter

    def split(text: str) -> list[str]:
        sentences = []
        for paragraph in segmenter.analyze(text):
            for sentence in paragraph:
                sentences.append("".join(t.spacing + t.value for t in sentence).strip())
        return [s for s in sentences if s]

    return split


def _anuvad() -> Splitter:
    """What anuvad uses: Moses' rules on a sentence-case view of the text."""
    from anuvad.inference.sentences import sentence_splitter

    return sentence_splitter("en")


def _regex() -> Splitter:
    """The naive baseline: split after . ! ? followed by a space and a capital letter."""
    pattern = re.compile(r"(?<=[.!?])\s+(?=[\"'“A-Z0-9])")
    return lambda text: [s for s in pattern.split(text) if s.strip()]


SPLITTERS: dict[str, Callable[[], Splitter]] = {
    "regex": _regex,
    "pysbd": _pysbd,
    "sentencex": _sentencex,
    "blingfire": _blingfire,
    "moses": _moses,
    "syntok": _syntok,
    "anuvad": _anuvad,
}
_HINDI_END = re.compile(r"[।?!]+[\"'”’)]*(?:\s+|$)")


def boundaries(sentences: list[str]) -> set[int]:
    """Character offsets (spaces removed) where a sentence ends, the last excluded."""
    offsets, total = set(), 0
    for sentence in sentences[:-1]:
        total += len(sentence.replace(" ", ""))
        offsets.add(total)
    return offsets


def ntrex_paragraphs(lines: list[str], seed: int = 1) -> list[list[str]]:
    rng = random.Random(seed)
    paragraphs, i = [], 0
    while i < len(lines):
        size = rng.randint(2, 6)
        paragraphs.append(lines[i : i + size])
        i += size
    return paragraphs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data", help="the data root")
    parser.add_argument("--splitters", nargs="*", default=list(SPLITTERS))
    args = parser.parse_args()
    dev = Path(args.data) / "en-hi" / "dev-general"
    ntrex = (dev / "ntrex128.en").read_text(encoding="utf-8").splitlines()
    paragraphs = ntrex_paragraphs(ntrex)
    wmt_en = (dev / "wmt24.en").read_text(encoding="utf-8").splitlines()
    wmt_hi = (dev / "wmt24.hi").read_text(encoding="utf-8").splitlines()
    hindi_counts = [max(1, len([s for s in _HINDI_END.split(h) if s.strip()])) for h in wmt_hi]

    print(
        f"NTREX-128: {len(paragraphs)} pseudo-paragraphs of 2-6 sentences "
        f"({sum(len(p) - 1 for p in paragraphs)} boundaries); WMT24: {len(wmt_en)} paragraphs\n"
    )
    print(
        "| splitter | precision | recall | F1 | paragraphs exact | WMT24 count = reference | ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.splitters:
        try:
            split = SPLITTERS[name]()
        except ImportError as exc:
            print(f"| {name} | not installed ({exc.name}) | | | | | |")
            continue
        started = time.perf_counter()
        tp = fp = fn = exact = 0
        for paragraph in paragraphs:
            gold = boundaries(paragraph)
            found = boundaries(split(" ".join(paragraph)))
            tp += len(gold & found)
            fp += len(found - gold)
            fn += len(gold - found)
            exact += gold == found
        agree = sum(len(split(en)) == count for en, count in zip(wmt_en, hindi_counts, strict=True))
        ms = (time.perf_counter() - started) * 1000
        precision, recall = tp / max(1, tp + fp), tp / max(1, tp + fn)
        f1 = 2 * precision * recall / max(1e-9, precision + recall)
        print(
            f"| {name} | {precision:.3f} | {recall:.3f} | {f1:.3f} | "
            f"{exact / len(paragraphs):.1%} | {agree / len(wmt_en):.1%} | {ms:.0f} |"
        )
    _cases(args.splitters, paragraphs)
    ntrex_hi = (dev / "ntrex128.hi").read_text(encoding="utf-8").splitlines()
    _danda(ntrex_paragraphs(ntrex_hi))


def _exact(split: Splitter, paragraphs: list[list[str]], joiner: str = " ") -> float:
    """The share of paragraphs (their sentences joined by ``joiner``) whose sentence
    boundaries ``split`` finds exactly."""
    right = sum(boundaries(split(joiner.join(p))) == boundaries(p) for p in paragraphs)
    return right / len(paragraphs)


def _cases(names: list[str], paragraphs: list[list[str]]) -> None:
    print(
        "\n| splitter | exact as written | in capitals | in lower case | no space between |"
        "\n|---|---:|---:|---:|---:|"
    )
    upper = [[s.upper() for s in p] for p in paragraphs]
    lower = [[s.lower() for s in p] for p in paragraphs]
    for name in names:
        try:
            split = SPLITTERS[name]()
        except ImportError:
            continue
        cells = " | ".join(f"{_exact(split, ps):.1%}" for ps in (paragraphs, upper, lower))
        print(f"| {name} | {cells} | {_exact(split, paragraphs, ''):.1%} |")


def _danda(paragraphs: list[list[str]]) -> None:
    from anuvad.inference.sentences import sentence_splitter

    split = sentence_splitter("hi")
    typed = [[s.replace("।", "|") for s in p] for p in paragraphs]
    print(
        f"\nHindi NTREX paragraphs, anuvad's rule: exact with '।' {_exact(split, paragraphs):.1%}, "
        f"with '|' typed for it {_exact(split, typed):.1%}, with no space after the danda "
        f"{_exact(split, paragraphs, ''):.1%}"
    )


if __name__ == "__main__":
    main()
