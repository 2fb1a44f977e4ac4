"""Currency amounts (``inference/currency.py``: codes read and copied as their signs, one
currency for each amount) against the same served copying policy without them, on the dev
sentences that hold an amount (NTREX-128, WMT24, WMT24++, newsdev2014, IITB val)::

    .venv/bin/python bench/currency_amounts.py \\
        --model data/trained_models/enhi_d256_L3_V8000_20261129-161436.pt

Greedy and beam 4, one thread; prints the sentence count, BLEU (``intl``) and chrF++ of both
arms, and each sentence whose beam-4 output changed.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference import currency, post_search
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

SETS = (
    "dev-general/ntrex128",
    "dev-general/wmt24",
    "dev-general/wmt24pp",
    "newsdev2014/newsdev2014",
    "iitb-sample/val",
)
AMOUNT = re.compile(r"[$€£₹¥] ?[0-9]|\bRs\.? ?[0-9]|\b(?:USD|INR|EUR|GBP)\b")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="an English->Hindi model file")
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = Path(args.data) / "en-hi"
    texts: list[str] = []
    refs: list[str] = []
    for name in SETS:
        # Lines end at "\n" only: a reference may hold U+2028, which splitlines() cuts at.
        sources = (root / f"{name}.en").read_text(encoding="utf-8").rstrip("\n").split("\n")
        references = (root / f"{name}.hi").read_text(encoding="utf-8").rstrip("\n").split("\n")
        for source, reference in zip(sources, references, strict=True):
            if AMOUNT.search(source) and source.strip() not in texts:
                texts.append(source.strip())
                refs.append(reference.strip())
    translator = Translator.from_file(args.model, device="cpu", confidence=False)

    def outputs(beam: int) -> list[str]:
        settings = translator.settings(beam_size=beam)
        found = translator.translate(texts, settings, verbatim=Verbatim(langs=("en", "hi")))
        return [r.text for r in found]

    arms = {"with": {beam: outputs(beam) for beam in (1, 4)}}
    # The other arm, as at 045d0c9: codes read as written, no clean-up, and only the rupee
    # named right before or right after an amount keeps "₹" from being written back.
    rupees_before = re.compile(r"(?:\b(?:Rs|INR)\.?|रु\.?|रुपये)\s*$", re.IGNORECASE)
    rupees_after = re.compile(r"[\d.,]+\s*(?:rupees?|रुपये|रुपए)\b", re.IGNORECASE)
    baseline = {
        "named_before": lambda head, sign: sign == "₹" and bool(rupees_before.search(head)),
        "named_after": lambda tail, sign: sign == "₹" and bool(rupees_after.match(tail)),
        "write_currencies": lambda results: None,
    }
    for name, function in baseline.items():
        setattr(post_search, name, function)
    setattr(currency, "non_latin", lambda lang: False)  # noqa: B010
    arms["without"] = {beam: outputs(beam) for beam in (1, 4)}
    print(f"{len(texts)} dev sentences with an amount")
    for name in ("without", "with"):
        for beam in (1, 4):
            scores = corpus_scores(arms[name][beam], refs, "intl")
            print(f"{name}, beam {beam}: BLEU {scores.bleu:.2f}, chrF++ {scores.chrf:.2f}")
    for text, old, new in zip(texts, arms["without"][4], arms["with"][4], strict=True):
        if old != new:
            print(f"\n{text}\n  without: {old}\n  with:    {new}")


if __name__ == "__main__":
    main()
