"""Repetition blocking: a search under NoRepeatNGram never writes an n-gram twice."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import EOS_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.constraints import (
    AllOf,
    ConstraintRows,
    OutputConstraint,
    search_constraint,
)
from anuvad.decoding.greedy import greedy_search
from conftest import random_model, search_outputs

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB = 13  # target pieces: the four special ids and nine others
SOURCES = [[5, 9, 12, 7, 22, 8, 14], [6], [11, 4, 29, 17], [13, 13, 20, 5, 6, 7, 8, 9, 10], [25]]


def ngrams(tokens: list[int], n: int) -> list[tuple[int, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("beam", [1, 3])
def test_no_repeat_ngram_never_writes_an_n_gram_twice(size: int, beam: int) -> None:
    """A random model loops; under the constraint no output holds an n-gram twice, and the
    unconstrained search does (so the constraint did something)."""
    from anuvad.decoding.constraints import NoRepeatNGram

    model, constraint = random_model(5, VOCAB), NoRepeatNGram(size, VOCAB)
    src_ids, src_pad_mask = collate_source(SOURCES)
    for hyps in search_outputs(model, SOURCES, beam, constraint):
        for hyp in hyps:
            grams = ngrams(hyp.token_ids, size)
            assert len(grams) == len(set(grams)), hyp.token_ids
    free = greedy_search(model, src_ids, src_pad_mask, DecodeConfig(max_len_a=3.0, max_len_b=10))
    assert any(len(ngrams(h.token_ids, size)) > len(set(ngrams(h.token_ids, size))) for h in free)


def test_no_repeat_ngram_mask_forbids_exactly_the_repeating_continuations() -> None:
    from anuvad.decoding.constraints import NoRepeatNGram

    rows = NoRepeatNGram(2, 12).start(torch.zeros((2, 3), dtype=torch.bool), [20, 20])
    for step in ([5, 4], [6, 4], [5, 4], [7, 4]):  # row 0: 5 6 5 7 ; row 1: 4 4 4 4
        rows.advance([0, 1], step)
    mask = rows.mask()
    # Row 0 ends in 7: "7 x" never occurred, nothing is forbidden. Row 1 ends in 4: "4 4" was
    # written, so 4 is forbidden.
    assert torch.isinf(mask[0]).sum() == 0
    assert torch.isinf(mask[1]).nonzero().flatten().tolist() == [4]
    rows.advance([0], [5])  # row 0 continues (5 6 5 7 5); row 1 left the search
    assert torch.isinf(rows.mask()[0]).nonzero().flatten().tolist() == [6, 7]
    assert rows.mask()[0, EOS_ID] == 0  # ending is never forbidden
    with pytest.raises(ValueError, match="at least 1"):
        NoRepeatNGram(0, 12)


@pytest.mark.parametrize("beam", [1, 3])
def test_from_trigram_blocking_on_no_piece_is_written_three_times_in_a_row(beam: int) -> None:
    """ "x x x" is a new 3-gram, so n-gram blocking alone let greedy search write runs
    ("ऑटोटोटो"); with n > 2 the third piece in a row is forbidden too."""
    from anuvad.decoding.constraints import NoRepeatNGram

    rows = NoRepeatNGram(3, 12).start(torch.zeros((2, 3), dtype=torch.bool), [20, 20])
    for step in ([5, 4], [6, 4]):  # row 0: 5 6 ; row 1: 4 4
        rows.advance([0, 1], step)
    mask = rows.mask()
    assert torch.isinf(mask[0]).sum() == 0
    assert torch.isinf(mask[1]).nonzero().flatten().tolist() == [4]
    may_run = torch.zeros(12, dtype=torch.bool)
    may_run[4] = True  # a digit piece: "1000" is three "0" in a row
    exempt = NoRepeatNGram(3, 12, may_run).start(torch.zeros((1, 3), dtype=torch.bool), [20])
    for step in ([4], [4]):
        exempt.advance([0], step)
    assert torch.isinf(exempt.mask()[0]).sum() == 0
    model = random_model(5, VOCAB)
    for hyps in search_outputs(model, SOURCES, beam, NoRepeatNGram(3, VOCAB)):
        for hyp in hyps:
            ids = hyp.token_ids
            assert not any(ids[i] == ids[i + 1] == ids[i + 2] for i in range(len(ids) - 2)), ids


class BanRows(ConstraintRows):
    """Test constraint state: one token forbidden on every row, rows tracked by count."""

    def __init__(self, token: int, rows: int) -> None:
        self.token, self.rows = token, rows

    def mask(self) -> torch.Tensor:
        mask = torch.zeros(self.rows, VOCAB)
        mask[:, self.token] = float("-inf")
        return mask

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        self.rows = len(rows)

    def keep(self, rows: Sequence[int]) -> None:
        self.rows = len(rows)


class Ban(OutputConstraint):
    def __init__(self, token: int) -> None:
        self.token = token

    def start(self, src_pad_mask: torch.Tensor, limits: Sequence[int]) -> ConstraintRows:
        return BanRows(self.token, src_pad_mask.size(0))


@pytest.mark.parametrize("beam", [1, 3])
def test_all_of_meets_every_constraint_at_once(beam: int) -> None:
    model = random_model(5, VOCAB)
    src_ids, src_pad_mask = collate_source(SOURCES)
    free = greedy_search(model, src_ids, src_pad_mask, DecodeConfig(max_len_a=3.0, max_len_b=10))
    common = max(range(4, VOCAB), key=lambda t: sum(h.token_ids.count(t) for h in free))
    assert any(common in h.token_ids for h in free)  # the ban will have something to do
    both = search_constraint(2, VOCAB, Ban(common))
    assert isinstance(both, AllOf)
    for hyps in search_outputs(model, SOURCES, beam, both):
        for hyp in hyps:
            assert common not in hyp.token_ids
            grams = ngrams(hyp.token_ids, 2)
            assert len(grams) == len(set(grams)), hyp.token_ids


def test_search_constraint_is_none_or_the_single_constraint_when_there_is_one() -> None:
    from anuvad.decoding.constraints import NoRepeatNGram

    assert search_constraint(0, 10) is None
    assert isinstance(search_constraint(3, 10), NoRepeatNGram)
    ban = Ban(4)
    assert search_constraint(0, 10, ban) is ban
    with pytest.raises(ValueError, match="at least one"):
        AllOf([])
