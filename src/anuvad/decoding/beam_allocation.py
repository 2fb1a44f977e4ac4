"""Dynamic beam allocation (Post & Vilar 2018): at each step of a constrained beam search, the K
beams of a sentence are shared out over the progress banks (how many required tokens a
hypothesis has written, :class:`anuvad.decoding.terms.TermRows`), so hypotheses that have
started a phrase are not crowded out by ones that ignore it."""

from __future__ import annotations

import torch
from torch import Tensor

from anuvad.data.tokenizer import EOS_ID
from anuvad.decoding.terms import NEG_INF, TermRows

__all__ = ["allocate_beams"]


def allocate_beams(
    terms: TermRows,
    candidates: Tensor,
    beam_scores: Tensor,
    top_beams: list[list[int]],
    top_tokens: list[list[int]],
    top_values: list[list[float]],
    k: int,
) -> tuple[list[list[int]], list[list[int]], list[list[float]]]:
    """Dynamic beam allocation (Post & Vilar 2018) for one step of beam search.

    Per sentence, the candidates in the order beam search's selection loop should take them:
    the EOS ones among the K best by score first where they are (they end hypotheses), then the
    K beams chosen round-robin over the progress banks, best first within each bank.

    Args:
        terms: the rows' phrase state (B_active*K rows).
        candidates: (B_active*K, V) every continuation's summed log-probability.
        beam_scores: (B_active, K) the beams' log-probabilities (-inf: a dead beam).
        top_beams: per sentence, the beams of its 2K best continuations.
        top_tokens: their tokens.
        top_values: their summed log-probabilities.
        k: the beam size.

    Returns:
        Per sentence, (beams, tokens, values) of the candidates in that order.
    """
    num_active = beam_scores.size(0)
    live = (beam_scores > NEG_INF).tolist()  # (B_active, K)
    best = candidates.argmax(dim=-1).tolist()  # (B_active*K,) each row's best token
    extra_rows: list[int] = []
    extra_tokens: list[int] = []
    for i in range(num_active):
        for j in range(k):
            if live[i][j]:
                row = i * k + j
                for token in {best[row], *terms.wanted(row)}:
                    extra_rows.append(row)
                    extra_tokens.append(token)
    extra_values = (
        candidates[torch.tensor(extra_rows), torch.tensor(extra_tokens)].tolist()
        if extra_rows
        else []
    )
    pool: list[dict[tuple[int, int], float]] = [{} for _ in range(num_active)]
    for i in range(num_active):
        for beam, token, value in zip(top_beams[i], top_tokens[i], top_values[i], strict=True):
            if value > NEG_INF:
                pool[i][(beam, token)] = value
    for row, token, value in zip(extra_rows, extra_tokens, extra_values, strict=True):
        if value > NEG_INF:
            pool[row // k][(row % k, token)] = value

    beams_out: list[list[int]] = []
    tokens_out: list[list[int]] = []
    values_out: list[list[float]] = []
    for i in range(num_active):
        ranked = sorted(pool[i].items(), key=lambda item: -item[1])
        ending = [(b, t, v) for rank, ((b, t), v) in enumerate(ranked) if t == EOS_ID and rank < k]
        banks: dict[int, list[tuple[int, int, float]]] = {}
        for (beam, token), value in ranked:
            if token != EOS_ID:
                bank = terms.progress_after(i * k + beam, token)
                banks.setdefault(bank, []).append((beam, token, value))
        chosen: list[tuple[int, int, float]] = []
        order = sorted(banks, reverse=True)
        while len(chosen) < k and any(banks[b] for b in order):
            for bank in order:
                if banks[bank] and len(chosen) < k:
                    chosen.append(banks[bank].pop(0))
        chosen.sort(key=lambda c: -c[2])
        # EOS candidates first, then the beams: the loop ends hypotheses, then fills K beams.
        merged = ending + chosen
        beams_out.append([b for b, _, _ in merged])
        tokens_out.append([t for _, t, _ in merged])
        values_out.append([v for _, _, v in merged])
    return beams_out, tokens_out, values_out
