"""anuvad.layers.Linear: the transposed product used when decoding on a CPU equals nn.Linear."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from anuvad.layers import FEW_ROWS, Linear, transposed_linear


@pytest.mark.parametrize("rows", [1, 2, 4, 17, FEW_ROWS, FEW_ROWS + 1])
def test_linear_equals_nn_linear_in_inference(rows: int) -> None:
    torch.manual_seed(0)
    ours, reference = Linear(32, 48), nn.Linear(32, 48)
    reference.load_state_dict(ours.state_dict())
    x = torch.randn(rows, 1, 32)  # (M, 1, I) as a decoding step feeds it
    with torch.inference_mode():
        got, want = ours(x), reference(x)
    assert got.shape == want.shape == (rows, 1, 48)
    assert got.is_contiguous()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_transposed_linear_without_bias_keeps_leading_dims() -> None:
    x, weight = torch.randn(3, 5, 16), torch.randn(40, 16)
    torch.testing.assert_close(
        transposed_linear(x, weight, None), nn.functional.linear(x, weight), rtol=1e-5, atol=1e-5
    )


def test_training_takes_the_ordinary_path_and_gets_the_same_gradients() -> None:
    torch.manual_seed(0)
    ours, reference = Linear(8, 4), nn.Linear(8, 4)
    reference.load_state_dict(ours.state_dict())
    x = torch.randn(4, 8)
    ours(x).square().sum().backward()
    reference(x).square().sum().backward()
    assert ours.weight.grad is not None and reference.weight.grad is not None
    assert torch.equal(ours.weight.grad, reference.weight.grad)
    assert list(ours.state_dict()) == ["weight", "bias"]
