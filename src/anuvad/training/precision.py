"""Mixed precision: which precision to train in, and the autocast context for a forward pass."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

import torch

from anuvad.config import ExperimentConfig


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bf16 in hardware (AVX-512-BF16 or AMX).

    Without either, PyTorch falls back to a reference gemm and bf16 matmuls run 40-100x slower
    than fp32 (measured on an AVX2 machine, docs/benchmark-history.md); with AVX-512-BF16 they
    ran 8x faster than fp32 here.
    """
    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)


def resolve_precision(precision: str, device: torch.device) -> str:
    """``train.precision`` with ``auto`` decided for ``device``; other values pass through.

    ``auto`` is bf16 where the hardware computes it natively (a CUDA GPU with bf16, a CPU with
    AVX-512-BF16 or AMX) and fp32 everywhere else.
    """
    if precision != "auto":
        return precision
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    if device.type == "cpu":
        return "bf16" if cpu_has_native_bf16() else "fp32"
    return "fp32"


def with_precision(config: ExperimentConfig, device: torch.device) -> ExperimentConfig:
    """The config with ``train.precision`` resolved for ``device`` (see :func:`resolve_precision`),
    so that the run folder records, and a resumed run keeps, the precision actually used."""
    precision = resolve_precision(config.train.precision, device)
    return dataclasses.replace(config, train=dataclasses.replace(config.train, precision=precision))


def autocast_context(
    device: torch.device, precision: str
) -> contextlib.AbstractContextManager[Any]:
    """bf16/fp16 autocast on ``device``, or nothing for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.type, dtype=dtype)


def explicit_attention_pays(device: torch.device, precision: str) -> bool:
    """Whether training should compute attention as the explicit softmax(Q K^T / sqrt(d)) V.

    On a CPU, PyTorch's fused attention backward in bf16/fp16 is 5-10x slower than the explicit
    product for sentence-length keys (48 against 7 ms for 128 x 8 heads x 32 x 32, even at 256
    keys; docs/benchmark-history.md, "Training throughput"), so CPU low-precision training uses
    it for every batch (sentences longer than 256 pieces were not measured: their (T, L) score
    matrices cost more memory on this path). fp32 and GPUs keep the fused kernel, and
    validation and inference always do.
    """
    return device.type == "cpu" and precision in ("bf16", "fp16")
