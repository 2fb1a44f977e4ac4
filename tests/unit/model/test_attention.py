"""anuvad.model.attention: the explicit and fused computations agree (values and gradients),
the explicit one is chosen from outside, and the cache groups a sentence's hypotheses."""

from __future__ import annotations

import pytest
import torch

from anuvad.model.attention import (
    CrossAttention,
    SelfAttention,
    allowed_keys,
    attend,
    use_explicit_attention,
)
from anuvad.model.cache import LayerCache
from anuvad.training.precision import explicit_attention_pays


@pytest.mark.parametrize("kind", ["self", "cross"])
def test_explicit_and_fused_attention_agree_in_bf16_training(kind: str) -> None:
    """The explicit softmax(QK^T)V path (fast bf16 backward on a CPU) equals the fused kernel."""
    torch.manual_seed(0)
    attention = (SelfAttention if kind == "self" else CrossAttention)(32, 4, dropout=0.0).train()
    query = torch.randn(3, 6, 32, requires_grad=True)
    memory = torch.randn(3, 5, 32, requires_grad=True)
    pad = torch.zeros(3, 6 if kind == "self" else 5, dtype=torch.bool)
    pad[1, -2:] = True

    def run(explicit: bool) -> list[torch.Tensor]:
        attention.zero_grad()
        with use_explicit_attention(attention, explicit), torch.autocast("cpu", torch.bfloat16):
            if isinstance(attention, SelfAttention):
                out, _ = attention(query, key_pad_mask=pad)
                second, _ = attention(query, causal=True)
            else:
                out, _ = attention(query, memory, key_pad_mask=pad)
                second, _ = attention(query, memory)
        inputs = [query] if kind == "self" else [query, memory]
        grads = torch.autograd.grad((out.float() ** 2).sum() + second.float().sum(), inputs)
        return [out.float(), second.float(), *grads]

    for explicit, fused in zip(run(True), run(False), strict=True):
        assert torch.allclose(explicit, fused, rtol=1e-2, atol=1e-2)  # bf16: 8 bits of mantissa
    assert not torch.equal(run(True)[0], run(True)[1])  # the masks did something
    assert attention.explicit is False  # the block gave the setting back


def test_only_cpu_low_precision_training_prefers_the_explicit_product() -> None:
    cpu, gpu = torch.device("cpu"), torch.device("cuda", 0)
    assert explicit_attention_pays(cpu, "bf16") and explicit_attention_pays(cpu, "fp16")
    assert not explicit_attention_pays(cpu, "fp32")
    assert not explicit_attention_pays(gpu, "bf16")


def test_causal_and_an_explicit_mask_together_are_refused() -> None:
    q = torch.randn(1, 2, 3, 4)
    mask = allowed_keys(None, torch.ones(3, 3, dtype=torch.bool).triu(1))
    with pytest.raises(ValueError, match="either causal=True or an explicit attn_mask"):
        attend(q, q, q, mask, causal=True, dropout=0.0, explicit=False)


def test_the_explicit_path_returns_probabilities_that_sum_to_one_and_skip_padding() -> None:
    torch.manual_seed(0)
    q, k = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[0, 3:] = True
    context, weights = attend(q, k, k, allowed_keys(pad, None), False, 0.0, explicit=True)
    assert weights is not None and context.shape == (2, 2, 3, 4)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 3))
    assert torch.all(weights[0, :, :, 3:] == 0)
    fused, none = attend(q, k, k, allowed_keys(pad, None), False, 0.0, explicit=False)
    assert none is None
    torch.testing.assert_close(fused, context, rtol=1e-5, atol=1e-5)


def test_grouped_cross_attention_equals_one_copy_of_the_source_per_hypothesis() -> None:
    """Beam search: G hypotheses per sentence read one copy of its keys (the cache groups
    their queries), with the same result as G copies."""
    torch.manual_seed(0)
    attention = CrossAttention(16, 2, dropout=0.0).eval()
    memory = torch.randn(2, 5, 16)  # 2 sentences
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    query = torch.randn(6, 1, 16)  # 3 hypotheses each, consecutive rows
    with torch.no_grad():
        grouped_cache = LayerCache(group=3)
        grouped, _ = attention(query, memory, key_pad_mask=pad, cache=grouped_cache)
        copies, _ = attention(
            query, memory.repeat_interleave(3, 0), key_pad_mask=pad.repeat_interleave(3, 0)
        )
    assert grouped_cache.cross_k is not None and grouped_cache.cross_k.size(0) == 2  # stored once
    torch.testing.assert_close(grouped, copies, rtol=1e-5, atol=1e-6)


def test_the_self_attention_cache_appends_each_steps_keys() -> None:
    torch.manual_seed(0)
    attention = SelfAttention(16, 2, dropout=0.0).eval()
    x = torch.randn(2, 4, 16)
    cache = LayerCache()
    with torch.no_grad():
        full, _ = attention(x, causal=True)
        steps = [attention(x[:, t : t + 1], cache=cache)[0] for t in range(4)]
    assert cache.self_k is not None and cache.self_k.shape == (2, 2, 4, 8)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-6)
