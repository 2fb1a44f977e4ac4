"""The one "auto" device rule: the first CUDA device when there is one, else the CPU."""

from __future__ import annotations

import torch


def resolve_device(name: str) -> torch.device:
    """``"auto"`` → the first CUDA device when there is one, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def prefer_shape_free_attention(device: torch.device) -> None:
    """On CUDA, leave cuDNN out of ``scaled_dot_product_attention`` (flash / memory-efficient
    kernels take its place; the numbers are the same up to float rounding).

    cuDNN builds an execution plan for every batch shape it has not seen: measured on a lent
    H200 (bench/gpu_first_shapes.py, d256 3+3, bf16, 8,192-token batches), a training step on a
    first-seen shape took 445 ms against 30.5 ms for the same shape again, 84 % of the CPU time
    in ``_cudnn_attention_forward/backward``. Training batches vary in shape, so the whole first
    epoch of a run went at 15k-30k target tokens/s instead of ~215k."""
    if device.type == "cuda":
        torch.backends.cuda.enable_cudnn_sdp(False)
