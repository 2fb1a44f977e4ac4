"""Identifiers and times of day copied the target's way (``inference/identifiers.py``,
``inference/dates.py: find_times``), against the same served copying policy without them, on
the NTREX-128 dev sentences that hold one::

    .venv/bin/python bench/identifiers_times.py \\
        --model data/trained_models/enhi_d256_L3_V8000_20261129-161436.pt

Beam 4, one thread; prints the sentence count, BLEU (``intl``) and chrF++ of both arms, and
each sentence whose output changed.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference import dates, identifiers, verbatim
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="an English->Hindi model file")
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    dev = Path(args.data) / "en-hi" / "dev-general"
    sources = (dev / "ntrex128.en").read_text(encoding="utf-8").splitlines()
    references = (dev / "ntrex128.hi").read_text(encoding="utf-8").splitlines()
    chosen = [
        (s, r)
        for s, r in zip(sources, references, strict=True)
        if identifiers.find_identifiers(s) or dates.find_times(s, "en", "hi")
    ]
    texts, refs = [s for s, _ in chosen], [r for _, r in chosen]
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    settings = translator.settings(beam_size=4)

    def outputs() -> list[str]:
        found = translator.translate(texts, settings, verbatim=Verbatim(langs=("en", "hi")))
        return [r.text for r in found]

    with_them = outputs()
    setattr(verbatim, "find_identifiers", lambda text: [])  # noqa: B010 (the other arm)
    setattr(dates, "find_times", lambda text, src, tgt: [])  # noqa: B010
    without = outputs()
    print(f"{len(texts)} NTREX-128 dev sentences with an identifier or a time of day")
    for name, found in (("without", without), ("with", with_them)):
        scores = corpus_scores(found, refs, "intl")
        print(f"{name}: BLEU {scores.bleu:.2f}, chrF++ {scores.chrf:.2f}")
    for text, old, new in zip(texts, without, with_them, strict=True):
        if old != new:
            print(f"\n{text}\n  without: {old}\n  with:    {new}")


if __name__ == "__main__":
    main()
