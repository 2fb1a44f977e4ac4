"""How well a whole text's confidence finds the texts below chrF++ 30, and how well a second
human reference does::

    D=../shared/data/en-hi/dev-general
    M=$(ls data/trained_models/enhi_*.pt | tail -1)
    .venv/bin/anuvad translate --model $M \\
        --input $D/wmt24.en --output wmt24.jsonl --split-sentences --scores \\
        --beam-size 4 --no-repeat-ngram-size 3 --no-progress
    .venv/bin/python bench/document_confidence.py --scores wmt24.jsonl --reference $D/wmt24.hi \\
        --source $D/wmt24.en --other-source $D/wmt24pp.en --other-reference $D/wmt24pp.hi

Prints, per way of putting a text's sentence confidences together (the served one, the lowest,
the unweighted mean) and the plain score, AUROC, Spearman, Brier and ECE against each text's
chrF++; with a second reference (``--other-*``, matched on the source), how well chrF++ against it
predicts the label of the first, and how often one human translation scores below 30 against
the other.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from anuvad.evaluation.metrics import sentence_chrf
from anuvad.evaluation.ranking import GOOD_CHRF, auroc, ranking_report, spearman
from anuvad.inference.confidence import document_confidence


def lines(path: str) -> list[str]:
    """The file's lines."""
    return Path(path).read_text(encoding="utf-8").splitlines()


def weighted(doc: dict[str, Any], weight: Callable[[dict[str, Any]], int]) -> float:
    """The text's sentence confidences averaged with ``weight`` per sentence."""
    sentences = doc["sentences"]
    value = document_confidence(
        [s["confidence"] for s in sentences], [weight(s) for s in sentences]
    )
    assert value is not None  # texts without confidence were left out
    return value


def row(name: str, values: Sequence[float], chrf: Sequence[float], calibrated: bool) -> str:
    """One Markdown table row of ``ranking_report``'s figures."""
    r = ranking_report(values, chrf, GOOD_CHRF, calibrated=calibrated)
    cells = [r.auroc, r.spearman, r.brier, r.ece]
    shown = " | ".join("" if c is None else f"{c:.3f}" for c in cells)
    return f"| {name} | {shown} |"


def main() -> None:
    """Read the translations and references, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scores", required=True, help="`anuvad translate --scores` output")
    parser.add_argument("--reference", required=True)
    parser.add_argument("--source", help="the translated source (to match --other-source)")
    parser.add_argument("--other-source", help="the second reference's source lines")
    parser.add_argument("--other-reference", help="a second human reference")
    args = parser.parse_args()

    docs = [json.loads(line) for line in lines(args.scores)]
    references = lines(args.reference)
    if len(docs) != len(references):
        raise SystemExit(f"{len(docs)} translations but {len(references)} references")
    keep = [
        i
        for i, d in enumerate(docs)
        if d["sentences"] and d["confidence"] is not None and references[i].strip()
    ]
    texts = [docs[i] for i in keep]
    chrf = sentence_chrf([d["text"] for d in texts], [references[i] for i in keep])
    bad = sum(c < GOOD_CHRF for c in chrf) / len(chrf)
    sentences = statistics.median(len(d["sentences"]) for d in texts)
    print(f"{len(texts)} texts (median {sentences:g} sentences), {bad:.0%} below chrF++ 30\n")
    print("| a text's confidence | AUROC | Spearman | Brier | ECE |")
    print("|---|---:|---:|---:|---:|")
    ways: dict[str, Callable[[dict[str, Any]], float]] = {
        "the sentences' mean weighted by source characters (served)": lambda d: weighted(
            d, lambda s: s["end"] - s["start"]
        ),
        "the lowest sentence confidence": lambda d: min(s["confidence"] for s in d["sentences"]),
        "the sentences' mean, each weighing 1": lambda d: weighted(d, lambda s: 1),
    }
    for name, way in ways.items():
        print(row(name, [way(d) for d in texts], chrf, True))
    print(row("plain: the text's score", [d["score"] for d in texts], chrf, False))

    if not (args.source and args.other_source and args.other_reference):
        return
    sources = lines(args.source)
    at = {s: i for i, s in enumerate(sources)}
    pairs = [
        (at[s], other)
        for s, other in zip(lines(args.other_source), lines(args.other_reference), strict=True)
        if s in at and other.strip() and references[at[s]].strip()
    ]
    outputs = [docs[i]["text"] for i, _ in pairs]
    first = [references[i] for i, _ in pairs]
    second = [other for _, other in pairs]
    by_first = sentence_chrf(outputs, first)
    by_second = sentence_chrf(outputs, second)
    humans = sentence_chrf(second, first)
    humans_back = sentence_chrf(first, second)
    print(f"\nSecond reference, {len(pairs)} texts matched on the source:")
    for name, judge, label in (
        ("chrF++ against the second reference finds first-reference bad texts", by_second,
         by_first),
        ("chrF++ against the first reference finds second-reference bad texts", by_first,
         by_second),
    ):  # fmt: skip
        found = auroc([-c for c in judge], [c < GOOD_CHRF for c in label])
        print(f"- {name}: AUROC {found:.3f} (Spearman {spearman(judge, label):.3f})")
    low = sum(c < GOOD_CHRF for c in humans) / len(humans)
    low_back = sum(c < GOOD_CHRF for c in humans_back) / len(humans_back)
    print(
        f"- one human translation against the other: median chrF++ "
        f"{statistics.median(humans):.1f}; below 30: {low:.0%} (the other way {low_back:.0%})"
    )


if __name__ == "__main__":
    main()
