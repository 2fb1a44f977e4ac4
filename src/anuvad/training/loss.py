"""Label-smoothed cross-entropy per non-padding target token (section 5.4, epsilon_ls = 0.1).

Training uses a fused implementation: the (N, V) logits are walked in row blocks that fit in
cache, and each block's loss and its gradient (softmax minus the smoothed target) are computed
together in float32, the gradient stored in the logits' dtype. ``F.cross_entropy`` instead
materialises a float32 copy of the logits, their log-softmax, a zero-filled NLL gradient and a
smoothing gradient, and adds the two: four full (N, V) float32 passes more, which on a CPU cost
more than the output projection itself (docs/benchmark-history.md, "Training throughput").
Same formula, same result up to float rounding (tests/unit/training/test_loss_optim.py).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from anuvad.data.tokenizer import PAD_ID

BLOCK_ELEMENTS = 1 << 20  # float32 elements per row block: 4 MiB, a core's share of L2/L3


class _FusedLabelSmoothedCE(torch.autograd.Function):
    """sum_i [lse_i - (1 - eps) x_{i,t_i} - eps/V sum_v x_{i,v}] over non-padding rows i.

    Its gradient with respect to row i is softmax(x_i) - (1 - eps) onehot(t_i) - eps/V (zero on
    padding rows); it is computed in the forward pass, block by block, and scaled by the
    incoming gradient in the backward pass.
    """

    @staticmethod
    def forward(ctx: Any, logits: Tensor, targets: Tensor, eps: float, pad_id: int) -> Tensor:
        rows, vocab = logits.shape  # (N, V), (N,)
        keep = targets != pad_id  # (N,)
        safe_targets = targets.masked_fill(~keep, 0)[:, None]  # (N, 1)
        gold = logits.gather(1, safe_targets).float()  # (N, 1)
        grad = torch.empty_like(logits) if ctx.needs_input_grad[0] else None  # (N, V)
        lse = torch.empty((rows, 1), dtype=torch.float32, device=logits.device)  # (N, 1)
        mean = torch.empty((rows, 1), dtype=torch.float32, device=logits.device)  # (N, 1)
        block = max(1, BLOCK_ELEMENTS // vocab)
        for start in range(0, rows, block):
            x = logits[start : start + block]  # (b, V), read in its own dtype
            probs = torch.softmax(x, dim=-1, dtype=torch.float32)  # (b, V)
            # log-sum-exp from the softmax at the row maximum (p >= 1/V there, no underflow):
            # one exponential pass instead of two.
            peak = x.amax(dim=-1, keepdim=True).float()  # (b, 1)
            lse[start : start + block] = peak - probs.amax(dim=-1, keepdim=True).log()
            mean[start : start + block] = x.sum(dim=-1, keepdim=True, dtype=torch.float32) / vocab
            if grad is not None:
                probs.sub_(eps / vocab)
                target_block = safe_targets[start : start + block]  # (b, 1)
                probs.scatter_add_(1, target_block, torch.full_like(peak, eps - 1))
                grad[start : start + block].copy_(probs)
        row_loss = lse - (1 - eps) * gold - eps * mean  # (N, 1)
        if grad is not None:
            grad.index_fill_(0, (~keep).nonzero().squeeze(1), 0.0)  # only the padding rows
        ctx.save_for_backward(grad)
        ctx.used = False
        return row_loss.squeeze(1).masked_fill(~keep, 0.0).sum()

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple[Tensor | None, None, None, None]:
        if ctx.used:
            raise RuntimeError(
                "label_smoothed_loss supports one backward pass per forward pass (its gradient "
                "is scaled in place); recompute the loss instead of retain_graph=True"
            )
        ctx.used = True
        (grad,) = ctx.saved_tensors
        # In place: a fresh (N, V) tensor would cost more in page faults than the multiply.
        return grad.mul_(grad_output.to(grad.dtype)), None, None, None


def label_smoothed_loss(
    logits: Tensor, target_ids: Tensor, label_smoothing: float, pad_id: int = PAD_ID
) -> Tensor:
    """Summed label-smoothed cross-entropy over the non-padding targets (what training needs).

    The smoothing mass is spread uniformly over the vocabulary, as PyTorch's
    ``cross_entropy(label_smoothing=...)`` does; padding targets contribute nothing. The value
    and its gradient equal ``F.cross_entropy(logits.float(), ..., reduction="sum")``'s up to
    float rounding, in fewer passes over memory (see the module docstring).

    Args:
        logits: (B, T, V) decoder scores (any float dtype; computed in float32).
        target_ids: (B, T) gold next tokens, ``pad_id`` where there is none.
        label_smoothing: epsilon_ls in [0, 1).
        pad_id: the id ignored in the loss.

    Returns:
        The summed loss, a float32 scalar; divide by the number of non-padding targets for the
        per-token average the trainer optimises.
    """
    flat = logits.reshape(-1, logits.size(-1))  # (B*T, V)
    targets = target_ids.reshape(-1)  # (B*T,)
    loss: Tensor = _FusedLabelSmoothedCE.apply(  # type: ignore[no-untyped-call]
        flat, targets, label_smoothing, pad_id
    )
    return loss


def label_smoothed_nll(
    logits: Tensor, target_ids: Tensor, label_smoothing: float, pad_id: int = PAD_ID
) -> tuple[Tensor, Tensor, int]:
    """:func:`label_smoothed_loss` plus the plain NLL and the token count (for validation).

    Returns:
        (smoothed loss sum, NLL sum, number of non-padding target tokens).
    """
    loss = label_smoothed_loss(logits, target_ids, label_smoothing, pad_id)
    nll = (
        F.cross_entropy(
            logits.detach().reshape(-1, logits.size(-1)).float(),
            target_ids.reshape(-1),
            ignore_index=pad_id,
            reduction="sum",
        )
        if label_smoothing > 0
        else loss.detach()
    )
    num_tokens = int((target_ids != pad_id).sum())
    return loss, nll, num_tokens
