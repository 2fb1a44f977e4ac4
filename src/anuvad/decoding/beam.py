"""Batched beam search (section 6.1: beam size 4, length penalty alpha = 0.6, max length input
+ 50) over the step decoders of :mod:`anuvad.decoding.search`.

B sentences × K beams run as one (B*K)-row batch through each ``decode_step`` call. The K
beams of a sentence read one shared copy of its cross-attention keys and values (a grouped
cache, :class:`anuvad.model.cache.LayerCache`): computed once, never copied when beams reshuffle. A
sentence that is done leaves the batch (its cache rows are dropped), so finished sentences cost
nothing.

Per step, for every sentence, the 2K best continuations of its K beams are ranked by their
summed log-probability (the beams' scores plus the new token's). Going down that list:

* an EOS continuation among the first K ends a hypothesis: it is kept as finished with
  score = log_prob / lp(|Y|), |Y| counting EOS (fairseq's and tensor2tensor's convention);
* the first K non-EOS continuations become the next step's beams (2K candidates guarantee K).

A beam that reaches the length limit (``max_len_a * source length + max_len_b`` tokens) is
kept unfinished, score = log_prob / lp(tokens).

Early stopping, two rules (``early_stopping``):

* ``"finished"`` (the default; fairseq's rule and Hugging Face's ``early_stopping=True``): a
  sentence is done once it holds K finished hypotheses. Beam size 1 is then exactly greedy
  search, whatever alpha.
* ``"bound"`` (tensor2tensor's, the paper's code): log-probabilities only fall as a hypothesis
  grows, so the best score an active beam can still reach is its log-probability divided by the
  largest length penalty it can still get (lp(limit) for alpha >= 0). A sentence is done once
  it holds K finished hypotheses and that bound for its best active beam is no better than the
  worst of them. Exact, but with alpha > 0 beams often run on for a few more steps.

Either way a sentence with no live beam left is done.

**Required phrases** (:class:`anuvad.decoding.terms.TermConstraint`, e.g. a glossary): the K
beams are allocated by progress through the phrases (dynamic beam allocation, Post & Vilar
2018). The candidates are the 2K best plus, for every live beam, its best token and every token
that starts or continues a phrase it still misses (Hu et al. 2019); they are grouped in banks by
phrase tokens produced, and the K slots go round the banks from the most advanced down, best
candidate first in each. EOS is only possible once every phrase is in the output, so every
finished hypothesis holds them all.
"""

from __future__ import annotations

import torch
from torch import Tensor

from anuvad.data.tokenizer import BOS_ID, EOS_ID
from anuvad.decoding.constraints import OutputConstraint
from anuvad.decoding.search import (
    Hypothesis,
    StopCheck,
    check_stop,
    length_penalty,
    make_step_decoder,
    next_log_probs,
    next_log_probs_and_entropy,
    output_limits,
)
from anuvad.decoding.terms import TermRows
from anuvad.model.transformer import Transformer

NEG_INF = float("-inf")
EARLY_STOPPING = ("finished", "bound")


class _Sentence:
    """Book-keeping of one sentence: its finished hypotheses and when it is done."""

    def __init__(self, beam_size: int, limit: int, alpha: float, early_stopping: str) -> None:
        self.beam_size = beam_size
        self.early_stopping = early_stopping
        self.limit = limit
        self.alpha = alpha
        self.finished: list[Hypothesis] = []

    def add(
        self,
        token_ids: list[int],
        log_prob: float,
        finished: bool,
        signals: tuple[list[float], list[float]] | None = None,
    ) -> None:
        """Keep a hypothesis (``signals``: its token log-probabilities and entropies)."""
        length = len(token_ids) + (1 if finished else 0)
        score = log_prob / length_penalty(length, self.alpha)
        token_log_probs, entropies = signals if signals is not None else (None, None)
        self.finished.append(
            Hypothesis(token_ids, score, finished, log_prob, token_log_probs, entropies)
        )

    def worst_kept(self) -> float:
        """Score of the K-th best finished hypothesis (-inf while there are fewer than K)."""
        if len(self.finished) < self.beam_size:
            return NEG_INF
        return sorted((h.score for h in self.finished), reverse=True)[self.beam_size - 1]

    def cannot_improve(self, best_active_log_prob: float, num_tokens: int) -> bool:
        """Whether no active beam (num_tokens long, best log-prob given) can enter the top K."""
        if best_active_log_prob == NEG_INF:
            return True
        worst = self.worst_kept()
        if worst == NEG_INF:
            return False
        if self.early_stopping == "finished":
            return True
        # Reachable |Y|: num_tokens (limit hit) .. limit (EOS or limit); lp is monotonic.
        largest_lp = max(
            length_penalty(num_tokens, self.alpha), length_penalty(self.limit, self.alpha)
        )
        return best_active_log_prob / largest_lp <= worst

    def nbest(self, count: int) -> list[Hypothesis]:
        """The ``count`` best hypotheses, best first (stable: earlier ones win ties)."""
        return sorted(self.finished, key=lambda h: -h.score)[:count]


@torch.inference_mode()
def beam_search(
    model: Transformer,
    src_ids: Tensor,
    src_pad_mask: Tensor,
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len_a: float = 1.0,
    max_len_b: int = 50,
    nbest: int = 1,
    use_cache: bool = True,
    early_stopping: str = "finished",
    constraint: OutputConstraint | None = None,
    stop: StopCheck | None = None,
    max_output_tokens: int = 0,
    signals: bool = False,
) -> list[list[Hypothesis]]:
    """Batched beam search with the length penalty of Wu et al. (2016).

    Args:
        model: the network (put it in eval mode first).
        src_ids: (B, S) source ids, EOS-terminated and padded.
        src_pad_mask: (B, S) True on padding.
        beam_size: K, hypotheses kept per sentence and step.
        alpha: length-penalty exponent (0: plain log-probability).
        max_len_a: output limit ``max_len_a * source_length + max_len_b`` tokens (EOS not
            counted), capped by the model's positions.
        max_len_b: see ``max_len_a``.
        nbest: hypotheses returned per sentence (at most ``beam_size``).
        use_cache: incremental decoding with the key/value cache (False: the slow reference).
        early_stopping: "finished" (K finished hypotheses) or "bound" (no active beam can
            still beat the K-th best); see the module docstring.
        constraint: restricts the tokens each beam may take (e.g. well-formed trees).
        stop: asked before every decoding step; True ends the search (SearchStoppedError).
        max_output_tokens: > 0 caps every output at that many tokens.
        signals: also record, per hypothesis, each token's log-probability and its
            distribution's entropy (``Hypothesis.token_log_probs`` / ``entropies``: what a
            teacher-forced pass over the outputs would give, without that pass).

    Returns:
        Per input row, in input order, ``min(nbest, beam_size)`` hypotheses (fewer only when
        the limit leaves fewer distinct outputs), best first by ``score``.

    Raises:
        ValueError: ``beam_size`` or ``nbest`` below 1, or an unknown ``early_stopping``.
    """
    if beam_size < 1 or nbest < 1:
        raise ValueError(f"beam_size ({beam_size}) and nbest ({nbest}) must be at least 1")
    if early_stopping not in EARLY_STOPPING:
        raise ValueError(f"early_stopping must be one of {EARLY_STOPPING}, got {early_stopping!r}")
    k = beam_size
    batch, device = src_ids.size(0), src_ids.device
    limits = output_limits(model, src_pad_mask, max_len_a, max_len_b, max_output_tokens)
    sentences = [_Sentence(k, limit, alpha, early_stopping) for limit in limits]

    memory = model.encode(src_ids, src_pad_mask)  # (B, S, D)
    expand = torch.arange(batch, device=device).repeat_interleave(k)  # (B*K,)
    decoder = make_step_decoder(model, memory, src_pad_mask, use_cache, group=k)
    # Only beam 0 of each sentence is live at the start (the others would duplicate it).
    beam_scores = torch.full((batch, k), NEG_INF, device=device)  # (B_active, K)
    beam_scores[:, 0] = 0.0
    history = torch.empty(batch * k, 0, dtype=torch.long, device=device)  # (B_active*K, t)
    # With ``signals``: each beam's tokens' log-probabilities and entropies so far.
    token_lp = torch.empty(batch * k, 0, device=device)  # (B_active*K, t)
    token_entropy = torch.empty(batch * k, 0, device=device)  # (B_active*K, t)

    def recorded(
        row: int, eos: tuple[float, float] | None = None
    ) -> tuple[list[float], list[float]] | None:
        """Row ``row``'s signals (``eos``: plus the EOS step's) when they are recorded."""
        if not signals:
            return None
        lps, ents = token_lp[row].tolist(), token_entropy[row].tolist()
        return ([*lps, eos[0]], [*ents, eos[1]]) if eos is not None else (lps, ents)

    allowed = (
        constraint.start(
            src_pad_mask.index_select(0, expand), [x for x in limits for _ in range(k)]
        )
        if constraint is not None
        else None
    )
    terms = next((p for p in allowed.parts() if isinstance(p, TermRows)), None) if allowed else None
    last = torch.full((batch * k, 1), BOS_ID, dtype=torch.long, device=device)
    active = list(range(batch))  # original index of each sentence still searching

    step = 0
    while active:
        check_stop(stop)
        # Sentences whose beams hit their length limit end unfinished, before any more work.
        at_limit = [i for i, b in enumerate(active) if step >= limits[b]]
        if at_limit:
            rows = beam_scores.tolist()
            for i in at_limit:
                for j, log_prob in enumerate(rows[i]):
                    if log_prob > NEG_INF:
                        ids = history[i * k + j].tolist()
                        sentences[active[i]].add(ids, log_prob, False, recorded(i * k + j))
            ended = set(at_limit)
            remaining = [i for i in range(len(active)) if i not in ended]
            if not remaining:
                break
            index = _rows(remaining, k, device)
            decoder.reorder(index, torch.tensor(remaining, device=device))
            history, last = history.index_select(0, index), last.index_select(0, index)
            if signals:
                token_lp = token_lp.index_select(0, index)
                token_entropy = token_entropy.index_select(0, index)
            if allowed is not None:
                allowed.keep(index.tolist())
            beam_scores = beam_scores[torch.tensor(remaining, device=device)]
            active = [active[i] for i in remaining]

        num_active = len(active)
        if signals:
            log_probs, entropy = next_log_probs_and_entropy(decoder.step(last))  # (B_active*K, V)
            eos_lp, spread = log_probs[:, EOS_ID].tolist(), entropy.tolist()
        else:
            log_probs = next_log_probs(decoder.step(last))  # (B_active*K, V)
        model_log_probs = log_probs  # before any constraint
        if allowed is not None:
            log_probs = log_probs + allowed.mask().to(device)
        vocab = log_probs.size(-1)
        candidates = beam_scores.view(-1, 1) + log_probs  # (B_active*K, V)
        top_scores, top_index = candidates.view(num_active, k * vocab).topk(
            min(2 * k, k * vocab), dim=-1
        )  # (B_active, 2K)
        top_beams = (top_index // vocab).tolist()
        top_tokens = (top_index % vocab).tolist()
        top_values = top_scores.tolist()
        if terms is not None:  # dynamic beam allocation over the phrase banks
            top_beams, top_tokens, top_values = _allocate(
                terms, candidates, beam_scores, top_beams, top_tokens, top_values, k
            )

        keep: list[int] = []
        source_rows: list[int] = []  # for each next beam, the row it continues
        new_tokens: list[int] = []
        new_scores: list[list[float]] = []
        for i, b in enumerate(active):
            sentence = sentences[b]
            chosen: list[tuple[int, int, float]] = []  # (beam, token, log_prob)
            for rank, (beam, token, value) in enumerate(
                zip(top_beams[i], top_tokens[i], top_values[i], strict=True)
            ):
                if value == NEG_INF or len(chosen) == k:
                    break
                if token == EOS_ID:
                    if rank < k:
                        row = i * k + beam
                        eos = (eos_lp[row], spread[row]) if signals else None
                        sentence.add(history[row].tolist(), value, True, recorded(row, eos))
                else:
                    chosen.append((beam, token, value))
            best_active = chosen[0][2] if chosen else NEG_INF
            if sentence.cannot_improve(best_active, step + 1):
                continue  # done: drops out of the batch
            while len(chosen) < k:  # too few live continuations (tiny vocabularies): dead rows
                chosen.append((chosen[0][0], chosen[0][1], NEG_INF))
            keep.append(i)
            source_rows.extend(i * k + beam for beam, _, _ in chosen)
            new_tokens.extend(token for _, token, _ in chosen)
            new_scores.append([value for _, _, value in chosen])

        if not keep:
            break
        index = torch.tensor(source_rows, device=device)  # (B_kept*K,) rows to continue from
        # Beams stay within their sentence; sentence-level state changes only when one ended.
        kept = torch.tensor(keep, device=device) if len(keep) < num_active else None
        decoder.reorder(index, kept)
        if allowed is not None:
            allowed.advance(source_rows, new_tokens)
        last = torch.tensor(new_tokens, device=device).unsqueeze(1)  # (B_kept*K, 1)
        history = torch.cat([history.index_select(0, index), last], dim=1)
        if signals:
            chosen_lp = model_log_probs[index, last.squeeze(1)]  # (B_kept*K,)
            token_lp = torch.cat([token_lp.index_select(0, index), chosen_lp[:, None]], dim=1)
            chosen_entropy = entropy.index_select(0, index)[:, None]  # (B_kept*K, 1)
            token_entropy = torch.cat([token_entropy.index_select(0, index), chosen_entropy], 1)
        beam_scores = torch.tensor(new_scores, device=device)  # (B_kept, K)
        active = [active[i] for i in keep]
        step += 1

    return [sentence.nbest(min(nbest, k)) for sentence in sentences]


def _allocate(
    terms: TermRows,
    candidates: Tensor,
    beam_scores: Tensor,
    top_beams: list[list[int]],
    top_tokens: list[list[int]],
    top_values: list[list[float]],
    k: int,
) -> tuple[list[list[int]], list[list[int]], list[list[float]]]:
    """Per sentence, the candidates in the order the selection loop should take them: the EOS
    ones among the K best by score first where they are (they end hypotheses), then the K
    beams chosen round-robin over the progress banks, best first within each bank."""
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


def _rows(sentence_positions: list[int], k: int, device: torch.device) -> Tensor:
    """Row indices (len * K,) of the beams of the given sentences in the (B*K) batch."""
    rows = [i * k + j for i in sentence_positions for j in range(k)]
    return torch.tensor(rows, dtype=torch.long, device=device)
