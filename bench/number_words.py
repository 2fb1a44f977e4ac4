"""Hindi numbers in words read as digits (inference.number_words), measured on the dev sets.

Every Hindi dev sentence (NTREX-128, newsdev2014, WMT24) in which a number written in words is
read as digits, translated into English by a Hindi->English model with the words read
(``Verbatim()``) and as written (``Verbatim(number_words=False)``), at the served search:
chrF++ and BLEU of each against the references, and each sentence's two outputs for reading
(the references often spell numbers out, "Fourteen people", which digits do not match).

    python bench/number_words.py --model data/trained_models/hien_*.pt
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference.number_words import read_number_words
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

SETS = ("dev-general/ntrex128", "newsdev2014/newsdev2014", "dev-general/wmt24")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a Hindi->English model file")
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    root = Path(args.data) / "en-hi"
    sources, references, found = [], [], []
    for name in SETS:
        hindi = (root / f"{name}.hi").read_text("utf-8").splitlines()
        english = (root / f"{name}.en").read_text("utf-8").splitlines()
        for hi, en in zip(hindi, english, strict=True):
            reading = read_number_words(hi, "hi")
            if reading.edits:
                sources.append(hi)
                references.append(en)
                found.append(
                    ", ".join(f"{hi[a:b]} → {reading.text[c:d]}" for a, b, c, d in reading.edits)
                )
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    settings = translator.settings()
    outputs = {
        label: [r.text for r in translator.translate(sources, settings, verbatim=policy)]
        for label, policy in (
            ("as written", Verbatim(number_words=False)),
            ("read as digits", Verbatim()),
        )
    }
    print(f"{len(sources)} sentences with Hindi numbers in words ({', '.join(SETS)})\n")
    print("| the model reads | chrF++ | BLEU |\n|---|---:|---:|")
    for label, hypotheses in outputs.items():
        scores = corpus_scores(hypotheses, references, "13a")
        print(f"| {label} | {scores.chrf:.1f} | {scores.bleu:.1f} |")
    for i, source in enumerate(sources):
        print(f"\n{source}\n  read: {found[i]}\n  reference: {references[i]}")
        for label, hypotheses in outputs.items():
            print(f"  {label}: {hypotheses[i]}")


if __name__ == "__main__":
    main()
