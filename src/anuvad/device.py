"""The one "auto" device rule: the first CUDA device when there is one, else the CPU."""

from __future__ import annotations

import torch


def resolve_device(name: str) -> torch.device:
    """``"auto"`` → the first CUDA device when there is one, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
