"""anuvad.inference.cpu: both products equal nn.Linear, and the chooser keeps the faster one."""

from __future__ import annotations

import time

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.errors import ConfigError
from anuvad.inference import cpu as cpu_linear
from anuvad.inference.cpu import (
    MAX_ROWS,
    PRODUCT_ENV_VAR,
    Linear,
    ProductChooser,
    padded_rows,
    row_bucket,
    transposed_linear,
)


@pytest.mark.parametrize("mode", ["auto", "plain", "transposed"])
@pytest.mark.parametrize("rows", [1, 2, 3, 8, 9, 17, 31, MAX_ROWS, MAX_ROWS + 1])
def test_linear_equals_nn_linear_in_inference(
    rows: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_linear, "CHOOSER", ProductChooser(mode, samples=1))
    torch.manual_seed(0)
    ours, reference = Linear(32, 48), nn.Linear(32, 48)
    reference.load_state_dict(ours.state_dict())
    x = torch.randn(rows, 1, 32)  # (M, 1, I) as a decoding step feeds it
    with torch.inference_mode():
        for _ in range(5):  # through the trials and past the choice
            got, want = ours(x), reference(x)
            assert got.shape == want.shape == (rows, 1, 48)
            assert got.is_contiguous()
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 16), (1, 1, 16), (3, 5, 16), (0, 16)])
@pytest.mark.parametrize("bias", [True, False])
def test_transposed_linear_keeps_leading_dims(shape: tuple[int, ...], bias: bool) -> None:
    torch.manual_seed(0)
    x, weight = torch.randn(shape), torch.randn(40, 16)
    b = torch.randn(40) if bias else None
    got = transposed_linear(x, weight, b)
    assert got.shape == (*shape[:-1], 40) and got.is_contiguous()
    torch.testing.assert_close(got, F.linear(x, weight, b), rtol=1e-5, atol=1e-5)


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


def slow_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    time.sleep(0.002)
    return F.linear(x, weight, bias)


def test_chooser_keeps_the_faster_product_per_shape_and_row_bucket() -> None:
    calls: list[str] = []

    def counted(name: str, product: cpu_linear.Product) -> cpu_linear.Product:
        def run(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
            calls.append(name)
            return product(x, weight, bias)

        return run

    chooser = ProductChooser(
        "auto",
        samples=3,
        products={"slow": counted("slow", slow_linear), "fast": counted("fast", F.linear)},
    )
    weight, bias = torch.randn(12, 8), torch.randn(12)
    x = torch.randn(4, 8)
    for _ in range(2 * (3 + cpu_linear.WARM_UP)):  # the trial calls
        torch.testing.assert_close(chooser(x, weight, bias), F.linear(x, weight, bias))
    assert calls.count("slow") == calls.count("fast") == 3 + cpu_linear.WARM_UP  # alternated
    key = (12, 8, 4, torch.float32, True, torch.get_num_threads())
    assert chooser.choices == {key: "fast"}
    calls.clear()
    for _ in range(5):
        chooser(torch.randn(3, 8), weight, bias)  # 3 rows: the same bucket as 4
    assert calls == ["fast"] * 5
    chooser(torch.randn(5, 8), weight, bias)  # a new bucket (8) is timed again
    chooser(torch.randn(4, 8), weight, None)  # so is the same shape without bias
    assert len(chooser.choices) == 1 and len(calls) == 7
    chooser.reset()
    assert chooser.choices == {}


@pytest.mark.parametrize("mode", ["plain", "transposed"])
def test_a_fixed_mode_never_times_or_switches(mode: str) -> None:
    chooser = ProductChooser(mode)
    x, weight = torch.randn(4, 8), torch.randn(12, 8)
    for _ in range(20):
        torch.testing.assert_close(chooser(x, weight, None), F.linear(x, weight))
    assert chooser.choices == {}


def test_the_mode_comes_from_the_environment_and_a_bad_one_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x, weight = torch.randn(2, 8), torch.randn(12, 8)
    monkeypatch.setenv(PRODUCT_ENV_VAR, "transposed")
    chooser = ProductChooser(mode=None)
    chooser(x, weight, None)
    assert chooser.mode == "transposed"
    monkeypatch.setenv(PRODUCT_ENV_VAR, "fastest")
    with pytest.raises(ConfigError, match=r"ANUVAD_CPU_PRODUCT='fastest'.*auto, plain, transposed"):
        ProductChooser(mode=None)(x, weight, None)
    with pytest.raises(ConfigError, match="ANUVAD_CPU_PRODUCT"):
        ProductChooser("gemv")


@pytest.mark.parametrize(("rows", "padded"), [(1, 2), (2, 2), (8, 8), (9, 16), (16, 16), (17, 32)])
def test_transposed_rows_are_padded_to_what_blas_is_fast_on(rows: int, padded: int) -> None:
    assert padded_rows(rows) == padded


@pytest.mark.parametrize(("rows", "bucket"), [(0, 1), (1, 1), (2, 2), (3, 4), (4, 4), (5, 8)])
def test_row_buckets_are_powers_of_two(rows: int, bucket: int) -> None:
    assert row_bucket(rows) == bucket
