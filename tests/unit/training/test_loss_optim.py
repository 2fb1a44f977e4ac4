"""Label-smoothed loss against a hand-written formula; Adam groups and the paper's schedule."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import anuvad.training.loss
from anuvad.config import TrainConfig
from anuvad.data.tokenizer import PAD_ID
from anuvad.model.transformer import build_model
from anuvad.training.loss import label_smoothed_loss, label_smoothed_nll
from anuvad.training.optim import build_optimizer, noam_learning_rate, set_learning_rate
from conftest import small_model_config

pytestmark = pytest.mark.usefixtures("one_thread")


V = 11


def random_case(
    batch: int = 3, length: int = 5, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (B, T, V) and targets (B, T) with a few padding positions at row ends."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, length, V, generator=gen) * 3
    targets = torch.randint(1, V, (batch, length), generator=gen)
    targets[0, 3:] = PAD_ID
    targets[2, 4:] = PAD_ID
    return logits, targets


def hand_loss(logits: torch.Tensor, targets: torch.Tensor, eps: float) -> tuple[float, float, int]:
    """Loop over positions: q = (1 - eps) on the gold token + eps / V everywhere; -sum q log p."""
    smoothed = nll = 0.0
    count = 0
    vocab = logits.size(-1)
    for b in range(logits.size(0)):
        for t in range(logits.size(1)):
            gold = int(targets[b, t])
            if gold == PAD_ID:
                continue
            row = [float(x) for x in logits[b, t].double()]
            top = max(row)
            log_z = top + math.log(sum(math.exp(x - top) for x in row))
            log_p = [x - log_z for x in row]
            q = [eps / vocab + (1.0 - eps if v == gold else 0.0) for v in range(vocab)]
            smoothed -= sum(qv * lp for qv, lp in zip(q, log_p, strict=True))
            nll -= log_p[gold]
            count += 1
    return smoothed, nll, count


@pytest.mark.parametrize("eps", [0.1, 0.3])
def test_label_smoothed_loss_equals_the_hand_formula(eps: float) -> None:
    logits, targets = random_case()
    loss, nll, count = label_smoothed_nll(logits, targets, eps)
    want_loss, want_nll, want_count = hand_loss(logits, targets, eps)
    assert count == want_count == 3 * 5 - 2 - 1
    assert loss.item() == pytest.approx(want_loss, rel=1e-5)
    assert nll.item() == pytest.approx(want_nll, rel=1e-5)


def test_padding_targets_contribute_nothing() -> None:
    logits, targets = random_case()
    loss, nll, count = label_smoothed_nll(logits, targets, 0.1)
    # Three more positions per row, all padding, with large arbitrary logits.
    extra_logits = torch.randn(3, 3, V, generator=torch.Generator().manual_seed(9)) * 50
    longer_logits = torch.cat([logits, extra_logits], dim=1)
    longer_targets = torch.cat([targets, torch.full((3, 3), PAD_ID)], dim=1)
    longer_loss, longer_nll, longer_count = label_smoothed_nll(longer_logits, longer_targets, 0.1)
    assert longer_count == count
    assert torch.allclose(longer_loss, loss, rtol=1e-6)
    assert torch.allclose(longer_nll, nll, rtol=1e-6)
    # And no gradient reaches the logits of padding positions.
    longer_logits.requires_grad_(True)
    (grad,) = torch.autograd.grad(
        label_smoothed_nll(longer_logits, longer_targets, 0.1)[0], longer_logits
    )
    assert grad[:, 5:].abs().max() == 0
    assert grad[1, :5].abs().max() > 0


def test_an_all_padding_batch_has_zero_loss_and_no_tokens() -> None:
    logits = torch.randn(2, 3, V)
    loss, nll, count = label_smoothed_nll(logits, torch.full((2, 3), PAD_ID), 0.1)
    assert count == 0
    assert loss.item() == 0.0 and nll.item() == 0.0


def test_without_smoothing_the_loss_is_the_nll() -> None:
    logits, targets = random_case(seed=4)
    loss, nll, count = label_smoothed_nll(logits, targets, 0.0)
    _, want_nll, want_count = hand_loss(logits, targets, 0.0)
    assert count == want_count
    assert loss.item() == pytest.approx(want_nll, rel=1e-5)
    assert nll.item() == pytest.approx(want_nll, rel=1e-5)


def test_loss_is_differentiable_and_the_nll_is_a_detached_report() -> None:
    logits, targets = random_case()
    logits.requires_grad_(True)
    loss, nll, _ = label_smoothed_nll(logits, targets, 0.1)
    assert loss.requires_grad and not nll.requires_grad
    (grad,) = torch.autograd.grad(loss, logits)
    # d(loss)/d(logit_v) = p_v - q_v at a real position (softmax minus smoothed target), 0 at pads.
    q = torch.full((3, 5, V), 0.1 / V)
    q.scatter_add_(-1, targets.unsqueeze(-1), torch.full((3, 5, 1), 0.9))
    want = torch.softmax(logits.detach(), dim=-1) - q
    want[targets == PAD_ID] = 0.0
    assert torch.allclose(grad, want, atol=1e-6)


def test_low_precision_logits_are_scored_in_float32() -> None:
    logits, targets = random_case()
    half = logits.to(torch.bfloat16)
    loss, nll, _ = label_smoothed_nll(half, targets, 0.1)
    assert loss.dtype == torch.float32
    want_loss, want_nll, _ = hand_loss(half.float(), targets, 0.1)
    assert loss.item() == pytest.approx(want_loss, rel=1e-5)
    assert nll.item() == pytest.approx(want_nll, rel=1e-5)


def test_a_custom_pad_id_is_ignored_instead() -> None:
    logits, targets = random_case()
    shifted = torch.where(targets == PAD_ID, torch.full_like(targets, 7), targets)
    shifted[targets == 7] = 5  # keep 7 for padding only
    loss, _, count = label_smoothed_nll(logits, shifted, 0.1, pad_id=7)
    relabeled = torch.where(shifted == 7, torch.full_like(shifted, PAD_ID), shifted)
    want_loss, _, want_count = hand_loss(logits, relabeled, 0.1)
    assert count == want_count
    assert loss.item() == pytest.approx(want_loss, rel=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_fused_loss_and_its_gradient_equal_pytorchs_cross_entropy(
    dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Row blocks of 3 rows over 7 x 5 positions: blocks end mid-sentence and mid-padding."""
    monkeypatch.setattr(anuvad.training.loss, "BLOCK_ELEMENTS", 3 * V)
    gen = torch.Generator().manual_seed(3)
    logits = (torch.randn(7, 5, V, generator=gen) * 4).to(dtype).requires_grad_(True)
    targets = torch.randint(1, V, (7, 5), generator=gen)
    targets[1, 2:] = PAD_ID
    targets[4] = PAD_ID
    ours = label_smoothed_loss(logits, targets, 0.1)
    (ours_grad,) = torch.autograd.grad(ours / 29, logits)
    theirs = F.cross_entropy(
        logits.float().reshape(-1, V), targets.reshape(-1), ignore_index=PAD_ID,
        label_smoothing=0.1, reduction="sum",
    )  # fmt: skip
    (theirs_grad,) = torch.autograd.grad(theirs / 29, logits)
    assert ours.dtype == torch.float32
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
    assert ours_grad.dtype == dtype
    # bf16: p - q is rounded, then scaled and rounded again (theirs: once), so 2 ulps of 2^-8.
    rtol, atol = (1e-6, 1e-9) if dtype == torch.float32 else (2 * 2**-8, 1e-7)
    assert torch.allclose(ours_grad.float(), theirs_grad.float(), rtol=rtol, atol=atol)
    assert ours_grad[4].abs().max() == 0 and ours_grad[1, 2:].abs().max() == 0


def test_without_gradients_the_fused_loss_stores_none_and_a_second_backward_is_refused() -> None:
    logits, targets = random_case()
    with torch.no_grad():
        value = label_smoothed_loss(logits.requires_grad_(True), targets, 0.1)
    assert not value.requires_grad
    loss = label_smoothed_loss(logits, targets, 0.1)
    loss.backward(retain_graph=True)  # type: ignore[no-untyped-call]
    with pytest.raises(RuntimeError, match="one backward pass"):
        loss.backward()  # type: ignore[no-untyped-call]


# --- the learning-rate schedule (equation 3) -----------------------------------------------------


def paper_rate(step: int, d_model: int, warmup: int) -> float:
    """Equation 3 read as its two regimes: linear warmup, then inverse square root of the step."""
    if step < warmup:
        return float(step / (math.sqrt(d_model) * warmup**1.5))
    return float(1.0 / math.sqrt(d_model * step))


@pytest.mark.parametrize("step", [1, 2, 100, 3999, 4000, 4001, 10_000, 100_000])
def test_noam_rate_matches_equation_3(step: int) -> None:
    assert noam_learning_rate(step, 512, 4000) == pytest.approx(paper_rate(step, 512, 4000))


def test_noam_rate_known_values() -> None:
    # Base model, warmup 4000: the peak is 1 / sqrt(512 * 4000) = 6.988e-4.
    assert noam_learning_rate(4000, 512, 4000) == pytest.approx(6.9877e-4, rel=1e-4)
    # Big model after 400k steps: 1 / sqrt(1024 * 400000) = 4.941e-5.
    assert noam_learning_rate(400_000, 1024, 4000) == pytest.approx(4.9411e-5, rel=1e-4)
    # Linear during warmup: step 1000 is a quarter of the peak.
    assert noam_learning_rate(1000, 512, 4000) == pytest.approx(6.9877e-4 / 4, rel=1e-4)


def test_noam_rate_peaks_at_the_end_of_warmup() -> None:
    warmup = 50
    rates = [noam_learning_rate(s, 64, warmup) for s in range(0, 4 * warmup)]
    assert max(range(len(rates)), key=rates.__getitem__) == warmup
    assert all(a < b for a, b in itertools.pairwise(rates[: warmup + 1]))
    assert all(a > b for a, b in itertools.pairwise(rates[warmup:]))


def test_noam_rate_is_zero_before_the_first_step() -> None:
    assert noam_learning_rate(0, 512, 4000) == 0.0
    assert noam_learning_rate(-3, 512, 4000) == 0.0


@pytest.mark.parametrize("scale", [0.5, 2.0, 7.0])
def test_noam_scale_multiplies(scale: float) -> None:
    for step in (1, 500, 4000, 20_000):
        plain = noam_learning_rate(step, 256, 4000)
        assert noam_learning_rate(step, 256, 4000, scale) == pytest.approx(scale * plain)


# --- the optimizer -------------------------------------------------------------------------------


def small_model(**changes: object) -> nn.Module:
    torch.manual_seed(0)
    fields: dict[str, object] = {
        "src_vocab_size": 20,
        "tgt_vocab_size": 20,
        "max_positions": 16,
        "dropout": 0.1,
    }
    fields.update(changes)
    config = small_model_config(16, 1, **fields)
    return build_model(config)


def test_optimizer_is_adam_with_the_paper_settings() -> None:
    optimizer = build_optimizer(small_model(), TrainConfig())
    assert isinstance(optimizer, torch.optim.Adam)
    for group in optimizer.param_groups:
        assert group["betas"] == (0.9, 0.98)
        assert group["eps"] == 1e-9
    custom = build_optimizer(small_model(), TrainConfig(adam_beta2=0.997, adam_eps=1e-6))
    assert all(g["betas"] == (0.9, 0.997) and g["eps"] == 1e-6 for g in custom.param_groups)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"share_source_embedding": True},
        {"tie_output_embedding": False},
        {"norm_position": "pre", "positional_encoding": "learned"},
    ],
)
def test_every_trainable_parameter_is_in_exactly_one_group(changes: dict[str, object]) -> None:
    model = small_model(**changes)
    optimizer = build_optimizer(model, TrainConfig())
    grouped = [id(p) for group in optimizer.param_groups for p in group["params"]]
    # model.parameters() yields each shared tensor once.
    unique = {id(p) for p in model.parameters()}
    assert len(grouped) == len(set(grouped)) == len(unique)
    assert set(grouped) == unique
    if changes.get("share_source_embedding"):
        assert id(model.src_embed.weight) in grouped  # type: ignore[union-attr]


def test_frozen_parameters_are_left_out() -> None:
    model = small_model()
    frozen = model.tgt_embed.weight  # type: ignore[union-attr]
    frozen.requires_grad_(False)
    optimizer = build_optimizer(model, TrainConfig())
    grouped = {id(p) for group in optimizer.param_groups for p in group["params"]}
    assert id(frozen) not in grouped
    assert grouped == {id(p) for p in model.parameters() if p.requires_grad}


def test_biases_and_layer_norms_are_not_decayed() -> None:
    model = small_model(norm_position="pre")
    optimizer = build_optimizer(model, TrainConfig(weight_decay=0.01))
    decayed = {
        id(p)
        for group in optimizer.param_groups
        if group["weight_decay"] > 0
        for p in group["params"]
    }
    not_decayed = {
        id(p)
        for group in optimizer.param_groups
        if group["weight_decay"] == 0
        for p in group["params"]
    }
    layer_norm_params = [
        p for m in model.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()
    ]
    biases = [m.bias for m in model.modules() if isinstance(m, nn.Linear) and m.bias is not None]
    linear_weights = [m.weight for m in model.modules() if isinstance(m, nn.Linear)]
    assert layer_norm_params and biases and linear_weights
    assert {id(p) for p in layer_norm_params + biases} <= not_decayed
    assert {id(p) for p in linear_weights} <= decayed
    assert all(g["weight_decay"] in (0.0, 0.01) for g in optimizer.param_groups)


def test_set_learning_rate_sets_every_group_and_takes_effect() -> None:
    model = small_model()
    optimizer = build_optimizer(model, TrainConfig())
    assert all(group["lr"] == 0.0 for group in optimizer.param_groups)
    set_learning_rate(optimizer, 3e-4)
    assert [group["lr"] for group in optimizer.param_groups] == [3e-4] * len(optimizer.param_groups)
    # The rate is used: one Adam step moves every parameter with a gradient by about lr.
    before = [p.detach().clone() for g in optimizer.param_groups for p in g["params"]]
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = torch.ones_like(p)
    optimizer.step()
    after = [p.detach() for g in optimizer.param_groups for p in g["params"]]
    for old, new in zip(before, after, strict=True):
        # Adam's first step is lr * g / (|g| + eps) = lr for g = 1.
        assert torch.allclose(old - new, torch.full_like(old, 3e-4), rtol=0, atol=1e-6)
