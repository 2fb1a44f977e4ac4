"""Greedy search (and sampling from the top K, for back-translation), batched: N sentences decode
together and a sentence that has produced EOS leaves the batch (its cache rows are dropped), so
finished sentences cost nothing. The pieces it shares with beam search (step decoders, limits,
the signal recorder) live in :mod:`anuvad.decoding.search`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from anuvad.data.tokenizer import BOS_ID, EOS_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.constraints import ConstraintRows, OutputConstraint
from anuvad.decoding.search import (
    NEG_INF,
    BetweenSteps,
    Hypothesis,
    SignalRecorder,
    check_settings,
    check_stop,
    make_step_decoder,
    output_limits,
    step_log_probs,
)
from anuvad.model.transformer import Transformer


def pick_tokens(
    log_probs: Tensor, top_k: int, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """Each row's next token and its log-probability, (N,) each: the most probable allowed
    token, or with ``top_k`` > 0 one drawn from the ``top_k`` most probable allowed tokens in
    proportion to their probabilities (a row with nothing allowed gets -inf, as with argmax).

    Args:
        log_probs: (N, V) log-probabilities, -inf where a token is not allowed.
        top_k: 0 for the argmax; K > 0 to sample among the K best.
        generator: the random source of the draws.
    """
    if top_k <= 0:
        return log_probs.max(dim=-1)
    values, index = log_probs.topk(min(top_k, log_probs.size(-1)), dim=-1)  # (N, K)
    weights = values.exp()  # (N, K); not allowed: 0
    weights[:, 0] = weights[:, 0].masked_fill(weights.sum(-1) == 0, 1.0)  # nothing allowed
    drawn = torch.multinomial(weights, 1, generator=generator)  # (N, 1)
    return values.gather(1, drawn).squeeze(1), index.gather(1, drawn).squeeze(1)


def _close(
    mask: Tensor,
    allowed: ConstraintRows,
    choice: Tensor,
    active_rows: list[int],
    closing: list[bool],
) -> None:
    """A row whose model would end now (its most likely token, ``choice`` (B_active,), is one
    that ends it for the constraint, :meth:`ConstraintRows.closing`: EOS) while the constraint
    forbids that ends instead by writing what it misses (the rest of a required phrase), then
    EOS, in place on ``mask`` (B_active, V): left to itself it wrote on until the phrase
    fitted, junk around it ("… करें."."-अगजहाँ, ज़ीम यानी … help@example.com"). With sampling
    the choice is still the most likely token, and the missing tokens are forced, not drawn.
    ``closing``: per original row, whether it is ending so."""
    blocked = torch.isinf(mask.gather(1, choice[:, None]))[:, 0]  # (B_active,)
    if not any(closing[row] for row in active_rows) and not bool(blocked.any()):
        return  # every row's own choice is allowed: nothing to close (one check, no per-row sync)
    for i, (row, token, stopped) in enumerate(
        zip(active_rows, choice.tolist(), blocked.tolist(), strict=True)
    ):
        if not closing[row] and not stopped:
            continue  # the model's own choice is allowed
        wanted = allowed.closing(i, EOS_ID if closing[row] else token)
        if wanted is None and closing[row]:
            wanted = [EOS_ID]  # all written: the end it wanted
        if not wanted:
            continue
        only = torch.full_like(mask[i], NEG_INF)
        only[wanted] = 0.0
        if not bool(torch.isinf(mask[i] + only).all()):
            mask[i] += only
            closing[row] = True


@torch.inference_mode()
def greedy_search(
    model: Transformer,
    src_ids: Tensor,
    src_pad_mask: Tensor,
    settings: DecodeConfig,
    *,
    use_cache: bool = True,
    constraint: OutputConstraint | None = None,
    stop: BetweenSteps | None = None,
    signals: bool = False,
    tgt_prefix: Sequence[int] = (),
) -> list[Hypothesis]:
    """Batched greedy decoding: the most probable (allowed) token at every step.

    Args:
        model: the network (put it in eval mode first).
        src_ids: (B, S) source ids, EOS-terminated and padded.
        src_pad_mask: (B, S) True on padding.
        settings: the output limit ``max_len_a * source_length + max_len_b`` tokens (EOS not
            counted) and ``max_output_tokens`` (> 0 caps every output); the beam settings
            (``beam_size``, ``nbest``, ``length_penalty``, ``early_stopping``) do not apply;
            ``sample_top_k`` > 0 draws each token from the K most probable instead of the argmax
            (with a generator seeded by ``sample_seed``), and ``no_repeat_ngram_size`` reaches
            the search as part of ``constraint``.
        use_cache: incremental decoding with the key/value cache (False: re-run the decoder on
            the whole prefix every step; same results, slower).
        constraint: restricts the tokens each row may take (e.g. well-formed trees).
        stop: called before every decoding step (may run other work); True ends the search.
        signals: also record each output token's log-probability and its distribution's
            entropy (``Hypothesis.token_log_probs`` / ``entropies``; what a teacher-forced pass
            over the outputs would give, without that pass).
        tgt_prefix: target tokens forced after BOS, part of no output (a multilingual model's
            target-language token; :mod:`anuvad.decoding.search`).

    Returns:
        One hypothesis per input row, in input order; ``score`` = ``log_prob``.

    Raises:
        ConfigError: an invalid setting.
        SearchStoppedError: ``stop`` said so.
    """
    check_settings(settings)
    batch, device = src_ids.size(0), src_ids.device
    memory = model.encode(src_ids, src_pad_mask)  # (B, S, D)
    decoder = make_step_decoder(model, memory, src_pad_mask, use_cache, tgt_prefix=tgt_prefix)
    limits = output_limits(model, src_pad_mask, settings, len(tgt_prefix))
    allowed = constraint.start(src_pad_mask, limits) if constraint is not None else None
    recorder = SignalRecorder(batch, device) if signals else None
    generator = (
        torch.Generator(device=device).manual_seed(settings.sample_seed)
        if settings.sample_top_k
        else None
    )

    tokens: list[list[int]] = [[] for _ in range(batch)]
    closing = [False] * batch  # rows that would have ended: they write what is missing, then end
    scores = [0.0] * batch
    finished = [False] * batch
    recorded: list[tuple[list[float], list[float]] | None] = [None] * batch  # with ``signals``
    active_rows = list(range(batch))  # rows of the original batch still decoding
    last = torch.full((batch, 1), BOS_ID, dtype=torch.long, device=device)  # (B_active, 1)

    for step in range(max(limits, default=0)):
        check_stop(stop)
        log_probs, entropy = step_log_probs(decoder, last, signals)  # (B_active, V), (B_active,)
        if allowed is not None:
            mask = allowed.mask().to(device)  # (B_active, V)
            _close(mask, allowed, log_probs.argmax(-1), active_rows, closing)
            log_probs = log_probs + mask
        # (B_active,) each: the argmax, or a draw from the top K with ``sample_top_k``
        best_scores, best = pick_tokens(log_probs, settings.sample_top_k, generator)
        spread = entropy.tolist() if entropy is not None else []
        keep: list[int] = []
        for i, (row, token, score) in enumerate(
            zip(active_rows, best.tolist(), best_scores.tolist(), strict=True)
        ):
            if step >= limits[row] or score == NEG_INF:
                # Length limit reached (or nothing allowed) without EOS.
                recorded[row] = recorder.row(i) if recorder is not None else None
                continue
            scores[row] += score
            if token == EOS_ID:
                finished[row] = True
                recorded[row] = (
                    recorder.row(i, (score, spread[i])) if recorder is not None else None
                )
                continue
            tokens[row].append(token)
            keep.append(i)
        if not keep:
            active_rows = []  # every row has ended
            break
        if len(keep) < len(active_rows):
            index = torch.tensor(keep, device=device)
            decoder.reorder(index)
            best, best_scores = best.index_select(0, index), best_scores.index_select(0, index)
            entropy = entropy.index_select(0, index) if entropy is not None else None
            if recorder is not None:
                recorder.keep(index)
            active_rows = [active_rows[i] for i in keep]
        if recorder is not None and entropy is not None:
            # The constraint only adds 0 or -inf: a chosen token's score is the model's own.
            recorder.append(best_scores, entropy)
        if allowed is not None:
            allowed.advance(keep, best.tolist())
        last = best.unsqueeze(1)  # (B_active, 1)

    if recorder is not None:  # the rows still active were cut at the last step's limit
        for i, row in enumerate(active_rows):
            recorded[row] = recorder.row(i)
    return [
        Hypothesis(tokens[i], scores[i], finished[i], scores[i], *(recorded[i] or (None, None)))
        for i in range(batch)
    ]
