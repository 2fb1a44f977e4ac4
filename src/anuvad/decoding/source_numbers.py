"""No number the source lacks: digits only where they write one of the sentence's phrases.

Requiring the source's numbers (:mod:`anuvad.decoding.terms`) puts them in the output, but a
small model still writes digits of its own around them ("80 जून 2024 को 2424 12" for "₹80 per
kg on 12 June 2024"; issue 34, item 4). :class:`SourceDigitsOnly` forbids, in a sentence where
every digit of the source is inside a required phrase, every target piece with a digit unless it
continues one of those phrases from where the row is (a KMP automaton per phrase that keeps
matching after a full match, so a number may be written twice). Sentences given no phrases are
not restricted at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from anuvad.decoding.boundaries import BoundaryTable
from anuvad.decoding.constraints import ConstraintRows, OutputConstraint
from anuvad.decoding.terms import RequiredPhrase, failure_table, next_partial

NEG_INF = float("-inf")


class _SourceDigitRows(ConstraintRows):
    """Per row, its sentence's phrases (None: unrestricted) and the matched prefix of each."""

    def __init__(
        self,
        phrases: list[tuple[RequiredPhrase, ...] | None],
        table: BoundaryTable,
        device: torch.device,
    ) -> None:
        self.phrases = phrases  # per row
        self.tables = [None if p is None else tuple(failure_table(q) for q in p) for p in phrases]
        self.partial = [None if p is None else (0,) * len(p) for p in phrases]
        self.table = table
        self.device = device

    def mask(self) -> Tensor:
        vocab = self.table.vocab_size
        mask = torch.zeros((len(self.phrases), vocab))
        digits = self.table.digits  # (V,) bool
        for row, (phrases, tables, partial) in enumerate(
            zip(self.phrases, self.tables, self.partial, strict=True)
        ):
            if phrases is None or tables is None or partial is None:
                continue
            allowed = digits.clone()  # (V,) True where the row may not write the piece
            for phrase, kmp, q in zip(phrases, tables, partial, strict=True):
                q = kmp[q] if q == len(phrase.tokens) else q
                while True:  # every prefix the row may be in the middle of
                    allowed[phrase.tokens[q]] = False
                    if q == 0:
                        break
                    q = kmp[q]
            mask[row, allowed] = NEG_INF
        return mask.to(self.device)

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        self.keep(rows)
        for i, token in enumerate(tokens):
            phrases, tables, partial = self.phrases[i], self.tables[i], self.partial[i]
            if phrases is None or tables is None or partial is None:
                continue
            self.partial[i] = tuple(
                next_partial(p, kmp, kmp[q] if q == len(p.tokens) else q, token)
                for p, kmp, q in zip(phrases, tables, partial, strict=True)
            )

    def keep(self, rows: Sequence[int]) -> None:
        self.phrases = [self.phrases[r] for r in rows]
        self.tables = [self.tables[r] for r in rows]
        self.partial = [self.partial[r] for r in rows]


class SourceDigitsOnly(OutputConstraint):
    """Digits only inside the required phrases, for the sentences given some.

    Args:
        phrases: per sentence of the batch (in batch order), the phrases whose digits it may
            write (its numbers, and any other required phrase: a link or term may hold digits);
            None: the sentence is not restricted.
        table: the target pieces' classes (:attr:`BoundaryTable.digits`).
    """

    def __init__(
        self, phrases: Sequence[Sequence[RequiredPhrase] | None], table: BoundaryTable
    ) -> None:
        self.phrases = [None if p is None else tuple(q for q in p if q.tokens) for p in phrases]
        self.table = table

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> ConstraintRows:
        rows = src_pad_mask.size(0)
        if not self.phrases or rows % len(self.phrases):
            raise ValueError(
                f"{rows} search rows do not fit the phrases of {len(self.phrases)} sentences"
            )
        per_sentence = rows // len(self.phrases)  # the beam size (1 for greedy search)
        per_row = [self.phrases[row // per_sentence] for row in range(rows)]
        return _SourceDigitRows(per_row, self.table, src_pad_mask.device)
