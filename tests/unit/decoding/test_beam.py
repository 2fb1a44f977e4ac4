"""Beam search: beam 1 = greedy, cached = uncached, exhaustive search for wide beams, length
penalty against hand-computed values, n-best ordering, batching, limits."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import pytest
import torch
from test_search import CASES, SOURCES, case_model, full_model_score, with_output_bias

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.greedy import greedy_search
from anuvad.decoding.search import Hypothesis, length_normalizer
from anuvad.errors import ConfigError
from anuvad.model.transformer import Transformer

pytestmark = pytest.mark.usefixtures("one_thread")


def beams(
    model: Transformer,
    sources: Sequence[Sequence[int]],
    k: int,
    length_penalty: float = 0.6,
    a: float = 1.0,
    b: int = 3,
    *,
    use_cache: bool = True,
    **settings: Any,
) -> list[list[Hypothesis]]:
    """Beam search over ``sources``: beam ``k``, ``length_penalty``, limit a * S + b and the
    other ``settings`` (nbest, early_stopping ...)."""
    src_ids, src_pad_mask = collate_source(sources)
    d = DecodeConfig(
        beam_size=k, length_penalty=length_penalty, max_len_a=a, max_len_b=b, **settings
    )
    return beam_search(model, src_ids, src_pad_mask, d, use_cache=use_cache)


def greedy(
    model: Transformer, sources: Sequence[Sequence[int]], *, use_cache: bool = True
) -> list[Hypothesis]:
    """Greedy search over ``sources`` with this module's default limit 1 * S + 3."""
    src_ids, src_pad_mask = collate_source(sources)
    d = DecodeConfig(beam_size=1, max_len_a=1.0, max_len_b=3)
    return greedy_search(model, src_ids, src_pad_mask, d, use_cache=use_cache)


@pytest.mark.parametrize(
    ("length", "length_penalty", "expected"),
    [
        (1, 0.6, 1.0),  # (5 + 1) / 6 = 1
        (7, 0.6, 2.0**0.6),  # 12 / 6 = 2 → 1.5157
        (13, 0.6, 3.0**0.6),  # 18 / 6 = 3 → 1.9332
        (10, 1.0, 2.5),  # 15 / 6
        (25, 0.5, math.sqrt(5.0)),  # 30 / 6 = 5
        (40, 0.0, 1.0),  # length_penalty 0: no penalty
    ],
)
def test_length_normalizer_matches_hand_computed_values(
    length: int, length_penalty: float, expected: float
) -> None:
    assert length_normalizer(length, length_penalty) == pytest.approx(expected, rel=1e-12)


def test_length_normalizer_hand_values_are_what_the_formula_says() -> None:
    assert length_normalizer(7, 0.6) == pytest.approx(1.515716566510398, rel=1e-12)
    assert length_normalizer(13, 0.6) == pytest.approx(1.933182044931763, rel=1e-12)


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
@pytest.mark.parametrize("length_penalty", [0.0, 0.6, 1.5])
def test_beam_one_is_greedy(seed: int, eos_bias: float, length_penalty: float) -> None:
    model = case_model(seed, eos_bias)
    beam = beams(model, SOURCES, k=1, length_penalty=length_penalty)
    for g, (hyp,) in zip(greedy(model, SOURCES), beam, strict=True):
        assert hyp.token_ids == g.token_ids
        assert hyp.finished == g.finished
        assert hyp.log_prob == pytest.approx(g.log_prob, abs=1e-5)
        length = len(hyp.token_ids) + hyp.finished
        assert hyp.score == pytest.approx(
            g.log_prob / length_normalizer(length, length_penalty), abs=1e-5
        )


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_beam_one_with_the_exact_bound_is_greedy_without_length_penalty(
    seed: int, eos_bias: float
) -> None:
    """With one beam and no length penalty the bound is the beam's log-probability, never above
    the hypothesis that just ended: the rule stops exactly where "finished" does (the tests of
    it changing outputs are below)."""
    model = case_model(seed, eos_bias)
    beam = beams(model, SOURCES, k=1, length_penalty=0.0, early_stopping="bound")
    assert [h[0].token_ids for h in beam] == [g.token_ids for g in greedy(model, SOURCES)]


def outputs(results: list[list[Hypothesis]]) -> list[list[tuple[list[int], bool]]]:
    """Every sentence's n-best outputs: (token ids, finished) each."""
    return [[(h.token_ids, h.finished) for h in nbest] for nbest in results]


def assert_same_search(a: list[list[Hypothesis]], b: list[list[Hypothesis]]) -> None:
    """The same outputs, scored alike (within float tolerance)."""
    assert outputs(a) == outputs(b)
    for x, y in zip(a, b, strict=True):
        assert [h.score for h in x] == pytest.approx([h.score for h in y], abs=1e-4)


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_cached_and_uncached_beam_search_agree(seed: int, eos_bias: float) -> None:
    model = case_model(seed, eos_bias)
    cached = beams(model, SOURCES, 4, nbest=4)
    uncached = beams(model, SOURCES, 4, nbest=4, use_cache=False)
    assert_same_search(cached, uncached)


# The cases whose outputs the "bound" rule changes under a strong length penalty (2.0; at 0.6
# it changes few, and none of (0, 0.0)'s): a test of the rule must see it do something.
BOUND_CASES = [(1, 0.0), (2, 1.0), (1, 1.5), (2, 2.5)]


@pytest.mark.parametrize(("seed", "eos_bias"), BOUND_CASES)
def test_cached_and_uncached_beam_search_agree_under_the_bound_rule(
    seed: int, eos_bias: float
) -> None:
    model = case_model(seed, eos_bias)
    finished = beams(model, SOURCES, 4, 2.0, nbest=4)
    cached = beams(model, SOURCES, 4, 2.0, nbest=4, early_stopping="bound")
    assert outputs(cached) != outputs(finished)  # the rule changes these outputs
    uncached = beams(model, SOURCES, 4, 2.0, nbest=4, early_stopping="bound", use_cache=False)
    assert_same_search(cached, uncached)


def test_cached_and_uncached_greedy_agree() -> None:
    model = case_model(2, 1.0)
    cached = greedy(model, SOURCES)
    uncached = greedy(model, SOURCES, use_cache=False)
    assert [h.token_ids for h in cached] == [h.token_ids for h in uncached]
    assert [h.score for h in cached] == pytest.approx([h.score for h in uncached], abs=1e-4)


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_nbest_lists_are_ordered_distinct_and_scored_by_the_full_model(
    seed: int, eos_bias: float
) -> None:
    model = case_model(seed, eos_bias)
    length_penalty = 0.6
    for source, nbest in zip(
        SOURCES, beams(model, SOURCES, 4, length_penalty, nbest=4), strict=True
    ):
        assert len(nbest) == 4
        scores = [h.score for h in nbest]
        assert scores == sorted(scores, reverse=True)
        outputs = [(tuple(h.token_ids), h.finished) for h in nbest]
        assert len(set(outputs)) == len(outputs)
        for hyp in nbest:
            assert hyp.log_prob == pytest.approx(full_model_score(model, source, hyp), abs=1e-4)
            length = len(hyp.token_ids) + (1 if hyp.finished else 0)  # |Y| counts EOS
            assert hyp.score == pytest.approx(
                hyp.log_prob / length_normalizer(length, length_penalty)
            )


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_fewer_nbest_is_a_prefix_and_the_best_is_the_same(seed: int, eos_bias: float) -> None:
    model = case_model(seed, eos_bias)
    four = beams(model, SOURCES, 4, nbest=4)
    two = beams(model, SOURCES, 4, nbest=2)
    for f, t in zip(four, two, strict=True):
        assert [h.token_ids for h in t] == [h.token_ids for h in f[:2]]


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_batched_beam_search_equals_each_sentence_alone(seed: int, eos_bias: float) -> None:
    model = case_model(seed, eos_bias)
    batched = beams(model, SOURCES, 3, nbest=3)
    for source, nbest in zip(SOURCES, batched, strict=True):
        (alone,) = beams(model, [source], 3, nbest=3)
        assert [h.token_ids for h in nbest] == [h.token_ids for h in alone]
        assert [h.score for h in nbest] == pytest.approx([h.score for h in alone], abs=1e-4)


def all_outputs(model: Transformer, source: Sequence[int], limit: int) -> list[Hypothesis]:
    """Every output of at most ``limit`` tokens (finished with EOS, or cut at the limit)."""
    allowed = [t for t in range(model.config.tgt_vocab_size) if t not in (PAD_ID, BOS_ID, EOS_ID)]
    outputs = []
    for n in range(limit + 1):
        for tokens in itertools.product(allowed, repeat=n):
            outputs.append(Hypothesis(list(tokens), 0.0, True, 0.0))
        if n == limit:
            outputs.extend(
                Hypothesis(list(t), 0.0, False, 0.0) for t in itertools.product(allowed, repeat=n)
            )
    return outputs


@pytest.mark.parametrize(("seed", "eos_bias"), [(0, 0.0), (1, 1.5), (2, 2.5)])
@pytest.mark.parametrize("length_penalty", [0.0, 0.6, 2.0])
def test_a_beam_wider_than_the_search_space_finds_the_exact_best(
    seed: int, eos_bias: float, length_penalty: float
) -> None:
    """Limit 2 and seven real tokens: at most 49 live prefixes, so K = 64 is exhaustive."""
    model = case_model(seed, eos_bias)
    source = SOURCES[0]
    (found,) = beams(
        model, [source], 64, length_penalty, a=0.0, b=2, nbest=10, early_stopping="bound"
    )
    scored = []
    for hyp in all_outputs(model, source, 2):
        if hyp.finished and len(hyp.token_ids) == 2:
            continue  # EOS cannot follow the limit's last token
        log_prob = full_model_score(model, source, hyp)
        length = len(hyp.token_ids) + hyp.finished
        scored.append((log_prob / length_normalizer(length, length_penalty), hyp))
    scored.sort(key=lambda pair: -pair[0])
    want = [score for score, _ in scored[:10]]
    assert [h.score for h in found] == pytest.approx(want, abs=1e-4)
    assert found[0].token_ids == scored[0][1].token_ids
    assert found[0].finished == scored[0][1].finished


def test_a_strong_length_penalty_prefers_longer_outputs() -> None:
    model = case_model(2, 1.0)
    short = beams(model, SOURCES, 4, length_penalty=0.0, early_stopping="bound")
    long = beams(model, SOURCES, 4, length_penalty=3.0, early_stopping="bound")
    short_total = sum(len(h[0].token_ids) for h in short)
    long_total = sum(len(h[0].token_ids) for h in long)
    assert long_total > short_total


@pytest.mark.parametrize(("a", "b"), [(0.0, 4), (0.5, 2), (1.3, 1)])
def test_beam_outputs_respect_the_length_limit(a: float, b: int) -> None:
    model = with_output_bias(case_model(0, 0.0), {EOS_ID: -1e4})  # EOS impossible
    for source, nbest in zip(SOURCES, beams(model, SOURCES, 3, a=a, b=b, nbest=3), strict=True):
        limit = math.floor(a * (len(source) + 1)) + b
        for hyp in nbest:
            assert len(hyp.token_ids) == limit and not hyp.finished


def test_a_model_that_prefers_eos_finishes_immediately() -> None:
    model = with_output_bias(case_model(0, 0.0), {EOS_ID: 1e4})
    for nbest in beams(model, SOURCES, 4, b=50):
        assert nbest[0].token_ids == [] and nbest[0].finished
        assert nbest[0].score == pytest.approx(0.0, abs=1e-6)


def test_a_zero_limit_gives_one_empty_unfinished_output() -> None:
    (nbest,) = beams(case_model(0, 0.0), [[5, 6, 7]], 4, a=0.0, b=0, nbest=4)
    assert len(nbest) == 1
    assert nbest[0].token_ids == [] and not nbest[0].finished and nbest[0].log_prob == 0.0


def test_bad_arguments_are_rejected() -> None:
    model = case_model(0, 0.0)
    with pytest.raises(ConfigError, match="beam_size"):
        beams(model, SOURCES, 0)
    with pytest.raises(ConfigError, match="nbest"):
        beams(model, SOURCES, 2, nbest=3)
    with pytest.raises(ConfigError, match="early_stopping"):
        beams(model, SOURCES, 2, early_stopping="sometimes")


def test_search_leaves_the_model_unchanged() -> None:
    model = case_model(1, 0.0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    beams(model, SOURCES, 4)
    assert not model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
