"""What word probabilities and calibrated confidence cost: the same sentences translated with
and without ``quality=True`` (one teacher-forced pass, plus the reverse model's when the
confidence uses it), alternating, medians of ``--repeats``::

    .venv/bin/python bench/confidence.py \\
        --model data/trained_models/enhi_d256_L3_V8000_20261123-123312.pt \\
        --source ../shared/data/en-hi/dev-general/ntrex128.en --lines 300

Prints one Markdown row per setting: seconds, sentences/s, and the ratio to plain search.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from anuvad.inference.translator import Translator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--source", required=True, help="sentences, one per line")
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--no-repeat-ngram-size", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lines = Path(args.source).read_text(encoding="utf-8").splitlines()[: args.lines]
    translator = Translator.from_file(args.model, device="cpu")
    reverse = translator.reverse
    settings = translator.settings(
        beam_size=args.beam_size, no_repeat_ngram_size=args.no_repeat_ngram_size
    )
    cases: dict[str, tuple[bool, Translator | None]] = {
        "plain search": (False, None),
        "quality, no reverse model": (True, None),
    }
    if reverse is not None:
        cases["quality with the reverse model (as served)"] = (True, reverse)
    translator.translate(lines[:16], settings, quality=True)  # warm-up
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, (quality, rev) in cases.items():
            translator.reverse = rev
            start = time.perf_counter()
            translator.translate(lines, settings, quality=quality)
            seconds[name].append(time.perf_counter() - start)
    base = statistics.median(seconds["plain search"])
    print(f"{len(lines)} sentences, beam {args.beam_size}, {torch.get_num_threads()} threads\n")
    print("| setting | seconds (median) | sentences/s | time vs plain |")
    print("|---|---|---|---|")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {len(lines) / median:.1f} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
