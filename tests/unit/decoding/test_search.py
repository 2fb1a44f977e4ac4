"""Greedy search against a reference decoder that re-runs the full model at every step."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import pytest
import torch
from torch import nn

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.greedy import greedy_search
from anuvad.decoding.search import Hypothesis
from anuvad.model.transformer import Transformer, build_model
from conftest import small_model_config

pytestmark = pytest.mark.usefixtures("one_thread")


# A small target vocabulary (six tokens besides PAD and BOS) makes EOS a frequent argmax, so
# random models finish sentences at many different lengths.
CONFIG = small_model_config(src_vocab_size=30, tgt_vocab_size=10, max_positions=64)

SOURCES: list[list[int]] = [
    [5, 9, 12, 7, 22, 8, 14],
    [6],
    [11, 4, 29, 17],
    [13, 13, 20, 5, 6, 7, 8, 9, 10, 28, 4],
    [25, 19],
    [4, 5, 6, 7, 8],
]


def make_model(seed: int = 0, **changes: object) -> Transformer:
    torch.manual_seed(seed)
    model = build_model(dataclasses.replace(CONFIG, **changes))  # type: ignore[arg-type]
    return model.eval()


def test_a_seed_gives_the_same_random_model_whatever_the_object_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search tests need seeded random models to be the same in every process.

    Object hashes are normally addresses; fixing them by vocabulary size makes both iteration
    orders of a two-element set happen deterministically (hash 1 before hash 2).
    """
    weights = []
    for rank in ({30: 1, 10: 2}, {30: 2, 10: 1}):  # source (30) first, then target (10) first
        monkeypatch.setattr(nn.Embedding, "__hash__", lambda self, r=rank: r[self.num_embeddings])
        torch.manual_seed(0)
        model = build_model(CONFIG)
        weights.append((model.src_embed.weight.detach(), model.tgt_embed.weight.detach()))
    assert torch.equal(weights[0][0], weights[1][0])
    assert torch.equal(weights[0][1], weights[1][1])


def with_output_bias(model: Transformer, bias: dict[int, float]) -> Transformer:
    """Give the output layer a bias (model.output_bias; the weights stay tied)."""
    vector = torch.zeros(model.tgt_embed.weight.size(0))
    for token, value in bias.items():
        vector[token] = value
    model.output_bias = nn.Parameter(vector)
    return model


def reference_greedy(
    model: Transformer, source: Sequence[int], max_len_a: float, max_len_b: int
) -> Hypothesis:
    """Decode one sentence by re-running the whole model on the growing prefix at every step.

    The limit counts output tokens, not EOS: after ``limit`` tokens the hypothesis stops
    unfinished. PAD and BOS can never be chosen.
    """
    src_ids = torch.tensor([[*source, EOS_ID]])  # (1, S): the source plus its EOS
    src_pad_mask = torch.zeros_like(src_ids, dtype=torch.bool)
    limit = min(math.floor(max_len_a * src_ids.size(1)) + max_len_b, model.config.max_positions - 1)
    prefix = [BOS_ID]
    score = 0.0
    with torch.no_grad():
        while len(prefix) - 1 < limit:
            logits = model(src_ids, torch.tensor([prefix]), src_pad_mask)[0, -1]  # (V,)
            log_probs = torch.log_softmax(logits.double(), dim=-1)
            allowed = log_probs.clone()
            allowed[[PAD_ID, BOS_ID]] = -math.inf
            token = int(allowed.argmax())
            score += float(log_probs[token])
            if token == EOS_ID:
                return Hypothesis(prefix[1:], score, finished=True, log_prob=score)
            prefix.append(token)
    return Hypothesis(prefix[1:], score, finished=False, log_prob=score)


def full_model_score(model: Transformer, source: Sequence[int], hyp: Hypothesis) -> float:
    """Sum of log P(token | prefix) of the output (and its EOS when finished), teacher-forced."""
    src_ids = torch.tensor([[*source, EOS_ID]])
    targets = hyp.token_ids + ([EOS_ID] if hyp.finished else [])
    tgt_in = torch.tensor([[BOS_ID, *targets[:-1]]]) if targets else torch.tensor([[BOS_ID]])
    with torch.no_grad():
        logits = model(src_ids, tgt_in, torch.zeros_like(src_ids, dtype=torch.bool))[0]
    log_probs = torch.log_softmax(logits.double(), dim=-1)  # (T, V)
    return float(sum(log_probs[t, token] for t, token in enumerate(targets)))


def search(
    model: Transformer, sources: Sequence[Sequence[int]], max_len_a: float, max_len_b: int
) -> list[Hypothesis]:
    src_ids, src_pad_mask = collate_source(sources)
    settings = DecodeConfig(max_len_a=max_len_a, max_len_b=max_len_b)
    return greedy_search(model, src_ids, src_pad_mask, settings)


# (seed, EOS bias): random models are repetitive, so a mild EOS bias on some of them adds
# sentences that stop after a few tokens while the rest of the batch decodes on.
CASES = [(0, 0.0), (1, 0.0), (2, 1.0), (1, 1.5), (2, 2.5)]


def case_model(seed: int, eos_bias: float) -> Transformer:
    model = make_model(seed)
    return with_output_bias(model, {EOS_ID: eos_bias}) if eos_bias else model


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_greedy_equals_the_full_model_reference(seed: int, eos_bias: float) -> None:
    model = case_model(seed, eos_bias)
    hyps = search(model, SOURCES, 1.0, 3)
    assert len(hyps) == len(SOURCES)
    for source, hyp in zip(SOURCES, hyps, strict=True):
        want = reference_greedy(model, source, 1.0, 3)
        assert hyp.token_ids == want.token_ids
        assert hyp.finished == want.finished
        assert hyp.score == pytest.approx(want.score, abs=1e-4)


@pytest.mark.slow  # several seconds: left out of make test-fast
def test_the_reference_cases_cover_the_ways_a_sentence_ends() -> None:
    """Guard for the test above: its models stop sentences early, late, and at the limit."""
    outcomes = [
        reference_greedy(case_model(seed, bias), source, 1.0, 3)
        for seed, bias in CASES
        for source in SOURCES
    ]
    finished_lengths = {len(h.token_ids) for h in outcomes if h.finished}
    assert len(finished_lengths - {0}) >= 2  # EOS after some tokens, at different steps
    assert 0 in finished_lengths  # EOS first
    assert any(not h.finished for h in outcomes)  # the length limit


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_batched_greedy_equals_decoding_each_sentence_alone(seed: int, eos_bias: float) -> None:
    model = case_model(seed, eos_bias)
    batched = search(model, SOURCES, 1.0, 3)
    for source, hyp in zip(SOURCES, batched, strict=True):
        (alone,) = search(model, [source], 1.0, 3)
        assert hyp.token_ids == alone.token_ids
        assert hyp.finished == alone.finished
        assert hyp.score == pytest.approx(alone.score, abs=1e-4)


def test_batch_order_does_not_matter() -> None:
    model = make_model(2)
    forward = search(model, SOURCES, 1.0, 3)
    backward = search(model, SOURCES[::-1], 1.0, 3)[::-1]
    assert [h.token_ids for h in forward] == [h.token_ids for h in backward]


@pytest.mark.parametrize(("max_len_a", "max_len_b"), [(0.0, 4), (0.5, 2), (2.0, 0), (1.3, 1)])
def test_length_limit_is_respected(max_len_a: float, max_len_b: int) -> None:
    # EOS made impossible: every hypothesis runs into its limit.
    model = with_output_bias(make_model(0), {EOS_ID: -1e4})
    hyps = search(model, SOURCES, max_len_a, max_len_b)
    for source, hyp in zip(SOURCES, hyps, strict=True):
        limit = math.floor(max_len_a * (len(source) + 1)) + max_len_b  # + 1: the source's EOS
        assert len(hyp.token_ids) == limit
        assert not hyp.finished
        assert EOS_ID not in hyp.token_ids


def test_outputs_never_exceed_their_limit() -> None:
    model = make_model(0)
    for a, b in [(0.0, 1), (0.5, 0), (1.0, 2)]:
        for source, hyp in zip(SOURCES, search(model, SOURCES, a, b), strict=True):
            limit = math.floor(a * (len(source) + 1)) + b
            assert len(hyp.token_ids) <= limit
            if len(hyp.token_ids) < limit:
                assert hyp.finished  # stopping early means EOS was produced


def test_length_is_capped_by_the_model_positions() -> None:
    model = with_output_bias(make_model(0, max_positions=8), {EOS_ID: -1e4})
    (hyp,) = search(model, [[5, 6, 7]], 1.0, 50)
    assert len(hyp.token_ids) == 8 - 1  # position 0 holds BOS
    assert not hyp.finished


def test_a_zero_limit_gives_an_empty_unfinished_output() -> None:
    (hyp,) = search(make_model(0), [[5, 6, 7]], 0.0, 0)
    assert hyp.token_ids == [] and not hyp.finished and hyp.score == 0.0


@pytest.mark.parametrize(("seed", "eos_bias"), CASES)
def test_scores_are_the_full_model_log_probabilities(seed: int, eos_bias: float) -> None:
    model = case_model(seed, eos_bias)
    hyps = search(model, SOURCES, 1.0, 3)
    for source, hyp in zip(SOURCES, hyps, strict=True):
        assert hyp.score < 0.0
        assert hyp.score == pytest.approx(full_model_score(model, source, hyp), abs=1e-4)


def test_a_model_that_prefers_eos_finishes_immediately() -> None:
    model = with_output_bias(make_model(0), {EOS_ID: 1e4})
    hyps = search(model, SOURCES, 1.0, 50)
    for hyp in hyps:
        assert hyp.token_ids == []
        assert hyp.finished
        assert hyp.score == pytest.approx(0.0, abs=1e-6)  # log P(EOS) = log 1


def test_pad_and_bos_are_never_generated() -> None:
    # PAD and BOS would win every argmax; UNK comes next and is allowed.
    model = with_output_bias(make_model(0), {PAD_ID: 1e4, BOS_ID: 1e4, UNK_ID: 50.0})
    hyps = search(model, SOURCES, 1.0, 2)
    for source, hyp in zip(SOURCES, hyps, strict=True):
        assert hyp.token_ids == [UNK_ID] * (len(source) + 1 + 2)
        assert not hyp.finished
    # Their probability mass is still part of the softmax: the chosen tokens score log(~0).
    assert all(h.score < -1000 for h in hyps)


def test_search_leaves_the_model_unchanged() -> None:
    model = make_model(0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    search(model, SOURCES, 1.0, 3)
    assert not model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def sample(model: Transformer, top_k: int, max_len_b: int = 12, seed: int = 1) -> list[Hypothesis]:
    src_ids, src_pad_mask = collate_source(SOURCES)
    settings = DecodeConfig(
        beam_size=1, max_len_a=1.0, max_len_b=max_len_b, sample_top_k=top_k, sample_seed=seed
    )
    return greedy_search(model, src_ids, src_pad_mask, settings)


def test_sampling_from_the_top_1_is_greedy_search() -> None:
    model = case_model(1, 1.5)
    assert [h.token_ids for h in sample(model, 1)] == [h.token_ids for h in sample(model, 0)]


@pytest.mark.parametrize("top_k", [2, 4])
def test_sampled_tokens_come_from_the_top_k_and_score_as_the_model_does(top_k: int) -> None:
    """Every drawn token is among the K most probable (PAD and BOS excluded) given its prefix,
    each output's score is its teacher-forced log-probability, the draws differ from greedy
    search and are reproducible."""
    model = case_model(2, 1.0)
    drawn = sample(model, top_k)
    assert [h.token_ids for h in drawn] != [h.token_ids for h in sample(model, 0)]
    assert [h.token_ids for h in drawn] == [h.token_ids for h in sample(model, top_k)]
    for source, hyp in zip(SOURCES, drawn, strict=True):
        assert hyp.score == pytest.approx(full_model_score(model, source, hyp), abs=1e-4)
        targets = hyp.token_ids + ([EOS_ID] if hyp.finished else [])
        src_ids = torch.tensor([[*source, EOS_ID]])
        tgt_in = torch.tensor([[BOS_ID, *targets[:-1]]]) if targets else torch.tensor([[BOS_ID]])
        with torch.no_grad():
            logits = model(src_ids, tgt_in, torch.zeros_like(src_ids, dtype=torch.bool))[0]
        logits[:, [PAD_ID, BOS_ID]] = -math.inf
        for t, token in enumerate(targets):
            assert token in logits[t].topk(top_k).indices.tolist(), (t, token)


def test_another_seed_draws_other_samples_and_the_same_seed_the_same() -> None:
    model = case_model(2, 1.0)
    draws = {seed: [h.token_ids for h in sample(model, 4, seed=seed)] for seed in (1, 2, 3)}
    assert draws[1] == [h.token_ids for h in sample(model, 4, seed=1)]
    assert draws[2] != draws[1] and draws[3] != draws[1] and draws[3] != draws[2]


def test_a_seed_past_the_generators_range_is_refused_by_name() -> None:
    from anuvad.errors import ConfigError

    with pytest.raises(ConfigError, match=r"sample_seed"):
        DecodeConfig(beam_size=1, sample_top_k=5).with_overrides(sample_seed=2**64)


def test_sampling_needs_beam_size_1() -> None:
    from anuvad.errors import ConfigError

    with pytest.raises(ConfigError, match=r"decode\.sample_top_k needs beam_size 1"):
        DecodeConfig().with_overrides(sample_top_k=5)
