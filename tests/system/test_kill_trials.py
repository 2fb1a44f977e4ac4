"""Kill-during-save trials: a real training process SIGKILLed again and again at random moments
while it writes a checkpoint every update (and model files and run.json around validations),
resumed each time with the documented command.

After every kill: every checkpoint the run lists loads (no partial file is taken for one),
config.yaml and run.json parse, the killed process group is gone. At the end the resumed run's
weights are bit-identical to an uninterrupted run's. The number of trials is recorded in
docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from anuvad.training.state import list_checkpoints, load_training_state
from conftest import write_run_config

REPO = Path(__file__).resolve().parents[2]
ANUVAD = [sys.executable, "-m", "anuvad.cli.main"]
TRIALS = int(os.environ.get("ANUVAD_KILL_TRIALS", "10"))


def write_config(tmp: Path) -> Path:
    return write_run_config(
        tmp, pairs=2000, max_tokens=400, seed=3, max_steps=300, keep_last=3, average_last=2,
        save_every=1,  # a checkpoint every update: most kills land in or near a write
        valid_every=40,  # model_best.pt and metrics are written now and then
        valid_bleu_max_sentences=5,
    )  # fmt: skip


def run_files_are_whole(run: Path) -> None:
    """What a kill may never leave behind: a listed checkpoint that does not load, or a config
    or run log that does not parse."""
    for checkpoint in list_checkpoints(run):
        load_training_state(checkpoint)
    yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    json.loads((run / "run.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_random_sigkills_during_saves_never_cost_the_run(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    data = tmp_path / "prepared"
    subprocess.run([*ANUVAD, "prepare", "--config", str(config), "--out", str(data)], check=True)
    start = [*ANUVAD, "train", "--no-progress", "--config", str(config), "--data", str(data)]
    subprocess.run([*start, "--run-dir", "straight"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=600)  # fmt: skip

    run = tmp_path / "killed"
    rng = random.Random(2026)
    killed_at: list[int] = []
    for trial in range(TRIALS):
        command = [*start, "--run-dir", str(run)] if trial == 0 else [
            *ANUVAD, "train", "--no-progress", "--resume", str(run)
        ]  # fmt: skip
        before = max((int(p.stem.split("_")[1]) for p in list_checkpoints(run)), default=0)
        process = subprocess.Popen(command, cwd=tmp_path, start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 300
        # Wait for this process' first new checkpoint, then kill at a random moment after it.
        while time.monotonic() < deadline and process.poll() is None:
            steps = [int(p.stem.split("_")[1]) for p in list_checkpoints(run)]
            if steps and max(steps) > before:
                break
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.6))
        assert process.poll() is None, process.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        with pytest.raises(ProcessLookupError):  # nothing of it is left
            os.killpg(process.pid, 0)
        run_files_are_whole(run)
        killed_at.append(max(int(p.stem.split("_")[1]) for p in list_checkpoints(run)))

    assert len(killed_at) == TRIALS and killed_at == sorted(killed_at)
    assert killed_at[-1] < 300, "the run finished before the last trial"
    subprocess.run([*ANUVAD, "train", "--no-progress", "--resume", str(run)], cwd=tmp_path,
                   check=True, capture_output=True, timeout=600)  # fmt: skip

    straight = load_training_state(list_checkpoints(tmp_path / "straight")[-1]).model
    resumed = load_training_state(list_checkpoints(run)[-1]).model
    for name, value in straight.items():
        assert torch.equal(value, resumed[name]), f"{name} differs after {TRIALS} kills"
    a = torch.load(tmp_path / "straight" / "model.pt", weights_only=True)["state_dict"]
    b = torch.load(run / "model.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not list(run.rglob("*.tmp")), "a resumed run removes the temp files of killed saves"
