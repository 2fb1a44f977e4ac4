"""Adam with the paper's settings and its warmup / inverse-square-root schedule (section 5.3)."""

from __future__ import annotations

from torch import nn, optim

from anuvad.config import TrainConfig


def noam_learning_rate(step: int, d_model: int, warmup_steps: int, scale: float = 1.0) -> float:
    """lrate = scale * d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)  (equation 3).

    Args:
        step: the 1-based number of the update about to be made (step 0 gets rate 0).
        d_model: the model width.
        warmup_steps: steps of linear increase (4,000 in the paper).
        scale: a constant factor (1.0 in the paper).
    """
    if step <= 0:
        return 0.0
    return float(scale * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5))


def build_optimizer(model: nn.Module, config: TrainConfig) -> optim.Adam:
    """Adam(beta1 0.9, beta2 0.98, eps 1e-9) over every trainable parameter.

    The learning rate is set before every update by :func:`set_learning_rate`; optional
    weight decay (not in the paper) skips biases and LayerNorm gains.
    """
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if param.ndim < 2 or "norm" in name else decay).append(param)
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    # The multi-tensor implementation: one kernel per step for all parameters, on CPU and GPU.
    return optim.Adam(
        groups,
        lr=0.0,
        betas=(config.adam_beta1, config.adam_beta2),
        eps=config.adam_eps,
        foreach=True,
    )


def set_learning_rate(optimizer: optim.Optimizer, lr: float) -> None:
    """Set the same learning rate on every parameter group."""
    for group in optimizer.param_groups:
        group["lr"] = lr
