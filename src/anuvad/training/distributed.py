"""Multi-process training with PyTorch DistributedDataParallel, launched by ``torchrun`` (the
process group itself: :mod:`anuvad.distributed`)."""

from __future__ import annotations

from torch import nn
from torch.nn.parallel import DistributedDataParallel

from anuvad.distributed import DistributedContext


def wrap_model(model: nn.Module, context: DistributedContext) -> nn.Module:
    """DistributedDataParallel around ``model`` when several processes train it."""
    if not context.enabled:
        return model
    device_ids = [context.device.index] if context.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)
