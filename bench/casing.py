"""Does input casing change the translation? A dev set translated as written, in capitals and in
title case, scored against the same references (issue 34: within 1 chrF++ of sentence case).

    python bench/casing.py --src ../shared/data/en-hi/dev-general/ntrex128.en \
        --ref ../shared/data/en-hi/dev-general/ntrex128.hi [--model FILE] [--limit N]
    PYTHONPATH=<older checkout>/src python bench/casing.py ...   # the same on another tree

Beam 4, repetition blocking 3, sacreBLEU chrF++ (word order 2) and BLEU (``intl``).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

WORD_START = re.compile(r"(?<![^\W\d_])([^\W\d_])")  # a letter that starts a run of letters


def title_case(text: str) -> str:
    """Every word's first letter in capitals, the rest as written ("don't" stays one word)."""
    return " ".join(
        WORD_START.sub(lambda m: m.group(1).upper(), word, count=1) for word in text.split(" ")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True, type=Path)
    parser.add_argument("--ref", required=True, type=Path)
    parser.add_argument("--model", help="default: the newest shipped general English->Hindi model")
    parser.add_argument("--limit", type=int, default=0, help="first N lines only (0: all)")
    parser.add_argument("--beam-size", type=int, default=4)
    args = parser.parse_args()

    from anuvad.evaluation.metrics import corpus_scores
    from anuvad.inference.translator import Translator

    if args.model is None:
        args.model = sorted(Path("data/trained_models").glob("enhi_*.pt"))[-1]
    sources = args.src.read_text(encoding="utf-8").splitlines()
    references = args.ref.read_text(encoding="utf-8").splitlines()
    if args.limit:
        sources, references = sources[: args.limit], references[: args.limit]
    translator = Translator.from_file(args.model, device="cpu")
    settings = translator.settings(beam_size=args.beam_size, no_repeat_ngram_size=3)
    print(f"{args.model}, {len(sources)} sentences of {args.src.name}, beam {args.beam_size}")
    print("| input | BLEU | chrF++ | seconds |\n|---|---:|---:|---:|")
    for name, variant in (
        ("as written", sources),
        ("ALL CAPITALS", [s.upper() for s in sources]),
        ("Title Case", [title_case(s) for s in sources]),
    ):
        start = time.perf_counter()
        outputs = [t.text for t in translator.translate(variant, settings)]
        seconds = time.perf_counter() - start
        scores = corpus_scores(outputs, references, tokenize="intl")
        print(f"| {name} | {scores.bleu:.1f} | {scores.chrf:.1f} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
