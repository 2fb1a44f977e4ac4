"""No number the source lacks: on random tiny models (greedy and beam, with the required phrases
and repetition blocking), every digit of a restricted sentence's output lies inside an
occurrence of one of its phrases, the phrases are still all there, and unrestricted sentences
decode exactly as without."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
import torch
from test_search import SOURCES
from test_terms import PIECES, TABLE, bounded_phrases, held_whole

from anuvad.decoding.boundaries import Boundary
from anuvad.decoding.constraints import AllOf, search_constraint
from anuvad.decoding.source_numbers import SourceDigitsOnly
from anuvad.decoding.terms import RequiredPhrase, TermConstraint
from conftest import random_model, search_outputs

pytestmark = pytest.mark.usefixtures("one_thread")


def stray_digits(tokens: Sequence[int], phrases: Sequence[RequiredPhrase]) -> list[int]:
    """Positions of digit pieces not covered by an occurrence of a phrase."""
    covered: set[int] = set()
    for phrase in phrases:
        n = len(phrase.tokens)
        for i in range(len(tokens) - n + 1):
            if all(phrase.accepts(p, tokens[i + p]) for p in range(n)):
                covered.update(range(i, i + n))
    return [i for i, t in enumerate(tokens) if bool(TABLE.digits[t]) and i not in covered]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("no_repeat", [0, 2])
def test_restricted_outputs_write_digits_only_inside_their_phrases(
    seed: int, k: int, no_repeat: int
) -> None:
    rng = random.Random(seed * 11 + k)
    model = random_model(seed, len(PIECES))
    phrases = bounded_phrases(rng)
    restricted = [bool(p) and rng.random() < 0.7 for p in phrases]
    terms = TermConstraint(phrases, len(PIECES), TABLE)
    digits = SourceDigitsOnly(
        [p if r else None for p, r in zip(phrases, restricted, strict=True)], TABLE
    )
    constraint = search_constraint(no_repeat, len(PIECES), first=AllOf([terms, digits]))
    results = search_outputs(model, SOURCES, k, constraint, max_len=(1.0, 6))
    for wanted, limited, hypotheses in zip(phrases, restricted, results, strict=True):
        for hypothesis in hypotheses:
            assert all(held_whole(hypothesis.token_ids, p) for p in wanted)
            if limited:
                assert stray_digits(hypothesis.token_ids, wanted) == [], hypothesis.token_ids


def test_the_check_bites_without_the_restriction() -> None:
    """The same searches with the phrases alone write digits of their own somewhere."""
    strays = 0
    for seed in range(12):
        rng = random.Random(seed * 11 + 3)
        model = random_model(seed, len(PIECES))
        phrases = bounded_phrases(rng)
        terms = TermConstraint(phrases, len(PIECES), TABLE)
        for wanted, hypotheses in zip(
            phrases, search_outputs(model, SOURCES, 3, terms, max_len=(1.0, 6)), strict=True
        ):
            strays += sum(len(stray_digits(h.token_ids, wanted)) for h in hypotheses if wanted)
    assert strays > 0


def test_unrestricted_sentences_decode_as_without() -> None:
    model = random_model(5, len(PIECES))
    plain = search_outputs(model, SOURCES, 3, None, max_len=(1.0, 6))
    none = SourceDigitsOnly([None] * len(SOURCES), TABLE)
    same = search_outputs(model, SOURCES, 3, none, max_len=(1.0, 6))
    assert [[h.token_ids for h in a] for a in plain] == [[h.token_ids for h in b] for b in same]


def test_a_number_is_written_as_often_as_the_source_has_it_and_finished_once_begun() -> None:
    """Given twice, "▁12 ▁12" is allowed but "▁122" is not; once "▁1" is written only "2" may
    follow ("12" cannot stop at "1"); given once, no third "1" after the second "12"."""
    twelve = RequiredPhrase((4, 5, 6), starts=TABLE.number_starts)  # ▁ 1 2
    rows = SourceDigitsOnly([[twelve, twelve]], TABLE).start(
        torch.zeros((1, 2), dtype=torch.bool), [20]
    )
    for token in (4, 5):
        rows.advance([0], [token])
    mask = rows.mask()[0]
    assert mask[6] == 0.0 and int((mask == 0).sum()) == 1  # inside "12": only its "2"
    for token in (6, 4):
        rows.advance([0], [token])
    assert rows.mask()[0, 5] == 0.0  # the second "1"
    rows.advance([0], [5])
    rows.advance([0], [6])
    mask = rows.mask()[0]
    assert mask[5] == float("-inf") and mask[6] == float("-inf")  # twice written: no digit
    assert mask[4] == 0.0 and mask[7] == 0.0 and mask[9] == 0.0  # anything else is free
    once = SourceDigitsOnly([[twelve]], TABLE).start(torch.zeros((1, 2), dtype=torch.bool), [20])
    for token in (4, 5, 6, 4):
        once.advance([0], [token])
    assert once.mask()[0, 5] == float("-inf")  # "12" is written: no second one


def test_a_number_goes_on_through_its_separators() -> None:
    """ "▁1.2" required: after "▁1" only "."; after "▁1." only "2" (not a stop at "1.")."""
    number = RequiredPhrase((4, 5, 9, 6), starts=TABLE.number_starts)  # ▁ 1 . 2
    rows = SourceDigitsOnly([[number]], TABLE).start(torch.zeros((1, 2), dtype=torch.bool), [20])
    for token, only in ((4, None), (5, 9), (9, 6)):
        rows.advance([0], [token])
        mask = rows.mask()[0]
        if only is not None:
            assert mask[only] == 0.0 and int((mask == 0).sum()) == 1, token


def test_no_number_is_begun_right_after_a_number_and_a_joiner() -> None:
    """ "85" and "1" given: after "▁85-" no "1" (it would write "85-1", a number the source
    lacks); after "▁85 -" it may start ("-" after a word start is a sign or a dash)."""
    eighty_five = RequiredPhrase((4, 6, 5), starts=TABLE.number_starts)  # ▁ 2 1
    one = RequiredPhrase((4, 5), starts=TABLE.number_starts)  # ▁ 1
    for tokens, allowed in (((4, 6, 5, 13), False), ((4, 6, 5, 4, 13), True)):
        rows = SourceDigitsOnly([[eighty_five, one]], TABLE).start(
            torch.zeros((1, 2), dtype=torch.bool), [20]
        )
        for token in tokens:
            rows.advance([0], [token])
        assert bool(rows.mask()[0, 5] == 0.0) is allowed, tokens


def test_inside_a_number_after_a_joiner_only_that_number_goes_on() -> None:
    """ "1-12" and "2" given (as "1800-180-1234" and "9"): after "▁1-" only "1" of "1-12" may
    follow, not "2", which the "-" seemed to begin (a number may start with a sign); the output
    read "1800-180-9", a number the source lacks."""
    long = RequiredPhrase((4, 5, 13, 5, 6), starts=TABLE.number_starts)  # ▁ 1 - 1 2
    two = RequiredPhrase((4, 6), starts=TABLE.number_starts)  # ▁ 2
    rows = SourceDigitsOnly([[long, two]], TABLE).start(torch.zeros((1, 2), dtype=torch.bool), [20])
    for token in (4, 5, 13):
        rows.advance([0], [token])
    mask = rows.mask()[0]
    assert mask[5] == 0.0 and mask[6] == float("-inf")


def start_rows(phrases: Sequence[RequiredPhrase], tokens: Sequence[int]) -> torch.Tensor:
    """The mask of one restricted row after ``tokens``."""
    rows = SourceDigitsOnly([list(phrases)], TABLE).start(
        torch.zeros((1, 2), dtype=torch.bool), [20]
    )
    for token in tokens:
        rows.advance([0], [token])
    return rows.mask()[0]


def test_a_number_inside_a_longer_one_is_not_written_by_it() -> None:
    """ "1" and "121" given (as "floor 1" and "Room 101"): writing "▁121" passes through "▁1",
    which must not count as the "1": after it the "1" may still be written, once; "▁1 ▁121"
    writes both, and then no third "1"; a separator passes ("▁1." then "▁": the "1" is written)."""
    one = RequiredPhrase((4, 5), Boundary.NUMBER, TABLE.number_starts)  # ▁ 1
    long = RequiredPhrase((4, 5, 6, 5), Boundary.NUMBER, TABLE.number_starts)  # ▁ 1 2 1
    assert start_rows([one, long], (4, 5, 6, 5, 4))[5] == 0.0  # "▁121 ▁" then "1"
    assert start_rows([one, long], (4, 5, 7, 4))[5] == 0.0  # "▁1 ▁a ▁": the "121" may start
    written = start_rows([one, long], (4, 5, 6, 5, 4, 5, 7, 4))  # "▁121 ▁1 ▁a ▁"
    assert written[5] == float("-inf") and written[6] == float("-inf")
    assert start_rows([one], (4, 5, 9, 4))[5] == float("-inf")  # "▁1. ▁": the "1" is written


def test_a_hyphen_after_a_digit_begins_no_number_it_writes() -> None:
    """ "12" and "2-12" given: writing "▁2-12" does not write the "12" (it is the tail of the
    longer number), so "12" may still be written once after it."""
    twelve = RequiredPhrase((4, 5, 6), Boundary.NUMBER, TABLE.number_starts)  # ▁ 1 2
    joined = RequiredPhrase((4, 6, 13, 5, 6), Boundary.NUMBER, TABLE.number_starts)  # ▁ 2 - 1 2
    assert start_rows([twelve, joined], (4, 6, 13, 5, 6, 7, 4))[5] == 0.0
    assert start_rows([twelve, joined], (4, 6, 13, 5, 6, 7, 4, 5, 6, 7, 4))[5] == float("-inf")
