"""Batched beam search (section 6.1: beam size 4, length penalty 0.6, max length input + 50)
over the step decoders of :mod:`anuvad.decoding.search`.

B sentences × K beams run as one (B*K)-row batch through each ``decode_step`` call. The K
beams of a sentence read one shared copy of its cross-attention keys and values (a grouped
cache, :class:`anuvad.model.cache.LayerCache`): computed once, never copied when beams reshuffle. A
sentence that is done leaves the batch (its cache rows are dropped), so finished sentences cost
nothing.

Every step runs three phases over one state object (:class:`_Beams`, whose rows, decoder
cache, constraint state and recorded signals are reordered together by its one ``keep``):

* **retire**: a sentence whose beams reached the length limit (``max_len_a * source length +
  max_len_b`` tokens) ends; each live beam is kept unfinished, score = log_prob / lp(tokens);
* **choose**: for every sentence, the 2K best continuations of its K beams are ranked by their
  summed log-probability (the beams' scores plus the new token's). Going down that list, an EOS
  continuation among the first K ends a hypothesis: it is kept as finished with score =
  log_prob / lp(|Y|), |Y| counting EOS (fairseq's and tensor2tensor's convention); the first K
  non-EOS continuations become the next step's beams (2K candidates guarantee K);
* **advance**: every row follows the beam it continues, and the new tokens are appended.

lp(Y) = ((5 + |Y|) / 6) ** length_penalty, or |Y| ** length_penalty with
``length_normalization="power"`` (:func:`anuvad.decoding.search.length_normalizer`).

Early stopping, two rules (``early_stopping``):

* ``"finished"`` (the default; fairseq's rule and Hugging Face's ``early_stopping=True``): a
  sentence is done once it holds K finished hypotheses. Beam size 1 is then exactly greedy
  search, whatever the length penalty.
* ``"heuristic"`` (Hugging Face generate's default, ``early_stopping=False``, kept by imported
  Marian models): a sentence is done once it holds K finished hypotheses and its best active
  beam, scored at its current length, is no better than the worst of them. Not exact: a beam
  that would have won later can be cut.
* ``"bound"`` (tensor2tensor's, the paper's code): log-probabilities only fall as a hypothesis
  grows, so the best score an active beam can still reach is its log-probability divided by the
  largest lp it can still get (lp(limit) for a length penalty >= 0). A sentence is done once
  it holds K finished hypotheses and that bound for its best active beam is no better than the
  worst of them. Exact, but with a length penalty above 0 beams often run on for a few more
  steps.

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

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from anuvad.data.tokenizer import BOS_ID, EOS_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam_allocation import allocate_beams
from anuvad.decoding.constraints import ConstraintRows, OutputConstraint
from anuvad.decoding.search import (
    NEG_INF,
    BetweenSteps,
    Hypothesis,
    SignalRecorder,
    StepDecoder,
    check_settings,
    check_stop,
    length_normalizer,
    make_step_decoder,
    output_limits,
    step_log_probs,
)
from anuvad.decoding.terms import TermRows
from anuvad.model.transformer import Transformer

Signals = tuple[list[float], list[float]]  # (token log-probabilities, entropies)


class _Sentence:
    """Book-keeping of one sentence: its finished hypotheses and when it is done."""

    def __init__(self, limit: int, settings: DecodeConfig, prefix_length: int = 0) -> None:
        self.beam_size = settings.beam_size
        self.early_stopping = settings.early_stopping
        self.length_penalty = settings.length_penalty
        self.form = settings.length_normalization
        self.limit = limit
        # A target prefix counts in |Y| of lp(Y) (generate counts its forced token).
        self.prefix_length = prefix_length
        self.finished: list[Hypothesis] = []

    def normalizer(self, num_tokens: int) -> float:
        """lp(Y) of a hypothesis of ``num_tokens`` output tokens (EOS included when it ended),
        the target prefix counted."""
        return length_normalizer(num_tokens + self.prefix_length, self.length_penalty, self.form)

    def add(
        self, token_ids: list[int], log_prob: float, finished: bool, signals: Signals | None
    ) -> None:
        """Keep a hypothesis (``signals``: its token log-probabilities and entropies)."""
        score = log_prob / self.normalizer(len(token_ids) + (1 if finished else 0))
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
        if self.early_stopping == "heuristic":  # generate's: the best active as it stands now
            return best_active_log_prob / self.normalizer(num_tokens) <= worst
        # Reachable |Y|: num_tokens (limit hit) .. limit (EOS or limit); lp is monotonic.
        largest_lp = max(self.normalizer(num_tokens), self.normalizer(self.limit))
        return best_active_log_prob / largest_lp <= worst

    def nbest(self, count: int) -> list[Hypothesis]:
        """The ``count`` best hypotheses, best first (stable: earlier ones win ties)."""
        return sorted(self.finished, key=lambda h: -h.score)[:count]


class _Beams:
    """The search state of the sentences still searching, K rows (beams) each, row ``i * K + j``
    being beam j of active sentence i: the beams' scores, token history and newest token, the
    decoder (its cache), the constraint state and the recorded signals. :meth:`keep` reorders
    them all together; :meth:`extend` appends a step's tokens."""

    def __init__(
        self,
        decoder: StepDecoder,
        batch: int,
        k: int,
        device: torch.device,
        allowed: ConstraintRows | None,
        recorder: SignalRecorder | None,
    ) -> None:
        self.decoder = decoder
        self.k = k
        self.device = device
        self.allowed = allowed
        self.recorder = recorder
        parts = allowed.parts() if allowed is not None else []
        self.terms = next((p for p in parts if isinstance(p, TermRows)), None)
        self.active = list(range(batch))  # original index of each sentence still searching
        # Only beam 0 of each sentence is live at the start (the others would duplicate it).
        self.scores = torch.full((batch, k), NEG_INF, device=device)  # (B_active, K) log-probs
        self.scores[:, 0] = 0.0
        self.history = torch.empty(batch * k, 0, dtype=torch.long, device=device)  # (B_active*K, t)
        self.last = torch.full((batch * k, 1), BOS_ID, dtype=torch.long, device=device)

    @classmethod
    def start(
        cls,
        model: Transformer,
        src_ids: Tensor,
        src_pad_mask: Tensor,
        limits: list[int],
        k: int,
        use_cache: bool,
        constraint: OutputConstraint | None,
        signals: bool,
        tgt_prefix: Sequence[int] = (),
    ) -> _Beams:
        """Encode the batch (B, S) and start K beams per sentence (B*K rows), ``tgt_prefix``
        forced after BOS."""
        batch, device = src_ids.size(0), src_ids.device
        memory = model.encode(src_ids, src_pad_mask)  # (B, S, D)
        decoder = make_step_decoder(model, memory, src_pad_mask, use_cache, k, tgt_prefix)
        allowed = None
        if constraint is not None:
            expand = torch.arange(batch, device=device).repeat_interleave(k)  # (B*K,)
            row_limits = [limit for limit in limits for _ in range(k)]
            allowed = constraint.start(src_pad_mask.index_select(0, expand), row_limits)
        recorder = SignalRecorder(batch * k, device) if signals else None
        return cls(decoder, batch, k, device, allowed, recorder)

    def keep(self, rows: list[int], sentences: list[int] | None) -> None:
        """Reorder everything: row i becomes old row ``rows[i]`` (B'*K rows, each within its
        sentence's group); ``sentences`` (B') are the positions in :attr:`active` of the
        sentences kept, in order (None: all of them)."""
        if sentences is not None and not sentences:
            self.active = []  # every sentence is done: nothing left to reorder
            return
        index = torch.tensor(rows, dtype=torch.long, device=self.device)  # (B'*K,)
        kept = torch.tensor(sentences, device=self.device) if sentences is not None else None
        self.decoder.reorder(index, kept)
        self.history = self.history.index_select(0, index)  # (B'*K, t)
        self.last = self.last.index_select(0, index)  # (B'*K, 1)
        if self.recorder is not None:
            self.recorder.keep(index)
        if self.allowed is not None:
            self.allowed.keep(rows)
        if kept is not None and sentences is not None:
            self.scores = self.scores[kept]  # (B', K)
            self.active = [self.active[i] for i in sentences]

    def extend(
        self, tokens: list[int], scores: list[list[float]], signals: tuple[Tensor, Tensor] | None
    ) -> None:
        """Append every row's new token (N,) and set the beams' scores (B_active, K);
        ``signals``: the new tokens' log-probabilities (N,) and entropies (N,)."""
        self.last = torch.tensor(tokens, device=self.device).unsqueeze(1)  # (N, 1)
        self.history = torch.cat([self.history, self.last], dim=1)  # (N, t + 1)
        self.scores = torch.tensor(scores, device=self.device)  # (B_active, K)
        if self.allowed is not None:
            self.allowed.advance(range(len(tokens)), tokens)
        if self.recorder is not None and signals is not None:
            self.recorder.append(*signals)

    def signals(self, row: int, eos: tuple[float, float] | None = None) -> Signals | None:
        """Row ``row``'s recorded signals (``eos``: plus its EOS step's), None unrecorded."""
        return self.recorder.row(row, eos) if self.recorder is not None else None


@dataclass
class _Choice:
    """What one step chose: the sentences that go on, and their K next beams each."""

    sentences: list[int] = field(default_factory=list)  # positions in _Beams.active
    rows: list[int] = field(default_factory=list)  # for each next beam, the row it continues
    tokens: list[int] = field(default_factory=list)  # its new token
    scores: list[list[float]] = field(default_factory=list)  # (B_kept, K) their log-probs


@torch.inference_mode()
def beam_search(
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
) -> list[list[Hypothesis]]:
    """Batched beam search with the length penalty of Wu et al. (2016).

    Args:
        model: the network (put it in eval mode first).
        src_ids: (B, S) source ids, EOS-terminated and padded.
        src_pad_mask: (B, S) True on padding.
        settings: ``beam_size`` K (hypotheses kept per sentence and step), ``length_penalty``
            (0: plain log-probability), ``nbest`` (hypotheses returned per sentence),
            ``early_stopping`` ("finished" or "bound", see the module docstring), the output
            limit ``max_len_a * source_length + max_len_b`` tokens (EOS not counted, capped by
            the model's positions) and ``max_output_tokens`` (> 0 caps every output);
            ``no_repeat_ngram_size`` reaches the search as part of ``constraint``.
        use_cache: incremental decoding with the key/value cache (False: the slow reference).
        constraint: restricts the tokens each beam may take (e.g. well-formed trees).
        stop: called before every decoding step (may run other work); True ends the search.
        signals: also record, per hypothesis, each token's log-probability and its
            distribution's entropy (``Hypothesis.token_log_probs`` / ``entropies``: what a
            teacher-forced pass over the outputs would give, without that pass).
        tgt_prefix: target tokens forced after BOS, part of no output but counted in |Y| of
            the length penalty (a multilingual model's target-language token;
            :mod:`anuvad.decoding.search`).

    Returns:
        Per input row, in input order, ``nbest`` hypotheses (fewer only when the limit leaves
        fewer distinct outputs), best first by ``score``.

    Raises:
        ConfigError: an invalid setting (e.g. ``beam_size`` or ``nbest`` below 1).
        SearchStoppedError: ``stop`` said so.
    """
    check_settings(settings)
    k = settings.beam_size
    limits = output_limits(model, src_pad_mask, settings, len(tgt_prefix))
    sentences = [_Sentence(limit, settings, len(tgt_prefix)) for limit in limits]
    beams = _Beams.start(
        model, src_ids, src_pad_mask, limits, k, use_cache, constraint, signals, tgt_prefix
    )
    step = 0
    while beams.active:
        check_stop(stop)
        _retire(beams, sentences, step)
        if not beams.active:
            break
        log_probs, entropy = step_log_probs(beams.decoder, beams.last, signals)  # (B_active*K, V)
        choice = _choose(beams, sentences, log_probs, entropy, step)
        _advance(beams, choice, log_probs, entropy)
        step += 1
    return [sentence.nbest(min(settings.nbest, k)) for sentence in sentences]


def _retire(beams: _Beams, sentences: list[_Sentence], step: int) -> None:
    """Sentences whose beams reached their length limit end, before any more work: every live
    beam becomes an unfinished hypothesis, and the sentence leaves the batch."""
    at_limit = [i for i, b in enumerate(beams.active) if step >= sentences[b].limit]
    if not at_limit:
        return
    k = beams.k
    log_probs = beams.scores.tolist()  # (B_active, K)
    for i in at_limit:
        for j, log_prob in enumerate(log_probs[i]):
            if log_prob > NEG_INF:
                row = i * k + j
                ids = beams.history[row].tolist()
                sentences[beams.active[i]].add(ids, log_prob, False, beams.signals(row))
    ended = set(at_limit)
    remaining = [i for i in range(len(beams.active)) if i not in ended]
    beams.keep([i * k + j for i in remaining for j in range(k)], remaining)


def _choose(
    beams: _Beams,
    sentences: list[_Sentence],
    log_probs: Tensor,
    entropy: Tensor | None,
    step: int,
) -> _Choice:
    """Per sentence, the K beams of the next step from the 2K best continuations (or dynamic
    beam allocation under required phrases); EOS among the first K ends a hypothesis, and a
    sentence that cannot improve any more is done (left out of the choice).

    Args:
        log_probs: (B_active*K, V) the model's next-token log-probabilities.
        entropy: (B_active*K,) their entropies when signals are recorded, else None.
    """
    k, num_active = beams.k, len(beams.active)
    # With signals, the EOS step of the hypotheses that end here: what the model said of it.
    eos_signals = (log_probs[:, EOS_ID].tolist(), entropy.tolist()) if entropy is not None else None
    if beams.allowed is not None:
        log_probs = log_probs + beams.allowed.mask().to(beams.device)
    vocab = log_probs.size(-1)
    candidates = beams.scores.view(-1, 1) + log_probs  # (B_active*K, V)
    top_scores, top_index = candidates.view(num_active, k * vocab).topk(
        min(2 * k, k * vocab), dim=-1
    )  # (B_active, 2K)
    top_beams = (top_index // vocab).tolist()
    top_tokens = (top_index % vocab).tolist()
    top_values = top_scores.tolist()
    if beams.terms is not None:  # dynamic beam allocation over the phrase banks
        top_beams, top_tokens, top_values = allocate_beams(
            beams.terms, candidates, beams.scores, top_beams, top_tokens, top_values, k
        )

    choice = _Choice()
    for i, b in enumerate(beams.active):
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
                    eos = (eos_signals[0][row], eos_signals[1][row]) if eos_signals else None
                    ids = beams.history[row].tolist()
                    sentence.add(ids, value, True, beams.signals(row, eos))
            else:
                chosen.append((beam, token, value))
        best_active = chosen[0][2] if chosen else NEG_INF
        if sentence.cannot_improve(best_active, step + 1):
            continue  # done: drops out of the batch
        while len(chosen) < k:  # too few live continuations (tiny vocabularies): dead rows
            chosen.append((chosen[0][0], chosen[0][1], NEG_INF))
        choice.sentences.append(i)
        choice.rows.extend(i * k + beam for beam, _, _ in chosen)
        choice.tokens.extend(token for _, token, _ in chosen)
        choice.scores.append([value for _, _, value in chosen])
    return choice


def _advance(beams: _Beams, choice: _Choice, log_probs: Tensor, entropy: Tensor | None) -> None:
    """The chosen continuations become the beams: every row follows the beam it continues
    (sentences that are done leave), then the new tokens are appended.

    Args:
        log_probs: (B_active*K, V) the model's log-probabilities of this step (before any
            constraint: what signals record).
        entropy: (B_active*K,) their entropies when signals are recorded, else None.
    """
    recorded = None
    if entropy is not None and choice.rows:
        index = torch.tensor(choice.rows, device=beams.device)  # (B_kept*K,)
        tokens = torch.tensor(choice.tokens, device=beams.device)  # (B_kept*K,)
        recorded = (log_probs[index, tokens], entropy.index_select(0, index))
    # Beams stay within their sentence; sentence-level state changes only when one ended.
    every = len(choice.sentences) == len(beams.active)
    beams.keep(choice.rows, None if every else choice.sentences)
    if beams.active:
        beams.extend(choice.tokens, choice.scores, recorded)
