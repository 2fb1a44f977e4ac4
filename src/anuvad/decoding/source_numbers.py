"""No number the source lacks: digits only where they write one of the sentence's phrases.

Requiring the source's numbers (:mod:`anuvad.decoding.terms`) puts them in the output, but a
small model still writes digits of its own around them ("80 जून 2024 को 2424 12" for "₹80 per
kg on 12 June 2024"; issue 34, item 4). :class:`SourceDigitsOnly`, in a sentence where every
digit of the source is inside a required phrase:

* forbids every target piece with a digit unless it continues one of those phrases from where
  the row is (a KMP automaton per phrase), and a phrase only as many times as it is given (as
  often as the source has it: "2024 को 2024" is not a translation of one "2024"); a phrase
  counts as written once the piece after it does not glue on (the phrase's boundary, as
  :mod:`anuvad.decoding.terms` decides it): "101" passes through "1", which the source's "floor
  1" may still write;
* once a number is begun (a digit, or a separator right after one) and no phrase is complete,
  allows only the pieces that continue it: "85" cannot stop at "8", "1,200" not at "1,";
* after a number and a joining piece ("-", "/", ".") begins no other number: "85-1-5-385" is
  not a number of "85 mph, a Category 1 Hurricane, as of 5 a.m. ... 385 miles" (a range the
  source has, "2019-20", is one phrase and goes on).

Sentences given no phrases are not restricted at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
from torch import Tensor

from anuvad.decoding.boundaries import Boundary, BoundaryTable
from anuvad.decoding.constraints import ConstraintRows, OutputConstraint
from anuvad.decoding.terms import NUMERIC, RequiredPhrase, failure_table, next_partial

NEG_INF = float("-inf")


class _SourceDigitRows(ConstraintRows):
    """Per row, its sentence's distinct phrases (None: unrestricted) and how often each may be
    written, the matched prefix of each, how often each was written (counting one that just
    ended and waits for its boundary, ``pending``: 1 right after it, 2 after a separator, as
    :class:`anuvad.decoding.terms.TermConstraint`'s rows), and whether the row is inside a
    number no phrase completes yet (``open``)."""

    def __init__(
        self,
        phrases: list[tuple[RequiredPhrase, ...] | None],
        allowed: list[tuple[int, ...] | None],
        table: BoundaryTable,
        device: torch.device,
    ) -> None:
        self.phrases = phrases  # per row
        self.allowed = allowed  # per row, per phrase: how many times
        self.tables = [None if p is None else tuple(failure_table(q) for q in p) for p in phrases]
        self.partial = [None if p is None else (0,) * len(p) for p in phrases]
        self.written = [None if p is None else (0,) * len(p) for p in phrases]
        self.pending = [None if p is None else (0,) * len(p) for p in phrases]
        self.open = [False] * len(phrases)
        self.joined = [False] * len(phrases)  # the last pieces: a digit, then a joiner
        self.last_digit = [False] * len(phrases)
        self.table = table
        self.device = device

    def _continuations(self, row: int, first: int) -> set[int]:
        """The tokens that continue a phrase of ``row`` at a matched prefix of at least
        ``first`` tokens (every prefix the row may be in the middle of: the KMP chain)."""
        phrases, tables, partial = self.phrases[row], self.tables[row], self.partial[row]
        allowed, written = self.allowed[row], self.written[row]
        assert phrases is not None and tables is not None and partial is not None
        assert allowed is not None and written is not None
        tokens = set()
        for phrase, kmp, q, most, done in zip(
            phrases, tables, partial, allowed, written, strict=True
        ):
            if done >= most:
                continue  # written as often as the source has it
            q = kmp[q] if q == len(phrase.tokens) else q
            while q >= first:
                tokens.add(phrase.tokens[q])
                if q == 0:
                    break
                q = kmp[q]
        return tokens

    def mask(self) -> Tensor:
        mask = torch.zeros((len(self.phrases), self.table.vocab_size))
        for row, phrases in enumerate(self.phrases):
            if phrases is None:
                continue
            if self.open[row]:
                # Right after "1800-", only a number begun before the "-" goes on: a phrase the
                # "-" itself began (a number's start may be a sign) would cut it ("1800-180-9").
                going_on = sorted(self._continuations(row, 2 if self.joined[row] else 1))
                if going_on:  # inside a number: only its continuations
                    mask[row] = NEG_INF
                    mask[row, going_on] = 0.0
                    continue
            forbidden = self.table.digits.clone()  # (V,) bool
            # Right after "85-", a digit may only go on with a number begun before the "-".
            forbidden[sorted(self._continuations(row, 2 if self.joined[row] else 0))] = False
            mask[row, forbidden] = NEG_INF
        return mask.to(self.device)

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        self.keep(rows)
        for i, token in enumerate(tokens):
            phrases, tables, partial = self.phrases[i], self.tables[i], self.partial[i]
            written, pending = self.written[i], self.pending[i]
            if (
                phrases is None
                or tables is None
                or partial is None
                or written is None
                or pending is None
            ):
                continue
            written, pending = self._confirm(phrases, written, pending, token)
            after = tuple(
                next_partial(p, kmp, kmp[q] if q == len(p.tokens) else q, token)
                for p, kmp, q in zip(phrases, tables, partial, strict=True)
            )
            if self.last_digit[i] and bool(self.table.joiners[token]):
                # "-" after a digit goes on with that number: it begins none ("011-2345"), as
                # in anuvad.decoding.terms
                after = tuple(
                    0 if q == 1 and p.boundary in NUMERIC else q
                    for p, q in zip(phrases, after, strict=True)
                )
            ended = [q == len(p.tokens) for p, q in zip(phrases, after, strict=True)]
            complete = any(ended)
            self.written[i] = tuple(n + e for n, e in zip(written, ended, strict=True))
            self.pending[i] = tuple(
                1 if e and p.boundary is not Boundary.NONE else w
                for p, e, w in zip(phrases, ended, pending, strict=True)
            )
            digit = bool(self.table.digits[token])
            joiner = bool(self.table.joiners[token])
            self.partial[i] = after
            self.open[i] = (digit or (joiner and self.open[i])) and not complete
            self.joined[i] = joiner and self.last_digit[i]
            self.last_digit[i] = digit

    def _confirm(
        self,
        phrases: tuple[RequiredPhrase, ...],
        written: tuple[int, ...],
        pending: tuple[int, ...],
        token: int,
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The counts and waits after ``token`` for the phrases that just ended: one it glues
        onto ("1" + "01") was not written after all; one it passes (a separator) waits on."""
        counts, waits = list(written), list(pending)
        for j, phrase in enumerate(phrases):
            if not waits[j]:
                continue
            if bool(self.table.glue[phrase.boundary][token]):
                counts[j], waits[j] = counts[j] - 1, 0
            elif bool(self.table.passing[phrase.boundary][token]):
                waits[j] = 2
            else:
                waits[j] = 0
        return tuple(counts), tuple(waits)

    def keep(self, rows: Sequence[int]) -> None:
        self.phrases = [self.phrases[r] for r in rows]
        self.allowed = [self.allowed[r] for r in rows]
        self.tables = [self.tables[r] for r in rows]
        self.partial = [self.partial[r] for r in rows]
        self.written = [self.written[r] for r in rows]
        self.pending = [self.pending[r] for r in rows]
        self.open = [self.open[r] for r in rows]
        self.joined = [self.joined[r] for r in rows]
        self.last_digit = [self.last_digit[r] for r in rows]


class SourceDigitsOnly(OutputConstraint):
    """Digits only inside the required phrases, for the sentences given some.

    Args:
        phrases: per sentence of the batch (in batch order), the phrases whose digits it may
            write (its numbers, and any other required phrase: a link or term may hold digits),
            each as many times as it may be written; None: the sentence is not restricted.
        table: the target pieces' classes (:attr:`BoundaryTable.digits`).
    """

    def __init__(
        self, phrases: Sequence[Sequence[RequiredPhrase] | None], table: BoundaryTable
    ) -> None:
        self.phrases: list[tuple[RequiredPhrase, ...] | None] = []
        self.allowed: list[tuple[int, ...] | None] = []
        for given in phrases:
            counts = Counter(p for p in given if p.tokens) if given is not None else None
            self.phrases.append(None if counts is None else tuple(counts))
            self.allowed.append(None if counts is None else tuple(counts.values()))
        self.table = table

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> ConstraintRows:
        rows = src_pad_mask.size(0)
        if not self.phrases or rows % len(self.phrases):
            raise ValueError(
                f"{rows} search rows do not fit the phrases of {len(self.phrases)} sentences"
            )
        per_sentence = rows // len(self.phrases)  # the beam size (1 for greedy search)
        sentence = [row // per_sentence for row in range(rows)]
        return _SourceDigitRows(
            [self.phrases[i] for i in sentence],
            [self.allowed[i] for i in sentence],
            self.table,
            src_pad_mask.device,
        )
