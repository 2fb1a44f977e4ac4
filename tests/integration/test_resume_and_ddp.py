"""Exact resume after SIGKILL, and DDP with 2 gloo processes = 1 process with the same batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from anuvad.data.synthetic import write_reversal_corpus
from anuvad.training.state import list_checkpoints, load_training_state

REPO = Path(__file__).resolve().parents[2]
ANUVAD = [sys.executable, "-m", "anuvad.cli.main"]


def write_config(tmp: Path, **train: object) -> Path:
    """The tiny preset on a small reversal corpus, with dropout on (resume must restore RNG)."""
    corpus_train, corpus_valid = write_reversal_corpus(tmp / "corpus", 3000, 20, seed=7)
    data = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))
    data["model"]["dropout"] = 0.1
    data["data"]["train"] = [{"name": "t", "src": corpus_train.src, "tgt": corpus_train.tgt}]
    data["data"]["valid"] = [{"name": "v", "src": corpus_valid.src, "tgt": corpus_valid.tgt}]
    data["data"]["max_tokens"] = 600
    data["train"].update(
        {
            "max_minutes": 0,
            "num_threads": 1,
            "valid_bleu_max_sentences": 10,
            "log_every": 5,
            **train,
        }
    )
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


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


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_to_identical_weights(tmp_path: Path) -> None:
    settings = {"max_steps": 60, "save_every": 10, "valid_every": 25, "keep_last": 3}
    config = write_config(tmp_path, **settings, average_last=3)
    data = tmp_path / "prepared"
    subprocess.run([*ANUVAD, "prepare", "--config", str(config), "--out", str(data)], check=True)

    # Uninterrupted reference run.
    train("--config", str(config), "--data", str(data), "--run-dir", "straight", cwd=tmp_path)

    # The same run, killed with SIGKILL once it has written a checkpoint past step 20.
    killed = tmp_path / "killed"
    process = subprocess.Popen(
        [
            *ANUVAD,
            "train",
            "--no-progress",
            "--config",
            str(config),
            "--data",
            str(data),
            "--run-dir",
            str(killed),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        steps = [int(p.stem.split("_")[1]) for p in list_checkpoints(killed)]
        if steps and max(steps) >= 20:
            break
        time.sleep(0.05)
    assert process.poll() is None, "training finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = max(int(p.stem.split("_")[1]) for p in list_checkpoints(killed))
    assert 20 <= killed_at < 60
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
def test_two_gloo_processes_equal_one_process_with_the_same_global_batch(tmp_path: Path) -> None:
    # Adam divides by sqrt(v) + eps, which turns rounding noise in (mathematically) zero
    # gradients into full-size steps; a large eps keeps the comparison about the gradients.
    settings = {"max_steps": 5, "save_every": 5, "valid_every": 0, "adam_eps": 1e-3}
    config = write_config(tmp_path, **settings)
    data = tmp_path / "prepared"
    subprocess.run([*ANUVAD, "prepare", "--config", str(config), "--out", str(data)], check=True)
    common = ["--config", str(config), "--data", str(data), "model.dropout=0.0", "train.device=cpu"]
    train(*common, "--run-dir", "single", "train.accumulate=2", cwd=tmp_path)
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    result = subprocess.run(
        [
            *launcher,
            "--nproc-per-node",
            "2",
            "-m",
            "anuvad.cli.main",
            "train",
            "--no-progress",
            *common,
            "--run-dir",
            "ddp",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    single, ddp = final_weights(tmp_path / "single"), final_weights(tmp_path / "ddp")
    for name, value in single.items():
        assert torch.allclose(value, ddp[name], rtol=1e-4, atol=1e-6), name
    # Only rank 0 wrote: one set of checkpoints and logs.
    assert [p.name for p in list_checkpoints(tmp_path / "ddp")] == ["step_00000005.pt"]


def torchrun(*args: str) -> list[str]:
    """``anuvad train`` under torchrun with 2 CPU processes (gloo)."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    return [*launcher, "--nproc-per-node", "2", "-m", "anuvad.cli.main", "train", *args]


@pytest.mark.slow
def test_two_gloo_processes_killed_with_sigkill_resume_bit_identical(tmp_path: Path) -> None:
    """Dropout on and ranks with batches of different shapes draw different random numbers:
    the resumed run matches only if each rank gets its own random state back."""
    settings = {"max_steps": 40, "save_every": 5, "valid_every": 0, "keep_last": 3}
    config = write_config(tmp_path, **settings, average_last=2)
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

    killed = tmp_path / "killed"
    launcher = subprocess.Popen(
        torchrun(*common, "--run-dir", str(killed)),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # its own process group: the kill takes the workers too
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and launcher.poll() is None:
        if any(int(p.stem.split("_")[1]) >= 15 for p in list_checkpoints(killed)):
            break
        time.sleep(0.05)
    assert launcher.poll() is None, "training finished before it could be killed"
    os.killpg(launcher.pid, signal.SIGKILL)
    launcher.wait()
    killed_at = max(int(p.stem.split("_")[1]) for p in list_checkpoints(killed))
    assert 15 <= killed_at < 40

    run("--no-progress", "--resume", str(killed))

    straight, resumed = final_weights(tmp_path / "straight"), final_weights(killed)
    assert load_training_state(list_checkpoints(killed)[-1]).rng["ranks"][1] is not None
    for name, value in straight.items():
        assert torch.equal(value, resumed[name]), f"{name} differs after resume"
