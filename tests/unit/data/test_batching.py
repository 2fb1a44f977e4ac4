"""Collation (shapes, BOS/EOS placement, pad mask) and token-budget batching invariants."""

from __future__ import annotations

import random

import pytest
import torch

from anuvad.data.batching import (
    Batch,
    collate,
    collate_source,
    group_updates,
    iter_batches,
    make_batches,
    model_lengths,
    padding_fraction,
    rank_share,
)
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID

# --- collation -----------------------------------------------------------------------------------


def test_collate_shapes_and_special_ids() -> None:
    src = [[10, 11, 12], [20]]
    tgt = [[30], [40, 41, 42, 43]]
    batch = collate(src, tgt, [7, 3])
    assert batch.size == 2
    assert batch.src_ids.shape == (2, 4)  # longest source + EOS
    assert batch.tgt_in_ids.shape == batch.tgt_out_ids.shape == (2, 5)  # longest target + 1
    for tensor in (batch.src_ids, batch.tgt_in_ids, batch.tgt_out_ids, batch.indices):
        assert tensor.dtype == torch.int64
    assert batch.src_ids.tolist() == [[10, 11, 12, EOS_ID], [20, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.tgt_in_ids.tolist() == [
        [BOS_ID, 30, PAD_ID, PAD_ID, PAD_ID],
        [BOS_ID, 40, 41, 42, 43],
    ]
    assert batch.tgt_out_ids.tolist() == [
        [30, EOS_ID, PAD_ID, PAD_ID, PAD_ID],
        [40, 41, 42, 43, EOS_ID],
    ]
    assert batch.indices.tolist() == [7, 3]


def test_pad_mask_is_true_at_padding() -> None:
    batch = collate([[5, 6], [7]], [[8], [9]], [0, 1])
    assert batch.src_pad_mask.dtype == torch.bool
    assert batch.src_pad_mask.tolist() == [[False, False, False], [False, False, True]]
    assert torch.equal(batch.src_pad_mask, batch.src_ids == PAD_ID)


def test_token_counts_are_non_pad_positions() -> None:
    batch = collate([[5, 6], [7]], [[8, 8, 8], [9]], [0, 1])
    assert batch.num_src_tokens == int((batch.src_ids != PAD_ID).sum()) == 5
    assert batch.num_tgt_tokens == int((batch.tgt_out_ids != PAD_ID).sum()) == 6


def test_decoder_input_is_output_shifted_right() -> None:
    batch = collate([[4]], [[11, 12, 13]], [0])
    assert batch.tgt_in_ids[0, 1:].tolist() == batch.tgt_out_ids[0, :-1].tolist()


def test_empty_target_still_gets_bos_and_eos() -> None:
    batch = collate([[4]], [[]], [0])
    assert batch.tgt_in_ids.tolist() == [[BOS_ID]]
    assert batch.tgt_out_ids.tolist() == [[EOS_ID]]


def test_collate_source_matches_collate() -> None:
    src = [[4, 5, 6], [7]]
    src_ids, src_pad_mask = collate_source(src)
    batch = collate(src, [[1], [1]], [0, 1])
    assert torch.equal(src_ids, batch.src_ids)
    assert torch.equal(src_pad_mask, batch.src_pad_mask)


def test_collate_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="empty batch"):
        collate_source([])
    with pytest.raises(ValueError, match="as many"):
        collate([[1]], [[1], [2]], [0])


def test_to_returns_a_new_batch() -> None:
    batch = collate([[4, 5]], [[6]], [0])
    moved = batch.to("cpu")
    assert isinstance(moved, Batch)
    assert moved is not batch
    assert torch.equal(moved.src_ids, batch.src_ids)
    assert moved.num_tgt_tokens == batch.num_tgt_tokens


# --- token-budget batching -----------------------------------------------------------------------


def _random_lengths(n: int, seed: int = 0) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    src = [rng.randint(1, 40) for _ in range(n)]
    tgt = [max(1, s + rng.randint(-5, 8)) for s in src]
    return src, tgt


def test_every_example_once_and_budget_respected() -> None:
    src, tgt = _random_lengths(500)
    src[17], tgt[42] = 300, 250  # longer than the budget: each forms its own batch
    max_tokens = 200
    plan = make_batches(src, tgt, max_tokens, seed=1, epoch=0)
    flat = sorted(i for batch in plan.batches for i in batch)
    assert flat == list(range(500))
    for batch in plan.batches:
        padded_src = len(batch) * max(src[i] for i in batch)
        padded_tgt = len(batch) * max(tgt[i] for i in batch)
        if len(batch) > 1:
            assert padded_src <= max_tokens and padded_tgt <= max_tokens
        else:
            assert batch[0] in (17, 42) or padded_src <= max_tokens
    assert [17] in plan.batches and [42] in plan.batches


def test_budget_is_used_well() -> None:
    src, tgt = _random_lengths(2000)
    plan = make_batches(src, tgt, 400, seed=1)
    assert plan.padding_fraction < 0.25
    assert plan.padding_fraction == pytest.approx(padding_fraction(plan.batches, src, tgt))


def test_same_seed_and_epoch_give_identical_batches() -> None:
    src, tgt = _random_lengths(300)
    state = random.getstate()
    first = make_batches(src, tgt, 150, seed=5, epoch=2).batches
    assert random.getstate() == state  # the global RNG is neither used nor disturbed
    random.seed(1234)
    torch.manual_seed(1234)
    assert make_batches(src, tgt, 150, seed=5, epoch=2).batches == first


def test_different_epochs_or_seeds_give_different_orders() -> None:
    src, tgt = _random_lengths(300)
    epoch0 = make_batches(src, tgt, 150, seed=5, epoch=0).batches
    epoch1 = make_batches(src, tgt, 150, seed=5, epoch=1).batches
    other_seed = make_batches(src, tgt, 150, seed=6, epoch=0).batches
    assert epoch0 != epoch1
    assert epoch0 != other_seed
    # Ties are broken differently, so batch membership changes too, not only the order.
    assert sorted(map(sorted, epoch0)) != sorted(map(sorted, epoch1))


def test_no_shuffle_is_length_ordered() -> None:
    src, tgt = _random_lengths(100)
    plan = make_batches(src, tgt, 120, shuffle=False)
    longest = [max(max(src[i], tgt[i]) for i in batch) for batch in plan.batches]
    assert longest == sorted(longest)
    assert plan.batches == make_batches(src, tgt, 120, seed=9, epoch=9, shuffle=False).batches


def test_source_only_batching_for_inference() -> None:
    plan = make_batches([3, 3, 3, 3], None, 6, shuffle=False)
    assert plan.batches == [[0, 1], [2, 3]]
    assert plan.padding_fraction == 0.0


def test_make_batches_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        make_batches([1], [1], 0)
    with pytest.raises(ValueError, match="target lengths"):
        make_batches([1, 2], [1], 10)


def test_model_lengths_and_iter_batches_agree_with_collate() -> None:
    src_seqs = [[4] * n for n in (3, 1, 6, 2, 5)]
    tgt_seqs = [[5] * n for n in (2, 2, 7, 1, 0)]
    src_len, tgt_len = model_lengths(src_seqs), model_lengths(tgt_seqs)
    plan = make_batches(src_len, tgt_len, 16, seed=0)
    for group, batch in zip(
        plan.batches, iter_batches(src_seqs, tgt_seqs, plan.batches), strict=True
    ):
        assert batch.indices.tolist() == group
        assert batch.src_ids.shape[1] == max(src_len[i] for i in group)
        assert batch.tgt_out_ids.shape[1] == max(tgt_len[i] for i in group)
        assert batch.src_ids.numel() <= 16 or batch.size == 1


# --- sharding ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("world_size", "accumulate"), [(1, 1), (2, 1), (3, 2), (4, 3)])
def test_updates_split_batches_evenly_and_disjointly(world_size: int, accumulate: int) -> None:
    src, tgt = _random_lengths(400)
    batches = make_batches(src, tgt, 100, seed=3, epoch=1).batches
    updates = group_updates(batches, world_size, accumulate)
    assert len(updates) == len(batches) // (world_size * accumulate)
    taken: list[tuple[int, ...]] = []
    for update in updates:
        shares = [rank_share(update, rank, world_size) for rank in range(world_size)]
        assert all(len(share) == accumulate for share in shares)  # same work on every rank
        union = sorted(tuple(b) for share in shares for b in share)
        assert union == sorted(tuple(b) for b in update)  # the ranks together do the update
        taken += union
    assert len(taken) == len(set(taken))  # no batch twice
    dropped = len(batches) - len(taken)
    assert 0 <= dropped < world_size * accumulate


def test_one_process_with_accumulation_sees_the_same_global_batches_as_ddp() -> None:
    src, tgt = _random_lengths(300)
    batches = make_batches(src, tgt, 120, seed=5, epoch=0).batches
    ddp = group_updates(batches, world_size=2, accumulate=1)
    single = group_updates(batches, world_size=1, accumulate=2)
    assert ddp == single


def test_update_grouping_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="world_size"):
        group_updates([[0]], 0, 1)
    with pytest.raises(ValueError, match="rank"):
        rank_share([[0], [1]], 2, 2)
    assert group_updates([[0], [1]], 2, 2) == []
