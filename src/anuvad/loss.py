"""Label-smoothed cross-entropy per non-padding target token (section 5.4, epsilon_ls = 0.1)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from anuvad.tokenizer import PAD_ID


def label_smoothed_nll(
    logits: Tensor, target_ids: Tensor, label_smoothing: float, pad_id: int = PAD_ID
) -> tuple[Tensor, Tensor, int]:
    """Summed label-smoothed loss and summed plain NLL over the non-padding targets.

    The smoothing mass is spread uniformly over the vocabulary, as PyTorch's
    ``cross_entropy(label_smoothing=...)`` does; padding targets contribute nothing.

    Args:
        logits: (B, T, V) decoder scores (any float dtype; computed in float32).
        target_ids: (B, T) gold next tokens, ``pad_id`` where there is none.
        label_smoothing: epsilon_ls in [0, 1).
        pad_id: the id ignored in the loss.

    Returns:
        (smoothed loss sum, NLL sum, number of non-padding target tokens). Divide by the
        token count for the per-token average the trainer optimises.
    """
    flat_logits = logits.reshape(-1, logits.size(-1)).float()  # (B*T, V)
    flat_targets = target_ids.reshape(-1)  # (B*T,)
    loss = F.cross_entropy(
        flat_logits,
        flat_targets,
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
        reduction="sum",
    )
    nll = (
        F.cross_entropy(flat_logits.detach(), flat_targets, ignore_index=pad_id, reduction="sum")
        if label_smoothing > 0
        else loss.detach()
    )
    num_tokens = int((flat_targets != pad_id).sum())
    return loss, nll, num_tokens
