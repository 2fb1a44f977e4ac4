"""Does copying (numbers with their signs, dates with their months, links) cost quality?
(issue 40 item 3)

Translates the first ``--count`` NTREX-128 dev sentences with beam 4 and the default copying
policy (:class:`anuvad.inference.verbatim.Verbatim`), the shipped model of ``--pair``, and prints
chrF++ and BLEU (``intl``). Run it in a worktree of an older commit too (``PYTHONPATH=<it>/src``)
to compare.

Usage::

    python bench/verbatim_dev.py [--count 500] [--pair enhi] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import sacrebleu

from anuvad.cli.serve import shipped_model
from anuvad.inference.engine import load_engine
from anuvad.inference.verbatim import Verbatim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--pair", default="enhi", choices=["enhi", "hien"])
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    engine = load_engine(shipped_model(pair=args.pair), threads=2)
    dev = Path(args.data) / "en-hi" / "dev-general"
    src = (dev / f"ntrex128.{args.pair[:2]}").read_text(encoding="utf-8").splitlines()
    ref = (dev / f"ntrex128.{args.pair[2:]}").read_text(encoding="utf-8").splitlines()
    src, ref = src[: args.count], ref[: args.count]
    started = time.perf_counter()
    outputs = [
        t.text for t in engine.translate(src, engine.settings(beam_size=4), verbatim=Verbatim())
    ]
    chrf = sacrebleu.corpus_chrf(outputs, [ref], word_order=2).score
    bleu = sacrebleu.corpus_bleu(outputs, [ref], tokenize="intl").score
    print(f"chrF++ {chrf:.2f}, BLEU {bleu:.2f}, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
