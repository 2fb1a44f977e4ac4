"""Constrained search: which tokens a hypothesis may take next.

An :class:`OutputConstraint` is asked, at every step of greedy or beam search, for an additive
mask over the vocabulary (0 = allowed, -inf = forbidden) for each search row, and is told which
rows continue with which tokens. :class:`NoRepeatNGram` blocks repeated n-grams; parsing's
well-formed-tree constraint (:mod:`anuvad.parsing.constraint`) plugs in through the same hook.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import torch
from torch import Tensor

from anuvad.data.tokenizer import EOS_ID

NEG_INF = float("-inf")


class ConstraintRows(ABC):
    """The constraint's state for every row of one search, kept in step with the search."""

    @abstractmethod
    def mask(self) -> Tensor:
        """(N, V) float32: 0 where a row may take a token next, -inf where it may not."""

    @abstractmethod
    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        """The next step's row i continues this step's row ``rows[i]`` with ``tokens[i]``."""

    @abstractmethod
    def keep(self, rows: Sequence[int]) -> None:
        """Keep only ``rows`` (in that order), without a new token (rows that left the search)."""

    def parts(self) -> list[ConstraintRows]:
        """The constraints this state combines (itself when it is one)."""
        return [self]

    def closing(self, row: int, token: int) -> list[int] | None:
        """For a greedy search whose model would write ``token`` next, which this constraint
        forbids: when ``token`` would end the row (for required phrases: EOS), the tokens that
        write what the row must still hold instead (the rest of a required phrase); None when
        it would not end it, nothing is left to write, or this constraint does not say."""
        return None


class OutputConstraint(ABC):
    """Restricts what a search may output; :meth:`start` begins one search."""

    @abstractmethod
    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> ConstraintRows:
        """State for rows with sources ``src_pad_mask`` (N, S) and output limits (N,) tokens."""


class _NGramRows(ConstraintRows):
    """Every row's output so far, as one (N, t) tensor (all rows grow one token per step)."""

    def __init__(
        self,
        size: int,
        vocab_size: int,
        count: int,
        device: torch.device,
        may_run: Tensor | None = None,
    ) -> None:
        self.size = size
        self.vocab_size = vocab_size
        self.history = torch.empty((count, 0), dtype=torch.long, device=device)  # (N, t)
        self.may_run = may_run.to(device) if may_run is not None else None  # (V,) bool

    def mask(self) -> Tensor:
        rows, steps = self.history.shape
        mask = torch.zeros((rows, self.vocab_size), device=self.history.device)
        n = self.size
        if steps >= n:
            windows = self.history.unfold(1, n, 1)  # (N, t - n + 1, n): every n-gram so far
            suffix = self.history[:, steps - (n - 1) :]  # (N, n - 1): what the next one extends
            repeats = (windows[:, :, : n - 1] == suffix[:, None, :]).all(dim=-1)  # (N, t-n+1)
            row, start = repeats.nonzero(as_tuple=True)
            mask[row, windows[row, start, n - 1]] = NEG_INF
        if n > 2 and steps >= 2:  # no piece a third time in a row ("टो टो टो" is a new 3-gram)
            last = self.history[:, -1]  # (N,)
            repeated = last == self.history[:, -2]
            if self.may_run is not None:
                repeated &= ~self.may_run[last]
            twice = repeated.nonzero(as_tuple=True)[0]
            mask[twice, last[twice]] = NEG_INF
        mask[:, EOS_ID] = 0.0  # ending is always allowed
        return mask

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        index = torch.tensor(list(rows), dtype=torch.long, device=self.history.device)
        new = torch.tensor(list(tokens), dtype=torch.long, device=self.history.device)
        self.history = torch.cat([self.history.index_select(0, index), new[:, None]], dim=1)

    def keep(self, rows: Sequence[int]) -> None:
        index = torch.tensor(list(rows), dtype=torch.long, device=self.history.device)
        self.history = self.history.index_select(0, index)


class NoRepeatNGram(OutputConstraint):
    """No n-gram of ``size`` tokens twice in one output (``no_repeat_ngram_size`` of fairseq
    and Hugging Face): a token that would complete an n-gram the row already wrote is
    forbidden. Stops the loops a weak model falls into on unfamiliar input ("चम चम चम ...").
    With n > 2 a piece is also never written a third time in a row: "x x x" is a new n-gram,
    and greedy search wrote such runs ("ऑटोटोटो", runs of quotes) where n-grams alone let it;
    pieces marked in ``may_run`` are exempt (digits: "1000" is three "0" pieces in a row).

    Args:
        size: n, in target pieces (>= 1; 1 forbids repeating any piece).
        vocab_size: the target vocabulary size.
    """

    def __init__(self, size: int, vocab_size: int, may_run: Tensor | None = None) -> None:
        if size < 1:
            raise ValueError(f"no_repeat_ngram_size must be at least 1, got {size}")
        self.size = size
        self.vocab_size = vocab_size
        self.may_run = may_run

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> ConstraintRows:
        count, device = src_pad_mask.size(0), src_pad_mask.device
        return _NGramRows(self.size, self.vocab_size, count, device, self.may_run)


class _AllRows(ConstraintRows):
    def __init__(self, members: list[ConstraintRows]) -> None:
        self.members = members

    def mask(self) -> Tensor:
        masks = [part.mask() for part in self.members]  # each (N, V)
        total = masks[0]
        for mask in masks[1:]:
            total = total + mask.to(total.device)  # -inf anywhere stays -inf
        # Where together they forbid everything, the first constraint alone decides (a
        # required phrase outranks repetition blocking).
        blocked = torch.isinf(total).all(dim=-1)  # (N,)
        if len(masks) > 1 and bool(blocked.any()):
            total[blocked] = masks[0][blocked].to(total.device)
        return total

    def parts(self) -> list[ConstraintRows]:
        return [p for member in self.members for p in member.parts()]

    def closing(self, row: int, token: int) -> list[int] | None:
        return next(
            (found for m in self.members if (found := m.closing(row, token)) is not None), None
        )

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        for member in self.members:
            member.advance(rows, tokens)

    def keep(self, rows: Sequence[int]) -> None:
        for member in self.members:
            member.keep(rows)


class AllOf(OutputConstraint):
    """Every one of ``constraints`` at once: a token is allowed where all of them allow it;
    where they leave a row nothing, the first one decides."""

    def __init__(self, constraints: Sequence[OutputConstraint]) -> None:
        if not constraints:
            raise ValueError("AllOf needs at least one constraint")
        self.constraints = list(constraints)

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> ConstraintRows:
        return _AllRows([c.start(src_pad_mask, limits) for c in self.constraints])


def admits(constraint: OutputConstraint, tokens: Sequence[int], limit: int, ended: bool) -> bool:
    """Whether a search of one sentence under ``constraint`` could have written ``tokens``.

    Args:
        constraint: the constraint, built for that one sentence.
        tokens: an output's tokens (EOS not among them).
        limit: the sentence's output limit in tokens.
        ended: whether the output ended (then EOS must be allowed after its tokens).

    Returns:
        True when every token is allowed where it came (and EOS after them, if ``ended``).
    """
    rows = constraint.start(torch.zeros((1, 1), dtype=torch.bool), [limit])
    for token in tokens:
        if bool(torch.isinf(rows.mask()[0, token])):
            return False
        rows.advance([0], [token])
    return not ended or not bool(torch.isinf(rows.mask()[0, EOS_ID]))


class _Written(Protocol):
    """What a search wrote for one output: its tokens, and whether it ended."""

    @property
    def token_ids(self) -> list[int]: ...
    @property
    def finished(self) -> bool: ...


W = TypeVar("W", bound=_Written)  # a search's output (a Hypothesis, an engine's Candidate)


def free_first(
    sources: list[list[int]],
    constraint_for: Callable[[list[int]], OutputConstraint | None],
    run: Callable[[list[list[int]], OutputConstraint | None], list[list[W]]],
    limits: Sequence[int],
    checked: int,
) -> list[list[W]]:
    """Outputs per source: every source searched without its constraint first, and again under
    it only where one of its first ``checked`` free outputs could not have been written under it
    (:func:`admits`): a constraint that a free output already meets changes nothing.

    Args:
        sources: the batch's source ids.
        constraint_for: the constraint of the sources at these indices (None: they have none).
        run: searches some sources under a constraint (None: freely).
        limits: each source's output limit in tokens.
        checked: how many of each source's outputs must meet it (the n-best returned).

    Returns:
        Per source, in order, the outputs of the free search or of the constrained one.
    """
    found = run(sources, None)
    redo = []
    for j, outputs in enumerate(found):
        alone = constraint_for([j])
        if alone is not None and not all(
            admits(alone, o.token_ids, limits[j], o.finished) for o in outputs[:checked]
        ):
            redo.append(j)
    if redo:
        again = run([sources[j] for j in redo], constraint_for(redo))
        for j, outputs in zip(redo, again, strict=True):
            found[j] = outputs
    return found


def search_constraint(
    no_repeat_ngram_size: int,
    vocab_size: int,
    extra: OutputConstraint | None = None,
    first: OutputConstraint | None = None,
    may_run: Tensor | None = None,
) -> OutputConstraint | None:
    """The constraint one search runs under: ``first`` (e.g. required terms: it decides where
    the others would leave nothing), ``extra`` (e.g. a tree constraint) and, with
    ``no_repeat_ngram_size`` > 0, repeated n-grams blocked (``may_run``: the pieces that may
    come three times in a row, :class:`NoRepeatNGram`); None when there is none."""
    parts = [c for c in (first, extra) if c is not None]
    if no_repeat_ngram_size > 0:
        parts.append(NoRepeatNGram(no_repeat_ngram_size, vocab_size, may_run))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AllOf(parts)
