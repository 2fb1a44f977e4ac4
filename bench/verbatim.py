"""Numbers carried through exactly (issue 34, item 4): before and after the verbatim policy.

Translates a dev set twice with the same settings, without and with
:class:`anuvad.inference.verbatim.Verbatim` (numbers, links, e-mail addresses required through the
search), and prints:

* sentences whose source has a number, and the share of them whose numbers *all* reach the
  output (each digit run of the source, separators between digits included, found in the output
  with no digit glued to it; Devanagari digits in the output count as the same digits). The
  check is this script's own, not the recogniser's, so it also counts numbers the recogniser
  leaves out (``G20``);
* sentences whose output has a number the source lacks (invented);
* corpus BLEU / chrF++ (sacreBLEU, ``intl`` tokenisation) of the whole set and of the sentences
  with numbers; sentences without a span must come out identical (counted);
* the decoding time of both runs (same process, same batches).

    nice python bench/verbatim.py --model data/trained_models/enhi_<...>.pt --threads 2
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")


def latin_digits(text: str) -> str:
    """``text`` with Devanagari digits written as Latin ones."""
    return text.translate({0x966 + d: str(d) for d in range(10)})


def numbers_of(text: str) -> set[str]:
    """The digit runs of ``text`` (separators between digits kept), in Latin digits."""
    return set(NUMBER.findall(latin_digits(text)))


def reaches(number: str, output: str) -> bool:
    """Whether ``output`` holds ``number`` with no digit (or separator and digit) glued on."""
    glued = r"(?<![\d])(?<!\d[.,:])" + re.escape(number) + r"(?![\d])(?![.,:]\d)"
    return re.search(glued, latin_digits(output)) is not None


def read_lines(path: Path, count: int) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:count] if count else lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "/work/shared/data"))
    parser.add_argument("--set", default="en-hi/dev-general/ntrex128", help="path without .en/.hi")
    parser.add_argument("--lines", type=int, default=0, help="first N sentences (0: all)")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--digits", choices=["latin", "devanagari"], default="latin")
    parser.add_argument(
        "--any-digits",
        action="store_true",
        help="Verbatim(only_source_numbers=False): numbers required, other digits allowed",
    )
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--outputs", type=Path, help="write both runs' outputs to this folder")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    root = Path(args.data)
    sources = read_lines(root / f"{args.set}.en", args.lines)
    references = read_lines(root / f"{args.set}.hi", args.lines)

    translator = Translator.from_file(args.model, device="cpu")
    settings = translator.settings(
        beam_size=args.beam_size, batch_size=args.batch_size, max_tokens=0
    )
    translator.translate(sources[:32], settings)  # warm-up
    start = time.perf_counter()
    before = [t.text for t in translator.translate(sources, settings)]
    before_s = time.perf_counter() - start
    start = time.perf_counter()
    policy = Verbatim(digits=args.digits, only_source_numbers=not args.any_digits)
    results = translator.translate(sources, settings, verbatim=policy)
    after_s = time.perf_counter() - start
    after = [t.text for t in results]
    if args.outputs:
        args.outputs.mkdir(parents=True, exist_ok=True)
        (args.outputs / "before.hi").write_text("\n".join(before) + "\n", encoding="utf-8")
        (args.outputs / "after.hi").write_text("\n".join(after) + "\n", encoding="utf-8")

    with_numbers = [i for i, s in enumerate(sources) if numbers_of(s)]
    no_span = [i for i, r in enumerate(results) if not r.copied]
    unchanged = sum(before[i] == after[i] for i in no_span)
    skipped = sum(not c.required for r in results for c in r.copied)

    def all_reach(outputs: list[str]) -> int:
        return sum(
            all(reaches(n, outputs[i]) for n in numbers_of(sources[i])) for i in with_numbers
        )

    def invented(outputs: list[str]) -> int:
        return sum(
            bool(numbers_of(o) - numbers_of(s)) for s, o in zip(sources, outputs, strict=True)
        )

    def subset(outputs: list[str]) -> list[str]:
        return [outputs[i] for i in with_numbers]

    a, b = corpus_scores(before, references, "intl"), corpus_scores(after, references, "intl")
    refs = subset(references)
    na, nb = corpus_scores(subset(before), refs, "intl"), corpus_scores(subset(after), refs, "intl")
    n = len(with_numbers)
    threads = torch.get_num_threads()
    print(f"{Path(args.model).name}, {args.set} ({len(sources)} sentences), beam "
          f"{args.beam_size}, no_repeat_ngram_size {settings.no_repeat_ngram_size}, batch "
          f"{args.batch_size}, {threads} threads, digits {args.digits}")  # fmt: skip
    print()
    after_name = "`Verbatim(only_source_numbers=False)`" if args.any_digits else "`Verbatim()`"
    print(f"| | before (no policy) | after ({after_name}) |")
    print("|---|---:|---:|")
    print(f"| sentences with a number in the source | {n} | {n} |")
    ra, rb = all_reach(before), all_reach(after)
    print(f"| ... whose numbers all reach the output | {ra} ({ra / n:.1%}) | {rb} ({rb / n:.1%}) |")
    print(f"| sentences with an invented number | {invented(before)} | {invented(after)} |")
    print(f"| BLEU / chrF++ (all) | {a.bleu:.1f} / {a.chrf:.1f} | {b.bleu:.1f} / {b.chrf:.1f} |")
    print(f"| BLEU / chrF++ ({n} with numbers) | {na.bleu:.1f} / {na.chrf:.1f} | "
          f"{nb.bleu:.1f} / {nb.chrf:.1f} |")  # fmt: skip
    print(f"| decoding seconds | {before_s:.1f} | {after_s:.1f} ({after_s / before_s:.2f}x) |")
    print()
    print(f"sentences without a span: {len(no_span)}, identical to before: {unchanged}; "
          f"spans not required (unspellable): {skipped}")  # fmt: skip
    print(f"chrF++ signature: {a.chrf_signature}")


if __name__ == "__main__":
    main()
