"""Terminology constraints: target phrases that a sentence's output must contain.

Each sentence of a batch may carry target phrases (:class:`RequiredPhrase`: token ids, e.g. from
a glossary, a number or a link of the source, and the :class:`~anuvad.decoding.boundaries.
Boundary` the phrase must end at). :class:`TermConstraint` keeps, for every search row, which
phrases the output already holds and how far it is into each of the others (a KMP automaton per
phrase, so a partial match that breaks off falls back correctly), and guarantees that every
phrase appears, whole:

* EOS is forbidden while a phrase is missing, and so is a piece that ends a sentence ("।",
  "?", "!"; not ".", which also ends "Dr." and "3.5":
  :attr:`~anuvad.decoding.boundaries.BoundaryTable.final`) unless it starts or continues a
  missing phrase: a model that had finished its sentence wrote the phrase after the danda;
* a token is forbidden when the phrases still missing would no longer fit in the steps left to
  the output limit after it (counting the phrase the row is furthest into from where it is), so
  a phrase is never made impossible: near the limit the row can only go on with its phrases;
* right after a phrase's last token, a token that would glue onto it (``रेल`` + ``मार्ग``,
  ``250`` + ``0``) is forbidden, unless it continues another phrase the row is part-way
  into (then the first one counts as missing again: "2024" may be written before "20").
  Until the next token shows its boundary a phrase is *pending*: it counts as written for
  EOS and for the room left, since EOS and almost every token end it;
* a number does not begin at a joiner ("-", "/") right after a digit: "2345" in
  "011-2345-6789" is the telephone number's tail, as :func:`~anuvad.decoding.boundaries.holds`
  reads the text.

Beam search allocates its beams by progress through the phrases (dynamic beam allocation, Post
& Vilar 2018; candidates that start or continue a phrase are always considered, as in Hu et al.
2019): :func:`anuvad.decoding.beam_allocation.allocate_beams`, called by
:func:`anuvad.decoding.beam.beam_search`. Greedy
search gets the guarantee alone (measured against a small beam instead:
:mod:`anuvad.inference.required`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from anuvad.data.tokenizer import EOS_ID
from anuvad.decoding.boundaries import Boundary, BoundaryTable
from anuvad.decoding.constraints import ConstraintRows, OutputConstraint

NEG_INF = float("-inf")
Phrase = tuple[int, ...]
NUMERIC = (Boundary.NUMBER, Boundary.CODE)  # the boundaries of numbers


@dataclass(frozen=True)
class RequiredPhrase:
    """A phrase an output must contain.

    Attributes:
        tokens: its token ids (the form written when the search has to write it).
        boundary: what may follow its last token (``NONE``: anything).
        starts: other tokens accepted at position 0 in place of ``tokens[0]`` (a number's
            "▁" may be "▁(" or "$": :attr:`BoundaryTable.number_starts`); empty: exact.
    """

    tokens: Phrase
    boundary: Boundary = Boundary.NONE
    starts: frozenset[int] = field(default_factory=frozenset)

    def accepts(self, position: int, token: int) -> bool:
        """Whether ``token`` matches the phrase at ``position``."""
        return token == self.tokens[position] or (position == 0 and token in self.starts)


def failure_table(phrase: Phrase | RequiredPhrase) -> list[int]:
    """KMP: for each prefix length n, the length of the longest proper prefix of
    ``phrase[:n]`` that is also its suffix (index 0 unused, 0).

    With :attr:`RequiredPhrase.starts`, a border may begin at a text token that position 0
    accepts: only position 0 is a set, and a proper border's first token is a concrete one
    (position >= 1) of the match, so comparing concrete tokens against positions is exact."""
    required = phrase if isinstance(phrase, RequiredPhrase) else RequiredPhrase(tuple(phrase))
    tokens = required.tokens
    table = [0] * (len(tokens) + 1)
    k = 0
    for i in range(1, len(tokens)):
        while k and not required.accepts(k, tokens[i]):
            k = table[k]
        if required.accepts(k, tokens[i]):
            k += 1
        table[i + 1] = k
    return table


def next_partial(
    phrase: Phrase | RequiredPhrase, table: list[int], partial: int, token: int
) -> int:
    """The matched prefix length after ``token``, from ``partial`` (< len(phrase))."""
    required = phrase if isinstance(phrase, RequiredPhrase) else RequiredPhrase(tuple(phrase))
    while partial and not required.accepts(partial, token):
        partial = table[partial]
    return partial + 1 if required.accepts(partial, token) else 0


@dataclass(frozen=True)
class _Phrases:
    """One sentence's phrases with their KMP tables."""

    phrases: tuple[RequiredPhrase, ...]
    tables: tuple[list[int], ...]

    @classmethod
    def of(cls, phrases: Sequence[Sequence[int] | RequiredPhrase]) -> _Phrases:
        required = [
            p if isinstance(p, RequiredPhrase) else RequiredPhrase(tuple(p)) for p in phrases
        ]
        kept = tuple(p for p in required if p.tokens)
        return cls(kept, tuple(failure_table(p) for p in kept))

    def lengths(self, which: Sequence[bool]) -> int:
        """The tokens of the phrases where ``which`` is True."""
        return sum(len(p.tokens) for p, w in zip(self.phrases, which, strict=True) if w)


@dataclass(frozen=True)
class _RowState:
    """One row: which phrases are in its output, which just ended and wait for their boundary
    (``pending``: 1 right after the last token, 2 after passing punctuation too; 0 not), and
    the matched prefix of each other one."""

    met: tuple[bool, ...]
    partial: tuple[int, ...]
    pending: tuple[int, ...]
    after_digit: bool = False  # the last token holds a digit

    @classmethod
    def empty(cls, count: int) -> _RowState:
        """No phrase written or started."""
        return cls((False,) * count, (0,) * count, (0,) * count)

    def after(self, terms: _Phrases, token: int, table: BoundaryTable | None) -> _RowState:
        met, partial, pending = list(self.met), list(self.partial), list(self.pending)
        # "-" or "/" right after a digit joins the number before it ("2345" of "011-2345"):
        # it begins no number here, as :func:`holds` reads the text.
        joined = table is not None and self.after_digit and bool(table.joiners[token])
        for j, phrase in enumerate(terms.phrases):
            if pending[j]:
                assert table is not None  # only a bounded phrase waits
                if bool(table.glue[phrase.boundary][token]):
                    # Glued on: not the phrase after all. Right after its last token, match on
                    # as KMP does after a full match; after punctuation, from the start.
                    border = terms.tables[j][len(phrase.tokens)] if pending[j] == 1 else 0
                    pending[j], partial[j] = 0, border
                elif bool(table.passing[phrase.boundary][token]):
                    pending[j] = 2
                    continue
                else:
                    pending[j], met[j] = 0, True
                    continue
            if met[j]:
                continue
            partial[j] = next_partial(phrase, terms.tables[j], partial[j], token)
            if joined and partial[j] == 1 and phrase.boundary in NUMERIC:
                partial[j] = 0
            if partial[j] == len(phrase.tokens):
                partial[j] = 0
                if phrase.boundary is Boundary.NONE:
                    met[j] = True
                else:
                    pending[j] = 1
        digit = table is not None and bool(table.digits[token])
        return _RowState(tuple(met), tuple(partial), tuple(pending), digit)

    def done(self) -> tuple[bool, ...]:
        """Per phrase, written (met, or pending: EOS and most tokens would confirm it)."""
        return tuple(m or p > 0 for m, p in zip(self.met, self.pending, strict=True))

    def progress(self, terms: _Phrases) -> int:
        """Phrase tokens produced: whole phrases written, plus the longest partial match."""
        done = self.done()
        open_parts = [q for q, d in zip(self.partial, done, strict=True) if not d]
        return terms.lengths(done) + max(open_parts, default=0)

    def missing(self, terms: _Phrases) -> tuple[int, int] | None:
        """(tokens still needed, the phrase to continue first) or None when all are written."""
        unmet = [j for j, d in enumerate(self.done()) if not d]
        if not unmet:
            return None
        first = max(unmet, key=lambda j: (self.partial[j], -j))
        needed = sum(len(terms.phrases[j].tokens) for j in unmet) - self.partial[first]
        return needed, first

    def starting(self, terms: _Phrases) -> list[int]:
        """The first tokens of the phrases this row has not written."""
        return sorted({terms.phrases[j].tokens[0] for j, d in enumerate(self.done()) if not d})

    def continuing(self, terms: _Phrases) -> list[int]:
        """Tokens that continue a phrase this row is part-way into."""
        return sorted(
            {
                terms.phrases[j].tokens[q]
                for j, (q, d) in enumerate(zip(self.partial, self.done(), strict=True))
                if q and not d
            }
        )

    def guard(self, terms: _Phrases, table: BoundaryTable | None) -> Tensor | None:
        """(V,) bool: the tokens that would glue onto a pending phrase (None: none pending)."""
        bounds = {terms.phrases[j].boundary for j, p in enumerate(self.pending) if p}
        if not bounds or table is None:
            return None
        glue = torch.zeros_like(table.glue[Boundary.NONE])
        for boundary in bounds:
            glue |= table.glue[boundary]
        glue[self.continuing(terms)] = False  # another phrase goes on: allowed, see above
        return glue


class TermRows(ConstraintRows):
    """The phrase state of every search row (see :class:`TermConstraint`)."""

    def __init__(
        self,
        terms: list[_Phrases],
        limits: Sequence[int],
        vocab_size: int,
        device: torch.device,
        table: BoundaryTable | None = None,
    ) -> None:
        self.terms = terms  # per row
        self.limits = list(limits)
        self.states = [_RowState.empty(len(t.phrases)) for t in terms]
        self.steps = 0
        self.vocab_size = vocab_size
        self.device = device
        self.table = table

    def mask(self) -> Tensor:
        mask = torch.zeros((len(self.states), self.vocab_size))
        for row, (terms, state) in enumerate(zip(self.terms, self.states, strict=True)):
            guard = state.guard(terms, self.table)  # (V,) bool or None
            missing = state.missing(terms)
            if missing is not None:
                mask[row, EOS_ID] = NEG_INF
                if self.table is not None:
                    final = self.table.final.clone()
                    final[state.continuing(terms) + state.starting(terms)] = False
                    mask[row, final] = NEG_INF
                room = self.limits[row] - self.steps - 1  # tokens left after this one
                # A pending phrase may come undone by a token that continues another one.
                if terms.lengths([not m for m in state.met]) > room:
                    # Only tokens after which the missing phrases still fit: never a dead end.
                    self._only_fitting(mask, row, terms, state, room, guard)
                    continue
            if guard is not None:
                mask[row, guard] = NEG_INF
        return mask.to(self.device)

    def _only_fitting(
        self,
        mask: Tensor,
        row: int,
        terms: _Phrases,
        state: _RowState,
        room: int,
        guard: Tensor | None,
    ) -> None:
        """Near the limit: allow only the phrase tokens after which the missing phrases still
        fit in ``room`` tokens (and that do not glue onto a pending phrase)."""
        mask[row] = NEG_INF
        unmet = [p for p, d in zip(terms.phrases, state.done(), strict=True) if not d]
        for token in sorted({t for p in unmet for t in p.tokens}):
            if guard is not None and bool(guard[token]):
                continue
            after = state.after(terms, token, self.table).missing(terms)
            if after is None or after[0] <= room:
                mask[row, token] = 0.0
        if bool(torch.isinf(mask[row]).all()):  # too little room from the start
            missing = state.missing(terms)
            assert missing is not None
            _, first = missing
            mask[row, terms.phrases[first].tokens[state.partial[first]]] = 0.0

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        self.terms = [self.terms[r] for r in rows]
        self.limits = [self.limits[r] for r in rows]
        self.states = [
            self.states[r].after(self.terms[i], token, self.table)
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
        state = self.states[row].after(self.terms[row], token, self.table)
        return state.progress(self.terms[row])

    def closing(self, row: int, token: int) -> list[int] | None:
        """Where ``token`` is EOS: the tokens that continue a phrase ``row`` is part-way into,
        else those that start one it misses (None: it misses none, or ``token`` is not EOS).
        A sentence-final mark ends nothing here: a model that would write "।" with a number
        still missing often goes on to a sentence that holds it (closing there too cut
        NTREX-128's outputs with numbers to 0.82 of the reference's length, chrF++ 31.7 ->
        31.4)."""
        state, terms = self.states[row], self.terms[row]
        if token != EOS_ID or state.missing(terms) is None:
            return None
        return state.continuing(terms) or state.starting(terms)

    def wanted(self, row: int) -> list[int]:
        """Tokens that start or continue a phrase ``row`` still misses."""
        state, terms = self.states[row], self.terms[row]
        tokens = set()
        for j, (phrase, done) in enumerate(zip(terms.phrases, state.done(), strict=True)):
            if not done:
                tokens.add(phrase.tokens[state.partial[j]])
                tokens.add(phrase.tokens[0])
        return sorted(tokens)


class TermConstraint(OutputConstraint):
    """Each sentence's output must contain each of its target phrases.

    Args:
        phrases: per sentence of the batch (in batch order), its phrases: token ids (any
            boundary) or :class:`RequiredPhrase` (an empty list: no constraint for that
            sentence).
        vocab_size: the target vocabulary size.
        table: the target pieces' classes; needed when a phrase has a boundary.

    Raises:
        ValueError: a phrase has a boundary but there is no ``table``, or the table's
            vocabulary is not ``vocab_size``.
    """

    def __init__(
        self,
        phrases: Sequence[Sequence[Sequence[int] | RequiredPhrase]],
        vocab_size: int,
        table: BoundaryTable | None = None,
    ) -> None:
        self.terms = [_Phrases.of(p) for p in phrases]
        self.vocab_size = vocab_size
        self.table = table
        bounded = any(p.boundary is not Boundary.NONE for t in self.terms for p in t.phrases)
        if bounded and table is None:
            raise ValueError("phrases with a boundary need the BoundaryTable of the vocabulary")
        if table is not None and table.vocab_size != vocab_size:
            raise ValueError(
                f"the boundary table has {table.vocab_size} pieces, the vocabulary {vocab_size}"
            )

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> TermRows:
        rows = src_pad_mask.size(0)
        if not self.terms or rows % len(self.terms):
            raise ValueError(
                f"{rows} search rows do not fit the phrases of {len(self.terms)} sentences"
            )
        per_sentence = rows // len(self.terms)  # the beam size (1 for greedy search)
        terms = [self.terms[row // per_sentence] for row in range(rows)]
        return TermRows(terms, limits, self.vocab_size, src_pad_mask.device, self.table)
