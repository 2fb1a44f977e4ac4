"""Does a translation's confidence depend on the beam that found it? (issue 34 item 6)

    python bench/confidence_beams.py --src ../shared/data/en-hi/dev-general/ntrex128.en \
        [--model FILE] [--limit 300] [--beams 4 12]

Translates the first ``--limit`` sentences with the shipped general model (its confidence file
and reverse model) at each beam, and for the sentences whose best output is the same at both,
prints the mean and largest confidence difference: with the agreement cut to the fitting beam's
candidates (today), and with every candidate of the wider beam (before issue 34).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True, type=Path)
    parser.add_argument("--model", help="default: the newest shipped general English->Hindi model")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--beams", type=int, nargs=2, default=[4, 12])
    args = parser.parse_args()

    from anuvad.inference.translator import Translator

    model = args.model or sorted(Path("data/trained_models").glob("enhi_*.pt"))[-1]
    translator = Translator.from_file(model, device="cpu")
    calibration = translator.calibration
    assert calibration is not None, f"{model} has no confidence file"
    sources = args.src.read_text(encoding="utf-8").splitlines()[: args.limit]
    fitted = calibration.agreement_candidates
    print(f"{model}, {len(sources)} sentences, beams {args.beams}")
    for label, cut in (("cut to the fitting beam's candidates", fitted), ("every candidate", 999)):
        calibration.agreement_candidates = cut
        runs = [
            translator.translate(sources, translator.settings(beam_size=k), quality=True)
            for k in args.beams
        ]
        gaps = [
            abs(a.quality.confidence - b.quality.confidence)
            for a, b in zip(*runs, strict=True)
            if a.text == b.text and a.quality and b.quality
            and a.quality.confidence is not None and b.quality.confidence is not None
        ]  # fmt: skip
        print(
            f"{label}: {len(gaps)} sentences with the same output; confidence difference "
            f"mean {sum(gaps) / len(gaps):.3f}, largest {max(gaps):.3f}"
        )


if __name__ == "__main__":
    main()
