"""Words already in the target's script (``inference/target_script.py``): copied as written
behind placeholders by default, against the same policy without them::

    .venv/bin/python bench/target_script.py \\
        --model data/trained_models/hien_d256_L3_V8000_<time>.pt --data ../shared/data

Hindi->English on the NTREX-128 dev sentences whose Hindi holds Latin words (names, acronyms,
brands: 190 of 1,997), beam search with the model's settings: corpus BLEU / chrF++ of each
arm against the English references, and the seconds each took.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference.target_script import target_script_runs
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a Hindi->English model file")
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    folder = Path(args.data) / "en-hi" / "dev-general"
    hindi = (folder / "ntrex128.hi").read_text(encoding="utf-8").splitlines()
    english = (folder / "ntrex128.en").read_text(encoding="utf-8").splitlines()
    chosen = [i for i, s in enumerate(hindi) if target_script_runs(s, "hi", "en")]
    sources, references = [hindi[i] for i in chosen], [english[i] for i in chosen]
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    translator.translate(sources[:8])  # warm up
    print(f"{len(chosen)} of {len(hindi)} Hindi sources hold Latin words\n")
    print("| policy | BLEU | chrF++ | seconds |\n|---|---:|---:|---:|")
    for name, policy in (
        ("without (target_script=False)", Verbatim(target_script=False)),
        ("copied behind placeholders (default)", Verbatim()),
    ):
        started = time.perf_counter()
        outputs = [r.text for r in translator.translate(sources, verbatim=policy)]
        seconds = time.perf_counter() - started
        scores = corpus_scores(outputs, references)
        print(f"| {name} | {scores.bleu:.2f} | {scores.chrf:.2f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
