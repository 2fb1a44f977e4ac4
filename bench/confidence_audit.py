"""Does the sentence confidence find *wrong* captions? The issue's label (sentence chrF++ < 30
against the one reference) set beside a reading of every held-out caption translation
(``bench/audit/hvg-dev-caption-model.tsv``: A right, P partly wrong, W wrong)::

    .venv/bin/python bench/confidence_audit.py \\
        --model data/trained_models/enhi_d256_L3_V8000_20261123-123312.pt

Translates the audited lines of Hindi Visual Genome dev as the server does (beam 4,
``no_repeat_ngram_size`` 3, the model's shipped ``.confidence.json`` and reverse model), checks
that every output is the one that was read (its SHA-1 prefix), and prints, per label, how well
the plain score, the calibrated confidence and sentence chrF++ against the reference rank the
bad sentences first (AUROC, with a 95 % bootstrap interval), the "likely wrong" flag's precision
and recall, and the AUROC that a perfect yes/no judge of right and wrong would reach on the
chrF++ label.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from anuvad.evaluation.metrics import sentence_chrf
from anuvad.evaluation.ranking import GOOD_CHRF, auroc
from anuvad.inference.translator import Translator

AUDIT = Path(__file__).parent / "audit" / "hvg-dev-caption-model.tsv"
VERDICTS = ("A", "P", "W")


@dataclass
class Verdict:
    line: int  # 1-based line of hindi-visual-genome-dev.txt
    verdict: str  # A, P or W
    mt_sha1: str  # first 12 hex digits of the output's SHA-1


def read_audit(path: Path) -> list[Verdict]:
    """The audit file's rows (``#`` lines and the header skipped); a malformed row is named."""
    rows = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text or text.startswith("#") or text.startswith("line\t"):
            continue
        cells = text.split("\t")
        if len(cells) != 3 or not cells[0].isdigit() or cells[1] not in VERDICTS:
            raise SystemExit(
                f"{path}, line {number}: expected LINE<TAB>A|P|W<TAB>SHA1, got {text!r}"
            )
        rows.append(Verdict(int(cells[0]), cells[1], cells[2]))
    return rows


def sha1_prefix(text: str) -> str:
    """The first 12 hex digits of ``text``'s SHA-1 (how the audit names an output)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def flag_figures(flagged: Sequence[bool], positives: Sequence[bool]) -> str:
    """The flag's precision and recall for finding ``positives``, as "0.42 / 0.39"."""
    hits = sum(f and p for f, p in zip(flagged, positives, strict=True))
    precision = hits / max(1, sum(flagged))
    recall = hits / max(1, sum(positives))
    return f"{precision:.2f} / {recall:.2f}"


def interval(scores: Sequence[float], bad: Sequence[bool], draws: int = 1000) -> str:
    """AUROC of ``scores`` (higher = more likely bad) with its 95 % bootstrap interval
    (sentences resampled with replacement, seed 0)."""
    rng = random.Random(0)
    n = len(scores)
    values: list[float] = []
    while len(values) < draws:
        pick = [rng.randrange(n) for _ in range(n)]
        sample = [bad[i] for i in pick]
        if any(sample) and not all(sample):
            values.append(auroc([scores[i] for i in pick], sample))
    values.sort()
    low, high = values[int(0.025 * draws)], values[int(0.975 * draws) - 1]
    return f"{auroc(scores, bad):.3f} ({low:.2f}–{high:.2f})"


def main() -> None:
    """Translate the audited captions, check they are the outputs that were read, print the
    tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--audit", type=Path, default=AUDIT)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    audit = read_audit(args.audit)
    lines = [v.line for v in audit]
    if len(set(lines)) != len(lines):
        raise SystemExit(f"{args.audit}: a dev line is read twice")
    dev = Path(args.data) / "en-hi" / "hvg" / "hindi-visual-genome-dev.txt"
    cells = [line.split("\t") for line in dev.read_text(encoding="utf-8").splitlines()]
    sources = [cells[v.line - 1][5].strip() for v in audit]
    references = [cells[v.line - 1][6].strip() for v in audit]

    translator = Translator.from_file(args.model, device="cpu")
    if translator.calibration is None:
        raise SystemExit(f"{args.model}: no .confidence.json beside it; run `make calibrate`")
    settings = translator.settings(beam_size=4, no_repeat_ngram_size=3)
    results = translator.translate(sources, settings, quality=True)
    changed = [
        v.line for v, r in zip(audit, results, strict=True) if sha1_prefix(r.text) != v.mt_sha1
    ]
    if changed:
        raise SystemExit(
            f"{len(changed)} outputs differ from the ones that were read (dev lines "
            f"{changed[:10]}...): the audit belongs to another model or setting; read them again"
        )

    chrf = sentence_chrf([r.text for r in results], references)
    plain = [r.score for r in results]
    confidence = []
    flagged = []
    for r in results:
        assert r.quality is not None and r.quality.confidence is not None  # calibrated model
        confidence.append(r.quality.confidence)
        flagged.append(bool(r.quality.likely_wrong))
    labels = {
        f"chrF++ < {GOOD_CHRF:g} (the calibration's label)": [c < GOOD_CHRF for c in chrf],
        "read as wrong (W)": [v.verdict == "W" for v in audit],
        "read as wrong or partly wrong (W+P)": [v.verdict in ("W", "P") for v in audit],
    }
    counts = {k: sum(v.verdict == k for v in audit) for k in VERDICTS}
    print(f"{len(audit)} held-out captions read: {counts}\n")
    print(
        "| bad = | bad | AUROC plain score | AUROC confidence | AUROC chrF++ vs reference "
        "| flag precision / recall |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for name, bad in labels.items():
        # Low values mean bad: negate so that a higher score means more likely bad.
        row = [interval([-x for x in values], bad) for values in (plain, confidence, chrf)]
        print(
            f"| {name} | {sum(bad)} | {row[0]} | **{row[1]}** | {row[2]} "
            f"| {flag_figures(flagged, bad)} |"
        )
    chrf_bad = next(iter(labels.values()))
    for name in list(labels)[1:]:
        judge = [float(x) for x in labels[name]]
        print(
            f"\nA perfect yes/no judge of '{name}', scored on the chrF++ label: AUROC "
            f"{auroc(judge, chrf_bad):.3f}"
        )


if __name__ == "__main__":
    main()
