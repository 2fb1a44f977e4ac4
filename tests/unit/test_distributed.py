"""Process-group set-up: a clear error where torchrun starts more GPU ranks than GPUs; how a
worker process ends."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from anuvad.distributed import init_distributed
from anuvad.errors import TrainingError


def test_more_gpu_ranks_than_gpus_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # torchrun --nproc-per-node 2 on a one-GPU machine: NCCL would fail with "Duplicate GPU".
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(TrainingError, match=r"--nproc-per-node 1 or set train\.device=cpu"):
        init_distributed("cuda")


def test_a_single_cpu_process_needs_no_process_group(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    context = init_distributed("cpu")
    assert (context.rank, context.world_size, context.device.type) == (0, 1, "cpu")
    assert not context.enabled and context.is_main


WORKER_END = """
import atexit, sys
from anuvad import distributed
from anuvad.cli import main
if sys.argv[1] == "joined":
    distributed._joined = True  # as init_distributed sets it under torchrun
atexit.register(lambda: print("finalized"))
print("the last line", end="")
sys.stderr.write("a warning")
main._end_worker(3)
print("not reached")
"""


@pytest.mark.parametrize("group", ["joined", "alone"])
def test_a_torchrun_worker_ends_with_its_code_and_its_output_flushed(group: str) -> None:
    # A worker that joined torchrun's group skips the interpreter's finalization (where gloo's
    # threads could abort it after its work was done); WORLD_SIZE alone changes nothing (a
    # command that never joined, or a test calling main() in its own process).
    env = {**os.environ, "WORLD_SIZE": "2"}
    result = subprocess.run(
        [sys.executable, "-c", WORKER_END, group],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.stderr.startswith("a warning")
    if group == "joined":
        assert (result.returncode, result.stdout) == (3, "the last line")
    else:
        assert (result.returncode, result.stdout) == (0, "the last linenot reached\nfinalized\n")


def test_cuda_without_a_gpu_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(TrainingError, match=r"no CUDA GPU is usable here .* train\.device=cpu"):
        init_distributed("cuda")
