"""anuvad.model.layers: attention paths."""

from __future__ import annotations

import pytest
import torch

from anuvad.model import layers
from anuvad.model.layers import MultiHeadAttention


@pytest.mark.parametrize("self_attention", [True, False])
def test_cpu_bf16_training_attention_takes_the_explicit_path_with_sdpas_results(
    self_attention: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The explicit softmax(QK^T)V path (fast bf16 backward on a CPU) equals the fused kernel."""
    torch.manual_seed(0)
    attention = MultiHeadAttention(32, 4, dropout=0.0, self_attention=self_attention).train()
    query = torch.randn(3, 6, 32, requires_grad=True)
    memory = None if self_attention else torch.randn(3, 5, 32, requires_grad=True)
    pad = torch.zeros(3, 6 if self_attention else 5, dtype=torch.bool)
    pad[1, -2:] = True

    def run(explicit: bool) -> list[torch.Tensor]:
        monkeypatch.setattr(layers, "_explicit_is_faster", lambda q, k: explicit)
        attention.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, _ = attention(query, memory, key_pad_mask=pad, causal=False)
            causal_out, _ = attention(query, memory, causal=self_attention)
        inputs = [query] if memory is None else [query, memory]
        grads = torch.autograd.grad((out.float() ** 2).sum() + causal_out.float().sum(), inputs)
        return [out.float(), causal_out.float(), *grads]

    with torch.autocast("cpu", dtype=torch.bfloat16):
        q = torch.randn(2, 4, 3, 8, dtype=torch.bfloat16)
        assert layers._explicit_is_faster(q, q)  # CPU, bf16, gradients on
        with torch.no_grad():
            assert not layers._explicit_is_faster(q, q)  # inference keeps the fused kernel
    for explicit, fused in zip(run(True), run(False), strict=True):
        assert torch.allclose(explicit, fused, rtol=1e-2, atol=5e-3)  # bf16 rounding
    assert not torch.equal(run(True)[0], run(True)[1])  # the masks did something
