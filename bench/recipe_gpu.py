"""Issue 39's whole recipe in one command, for a lent GPU (``make train-gpu``): each call runs
the stages it can within ``--minutes`` and stops; the next call on the same machine continues
(finished stages are skipped, an interrupted training run resumes exactly from its last
checkpoint). Every finished model and its dev scores land in ``--out`` ($OUT).

Stages (each one an ``anuvad`` command; a stage is done when its marker file exists):

1. ``bt-en``: English news (WMT newstest, BBC) back-translated into Hindi by the shipped
   English→Hindi model (greedy, no 4-gram twice) → ``data/synthetic/bt-{wmt,bbc}.*``.
2. ``hien``: configs/hien_bt_d256_L3.yaml continued from the newest shipped Hindi→English model
   (Reuters left out: the pack that travels stays small), trained ``--hien-minutes`` of GPU time
   (the recipe's CPU limit does not apply), averaged.
3. ``hien-eval``: the averaged model exported (float16) into ``--out`` and scored on NTREX-128
   (``ntrex128.json``, ``ntrex128.hyp``); a model over ``--part-mib`` comes back in parts (a
   lent machine returns files up to 16 MiB): ``cat NAME.pt.part* > NAME.pt``.
4. ``bt-hi``: all punctuated monolingual Hindi back-translated by that model →
   ``data/synthetic/bt-hi.*``.
5. ``enhi`` and ``enhi-eval``: configs/enhi_bt_d256_L3.yaml in the same way, continued from the
   newest shipped English→Hindi model.

On the device (its python3 has torch; the wheels and data pack travel in .gpu/, ``make
gpu-pack`` builds them here)::

    make train-gpu          # = python3 bench/recipe_gpu.py --minutes 8.5 --out $OUT

``--only STAGE ...`` runs some stages (e.g. ``--only enhi enhi-eval`` where the synthetic data
travelled in the pack); two such calls with other ``--work`` and ``--out`` folders train both
directions side by side on one GPU.

The stages are plain commands, so on a CPU machine the same script runs the recipe slowly
(``--device cpu``); tests/integration/test_recipe_gpu.py runs it there on tiny configs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MONO_EN = ("wmt-newstest-en", "bbc-news-2005")
MONO_HI = (
    "bbc-news", "covid-news-2020", "discourse-stories", "hdtb-full-news-conv",
    "hdtb-ssf-news-tourism", "hdtb-wx-pos-general", "hiner-news-tourism", "hiwiki-40articles",
    "hiwiki-sample", "ijcnlp08-ner-general", "ilci-health-tourism", "ilner-general",
    "mann-ki-baat-speech",
)  # fmt: skip
SHIPPED = Path("data/trained_models")


@dataclass(frozen=True)
class Recipe:
    """What one call runs, and where."""

    data: Path  # the data root (ANUVAD_DATA)
    work: Path  # run folders and stage markers (kept between calls on the same machine)
    out: Path  # finished models and scores
    device: str
    deadline: float  # time.monotonic() by which this call ends
    hien_config: str
    enhi_config: str
    hien_minutes: float
    enhi_minutes: float
    mono_lines: int  # lines per monolingual file (0: all)
    overrides: tuple[str, ...]  # applied to both training runs (e.g. a tiny test's)
    hien_extra: tuple[str, ...]  # applied to the Hindi->English run only
    part_mib: float  # a model larger than this comes back in parts

    def left(self) -> float:
        """Seconds left in this call."""
        return self.deadline - time.monotonic()


def anuvad(*args: str, timeout: float | None = None, stdout: Path | None = None) -> bool:
    """Run one ``anuvad`` command (its output also into ``stdout``); False when it ran out of
    ``timeout`` (killed; it resumes)."""
    command = [sys.executable, "-m", "anuvad.cli.main", *args]
    print("+ anuvad " + " ".join(args), flush=True)
    try:
        if stdout is None:
            subprocess.run(command, check=True, timeout=timeout)
        else:
            done = subprocess.run(
                command, check=True, timeout=timeout, capture_output=True, text=True
            )
            stdout.write_text(done.stdout, encoding="utf-8")
            print(done.stdout + done.stderr, flush=True)
    except subprocess.TimeoutExpired:
        print("  stopped at this call's deadline; the next call continues", flush=True)
        return False
    return True


def shipped(pair: str) -> Path:
    """The newest shipped model of ``pair`` ("enhi", "hien")."""
    return sorted(SHIPPED.glob(f"{pair}_*.pt"))[-1]


def continue_shipped(pair: str) -> tuple[str, ...]:
    """``train.init_from`` = the newest shipped model of ``pair``, where there is one: a run
    continues the last committed weights (on a fresh machine, those are all there is)."""
    found = sorted(SHIPPED.glob(f"{pair}_*.pt"))
    return (f"train.init_from={found[-1]}",) if found else ()


def backtranslate(recipe: Recipe, model: Path, files: list[Path], prefix: str) -> bool:
    lines = ["--max-lines", str(recipe.mono_lines)] if recipe.mono_lines else []
    return anuvad(
        "backtranslate", "--model", str(model), "--device", recipe.device, "--no-progress",
        "--input", *map(str, files), "--out-prefix", f"data/synthetic/{prefix}",
        "--beam-size", "1", "--no-repeat-ngram-size", "4", *lines,
        timeout=recipe.left(),
    )  # fmt: skip


def train(recipe: Recipe, config: str, name: str, minutes: float, extra: tuple[str, ...]) -> bool:
    """Train ``config`` (its data prepared first) for ``minutes`` of training time in all,
    resuming the run an earlier call on this machine left."""
    run_dir, data_dir = recipe.work / name, recipe.work / f"{name}-data"
    settings = (
        f"train.device={recipe.device}", f"train.max_minutes={minutes}", "train.max_steps=0",
        *recipe.overrides, *extra,
    )  # fmt: skip
    where = ["--data", str(data_dir), "--no-progress"]
    if (run_dir / "checkpoints").is_dir():
        return anuvad("train", "--resume", str(run_dir), *where, *settings, timeout=recipe.left())
    return anuvad(
        "train", "--config", config, "--run-dir", str(run_dir), *where, *settings,
        timeout=recipe.left(),
    )  # fmt: skip


def export_and_score(recipe: Recipe, name: str, source: str, reference: str) -> bool:
    """The run's averaged model exported (float16), its NTREX-128 dev scores and hypotheses in
    ``out/name``, and the model beside them (in parts of at most ``part_mib`` where it is
    larger: ``cat NAME.pt.part* > NAME.pt`` joins them)."""
    folder, models = recipe.out / name, recipe.work / f"{name}-model"
    for old in (folder, models):
        if old.exists():
            shutil.rmtree(old)
        old.mkdir(parents=True)
    if not anuvad(
        "export", str(recipe.work / name / "model.pt"), "--dtype", "float16", "--out", str(models)
    ):
        return False
    model = exported(recipe, name)
    dev = recipe.data / "en-hi/dev-general"
    scored = anuvad(
        "evaluate", "--model", str(model), "--source", str(dev / source), "--references",
        str(dev / reference), "--device", recipe.device, "--json", "--no-progress",
        "--write-hypotheses", str(folder / "ntrex128.hyp"), timeout=recipe.left(),
        stdout=folder / "ntrex128.json",
    )  # fmt: skip
    deliver(model, folder, recipe.part_mib)
    return scored


def deliver(model: Path, folder: Path, part_mib: float) -> None:
    """Copy ``model`` into ``folder``, split into numbered parts of at most ``part_mib`` MiB
    when it is larger (a lent machine returns files up to a size)."""
    data, size = model.read_bytes(), int(part_mib * 2**20)
    if len(data) <= size:
        shutil.copy(model, folder / model.name)
        return
    for index, start in enumerate(range(0, len(data), size)):
        (folder / f"{model.name}.part{index}").write_bytes(data[start : start + size])


def exported(recipe: Recipe, name: str) -> Path:
    (model,) = (recipe.work / f"{name}-model").glob("*.pt")
    return model


def stages(recipe: Recipe) -> list[tuple[str, Callable[[], bool]]]:
    """The recipe in order: (name, run it → finished?)."""
    en = [recipe.data / f"en-hi/mono-en/{name}.en.gz" for name in MONO_EN]
    hi = [recipe.data / f"en-hi/mono-hi/{name}.hi.gz" for name in MONO_HI]
    return [
        ("bt-en-wmt", lambda: backtranslate(recipe, shipped("enhi"), en[:1], "bt-wmt")),
        ("bt-en-bbc", lambda: backtranslate(recipe, shipped("enhi"), en[1:], "bt-bbc")),
        (
            "hien",
            lambda: train(
                recipe,
                recipe.hien_config,
                "hien",
                recipe.hien_minutes,
                (*continue_shipped("hien"), *recipe.hien_extra),
            ),
        ),
        ("hien-eval", lambda: export_and_score(recipe, "hien", "ntrex128.hi", "ntrex128.en")),
        ("bt-hi", lambda: backtranslate(recipe, exported(recipe, "hien"), hi, "bt-hi")),
        (
            "enhi",
            lambda: train(
                recipe, recipe.enhi_config, "enhi", recipe.enhi_minutes, continue_shipped("enhi")
            ),
        ),
        ("enhi-eval", lambda: export_and_score(recipe, "enhi", "ntrex128.en", "ntrex128.hi")),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=8.5, help="this call's wall clock")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "runs/gpu-out")))
    parser.add_argument("--work", type=Path, default=Path("runs/gpu"))
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("ANUVAD_DATA", "../shared/data"))
    )
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--hien-config", default="configs/hien_bt_d256_L3.yaml")
    parser.add_argument("--enhi-config", default="configs/enhi_bt_d256_L3.yaml")
    parser.add_argument("--hien-minutes", type=float, default=3.0, help="training time in all")
    parser.add_argument("--enhi-minutes", type=float, default=3.0, help="training time in all")
    parser.add_argument("--mono-lines", type=int, default=0, help="lines per mono file (0: all)")
    parser.add_argument(
        "--hien-extra",
        nargs="*",
        default=["data.train.16.weight=0"],
        help="settings for the Hindi->English run (default: Reuters left out of the pack)",
    )
    parser.add_argument(
        "--only", nargs="*", default=[], help="run only these stages (the others count as done)"
    )
    parser.add_argument(
        "--part-mib", type=float, default=15.0, help="a model larger than this returns in parts"
    )
    parser.add_argument("overrides", nargs="*", help="key=value settings for both trainings")
    args = parser.parse_args()
    os.environ["ANUVAD_DATA"] = str(args.data.resolve())
    recipe = Recipe(
        args.data, args.work, args.out, args.device, time.monotonic() + 60 * args.minutes,
        args.hien_config, args.enhi_config, args.hien_minutes, args.enhi_minutes,
        args.mono_lines, tuple(args.overrides), tuple(args.hien_extra), args.part_mib,
    )  # fmt: skip
    recipe.work.mkdir(parents=True, exist_ok=True)
    recipe.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, float | str] = {}
    known = [name for name, _ in stages(recipe)]
    if unknown := sorted(set(args.only) - set(known)):
        parser.error(f"--only: no stage {', '.join(unknown)}; the stages: {', '.join(known)}")
    for name, run in stages(recipe):
        marker = recipe.work / f"{name}.done"
        if args.only and name not in args.only:
            report[name] = "not asked for (--only)"
            continue
        if marker.exists():
            report[name] = "done earlier"
            continue
        if recipe.left() < 20:
            report[name] = "not started: the call's time is spent"
            break
        started = time.monotonic()
        if not run():
            report[name] = f"stopped after {time.monotonic() - started:.0f} s (resumes next call)"
            break
        marker.write_text("done\n", encoding="utf-8")
        report[name] = round(time.monotonic() - started, 1)
    (recipe.out / "recipe.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
