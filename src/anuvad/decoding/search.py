"""Search over ``Transformer.encode`` / ``decode_step`` with the key/value cache: what greedy
search (:mod:`anuvad.decoding.greedy`) and beam search (:mod:`anuvad.decoding.beam`) share.

Both searches run the decoder through a :class:`StepDecoder`: one new position per call, either
incrementally with the key/value cache (:class:`CachedStepDecoder`, the default) or by re-running
the whole teacher-forced decoder on the prefix (:class:`UncachedStepDecoder`, the reference the
cache is tested and benchmarked against). Both take the search settings as one
:class:`~anuvad.decode_config.DecodeConfig`, and with ``signals=True`` both keep a
:class:`SignalRecorder` in step with their rows.

A **target prefix** (``tgt_prefix``: a multilingual model's target-language token, Hugging Face's
``forced_bos_token_id``) is fed to the decoder after BOS before the search chooses anything: it
is part of no output, costs nothing (log-probability 0, as generate's forcing gives it), counts
in |Y| of the length penalty (generate counts it among the generated tokens) and takes positions,
but not the output limit, which counts the tokens after it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from anuvad.data.tokenizer import BOS_ID, PAD_ID
from anuvad.decode_config import DecodeConfig
from anuvad.errors import ConfigError, SearchStoppedError
from anuvad.model.cache import sentence_rows
from anuvad.model.transformer import Transformer


@dataclass
class Hypothesis:
    """One output sentence.

    Attributes:
        token_ids: target ids without BOS and EOS.
        score: the ranking score: ``log_prob / lp(Y)`` in beam search, ``log_prob`` in greedy.
        finished: whether EOS was produced before the length limit.
        log_prob: sum of the token log-probabilities (EOS included when it was produced).
        token_log_probs: with ``signals=True``, per output token (EOS included when produced),
            the model's log-probability of it (before any constraint; they sum to ``log_prob``
            when no constraint forced a token).
        entropies: with ``signals=True``, per output token, the entropy (nats) of the model's
            whole next-token distribution it was chosen from.
    """

    token_ids: list[int]
    score: float
    finished: bool
    log_prob: float
    token_log_probs: list[float] | None = None
    entropies: list[float] | None = None

    @property
    def signals(self) -> tuple[list[float], list[float]] | None:
        """``(token_log_probs, entropies)`` when the search recorded them, else None."""
        if self.token_log_probs is None or self.entropies is None:
            return None
        return self.token_log_probs, self.entropies


NEG_INF = float("-inf")


def length_normalizer(length: int, length_penalty: float, form: str = "gnmt") -> float:
    """lp(Y) = ((5 + |Y|) / 6) ** length_penalty (Wu et al. 2016, eq. 14, where the exponent is
    alpha; the paper's section 6.1); a beam hypothesis scores ``log_prob / lp(Y)``. ``form``
    "power": lp(Y) = |Y| ** length_penalty (Marian's and Hugging Face generate's).

    ``length`` counts output tokens *including* EOS when the hypothesis finished (as fairseq,
    tensor2tensor and generate do); an unfinished hypothesis counts its tokens only. A
    ``length_penalty`` (the setting) of 0 gives 1.
    """
    if form == "power":
        return float(max(length, 1) ** length_penalty)
    return float(((5.0 + length) / 6.0) ** length_penalty)


def limits_for_lengths(src_lengths: Tensor, max_len_a: float, max_len_b: int) -> Tensor:
    """floor(a * source_length) + b per sentence (section 6.1: input length + 50), (B,) long.

    The source length counts EOS; the product is taken in float32, so every engine that calls
    this floors identically."""
    return (src_lengths.float() * max_len_a).floor().long() + max_len_b


def max_output_lengths(src_pad_mask: Tensor, max_len_a: float, max_len_b: int) -> Tensor:
    """Per-sentence limit a * source_length + b of a padded batch, shape (B,)."""
    src_lengths = (~src_pad_mask).sum(dim=1)  # (B,)
    return limits_for_lengths(src_lengths, max_len_a, max_len_b)


def output_limits(
    model: Transformer, src_pad_mask: Tensor, settings: DecodeConfig, prefix_length: int = 0
) -> list[int]:
    """Output-token limits (EOS not counted) of a padded batch (B, S): ``settings.max_len_a *
    source_length + settings.max_len_b``, capped so that BOS + the target prefix
    (``prefix_length`` tokens) + tokens fit the positions and, when
    ``settings.max_output_tokens`` > 0, at that many tokens (a server's work budget)."""
    limits = max_output_lengths(src_pad_mask, settings.max_len_a, settings.max_len_b)
    # Position 0 holds BOS, so at most max_positions - 1 tokens can follow it.
    top = capped_top(model.config.max_positions - prefix_length, settings.max_output_tokens)
    return [int(x) for x in limits.clamp(min=0, max=top).tolist()]


def capped_top(max_positions: int, max_output_tokens: int) -> int:
    """The most output tokens a sentence may get: the positions after BOS, or the cap."""
    top = max_positions - 1
    return min(top, max_output_tokens) if max_output_tokens > 0 else top


class BetweenSteps(Protocol):
    """The hook a search calls between two decoding steps (the ``stop`` argument).

    It may run other work there: the server's batcher serves small waiting requests inside a
    long search this way (:mod:`anuvad.server.batcher`), so the search's state must not depend
    on anything that work changes. True stops the search (:class:`SearchStoppedError`): a
    request past its deadline, a client gone.
    """

    def __call__(self) -> bool:
        """Called between two decoding steps; may run other work; True stops the search."""
        ...


def check_stop(stop: BetweenSteps | None) -> None:
    """Call ``stop`` (when there is one) and raise :class:`~anuvad.errors.SearchStoppedError`
    when it says so."""
    if stop is not None and stop():
        raise SearchStoppedError("the search was stopped between two decoding steps")


def check_settings(settings: DecodeConfig) -> None:
    """Refuse invalid settings before a search starts (:meth:`DecodeConfig.problems`).

    Raises:
        ConfigError: a setting is invalid (every one named).
    """
    found = settings.problems()
    if found:
        raise ConfigError("; ".join(found))


def forbid_special_tokens(log_probs: Tensor) -> Tensor:
    """Padding and BOS can never be generated (in place on (N, V); returns it)."""
    log_probs[:, PAD_ID] = float("-inf")
    log_probs[:, BOS_ID] = float("-inf")
    return log_probs


# --------------------------------------------------------------------------------------------
# Running the decoder one position at a time
# --------------------------------------------------------------------------------------------


class StepDecoder(ABC):
    """The decoder of N hypotheses (rows), advanced one target position per :meth:`step`.

    The rows are ``group`` consecutive hypotheses per source sentence (beam search: its beams;
    greedy search: one).
    """

    @abstractmethod
    def step(self, last_ids: Tensor) -> Tensor:
        """Feed the newest token of every row, (N, 1); return next-token logits (N, V)."""

    @abstractmethod
    def reorder(self, index: Tensor, sentences: Tensor | None = None) -> None:
        """Keep / duplicate rows: row i becomes old row ``index[i]``; ``index`` (N',).

        With a group above 1, every row must stay within its sentence's group and
        ``sentences`` (B',) names the sentences kept (None: all, in order).
        """


def with_prefix(last_ids: Tensor, tgt_prefix: Sequence[int]) -> Tensor:
    """The first step's input: every row's BOS (N, 1) and then the target prefix, (N, 1 + P)."""
    forced = torch.tensor(list(tgt_prefix), dtype=torch.long, device=last_ids.device)  # (P,)
    return torch.cat([last_ids, forced.expand(last_ids.size(0), -1)], dim=1)  # (N, 1 + P)


class CachedStepDecoder(StepDecoder):
    """Incremental decoding: ``decode_step`` on the newest token with the key/value cache.

    The cross-attention keys/values and the padding mask are kept once per sentence, shared by
    its ``group`` rows; without any padding the mask is dropped (no masking work per step).
    """

    def __init__(
        self, model: Transformer, memory: Tensor, src_pad_mask: Tensor, group: int = 1
    ) -> None:
        self.model = model
        self.group = group
        self.cache = model.init_cache(memory, group)  # cross K/V computed once, (B, H, S, Dh)
        self.src_pad_mask = src_pad_mask if bool(src_pad_mask.any()) else None  # (B, S)

    def step(self, last_ids: Tensor) -> Tensor:
        """One ``decode_step`` on (N, t) → logits (N, V); the cache grows by t positions (t is 1
        but in a :class:`PrefixedStepDecoder`'s first step)."""
        return self.model.decode_step(last_ids, self.cache, self.src_pad_mask).logits[:, -1]

    def reorder(self, index: Tensor, sentences: Tensor | None = None) -> None:
        """Select cache rows by ``index`` (N'), sentence rows by ``sentences`` (B')."""
        self.cache.reorder(index, sentences)
        rows = sentence_rows(self.group, index, sentences)
        if self.src_pad_mask is not None and rows is not None:
            self.src_pad_mask = self.src_pad_mask.index_select(0, rows)


class UncachedStepDecoder(StepDecoder):
    """The reference: the whole teacher-forced decoder re-run on BOS + prefix at every step."""

    def __init__(
        self, model: Transformer, memory: Tensor, src_pad_mask: Tensor, group: int = 1
    ) -> None:
        self.model = model
        expand = torch.arange(memory.size(0), device=memory.device).repeat_interleave(group)
        self.memory = memory.index_select(0, expand)  # (N, S, D)
        self.src_pad_mask = src_pad_mask.index_select(0, expand)  # (N, S)
        self.prefix = torch.empty(self.memory.size(0), 0, dtype=torch.long, device=memory.device)

    def step(self, last_ids: Tensor) -> Tensor:
        """Append (N, t) to the prefix (t is 1 but in a :class:`PrefixedStepDecoder`'s first
        step), decode it all, return the last position's logits."""
        self.prefix = torch.cat([self.prefix, last_ids], dim=1)  # (N, T + t)
        out = self.model.decode(self.prefix, self.memory, self.src_pad_mask)
        return out.logits[:, -1]  # (N, V)

    def reorder(self, index: Tensor, sentences: Tensor | None = None) -> None:
        """Select memory, mask and prefix rows by ``index`` (N',)."""
        self.memory = self.memory.index_select(0, index)
        self.src_pad_mask = self.src_pad_mask.index_select(0, index)
        self.prefix = self.prefix.index_select(0, index)


class PrefixedStepDecoder(StepDecoder):
    """Any step decoder with ``tgt_prefix`` fed after BOS in its first step (see the module
    docstring): the first step feeds (N, 1 + P), every later one (N, 1)."""

    def __init__(self, decoder: StepDecoder, tgt_prefix: Sequence[int]) -> None:
        self.decoder = decoder
        self.tgt_prefix = tuple(tgt_prefix)
        self.started = False

    def step(self, last_ids: Tensor) -> Tensor:
        """The wrapped decoder's step on (N, 1), BOS + the prefix (N, 1 + P) the first time."""
        if not self.started:
            self.started = True
            last_ids = with_prefix(last_ids, self.tgt_prefix)  # (N, 1 + P)
        return self.decoder.step(last_ids)

    def reorder(self, index: Tensor, sentences: Tensor | None = None) -> None:
        """The wrapped decoder's :meth:`StepDecoder.reorder`."""
        self.decoder.reorder(index, sentences)


def make_step_decoder(
    model: Transformer,
    memory: Tensor,
    src_pad_mask: Tensor,
    use_cache: bool,
    group: int = 1,
    tgt_prefix: Sequence[int] = (),
) -> StepDecoder:
    """A cached (default) or uncached step decoder over ``memory`` (B, S, D) and its padding
    mask (B, S), decoding ``group`` hypotheses per sentence (N = B * group rows), with
    ``tgt_prefix`` forced after BOS."""
    decoder: StepDecoder
    if use_cache:
        decoder = CachedStepDecoder(model, memory, src_pad_mask, group)
    else:
        decoder = UncachedStepDecoder(model, memory, src_pad_mask, group)
    return PrefixedStepDecoder(decoder, tgt_prefix) if tgt_prefix else decoder


def next_log_probs(logits: Tensor) -> Tensor:
    """Logits (N, V) → float32 log-probabilities with PAD and BOS forbidden."""
    return forbid_special_tokens(torch.log_softmax(logits.float(), dim=-1))


def next_log_probs_and_entropy(logits: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`next_log_probs` (N, V) and each row's entropy (N,) in nats, of the model's whole
    distribution (PAD and BOS included, as a teacher-forced pass computes it)."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)  # (N, V)
    entropy = -(log_probs.exp() * log_probs).sum(dim=-1)  # (N,)
    return forbid_special_tokens(log_probs), entropy


def step_log_probs(
    decoder: StepDecoder, last_ids: Tensor, signals: bool
) -> tuple[Tensor, Tensor | None]:
    """One decoding step of every row: :func:`next_log_probs` (N, V) of the next token and,
    with ``signals``, each row's entropy (N,) (None without)."""
    logits = decoder.step(last_ids)  # (N, V)
    if signals:
        return next_log_probs_and_entropy(logits)
    return next_log_probs(logits), None


class SignalRecorder:
    """What a teacher-forced pass over the outputs would give, recorded during a search: per
    search row, each output token's log-probability and the entropy (nats) of the model's
    distribution it was chosen from (``signals=True``; read by the confidence estimate). Its
    rows follow the search's rows: :meth:`keep` whenever they are reordered."""

    def __init__(self, rows: int, device: torch.device) -> None:
        self.log_probs = torch.empty(rows, 0, device=device)  # (N, t)
        self.entropies = torch.empty(rows, 0, device=device)  # (N, t)

    def keep(self, index: Tensor) -> None:
        """Keep / duplicate rows: row i becomes old row ``index[i]``; ``index`` (N',)."""
        self.log_probs = self.log_probs.index_select(0, index)
        self.entropies = self.entropies.index_select(0, index)

    def append(self, log_probs: Tensor, entropies: Tensor) -> None:
        """Every row's new token: its log-probability (N,) and its distribution's entropy (N,)."""
        self.log_probs = torch.cat([self.log_probs, log_probs[:, None]], dim=1)  # (N, t + 1)
        self.entropies = torch.cat([self.entropies, entropies[:, None]], dim=1)  # (N, t + 1)

    def row(
        self, row: int, eos: tuple[float, float] | None = None
    ) -> tuple[list[float], list[float]]:
        """``(token_log_probs, entropies)`` of ``row``, plus ``eos`` (the log-probability and
        entropy of its EOS step) when it ended with EOS."""
        log_probs, entropies = self.log_probs[row].tolist(), self.entropies[row].tolist()
        if eos is None:
            return log_probs, entropies
        return [*log_probs, eos[0]], [*entropies, eos[1]]


# --------------------------------------------------------------------------------------------
# Greedy search
# --------------------------------------------------------------------------------------------
