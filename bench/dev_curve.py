"""Dev score against training time, from a run's checkpoints: the last weights and the average of
the last N checkpoints at each point, greedy or beam, on all or the first L dev lines.

Training validates greedily on the recipe's dev set; this re-scores the kept checkpoints after
the fact so that a run can be compared with a published curve measured differently (e.g. the
English→Hindi baseline: greedy, ``tokenize=intl``, first 500 Hindi Visual Genome dev lines, at
15 / 30 / 45 / 60 minutes), and so that checkpoint averaging can be judged at every point.

For each requested time it takes the newest checkpoint whose training time (wall-clock seconds of
training, as the trainer records it) is not past that time::

    .venv/bin/python bench/dev_curve.py --run-dir runs/enhi_d256_L3 \\
        --source ../shared/data/en-hi/hvg/hindi-visual-genome-dev.txt --tsv-columns 5 6 \\
        --lines 500 --minutes 15 30 45 60 --average 5

``--from-validation`` decodes nothing: it re-scores the dev translations that training wrote at
each validation (``valid/step_N.hyp``, greedy, the whole dev set in order) on the first L lines,
and takes each validation's training time from ``metrics.jsonl``::

    .venv/bin/python bench/dev_curve.py --run-dir runs/enhi_d256_L3 --from-validation \\
        --source ../shared/data/en-hi/hvg/hindi-visual-genome-dev.txt --tsv-columns 5 6 --lines 500

Prints a Markdown table and writes ``--json`` when given.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import yaml

from anuvad.checkpoint import ModelFile
from anuvad.config import config_from_dict
from anuvad.data.tokenizer import Tokenizer
from anuvad.evaluation.metrics import corpus_scores, default_tokenize
from anuvad.inference.translator import Translator
from anuvad.model.transformer import build_model
from anuvad.training.state import average_weights, list_checkpoints, load_training_state


@dataclass
class Point:
    minutes: float  # the time asked for
    step: int  # the checkpoint used
    train_minutes: float  # its training time
    averaged: int  # checkpoints averaged (1 = the last weights)
    bleu: float
    chrf: float
    decode_s: float


def read_pairs(
    source: Path, references: Path | None, columns: list[int] | None
) -> tuple[list[str], list[str]]:
    """Dev sources and references: two aligned files, or two columns of one TSV file."""
    if columns:
        rows = [line.split("\t") for line in source.read_text(encoding="utf-8").splitlines()]
        return [r[columns[0]].strip() for r in rows], [r[columns[1]].strip() for r in rows]
    if references is None:
        raise SystemExit("give --references, or --tsv-columns SRC TGT for a TSV --source")
    src = source.read_text(encoding="utf-8").splitlines()
    ref = references.read_text(encoding="utf-8").splitlines()
    if len(src) != len(ref):
        raise SystemExit(f"{source} has {len(src)} lines but {references} has {len(ref)}")
    return src, ref


def translator_for(paths: list[Path], beam: int) -> Translator:
    """A translator over the mean weights of ``paths`` (config and vocabularies of the newest)."""
    newest = load_training_state(paths[-1])
    config = config_from_dict(newest.config)
    model = build_model(config.model)
    model.load_state_dict(average_weights(paths) if len(paths) > 1 else newest.model)
    model.eval()
    model_file = ModelFile(
        model, config, Tokenizer(newest.tokenizers["src"]), Tokenizer(newest.tokenizers["tgt"])
    )
    return Translator(model_file, config.decode.with_overrides(beam_size=beam))


def validation_curve(
    run_dir: Path, references: list[str], tokenize: str
) -> list[tuple[int, float, float, float]]:
    """(step, training minutes, BLEU, chrF++) of every validation's saved dev translations,
    scored on the first ``len(references)`` lines."""
    minutes: dict[int, float] = {}
    for line in (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "elapsed_s" in record and "valid_bleu" not in record:
            minutes[record["step"]] = record["elapsed_s"] / 60
    rows = []
    for path in sorted((run_dir / "valid").glob("step_*.hyp")):
        if path.name.endswith(".averaged.hyp"):
            continue
        step = int(path.stem.split("_")[1])
        hypotheses = path.read_text(encoding="utf-8").splitlines()[: len(references)]
        scores = corpus_scores(hypotheses, references, tokenize)
        rows.append((step, minutes.get(step, float("nan")), scores.bleu, scores.chrf))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--references", type=Path)
    parser.add_argument("--tsv-columns", type=int, nargs=2, metavar=("SRC", "TGT"))
    parser.add_argument("--lines", type=int, default=0, help="first N dev lines (0 = all)")
    parser.add_argument("--minutes", type=float, nargs="+", default=[])
    parser.add_argument(
        "--from-validation",
        action="store_true",
        help="re-score the translations saved at each validation instead of decoding",
    )
    parser.add_argument("--average", type=int, default=0, help="also the mean of the last N")
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--tokenize", help="sacreBLEU tokenizer (default: by target language)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    sources, references = read_pairs(args.source, args.references, args.tsv_columns)
    if args.lines:
        sources, references = sources[: args.lines], references[: args.lines]
    if args.from_validation:
        config = yaml.safe_load((args.run_dir / "config.yaml").read_text(encoding="utf-8"))
        tokenize = args.tokenize or default_tokenize(config["data"]["tgt_lang"])
        print(f"{len(references)} dev sentences, greedy, sacreBLEU tokenize={tokenize}\n")
        print("| step | training minutes | BLEU | chrF++ |\n|---|---|---|---|")
        for step, minutes, bleu, chrf in validation_curve(args.run_dir, references, tokenize):
            print(f"| {step} | {minutes:.1f} | {bleu:.1f} | {chrf:.1f} |")
        return
    if not args.minutes:
        raise SystemExit("give --minutes M [M ...], or --from-validation")
    checkpoints = list_checkpoints(args.run_dir)
    times = [load_training_state(c).progress.elapsed_seconds / 60 for c in checkpoints]
    tgt_lang = config_from_dict(load_training_state(checkpoints[-1]).config).data.tgt_lang
    tokenize = args.tokenize or default_tokenize(tgt_lang)

    points: list[Point] = []
    for minutes in args.minutes:
        upto = [i for i, t in enumerate(times) if t <= minutes + 1e-9]
        if not upto:
            print(f"no checkpoint within {minutes} minutes (first at {times[0]:.1f})")
            continue
        last = upto[-1]
        for n in sorted({1, args.average} - {0}):
            group = checkpoints[max(0, last - n + 1) : last + 1]
            translator = translator_for(group, args.beam)
            start = time.perf_counter()
            hypotheses = [
                t.text
                for t in translator.translate(sources, translator.settings(beam_size=args.beam))
            ]
            seconds = time.perf_counter() - start
            scores = corpus_scores(hypotheses, references, tokenize)
            step = load_training_state(checkpoints[last]).progress.step
            points.append(
                Point(minutes, step, times[last], len(group), scores.bleu, scores.chrf, seconds)
            )
            print(
                f"{minutes:5.0f} min: step {step}, {len(group)} checkpoint(s), "
                f"BLEU {scores.bleu:.1f}, chrF++ {scores.chrf:.1f}",
                flush=True,
            )

    search = "greedy" if args.beam == 1 else f"beam {args.beam}"
    print(f"\n{len(sources)} dev sentences, {search}, sacreBLEU tokenize={tokenize}\n")
    print("| minutes | step | checkpoints averaged | BLEU | chrF++ |\n|---|---|---|---|---|")
    for p in points:
        print(
            f"| {p.minutes:.0f} ({p.train_minutes:.1f}) | {p.step} | {p.averaged} "
            f"| {p.bleu:.1f} | {p.chrf:.1f} |"
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(p) for p in points], indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
