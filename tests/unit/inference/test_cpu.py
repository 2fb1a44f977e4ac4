"""anuvad.inference.cpu: both products equal nn.Linear; accelerate() swaps a loaded model's
projections for fixed-product ones (same parameters, same keys), chooses the faster product on a
clock, stores the choices per machine and reuses them, so that two loads decode byte-identically."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.data.batching import collate_source
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.errors import ConfigError
from anuvad.inference import cpu
from anuvad.inference.cpu import (
    BUCKETS,
    MAX_ROWS,
    PRODUCT_ENV_VAR,
    AcceleratedLinear,
    AcceleratedProduct,
    accelerate,
    choose_threads,
    machine_key,
    measure_choices,
    padded_rows,
    row_bucket,
    shape_key,
    transposed_linear,
)
from anuvad.model.layers import LinearProduct
from anuvad.model.transformer import Transformer, build_model
from conftest import small_model_config

Matrices = Sequence[tuple[Tensor, Tensor | None]]
BEAM_3 = DecodeConfig(beam_size=3, max_len_a=0.0, max_len_b=12)  # the decoding tests' search


def tiny_model(tie: bool = True) -> Transformer:
    torch.manual_seed(0)
    config = small_model_config(src_vocab_size=50, tgt_vocab_size=60, tie_output_embedding=tie)
    return build_model(config).eval()


def everything(name: str) -> cpu.Choices:
    return dict.fromkeys(BUCKETS, name)


@pytest.mark.parametrize("shape", [(1, 16), (1, 1, 16), (3, 5, 16), (0, 16), (17, 16)])
@pytest.mark.parametrize("bias", [True, False])
def test_transposed_linear_equals_f_linear_and_keeps_leading_dims(
    shape: tuple[int, ...], bias: bool
) -> None:
    torch.manual_seed(0)
    x, weight = torch.randn(shape), torch.randn(40, 16)
    b = torch.randn(40) if bias else None
    got = transposed_linear(x, weight, b)
    assert got.shape == (*shape[:-1], 40) and got.is_contiguous()
    torch.testing.assert_close(got, F.linear(x, weight, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("product", ["plain", "transposed"])
@pytest.mark.parametrize("rows", [1, 2, 3, 9, 31, MAX_ROWS, MAX_ROWS + 1])
def test_an_accelerated_linear_equals_nn_linear(rows: int, product: str) -> None:
    torch.manual_seed(0)
    reference = nn.Linear(32, 48)
    ours = AcceleratedLinear(reference, everything(product))
    x = torch.randn(rows, 1, 32)  # (M, 1, I) as a decoding step feeds it
    with torch.inference_mode():
        got, want = ours(x), reference(x)
    assert got.shape == want.shape == (rows, 1, 48) and got.is_contiguous()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_accelerate_keeps_parameters_keys_and_training_untouched(tmp_path: Path) -> None:
    model = tiny_model()
    before = {name: tensor for name, tensor in model.state_dict().items()}
    params = {name: p.data_ptr() for name, p in model.named_parameters()}
    choices = accelerate(model, "transposed", cache=tmp_path / "c.json")
    assert choices and all(set(c.values()) == {"transposed"} for c in choices.values())
    after = model.state_dict()
    assert list(after) == list(before)  # the same keys, in the same order
    for name, tensor in after.items():
        assert torch.equal(tensor, before[name]), name
    assert {name: p.data_ptr() for name, p in model.named_parameters()} == params  # shared
    assert not any(type(m) is nn.Linear for m in model.modules())
    assert isinstance(model.output_product, AcceleratedProduct)
    # With autograd on, the ordinary product runs and gradients reach the shared weights.
    src = torch.randint(4, 50, (2, 5))
    tgt = torch.randint(4, 60, (2, 4))
    model(src, tgt, None).square().sum().backward()
    assert model.tgt_embed.weight.grad is not None


@pytest.mark.slow  # several seconds: left out of make test-fast
@pytest.mark.parametrize("tie", [True, False])
def test_an_accelerated_model_decodes_as_the_plain_one(tmp_path: Path, tie: bool) -> None:
    plain, fast = tiny_model(tie), tiny_model(tie)
    accelerate(fast, "transposed", cache=tmp_path / "c.json")
    src, pad = collate_source([[5, 6, 7, 8, 9], [10, 11, 3]])
    with torch.inference_mode():
        want = beam_search(plain, src, pad, BEAM_3)
        got = beam_search(fast, src, pad, BEAM_3)
    assert [h[0].token_ids for h in got] == [h[0].token_ids for h in want]
    for g, w in zip(got, want, strict=True):
        assert g[0].score == pytest.approx(w[0].score, abs=1e-4)


def test_plain_mode_and_other_devices_leave_the_model_as_it_is(tmp_path: Path) -> None:
    model = tiny_model()
    assert accelerate(model, "plain", cache=tmp_path / "c.json") == {}
    assert type(model.output_product) is LinearProduct
    assert any(type(m) is nn.Linear for m in model.modules())
    assert not (tmp_path / "c.json").exists()


class FakeClock:
    """Seconds that only products advance: "transposed" costs 1 per matrix below 8 rows, 3
    from 8 rows on; "plain" always 2. No wall clock, so load cannot change the outcome."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def products(self) -> dict[str, cpu.Product]:
        def plain(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
            self.now += 2
            return F.linear(x, weight, bias)

        def transposed(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
            self.now += 1 if x.size(0) < 8 else 3
            return transposed_linear(x, weight, bias)

        return {"plain": plain, "transposed": transposed}


def test_measuring_keeps_the_faster_product_per_row_bucket() -> None:
    clock = FakeClock()
    weights = [(torch.randn(12, 8), torch.randn(12)) for _ in range(3)]
    choices = measure_choices(weights, samples=3, products=clock.products(), clock=clock)
    assert choices == {b: "transposed" if b < 8 else "plain" for b in BUCKETS}


def test_equal_times_choose_the_plain_product() -> None:
    clock = FakeClock()
    same = {"plain": clock.products()["plain"], "transposed": clock.products()["plain"]}
    choices = measure_choices([(torch.randn(4, 4), None)], samples=1, products=same, clock=clock)
    assert set(choices.values()) == {"plain"}


def test_choices_are_stored_per_machine_and_reused_for_identical_outputs(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "cpu-products.json"
    measured: list[str] = []

    def measure(matrices: Matrices) -> cpu.Choices:
        measured.append(shape_key(*matrices[0]))
        # What a real timing might say, differently for each shape: per bucket, alternating.
        return {
            b: ("transposed" if (i + len(measured)) % 2 else "plain") for i, b in enumerate(BUCKETS)
        }

    first, second = tiny_model(), tiny_model()
    chosen = accelerate(first, "auto", cache=cache, measure=measure)
    shapes = len(measured)
    assert shapes == len(chosen) >= 4  # qkv, q, kv/ffn shapes and the output layer
    stored = json.loads(cache.read_text(encoding="utf-8"))
    assert list(stored) == [machine_key()]

    def must_not_measure(matrices: Matrices) -> cpu.Choices:
        raise AssertionError("the stored choices should have been used")

    assert accelerate(second, "auto", cache=cache, measure=must_not_measure) == chosen
    src, pad = collate_source([[5, 6, 7, 8, 9], [10, 11, 3]])
    with torch.inference_mode():
        a = beam_search(first, src, pad, BEAM_3)
        b = beam_search(second, src, pad, BEAM_3)
    assert [(h.token_ids, h.score) for n in a for h in n] == [
        (h.token_ids, h.score) for n in b for h in n
    ]


def test_another_machine_measures_anew_and_keeps_the_first_machines_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cpu-products.json"
    accelerate(tiny_model(), "auto", cache=cache, measure=lambda m: everything("plain"))
    monkeypatch.setattr(cpu, "machine_key", lambda threads=None: "another CPU")
    chosen = accelerate(
        tiny_model(), "auto", cache=cache, measure=lambda m: everything("transposed")
    )
    assert all(set(c.values()) == {"transposed"} for c in chosen.values())
    assert len(json.loads(cache.read_text(encoding="utf-8"))) == 2


def test_an_unreadable_or_unwritable_cache_is_no_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert accelerate(tiny_model(), "auto", cache=broken, measure=lambda m: everything("plain"))
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    chosen = accelerate(
        tiny_model(),
        "auto",
        cache=blocked / "cpu-products.json",
        measure=lambda m: everything("plain"),
    )
    assert chosen
    assert "unreadable" in caplog.text and "could not store" in caplog.text


def test_the_mode_comes_from_the_environment_and_a_bad_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRODUCT_ENV_VAR, "transposed")
    chosen = accelerate(tiny_model(), cache=tmp_path / "c.json")
    assert all(set(c.values()) == {"transposed"} for c in chosen.values())
    monkeypatch.setenv(PRODUCT_ENV_VAR, "fastest")
    with pytest.raises(ConfigError, match=r"ANUVAD_CPU_PRODUCT='fastest'.*auto, plain, transposed"):
        accelerate(tiny_model(), cache=tmp_path / "c.json")


def test_the_choices_live_in_anuvads_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANUVAD_CACHE", str(tmp_path / "mine"))
    monkeypatch.setenv(PRODUCT_ENV_VAR, "auto")
    accelerate(tiny_model(), measure=lambda m: everything("plain"))
    stored = json.loads((tmp_path / "mine" / "cpu-products.json").read_text(encoding="utf-8"))
    assert list(stored) == [machine_key()]


def test_the_machine_key_names_threads_and_torch() -> None:
    key = machine_key(threads=3)
    assert "3 threads" in key and torch.__version__ in key and "flags" in key


@pytest.mark.parametrize(("rows", "padded"), [(1, 2), (2, 2), (8, 8), (9, 16), (16, 16), (17, 32)])
def test_transposed_rows_are_padded_to_what_blas_is_fast_on(rows: int, padded: int) -> None:
    assert padded_rows(rows) == padded


@pytest.mark.parametrize(("rows", "bucket"), [(0, 1), (1, 1), (2, 2), (3, 4), (4, 4), (5, 8)])
def test_row_buckets_are_powers_of_two(rows: int, bucket: int) -> None:
    assert row_bucket(rows) == bucket


@pytest.mark.parametrize(
    ("cores", "load", "threads"),
    [(2, 0.0, 2), (2, 0.4, 2), (2, 1.45, 1), (2, 2.3, 1), (2, 9.0, 1), (16, 3.2, 13), (1, 0, 1)],
)
def test_threads_are_the_cores_left_free_by_the_running_load(
    cores: int, load: float, threads: int
) -> None:
    """Issue 40: on 2 cores with a training run beside it, 2 threads took 21-26 s where 1 took
    7.8 s; a decoding process takes the cores the load leaves, at least one, at most all."""
    assert choose_threads(environ={}, cores=cores, load=load) == threads


def test_threads_the_user_set_are_kept() -> None:
    assert choose_threads(3, environ={}, cores=2, load=2.0) == 3  # --threads 3
    # OMP_NUM_THREADS already set PyTorch's count when it started: 0 keeps it.
    assert choose_threads(environ={"OMP_NUM_THREADS": "2"}, cores=2, load=2.0) == 0
    assert choose_threads(environ={"OMP_NUM_THREADS": ""}, cores=2, load=2.0) == 1
    with pytest.raises(ConfigError, match="threads must be 0"):
        choose_threads(-1, environ={})
