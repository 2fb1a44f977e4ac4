"""prefer_shape_free_attention: cuDNN's attention is left out on CUDA only; a CPU run leaves the
process's attention backends as they were."""

from __future__ import annotations

import torch

from anuvad.device import prefer_shape_free_attention


def _cudnn() -> bool:
    return bool(torch.backends.cuda.cudnn_sdp_enabled())  # type: ignore[no-untyped-call]


def test_a_cpu_device_leaves_the_backends_alone() -> None:
    before = _cudnn()
    prefer_shape_free_attention(torch.device("cpu"))
    assert _cudnn() == before


def test_a_cuda_device_turns_cudnn_attention_off() -> None:
    before = _cudnn()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        prefer_shape_free_attention(torch.device("cuda"))  # sets a flag; needs no GPU
        assert not _cudnn()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)
