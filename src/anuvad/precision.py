"""Mixed precision: the autocast context for a training or validation forward pass."""

from __future__ import annotations

import contextlib
from typing import Any

import torch


def autocast_context(
    device: torch.device, precision: str
) -> contextlib.AbstractContextManager[Any]:
    """bf16/fp16 autocast on ``device``, or nothing for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.type, dtype=dtype)
