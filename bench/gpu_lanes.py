"""Several back-translate → train → score lanes side by side on one lent GPU, in one call of
under 10 minutes (issue 39 items 2, 3 and 6).

Each lane back-translates monolingual text with a shipped model (on the GPU), continues the
newest shipped model of its pair (from scratch where there is none) on the real pairs plus that
synthetic text (its recipe's back-translated corpus, found by name, pointed at the new files) for
as long as the call allows, averages the last checkpoints, exports the
result (float16) and scores it on NTREX-128 dev. A d256 model uses a fraction of an H200, so the
lanes share it; each lane's training time is what the call has left after its back-translation,
less a reserve for its data preparation, averaging, export and scoring.

The lanes (``--lanes`` picks some):

- ``hien-r4``: English news (WMT newstest, BBC) back-translated into Hindi by the shipped
  English→Hindi model, greedy; the shipped Hindi→English model continued on it (round 4 of
  that direction).
- ``enhi-greedy``: the 13 punctuated monolingual Hindi files back-translated by the shipped
  Hindi→English model, greedy with no 4-gram twice (as every earlier round); the shipped
  English→Hindi model continued on it.
- ``enhi-sampled``: the same, but each English source drawn from the model's 10 most probable
  pieces at every step (Edunov et al. 2018): the ablation of item 2, same start, same minutes.
- ``enhi-r6``: the shipped English→Hindi model continued on ``data/synthetic/bt-hi-r4.*``
  (``mono-hi`` back-translated by the round-4 Hindi→English model on the CPU, carried along).
- ``enhi-r9`` and ``enhi-r9c2``: the shipped English→Hindi model continued on
  ``data/synthetic/bt-hi-r7.*`` (``mono-hi`` back-translated by Hindi→English round 7 on the CPU,
  carried along; ``make synthetic-hi`` writes such a file, ``bt-hi-shipped``, from whichever
  Hindi→English model is shipped), the second with
  the captions counted twice (as the CPU arms of round 9).
- ``hien-r8``: the shipped Hindi→English model continued on ``data/synthetic/bt-en-r8.*`` (the
  English news back-translated by English→Hindi round 8, carried), captions counted once.
- ``enhi-r10`` and ``hien-r9`` (the default): the next round, each shipped model continued on
  the back-translations the other's newest model made (``bt-hi-r8``: ``mono-hi`` by
  Hindi→English round 8; ``bt-en-r9``: the English news by English→Hindi round 9; ``make
  gpu-pack-lanes`` carries both), with the captions weighted as in rounds 9 and 8.

A lane's own corpus settings (its synthetic text, the corpora it drops or reweights) come after
``--set``'s and win over them.

A lane whose ``data/synthetic/<prefix>.{en,hi}`` are there already (made elsewhere and carried)
skips its back-translation. Every call trains its lanes afresh (a lane is not resumed); the exit
status is 1 when a lane returned no model, and ``lanes.json`` says where it stopped.

On the lent machine, carrying ``.gpu`` (``make gpu-pack``)::

    python3 -m pip install --quiet --no-index --no-deps --target /tmp/anuvad-site .gpu/wheels/*.whl
    PYTHONPATH=src:/tmp/anuvad-site python3 -m anuvad.cli.main data unpack .gpu/data.tar.xz \
        --to /tmp/anuvad-data
    PYTHONPATH=src:/tmp/anuvad-site python3 bench/gpu_lanes.py --data /tmp/anuvad-data --minutes 8.8

What comes back in ``--out`` ($OUT): each lane's model in parts (``cat NAME.pt.part* >
NAME.pt``) and ``logs.tgz`` (every lane's log, train.log, metrics.jsonl, NTREX scores and
hypotheses, ``lanes.json``). ``--device cpu`` with tiny ``--set`` overrides tries the flow here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from recipe_gpu import MONO_EN, MONO_HI, SHIPPED, continue_shipped, deliver, shipped


@dataclass(frozen=True)
class Lane:
    """One lane: what it back-translates with what, and what it continues on it."""

    name: str
    config: str  # a recipe's file name under --configs
    continues: str  # the shipped pair whose newest model it continues ("enhi", "hien")
    back_translator: str  # the shipped pair that back-translates
    mono: tuple[str, ...]  # files under en-hi/, relative (".gz")
    prefix: str  # data/synthetic/<prefix>.{en,hi}
    bt_options: tuple[str, ...]
    reads: str  # the recipe's corpus (by name) that reads the synthetic text instead
    drops: tuple[str, ...]  # the recipe's corpora (by name) left out (weight 0)
    dev: tuple[str, str]  # NTREX-128 source and reference file names
    weights: tuple[tuple[str, float], ...] = ()  # the recipe's corpora (by name) reweighted


def lanes() -> dict[str, Lane]:
    """The lanes this round runs, by name."""
    mono_en = tuple(f"mono-en/{name}.en.gz" for name in MONO_EN)
    mono_hi = tuple(f"mono-hi/{name}.hi.gz" for name in MONO_HI)
    greedy = ("--beam-size", "1", "--no-repeat-ngram-size", "4")
    enhi, hien = "enhi_bt_d256_L3.yaml", "hien_bt_d256_L3.yaml"
    to_hi, to_en = ("ntrex128.en", "ntrex128.hi"), ("ntrex128.hi", "ntrex128.en")
    # Hindi->English: both news files back-translated as one corpus read in bt-wmt's place;
    # Reuters stays out (the pack that travels stays small).
    news = ("bt-bbc", "bt-reuters")
    table = [
        Lane("hien-r4", hien, "hien", "enhi", mono_en, "bt-en-r4", greedy, "bt-wmt", news, to_en),
        Lane("enhi-greedy", enhi, "enhi", "hien", mono_hi, "bt-hi-greedy", greedy, "bt-hi", (),
             to_hi),
        Lane("enhi-sampled", enhi, "enhi", "hien", mono_hi, "bt-hi-sampled",
             ("--sample-top-k", "10"), "bt-hi", (), to_hi),
        Lane("enhi-r6", enhi, "enhi", "hien", mono_hi, "bt-hi-r4", greedy, "bt-hi", (), to_hi),
        Lane("enhi-r9", enhi, "enhi", "hien", mono_hi, "bt-hi-r7", greedy, "bt-hi", (), to_hi),
        Lane("enhi-r9c2", enhi, "enhi", "hien", mono_hi, "bt-hi-r7", greedy, "bt-hi", (), to_hi,
             (("hvg", 2.0),)),
        Lane("hien-r8", hien, "hien", "enhi", mono_en, "bt-en-r8", greedy, "bt-wmt", news, to_en,
             (("hvg", 1.0),)),
        Lane("enhi-r10", enhi, "enhi", "hien", mono_hi, "bt-hi-r8", greedy, "bt-hi", (), to_hi,
             (("hvg", 2.0),)),
        Lane("hien-r9", hien, "hien", "enhi", mono_en, "bt-en-r9", greedy, "bt-wmt", news, to_en,
             (("hvg", 1.0),)),
    ]  # fmt: skip
    return {lane.name: lane for lane in table}


def synthetic_settings(config: Path, lane: Lane) -> list[str]:
    """The ``data.train.N...`` settings that point the lane's corpus at its synthetic text,
    leave out the ones it drops and reweight the ones it reweights (all found by name in the
    recipe, so that a reordered recipe cannot reweight another corpus)."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))["data"]
    index = {corpus["name"]: n for n, corpus in enumerate(data["train"])}
    missing = sorted({lane.reads, *lane.drops, *(name for name, _ in lane.weights)} - set(index))
    if missing:
        raise SystemExit(f"{config}: data.train has no corpus named {', '.join(missing)}")
    n, path = index[lane.reads], f"./data/synthetic/{lane.prefix}"
    return [
        f"data.train.{n}.src={path}.{data['src_lang']}",
        f"data.train.{n}.tgt={path}.{data['tgt_lang']}",
        *(f"data.train.{index[name]}.weight=0" for name in lane.drops),
        *(f"data.train.{index[name]}.weight={weight:g}" for name, weight in lane.weights),
    ]


def carried(lane: Lane) -> bool:
    """Whether the lane's synthetic text is here already (made elsewhere and carried)."""
    return all(Path(f"data/synthetic/{lane.prefix}.{lang}").is_file() for lang in ("en", "hi"))


KILL_MARGIN_S = 30.0  # a training still running this close to the deadline is killed
MAX_LANES = 3  # a lent machine returns at most 8 files: 2 parts of a 20 MB model a lane, and 2


@dataclass(frozen=True)
class Call:
    """What is shared by the lanes of one call."""

    data: Path
    work: Path
    out: Path
    configs: Path  # where the lanes' recipes are
    device: str
    deadline: float  # time.monotonic() by which the call ends
    reserve_s: float  # kept back from training for preparation, averaging, export, scoring
    bt_max_tokens: int
    mono_lines: int  # lines per monolingual file (0: all; a trial on the CPU takes a few)
    settings: tuple[str, ...]  # training settings for every lane

    def left(self) -> float:
        return self.deadline - time.monotonic()


class LaneRun:
    """One lane's commands, its log, and its report."""

    def __init__(self, lane: Lane, call: Call) -> None:
        self.lane, self.call = lane, call
        self.folder = call.work / lane.name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.log = self.folder / "lane.log"
        self.report: dict[str, float | str] = {}

    def anuvad(self, *args: str, timeout: float) -> int | None:
        """One ``anuvad`` command, its output appended to the lane's log: its exit status, or
        None when it ran out of ``timeout`` (killed)."""
        command = [sys.executable, "-m", "anuvad.cli.main", *args]
        with self.log.open("a", encoding="utf-8") as log:
            log.write("+ anuvad " + " ".join(args) + "\n")
            log.flush()
            try:
                done = subprocess.run(
                    command, stdout=log, stderr=subprocess.STDOUT, timeout=max(timeout, 5)
                )
            except subprocess.TimeoutExpired:
                log.write("  killed: its time in this call was spent\n")
                return None
        return done.returncode

    def timed(self, name: str, ok: bool, started: float) -> bool:
        self.report[name] = round(time.monotonic() - started, 1) if ok else "failed or stopped"
        return ok

    def run(self) -> None:
        """The lane, start to end; what stopped it (an exception included) goes in the report."""
        try:
            self.steps()
        except Exception as error:  # a lane's thread must say why it stopped, not die silently
            self.report["error"] = f"{type(error).__name__}: {error}"

    def steps(self) -> None:
        lane, call = self.lane, self.call
        started = time.monotonic()
        if carried(lane):
            self.report["backtranslate_s"] = "carried"
        else:
            files = [str(call.data / "en-hi" / name) for name in lane.mono]
            status = self.anuvad(
                "backtranslate", "--model", str(shipped(lane.back_translator)),
                "--device", call.device, "--no-progress", "--input", *files,
                "--out-prefix", f"data/synthetic/{lane.prefix}",
                "--max-tokens", str(call.bt_max_tokens), "--chunk-lines", "20000",
                *lane.bt_options,
                *(["--max-lines", str(call.mono_lines)] if call.mono_lines else []),
                timeout=call.left() - call.reserve_s - 60,
            )  # fmt: skip
            if not self.timed("backtranslate_s", status == 0, started):
                return
        started, run_dir = time.monotonic(), self.folder / "run"
        shutil.rmtree(run_dir, ignore_errors=True)  # every call trains its lanes afresh
        minutes = (call.left() - call.reserve_s) / 60
        self.report["train_minutes"] = round(minutes, 2)
        config = call.configs / lane.config
        status = self.anuvad(
            "train", "--config", str(config), "--run-dir", str(run_dir), "--data",
            str(self.folder / "prepared"), "--no-progress", f"train.device={call.device}",
            f"train.max_minutes={minutes:.2f}", "train.max_steps=0",
            *continue_shipped(lane.continues), *call.settings, *synthetic_settings(config, lane),
            timeout=call.left() - KILL_MARGIN_S,
        )  # fmt: skip
        model = run_dir / "model.pt"
        if status is None and any((run_dir / "checkpoints").glob("*.pt")):
            # killed before its own averaging (the reserve was too small for the data
            # preparation and the final validation): average what it saved
            self.report["final_weights"] = "the last 10 saved checkpoints (killed at the deadline)"
            self.anuvad("average", "--run-dir", str(run_dir), "--last", "10", "--out", str(model),
                        timeout=call.left())  # fmt: skip
        elif status:
            self.report["train"] = f"failed with exit status {status} (lane.log says why)"
            return
        if not self.timed("train_s", model.is_file(), started):
            return
        self.export_and_score(model)

    def export_and_score(self, model: Path) -> None:
        call, started = self.call, time.monotonic()
        exported = self.folder / "export"
        shutil.rmtree(exported, ignore_errors=True)
        if self.anuvad("export", str(model), "--dtype", "float16", "--out", str(exported),
                       timeout=call.left()) != 0:  # fmt: skip
            self.report["export"] = "failed or stopped"
            return
        (model_file,) = exported.glob("*.pt")
        final = call.out / self.lane.name
        final.mkdir(parents=True, exist_ok=True)
        deliver(model_file, final, 15.0)
        self.report["model"] = model_file.name
        dev = call.data / "en-hi" / "dev-general"
        source, reference = self.lane.dev
        scores = self.folder / "ntrex128.json"
        with scores.open("w", encoding="utf-8") as handle:
            try:
                done = subprocess.run(
                    [sys.executable, "-m", "anuvad.cli.main", "evaluate", "--model",
                     str(model_file), "--source", str(dev / source), "--references",
                     str(dev / reference), "--device", call.device, "--json", "--no-progress",
                     "--write-hypotheses", str(self.folder / "ntrex128.hyp")],
                    stdout=handle, stderr=subprocess.DEVNULL, timeout=max(call.left(), 5),
                    check=False,
                )  # fmt: skip
                scored = done.returncode == 0
            except subprocess.TimeoutExpired:
                scored = False  # the model came back; it is scored where it lands
        if scored:
            self.report["ntrex128"] = json.loads(scores.read_text(encoding="utf-8"))
        self.timed("export_and_score_s", scored, started)


def pack_logs(runs: list[LaneRun], out: Path) -> None:
    """Every lane's log, training log, metrics and dev scores into out/logs.tgz."""
    with tarfile.open(out / "logs.tgz", "w:gz") as tar:
        for run in runs:
            for name in ("lane.log", "run/train.log", "run/metrics.jsonl", "ntrex128.json",
                         "ntrex128.hyp"):  # fmt: skip
                path = run.folder / name
                if path.is_file():
                    tar.add(path, arcname=f"{run.lane.name}/{path.name}")
        tar.add(out / "lanes.json", arcname="lanes.json")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=8.8, help="this call's wall clock")
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("ANUVAD_DATA", "../shared/data"))
    )
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "runs/gpu-out")))
    parser.add_argument("--work", type=Path, default=Path("runs/gpu-lanes"))
    parser.add_argument("--configs", type=Path, default=Path("configs"), help="the recipes")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--lanes",
        nargs="*",
        default=["hien-r9", "enhi-r10"],
        choices=list(lanes()),
    )
    parser.add_argument(
        "--reserve", type=float, default=180.0,
        help="seconds of the call not given to the training loop: data preparation (~70 s for "
        "the d256 recipes on the lent machine), the final validation, export and scoring",
    )  # fmt: skip
    parser.add_argument("--bt-max-tokens", type=int, default=24000, help="source tokens a batch")
    parser.add_argument("--mono-lines", type=int, default=0, help="lines per mono file (0: all)")
    parser.add_argument(
        "--set", nargs="*", default=["data.max_tokens=8192", "train.lr_scale=0.3",
                                     "train.save_every=200", "train.keep_last=20",
                                     "train.valid_every=1000"],
        help="training settings for every lane (key=value)",
    )  # fmt: skip
    args = parser.parse_args()
    os.environ["ANUVAD_DATA"] = str(args.data.resolve())
    call = Call(
        args.data, args.work, args.out, args.configs, args.device,
        time.monotonic() + 60 * args.minutes, args.reserve, args.bt_max_tokens, args.mono_lines,
        tuple(args.set),
    )  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    table = lanes()
    if len(args.lanes) > MAX_LANES:
        parser.error(f"--lanes: at most {MAX_LANES} (a lent machine returns at most 8 files)")
    for name in args.lanes:  # before any GPU time is spent
        synthetic_settings(args.configs / table[name].config, table[name])
        if not carried(table[name]) and not list(
            SHIPPED.glob(f"{table[name].back_translator}_*.pt")
        ):
            parser.error(f"lane {name}: no {table[name].back_translator}_*.pt in {SHIPPED}")
    runs = [LaneRun(table[name], call) for name in args.lanes]
    threads = [threading.Thread(target=run.run, name=run.lane.name) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = {run.lane.name: run.report for run in runs}
    (args.out / "lanes.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    pack_logs(runs, args.out)
    print(json.dumps(report, indent=2))
    return 0 if all("model" in run.report for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
