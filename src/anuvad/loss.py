"""Label-smoothed cross-entropy per non-padding target token (section 5.4, epsilon_ls = 0.1)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from anuvad.tokenizer import PAD_ID


def label_smoothed_loss(
    logits: Tensor, target_ids: Tensor, label_smoothing: float, pad_id: int = PAD_ID
) -> Tensor:
    """Summed label-smoothed cross-entropy over the non-padding targets (what training needs).

    The smoothing mass is spread uniformly over the vocabulary, as PyTorch's
    ``cross_entropy(label_smoothing=...)`` does; padding targets contribute nothing.

    Args:
        logits: (B, T, V) decoder scores (any float dtype; computed in float32).
        target_ids: (B, T) gold next tokens, ``pad_id`` where there is none.
        label_smoothing: epsilon_ls in [0, 1).
        pad_id: the id ignored in the loss.

    Returns:
        The summed loss, a scalar; divide by the number of non-padding targets for the
        per-token average the trainer optimises.
    """
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)).float(),  # (B*T, V)
        target_ids.reshape(-1),  # (B*T,)
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
        reduction="sum",
    )


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
