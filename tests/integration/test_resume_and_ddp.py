"""Exact resume after SIGKILL, and DDP with 2 gloo processes = 1 process with the same batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from anuvad.training.state import list_checkpoints, load_training_state
from conftest import write_run_config

REPO = Path(__file__).resolve().parents[2]
ANUVAD = [sys.executable, "-m", "anuvad.cli.main"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
WORKER = str(Path(__file__).with_name("train_worker.py"))


def train(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*ANUVAD, "train", "--no-progress", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def final_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_training_state(list_checkpoints(run_dir)[-1]).model


def kill_at(
    step: int, command: list[str], config: Path, data: Path, run_dir: Path, *overrides: str
) -> int:
    """Train with ``command`` (python, or torchrun) until update ``step``, where the run SIGKILLs
    its whole process group (its own session); returns the exit status (-9)."""
    process = subprocess.run(
        [*command, WORKER, str(config), str(data), str(run_dir), "--kill-at-step", str(step),
         *overrides],
        cwd=run_dir.parent, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"}, start_new_session=True,
    )  # fmt: skip
    assert process.returncode == -signal.SIGKILL, process.stderr[-3000:]
    return process.returncode


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_to_identical_weights(tmp_path: Path) -> None:
    settings = {"max_steps": 60, "save_every": 10, "valid_every": 25, "keep_last": 3}
    config = write_run_config(tmp_path, **settings, average_last=3)
    data = tmp_path / "prepared"
    subprocess.run([*ANUVAD, "prepare", "--config", str(config), "--out", str(data)], check=True)

    # Uninterrupted reference run.
    train("--config", str(config), "--data", str(data), "--run-dir", "straight", cwd=tmp_path)

    # The same run, killed with SIGKILL at update 23 (checkpoint 20 written, 3 updates lost).
    killed = tmp_path / "killed"
    assert kill_at(23, [sys.executable], config, data, killed) == -signal.SIGKILL
    killed_at = max(int(p.stem.split("_")[1]) for p in list_checkpoints(killed))
    assert killed_at == 20
    assert not (killed / "model.pt").exists()

    train("--resume", str(killed), cwd=tmp_path)

    straight, resumed = final_weights(tmp_path / "straight"), final_weights(killed)
    for name, value in straight.items():
        assert torch.equal(value, resumed[name]), f"{name} differs after resume"
    # The averaged model files are identical too.
    a = torch.load(tmp_path / "straight" / "model.pt", weights_only=True)["state_dict"]
    b = torch.load(killed / "model.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_two_gloo_processes_get_the_gradients_of_one_process_with_the_same_global_batch(
    tmp_path: Path,
) -> None:
    """At the paper's Adam epsilon (1e-9), every update of a 2-process run receives the
    gradients that one process accumulating the same two batches computes (no clipping: it
    would hide a wrong scale)."""
    config = write_run_config(tmp_path, max_steps=4, save_every=4, valid_every=0)
    data = tmp_path / "prepared"
    subprocess.run([*ANUVAD, "prepare", "--config", str(config), "--out", str(data)], check=True)
    common = ["model.dropout=0.0", "train.device=cpu", "train.clip_norm=0"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def run(command: list[str], run_dir: str) -> dict[str, Any]:
        out = tmp_path / f"{run_dir}.pt"
        result = subprocess.run(
            [*command, WORKER, str(config), str(data), str(tmp_path / run_dir), "--gradients",
             str(out), *common, *(["train.accumulate=2"] if run_dir == "single" else [])],
            cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        recorded: dict[str, Any] = torch.load(out, weights_only=True)
        return recorded

    single = run([sys.executable], "single")
    ddp = run(TORCHRUN, "ddp")
    assert single["adam_eps"] == ddp["adam_eps"] == 1e-9
    assert len(single["gradients"]) == len(ddp["gradients"]) == 4
    for step, (one, two) in enumerate(zip(single["gradients"], ddp["gradients"], strict=True)):
        assert one.keys() == two.keys()
        for name, grad in one.items():
            assert grad.abs().max() > 0 or name.endswith("bias"), (step, name)
            assert torch.allclose(grad, two[name], rtol=1e-4, atol=1e-7), (step + 1, name)
    # Only rank 0 wrote: one set of checkpoints and logs.
    assert [p.name for p in list_checkpoints(tmp_path / "ddp")] == ["step_00000004.pt"]


def torchrun(*args: str) -> list[str]:
    """``anuvad train`` under torchrun with 2 CPU processes (gloo)."""
    return [*TORCHRUN, "-m", "anuvad.cli.main", "train", *args]


@pytest.mark.slow
def test_two_gloo_processes_killed_with_sigkill_resume_bit_identical(tmp_path: Path) -> None:
    """Dropout on and ranks with batches of different shapes draw different random numbers:
    the resumed run matches only if each rank gets its own random state back."""
    settings = {"max_steps": 40, "save_every": 5, "valid_every": 0, "keep_last": 3}
    config = write_run_config(tmp_path, **settings, average_last=2)
    data = tmp_path / "prepared"
    subprocess.run([*ANUVAD, "prepare", "--config", str(config), "--out", str(data)], check=True)
    common = ["--no-progress", "--config", str(config), "--data", str(data), "train.device=cpu"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def run(*args: str) -> None:
        result = subprocess.run(
            torchrun(*args), cwd=tmp_path, capture_output=True, text=True, timeout=600,
            env=env, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]

    run(*common, "--run-dir", "straight")

    # Killed (launcher and both workers) at update 17: checkpoint 15 written, 2 updates lost.
    killed = tmp_path / "killed"
    overrides = ["train.device=cpu"]
    assert kill_at(17, TORCHRUN, config, data, killed, *overrides) == -signal.SIGKILL
    killed_at = max(int(p.stem.split("_")[1]) for p in list_checkpoints(killed))
    assert killed_at == 15

    run("--no-progress", "--resume", str(killed))

    straight, resumed = final_weights(tmp_path / "straight"), final_weights(killed)
    assert load_training_state(list_checkpoints(killed)[-1]).rng["ranks"][1] is not None
    for name, value in straight.items():
        assert torch.equal(value, resumed[name]), f"{name} differs after resume"
