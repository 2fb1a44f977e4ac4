"""Terminology constraints: target phrases that a sentence's output must contain.

Each sentence of a batch may carry target phrases (token-id sequences, e.g. from a glossary).
:class:`TermConstraint` keeps, for every search row, which phrases the output already holds and
how far it is into each of the others (a KMP automaton per phrase, so a partial match that
breaks off falls back correctly), and guarantees that every phrase appears:

* EOS is forbidden while a phrase is missing;
* a token is forbidden when the phrases still missing would no longer fit in the steps left to
  the output limit after it (counting the phrase the row is furthest into from where it is), so
  a phrase is never made impossible: near the limit the row can only go on with its phrases.

Beam search allocates its beams by progress through the phrases (dynamic beam allocation, Post
& Vilar 2018; candidates that start or continue a phrase are always considered, as in Hu et al.
2019): :func:`allocate_beams`, called by :func:`anuvad.decoding.beam.beam_search`. Greedy
search gets the guarantee alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from anuvad.data.tokenizer import EOS_ID
from anuvad.decoding.constraints import ConstraintRows, OutputConstraint

NEG_INF = float("-inf")
Phrase = tuple[int, ...]


def failure_table(phrase: Phrase) -> list[int]:
    """KMP: for each prefix length n, the length of the longest proper prefix of
    ``phrase[:n]`` that is also its suffix (index 0 unused, 0)."""
    table = [0] * (len(phrase) + 1)
    k = 0
    for i in range(1, len(phrase)):
        while k and phrase[i] != phrase[k]:
            k = table[k]
        if phrase[i] == phrase[k]:
            k += 1
        table[i + 1] = k
    return table


def next_partial(phrase: Phrase, table: list[int], partial: int, token: int) -> int:
    """The matched prefix length after ``token``, from ``partial`` (< len(phrase))."""
    while partial and phrase[partial] != token:
        partial = table[partial]
    return partial + 1 if phrase[partial] == token else 0


@dataclass(frozen=True)
class _Phrases:
    """One sentence's phrases with their KMP tables."""

    phrases: tuple[Phrase, ...]
    tables: tuple[list[int], ...]

    @classmethod
    def of(cls, phrases: Sequence[Sequence[int]]) -> _Phrases:
        kept = tuple(tuple(p) for p in phrases if len(p) > 0)
        return cls(kept, tuple(failure_table(p) for p in kept))


@dataclass(frozen=True)
class _RowState:
    """One row: which phrases are in its output, and the matched prefix of each other one."""

    met: tuple[bool, ...]
    partial: tuple[int, ...]

    def after(self, terms: _Phrases, token: int) -> _RowState:
        met, partial = list(self.met), list(self.partial)
        for j, phrase in enumerate(terms.phrases):
            if met[j]:
                continue
            partial[j] = next_partial(phrase, terms.tables[j], partial[j], token)
            if partial[j] == len(phrase):
                met[j], partial[j] = True, 0
        return _RowState(tuple(met), tuple(partial))

    def progress(self, terms: _Phrases) -> int:
        """Phrase tokens produced: whole phrases met, plus the longest partial match."""
        done = sum(len(p) for p, m in zip(terms.phrases, self.met, strict=True) if m)
        open_parts = [q for q, m in zip(self.partial, self.met, strict=True) if not m]
        return done + max(open_parts, default=0)

    def missing(self, terms: _Phrases) -> tuple[int, int] | None:
        """(tokens still needed, the phrase to continue first) or None when all are met."""
        unmet = [j for j, m in enumerate(self.met) if not m]
        if not unmet:
            return None
        first = max(unmet, key=lambda j: (self.partial[j], -j))
        needed = sum(len(terms.phrases[j]) for j in unmet) - self.partial[first]
        return needed, first


class TermRows(ConstraintRows):
    """The phrase state of every search row (see :class:`TermConstraint`)."""

    def __init__(
        self,
        terms: list[_Phrases],
        limits: Sequence[int],
        vocab_size: int,
        device: torch.device,
    ) -> None:
        self.terms = terms  # per row
        self.limits = list(limits)
        self.states = [_RowState((False,) * len(t.phrases), (0,) * len(t.phrases)) for t in terms]
        self.steps = 0
        self.vocab_size = vocab_size
        self.device = device

    def mask(self) -> Tensor:
        mask = torch.zeros((len(self.states), self.vocab_size))
        for row, (terms, state) in enumerate(zip(self.terms, self.states, strict=True)):
            missing = state.missing(terms)
            if missing is None:
                continue
            mask[row, EOS_ID] = NEG_INF
            room = self.limits[row] - self.steps - 1  # tokens left after this one
            unmet = [p for p, m in zip(terms.phrases, state.met, strict=True) if not m]
            if sum(len(p) for p in unmet) <= room:
                continue  # even a token outside every phrase leaves room for all of them
            # Only tokens after which the missing phrases still fit: never a dead end.
            mask[row] = NEG_INF
            for token in sorted({t for p in unmet for t in p}):
                after = state.after(terms, token).missing(terms)
                if after is None or after[0] <= room:
                    mask[row, token] = 0.0
            if bool(torch.isinf(mask[row]).all()):  # too little room from the start
                _, first = missing
                mask[row, terms.phrases[first][state.partial[first]]] = 0.0
        return mask.to(self.device)

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        self.terms = [self.terms[r] for r in rows]
        self.limits = [self.limits[r] for r in rows]
        self.states = [
            self.states[r].after(self.terms[i], token)
            for i, (r, token) in enumerate(zip(rows, tokens, strict=True))
        ]
        self.steps += 1

    def keep(self, rows: Sequence[int]) -> None:
        self.terms = [self.terms[r] for r in rows]
        self.limits = [self.limits[r] for r in rows]
        self.states = [self.states[r] for r in rows]

    # -- what dynamic beam allocation asks ---------------------------------------------------

    def progress_after(self, row: int, token: int) -> int:
        """``row``'s progress (phrase tokens produced: its bank) if it continues with ``token``."""
        return self.states[row].after(self.terms[row], token).progress(self.terms[row])

    def wanted(self, row: int) -> list[int]:
        """Tokens that start or continue a phrase ``row`` still misses."""
        state, terms = self.states[row], self.terms[row]
        tokens = set()
        for j, phrase in enumerate(terms.phrases):
            if not state.met[j]:
                tokens.add(phrase[state.partial[j]])
                tokens.add(phrase[0])
        return sorted(tokens)


class TermConstraint(OutputConstraint):
    """Each sentence's output must contain each of its target phrases.

    Args:
        phrases: per sentence of the batch (in batch order), its phrases as token ids
            (an empty list: no constraint for that sentence).
        vocab_size: the target vocabulary size.
    """

    def __init__(self, phrases: Sequence[Sequence[Sequence[int]]], vocab_size: int) -> None:
        self.terms = [_Phrases.of(p) for p in phrases]
        self.vocab_size = vocab_size

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> TermRows:
        rows = src_pad_mask.size(0)
        if not self.terms or rows % len(self.terms):
            raise ValueError(
                f"{rows} search rows do not fit the phrases of {len(self.terms)} sentences"
            )
        per_sentence = rows // len(self.terms)  # the beam size (1 for greedy search)
        terms = [self.terms[row // per_sentence] for row in range(rows)]
        return TermRows(terms, limits, self.vocab_size, src_pad_mask.device)


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
