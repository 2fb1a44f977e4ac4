"""Linear layers for decoding on CPUs: of two ways to compute the same product, the faster one,
measured on the real calls.

A decoding step multiplies a few rows (the hypotheses being extended) by every weight matrix of
the decoder. CPU BLAS libraries treat that shape unevenly, and which formulation wins depends on
the CPU, its caches, the matrix, the row count and the threads. Measured on a 2-core AMD EPYC
(AVX-512, 2 threads, weights not in cache, as while decoding), output layer O 8,000 x I 256:

=========  ==========================  ============================
rows M     ``F.linear`` (x @ W^T)      transposed ((W @ x^T)^T)
=========  ==========================  ============================
1          970 µs (a matrix-vector)     260 µs (padded to two rows)
2          1,912 µs                     307 µs
32         1,577 µs                     1,565 µs
128        3,853 µs                     8,654 µs
=========  ==========================  ============================

On the AVX2 CPU of docs/benchmarks.md the transposed product won up to 64 rows and more. So no
fixed rule is right everywhere: :class:`ProductChooser` times both products on the first calls
of every (matrix shape, row bucket, dtype, bias, threads) and keeps the faster one. Those trial
calls do the real work (nothing is computed twice), so choosing costs nothing but a clock read.
Both products are the same product; they may differ in the last bits of float rounding.

Training (autograd), other devices and more than :data:`MAX_ROWS` rows always take
``F.linear``. ``ANUVAD_CPU_PRODUCT=plain`` or ``=transposed`` fixes the product (e.g. for
bit-identical outputs across machines); ``auto`` (the default) chooses.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.errors import ConfigError

PRODUCT_ENV_VAR = "ANUVAD_CPU_PRODUCT"
MODES = ("auto", "plain", "transposed")
# Beyond this many rows (e.g. encoding a batch) the products are not timed: F.linear.
MAX_ROWS = 512
# Calls of each product per key not counted: the first calls of a process meet cold caches and
# one-time set-up (5 samples after 1 warm-up chose a 20 % slower beam search in 1 run of 3).
WARM_UP = 2

Product = Callable[[Tensor, Tensor, "Tensor | None"], Tensor]
# (out_features, in_features, row bucket, dtype, has bias, threads)
ProductKey = tuple[int, int, int, torch.dtype, bool, int]


def padded_rows(rows: int) -> int:
    """The rows :func:`transposed_linear` computes for ``rows``: 1 → 2, up to 8 as they are,
    more → the next multiple of 16 (BLAS kernels are fast on those; see the function)."""
    if rows == 1:
        return 2
    if rows <= 8:
        return rows
    return -(-rows // 16) * 16


def transposed_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``F.linear(x, weight, bias)`` computed as ``(weight @ x^T)^T``: the same product.

    The rows are padded with zeros first (:func:`padded_rows`): BLAS libraries send
    (O, I) @ (I, 1) to a matrix-vector kernel several times slower than their matrix-matrix
    kernel on two columns, and above 8 columns they are fast on multiples of 16 and slow
    between (O 8,000, I 256, cache cold: 1,505 µs at 15 columns against 734 at 16, 1,816 at 31
    against 1,042 at 32, 4,798 at 127 against 3,086 at 128; ``F.linear`` does not care). The
    padding rows are computed and dropped. For inference only (no autograd graph of its own).
    """
    flat = x.reshape(-1, x.size(-1))  # (M, I)
    rows = flat.size(0)
    padding = padded_rows(rows) - rows
    if padding:
        flat = torch.cat([flat, flat.new_zeros(padding, flat.size(1))])  # (M + padding, I)
    out = (weight @ flat.t()).t()  # (M + padding, O)
    out = (out[:rows] if padding else out).contiguous()  # (M, O)
    if bias is not None:
        out += bias
    return out.reshape(*x.shape[:-1], weight.size(0))


PRODUCTS: dict[str, Product] = {"plain": F.linear, "transposed": transposed_linear}


def checked_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`.

    Raises:
        ConfigError: it is not (names the environment variable and the choices).
    """
    if mode not in MODES:
        raise ConfigError(
            f"{PRODUCT_ENV_VAR}={mode!r} is not a CPU product mode; set it to one of "
            f"{', '.join(MODES)} (auto, the default, times both and keeps the faster)"
        )
    return mode


def row_bucket(rows: int) -> int:
    """1, 2, 4, 8, ...: the power of two at or above ``rows`` (one choice per bucket)."""
    return 1 << max(0, rows - 1).bit_length()


class ProductChooser:
    """Computes ``F.linear`` with whichever product is fastest for each kind of call.

    The first ``2 * (WARM_UP + samples)`` calls of each key alternate between the products and
    are timed (the first WARM_UP calls of each are not counted); then the product with the
    lower median time is kept for that key.

    Args:
        mode: "auto" (choose by timing), "plain" or "transposed" (always that product); None:
            read from ``ANUVAD_CPU_PRODUCT`` on the first call ("auto" when unset).
        samples: timed calls per product before choosing.
        products: the candidates, by name (tests pass their own).

    Raises:
        ConfigError: ``mode`` is not one of :data:`MODES`.
    """

    def __init__(
        self,
        mode: str | None = "auto",
        samples: int = 9,
        products: Mapping[str, Product] | None = None,
    ) -> None:
        self.mode = mode if mode is None else checked_mode(mode)
        self.samples = samples
        self.products = dict(products or PRODUCTS)
        self.choices: dict[ProductKey, str] = {}
        self._seconds: dict[ProductKey, dict[str, list[float]]] = {}

    def __call__(self, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        """``F.linear(x, weight, bias)`` for x (..., I), weight (O, I) → (..., O).

        Raises:
            ConfigError: the mode comes from ``ANUVAD_CPU_PRODUCT`` and that is invalid.
        """
        if self.mode is None:
            self.mode = checked_mode(os.environ.get(PRODUCT_ENV_VAR, "auto"))
        if self.mode != "auto":
            return self.products[self.mode](x, weight, bias)
        rows = x.numel() // max(1, x.size(-1))
        key = (
            weight.size(0), weight.size(1), row_bucket(rows), x.dtype, bias is not None,
            torch.get_num_threads(),
        )  # fmt: skip
        choice = self.choices.get(key)
        if choice is not None:
            return self.products[choice](x, weight, bias)
        return self._trial(key, x, weight, bias)

    def _trial(self, key: ProductKey, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        seconds = self._seconds.setdefault(key, {name: [] for name in self.products})
        name = min(seconds, key=lambda n: len(seconds[n]))  # the product timed least so far
        start = time.perf_counter()
        out = self.products[name](x, weight, bias)
        seconds[name].append(time.perf_counter() - start)
        if all(len(times) >= WARM_UP + self.samples for times in seconds.values()):
            medians = {n: statistics.median(times[WARM_UP:]) for n, times in seconds.items()}
            self.choices[key] = min(medians, key=medians.__getitem__)
            del self._seconds[key]
        return out

    def reset(self) -> None:
        """Forget every choice (e.g. after changing the number of threads or the load)."""
        self.choices.clear()
        self._seconds.clear()


CHOOSER = ProductChooser(mode=None)  # the mode comes from ANUVAD_CPU_PRODUCT


def linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``F.linear``; when decoding on a CPU (no autograd, at most :data:`MAX_ROWS` rows), the
    faster of the two products chosen by :data:`CHOOSER`."""
    if (
        x.device.type == "cpu"
        and not torch.is_grad_enabled()
        and x.numel() <= MAX_ROWS * x.size(-1)
    ):
        return CHOOSER(x, weight, bias)
    return F.linear(x, weight, bias)


class Linear(nn.Linear):
    """``nn.Linear`` (same parameters and state-dict keys) that decodes faster on CPUs through
    :func:`linear`."""

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)
