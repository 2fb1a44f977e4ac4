"""How often does a search write a run ("ऑटोटोटो", runs of quotes)? (issue 40 item 6)

Counts, over the first ``--count`` NTREX-128 dev sentences, the outputs of greedy and beam 4
search (the shipped model of ``--pair``, the model's repetition blocking) in which one to four
characters repeat three times in a row (spaces removed), with each search's chrF++.

Usage::

    python bench/greedy_runs.py [--count 300] [--pair enhi] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import sacrebleu

from anuvad.cli.serve import shipped_model
from anuvad.inference.engine import load_engine

RUN = re.compile(r"(.{1,4}?)\1{2,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--pair", default="enhi", choices=["enhi", "hien"])
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    engine = load_engine(shipped_model(pair=args.pair), threads=1)
    dev = Path(args.data) / "en-hi" / "dev-general"
    src = (dev / f"ntrex128.{args.pair[:2]}").read_text(encoding="utf-8").splitlines()
    ref = (dev / f"ntrex128.{args.pair[2:]}").read_text(encoding="utf-8").splitlines()
    src, ref = src[: args.count], ref[: args.count]
    for name, settings in (
        ("greedy", engine.settings(beam_size=1, nbest=1)),
        ("beam 4", engine.settings(beam_size=4)),
    ):
        outputs = [t.text for t in engine.translate(src, settings)]
        runs = [o for o in outputs if RUN.search(o.replace(" ", ""))]
        chrf = sacrebleu.corpus_chrf(outputs, [ref], word_order=2).score
        print(f"{name}: {len(runs)} of {len(outputs)} outputs with a run; chrF++ {chrf:.2f}")


if __name__ == "__main__":
    main()
