"""Learning curve of constituency parsing as translation (section 6.3) on the Penn Treebank sample.

For each share of the training files (default 25, 50 and 100 % of wsj_0001-0179, taken from the
start: wsj_0001-0045, -0090, -0179) it runs, each step a fresh ``anuvad`` process::

    anuvad prepare  --config CONFIG name=<name>_<pct> data.train.0.last=wsj_NNNN
    anuvad train    --config CONFIG name=<name>_<pct> data.train.0.last=wsj_NNNN
    anuvad evaluate --task parsing --model runs/<name>_<pct>/model.pt --json --tags gold \
                    --references <data root>/parsing/ptb-sample/wsj_018*.mrg \
                    --write-hypotheses runs/<name>_<pct>/model_wsj_018.trees      # dev
    anuvad evaluate --task parsing --hypotheses runs/.../model_wsj_018.trees ...  # own tags
    anuvad evaluate ... --references .../wsj_019*.mrg                              # test, once

and writes a JSON file and a Markdown table: training files and trees, training time and
updates, dev and test F1 (EVALB, COLLINS.prm) with the gold tags deciding what is punctuation,
the share of outputs that needed repair, the model's tag accuracy, and EVALB as is (the
model's own tags; sentences with a mistagged punctuation mark become error sentences).
The test split (wsj_0190-0199) is scored once per model, after training, and reported as such.

Run from the repository root (the CPU-sized recipe, about an hour of training per point)::

    OMP_NUM_THREADS=2 .venv/bin/python bench/parsing_curve.py --config configs/parsing_cpu.yaml
    .venv/bin/python bench/parsing_curve.py --shares 25 --extra train.max_steps=50   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FIRST, LAST = 1, 179  # training files wsj_0001..wsj_0179
DEV, TEST = "wsj_018*.mrg", "wsj_019*.mrg"


def data_root() -> Path:
    """Where configs read corpora from: $ANUVAD_DATA, else ../shared/data."""
    return Path(os.environ.get("ANUVAD_DATA") or "../shared/data")


def anuvad(*args: str) -> str:
    """Run ``anuvad ARGS`` in a fresh process; its stdout (stderr passes through)."""
    command = [sys.executable, "-m", "anuvad.cli.main", *args]
    print("$ anuvad " + " ".join(args), file=sys.stderr, flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return result.stdout


def evaluate(model: Path, pattern: str, decode: list[str]) -> dict[str, Any]:
    """EVALB scores of ``model`` on the gold trees matching ``pattern``, decoded once.

    The headline scores take the gold tags to decide what is punctuation (``--tags gold``:
    labelled brackets only, as for a parser without a tagger); ``evalb_own_tags`` holds EVALB
    run as is on the same trees, where a sentence with a mistagged punctuation mark is an
    error sentence left out of the totals.
    """
    references = str(data_root() / "parsing" / "ptb-sample" / pattern)
    trees = model.with_name(f"{model.stem}_{pattern.split('*')[0]}.trees")
    started = time.monotonic()
    out = anuvad(
        "evaluate", "--task", "parsing", "--model", str(model), "--references", references,
        "--tags", "gold", "--write-hypotheses", str(trees), "--json", *decode,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(out)
    report["decode_seconds"] = round(time.monotonic() - started, 1)
    own = anuvad(
        "evaluate", "--task", "parsing", "--hypotheses", str(trees), "--references", references,
        "--json",
    )  # fmt: skip
    report["evalb_own_tags"] = json.loads(own)["all"]
    return report


def score(args: argparse.Namespace, model: Path) -> dict[str, Any]:
    """Dev scores, then the test split's (once, after training and dev scoring)."""
    decode = [f"--beam-size={args.beam_size}"] if args.beam_size else []
    return {"dev": evaluate(model, DEV, decode), "test": evaluate(model, TEST, decode)}


def run_point(args: argparse.Namespace, share: int) -> dict[str, Any]:
    """Prepare, train and score one point of the curve (``--score-only``: score the model)."""
    last = FIRST + round((LAST - FIRST + 1) * share / 100) - 1
    name = f"{args.name}_{share}"
    model = Path("runs") / name / "model.pt"
    point: dict[str, Any] = {"share": share, "files": f"wsj_{FIRST:04d}-wsj_{last:04d}"}
    if not args.score_only:
        overrides = [f"name={name}", f"data.train.0.last=wsj_{last:04d}", *args.extra]
        config = ["--config", args.config, *overrides]
        prepared = anuvad("prepare", *config)
        found = re.search(r"prepared (\d+) training", prepared)
        started = time.monotonic()
        trained = anuvad("train", *config, "--no-progress")
        steps = re.search(r"trained (\d+) steps", trained)
        point["training_trees"] = int(found.group(1)) if found else None
        point["train_minutes"] = round((time.monotonic() - started) / 60, 1)
        point["updates"] = int(steps.group(1)) if steps else None
    return {**point, **score(args, model)}


def markdown(points: list[dict[str, Any]]) -> str:
    """The curve as a Markdown table: F1 (P / R), repairs, tag accuracy, EVALB with own tags."""
    lines = [
        "| training files | trees | train min | updates | dev F1 (P / R) | dev repaired | "
        "dev tags | dev F1, own tags (errors) | test F1 (P / R) | test repaired | "
        "test F1, own tags (errors) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def f1(split: dict[str, Any]) -> str:
        a = split["all"]
        return f"{a['f1']:.1f} ({a['precision']:.1f} / {a['recall']:.1f})"

    def own(split: dict[str, Any]) -> str:
        o = split["evalb_own_tags"]
        return f"{o['f1']:.1f} ({o['error_sentences']} of {o['sentences']})"

    for p in points:
        dev, test = p["dev"], p["test"]
        lines.append(
            f"| {p['share']} % ({p['files']}) | {p.get('training_trees', '')} | "
            f"{p.get('train_minutes', '')} | {p.get('updates', '')} | {f1(dev)} | "
            f"{100 * dev['repaired_share']:.1f} % | {dev.get('tag_accuracy', '')} % | {own(dev)} | "
            f"{f1(test)} | {100 * test['repaired_share']:.1f} % | {own(test)} |"
        )
    return "\n".join(lines)


def main() -> int:
    """Run the curve and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/parsing_cpu.yaml")
    parser.add_argument("--name", default="ptb_parsing_cpu", help="run names: <name>_<share>")
    parser.add_argument("--shares", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--beam-size", type=int, default=0, help="0 = the config's (21)")
    parser.add_argument("--extra", nargs="*", default=[], help="more key=value overrides")
    parser.add_argument("--out", default="bench/parsing_curve.json")
    parser.add_argument(
        "--score-only", action="store_true", help="score runs/<name>_<share>/model.pt, no training"
    )
    args = parser.parse_args()
    points = []
    for share in args.shares:
        points.append(run_point(args, share))
        Path(args.out).write_text(json.dumps(points, indent=2) + "\n", encoding="utf-8")
    print(markdown(points))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
