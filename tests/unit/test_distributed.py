"""Process-group set-up: a clear error where torchrun starts more GPU ranks than GPUs."""

from __future__ import annotations

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
    with pytest.raises(TrainingError, match=r"--nproc-per-node 1 or set train\.device=cpu"):
        init_distributed("cuda")


def test_a_single_cpu_process_needs_no_process_group(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    context = init_distributed("cpu")
    assert (context.rank, context.world_size, context.device.type) == (0, 1, "cpu")
    assert not context.enabled and context.is_main
