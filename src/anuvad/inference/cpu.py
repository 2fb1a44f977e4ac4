"""Decoding faster on CPUs: each projection of a loaded model gets the faster of two equal
products, chosen once per machine and then fixed.

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

On the AVX2 CPU of docs/benchmark-history.md the transposed product won up to 64 rows and more.
So no fixed rule is right everywhere. :func:`accelerate` (called when a translator loads a model
onto a CPU) times both products on the model's own weights for every matrix shape and row bucket,
cycling through all the layers of a shape so that the weights are as cold as while decoding,
and swaps each ``nn.Linear`` (and the output layer's :class:`~anuvad.model.layers.LinearProduct`)
for a module that always uses the product chosen for its bucket. The choices are stored per
machine (CPU model and flags, threads, torch version) in ``cpu-products.json`` in anuvad's cache
folder (:func:`anuvad.data.download.cache_dir`: ``$ANUVAD_CACHE``, else ``~/.cache/anuvad``), so
every later load on that machine makes the same choices: **two runs give byte-identical outputs**.

The model itself stays plain PyTorch: training and validation never see these modules (a
validation's dev scores do not depend on timing), the parameters are the same tensors and the
state-dict keys are unchanged. ``ANUVAD_CPU_PRODUCT=plain`` (or ``transposed``) fixes the
product instead (e.g. for bit-identical outputs across machines); ``auto`` (the default) chooses.

How many threads decode: :func:`choose_threads` (the cores left free by what else runs, unless
the user said; ``anuvad translate`` uses it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.atomic import write_atomic
from anuvad.data.download import cache_dir
from anuvad.errors import ConfigError
from anuvad.model.layers import LinearProduct
from anuvad.model.transformer import Transformer

logger = logging.getLogger(__name__)

PRODUCT_ENV_VAR = "ANUVAD_CPU_PRODUCT"
# Set by the user, these fix PyTorch's thread count (it reads them when it starts): respected.
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
CACHE_FILE = "cpu-products.json"
MODES = ("auto", "plain", "transposed")
# Beyond this many rows (e.g. encoding a batch) the products are not timed: F.linear.
MAX_ROWS = 512
BUCKETS = tuple(1 << i for i in range(MAX_ROWS.bit_length()))  # 1, 2, 4, ..., 512
# Timed rounds per product and bucket (each round: every layer of the shape once), after one
# untimed round (cold caches, one-time set-up).
SAMPLES = 5

Product = Callable[[Tensor, Tensor, "Tensor | None"], Tensor]
Choices = dict[int, str]  # row bucket -> product name


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
            f"{', '.join(MODES)} (auto, the default, times both once per machine)"
        )
    return mode


def row_bucket(rows: int) -> int:
    """1, 2, 4, 8, ...: the power of two at or above ``rows`` (one choice per bucket)."""
    return 1 << max(0, rows - 1).bit_length()


def _chosen_product(x: Tensor, weight: Tensor, bias: Tensor | None, choices: Choices) -> Tensor:
    """``F.linear`` with the product chosen for x's row bucket (training, other devices and
    more than :data:`MAX_ROWS` rows: always ``F.linear``)."""
    rows = x.numel() // max(1, x.size(-1))
    if x.device.type != "cpu" or torch.is_grad_enabled() or rows > MAX_ROWS:
        return F.linear(x, weight, bias)
    return PRODUCTS[choices.get(row_bucket(rows), "plain")](x, weight, bias)


class AcceleratedLinear(nn.Module):
    """An ``nn.Linear``'s parameters (the same tensors, the same state-dict keys) computed with
    the product chosen per row bucket."""

    def __init__(self, linear: nn.Linear, choices: Choices) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = linear.weight  # (O, I), shared
        self.bias = linear.bias  # (O,) or None, shared
        self.choices = dict(choices)

    def forward(self, x: Tensor) -> Tensor:
        """x (..., I) → (..., O)."""
        return _chosen_product(x, self.weight, self.bias, self.choices)


class AcceleratedProduct(LinearProduct):
    """:class:`~anuvad.model.layers.LinearProduct` with the product chosen per row bucket."""

    def __init__(self, choices: Choices) -> None:
        super().__init__()
        self.choices = dict(choices)

    def forward(self, x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        """x (..., I), weight (O, I), bias (O,) → (..., O)."""
        return _chosen_product(x, weight, bias, self.choices)


def shape_key(weight: Tensor, bias: Tensor | None) -> str:
    """How the choices of one matrix shape are named in the cache: ``O×I dtype bias``."""
    dtype = str(weight.dtype).removeprefix("torch.")
    return f"{weight.size(0)}x{weight.size(1)} {dtype} {'bias' if bias is not None else 'nobias'}"


def machine_key(threads: int | None = None) -> str:
    """The machine the choices hold for: CPU model, a hash of its feature flags (one model name
    is sold with and without AVX-512), threads and torch version."""
    model, flags = platform.processor() or platform.machine(), ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and model in (platform.machine(), ""):
                model = value.strip()
            elif name.strip() == "flags" and not flags:
                flags = value.strip()
    except OSError:
        pass
    digest = hashlib.sha256(flags.encode()).hexdigest()[:12]
    count = threads if threads is not None else torch.get_num_threads()
    return f"{model} | flags {digest} | {count} threads | torch {torch.__version__}"


def measure_choices(
    matrices: Sequence[tuple[Tensor, Tensor | None]],
    buckets: Sequence[int] = BUCKETS,
    samples: int = SAMPLES,
    products: Mapping[str, Product] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Choices:
    """Time every product on ``matrices`` (all of one shape) per row bucket; keep the faster.

    One round computes the product once per matrix (so each sees caches the others left, as in
    a decoding step); the first round is not counted, then the median of ``samples`` rounds.
    Ties go to ``plain``.

    Args:
        matrices: (weight (O, I), bias (O,) or None) pairs of one shape.
        buckets: row counts to decide for.
        samples: timed rounds per product and bucket.
        products: the candidates by name (tests pass their own).
        clock: seconds (tests pass a fake one).
    """
    candidates = dict(products or PRODUCTS)
    generator = torch.Generator().manual_seed(0)
    in_features = matrices[0][0].size(1)
    dtype = matrices[0][0].dtype
    choices: Choices = {}
    with torch.inference_mode():
        for rows in buckets:
            x = torch.randn(rows, in_features, generator=generator).to(dtype)  # (M, I)
            seconds: dict[str, list[float]] = {name: [] for name in candidates}
            for round_ in range(samples + 1):
                for name, product in candidates.items():
                    start = clock()
                    for weight, bias in matrices:
                        product(x, weight, bias)
                    if round_:
                        seconds[name].append(clock() - start)
            medians = {name: statistics.median(times) for name, times in seconds.items()}
            choices[rows] = min(medians, key=lambda n: (medians[n], n != "plain"))
    return choices


def _read_cache(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("%s is unreadable (%s); measuring the CPU products again", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _linears(model: nn.Module) -> Iterator[tuple[nn.Module, str, nn.Linear]]:
    """(parent, attribute, module) for every ``nn.Linear`` under ``model``."""
    for parent in model.modules():
        for name, child in parent.named_children():
            if type(child) is nn.Linear:
                yield parent, name, child


def product_choices(
    matrices: Mapping[str, Sequence[tuple[Tensor, Tensor | None]]],
    cache: Path | None,
    measure: Callable[[Sequence[tuple[Tensor, Tensor | None]]], Choices] = measure_choices,
) -> dict[str, Choices]:
    """The choices for every shape in ``matrices``: from the cache file where it has them for
    this machine, else measured (and written back)."""
    key = machine_key()
    stored = _read_cache(cache) if cache is not None else {}
    known = stored.get(key, {})
    result: dict[str, Choices] = {}
    missing = [shape for shape in matrices if shape not in known]
    for shape, chosen in known.items():
        if shape in matrices:
            result[shape] = {int(rows): name for rows, name in chosen.items()}
    if missing:
        started = time.perf_counter()
        for shape in missing:
            result[shape] = measure(matrices[shape])
        logger.info(
            "timed the CPU products of %d matrix shapes in %.1f s (%s)",
            len(missing),
            time.perf_counter() - started,
            key,
        )
        if cache is not None:
            # Another process may have stored choices meanwhile: keep its, add ours.
            stored = _read_cache(cache)
            merged = {
                shape: {str(rows): name for rows, name in choices.items()}
                for shape, choices in result.items()
            }
            merged.update(stored.get(key, {}))
            stored[key] = merged
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(cache, json.dumps(stored, indent=1, sort_keys=True).encode())
            except OSError as exc:
                logger.warning("could not store the CPU product choices in %s: %s", cache, exc)
    return result


def accelerate(
    model: Transformer,
    mode: str | None = None,
    cache: Path | None = None,
    measure: Callable[[Sequence[tuple[Tensor, Tensor | None]]], Choices] = measure_choices,
) -> dict[str, Choices]:
    """Swap the projections of a CPU inference model for fixed-product ones (in place).

    Args:
        model: a loaded model on the CPU (on another device nothing changes).
        mode: "auto", "plain" or "transposed"; None: ``ANUVAD_CPU_PRODUCT`` ("auto" when unset).
        cache: the choices file; None: ``cache_dir() / "cpu-products.json"``.
        measure: times one shape's matrices (tests pass their own).

    Returns:
        The choices made, by shape (empty when nothing was swapped).

    Raises:
        ConfigError: the mode is not one of :data:`MODES`.
    """
    mode = checked_mode(mode if mode is not None else os.environ.get(PRODUCT_ENV_VAR, "auto"))
    if mode == "plain" or next(model.parameters()).device.type != "cpu":
        return {}
    linears = list(_linears(model))
    weight, bias = model.output_matrix()
    matrices: dict[str, list[tuple[Tensor, Tensor | None]]] = {}
    for _, _, linear in linears:
        matrices.setdefault(shape_key(linear.weight, linear.bias), []).append(
            (linear.weight.detach(), None if linear.bias is None else linear.bias.detach())
        )
    output_shape = shape_key(weight, bias)
    matrices.setdefault(output_shape, []).append(
        (weight.detach(), None if bias is None else bias.detach())
    )
    if mode == "transposed":
        choices = {shape: dict.fromkeys(BUCKETS, "transposed") for shape in matrices}
    else:
        choices = product_choices(matrices, cache or cache_dir() / CACHE_FILE, measure)
    for parent, name, linear in linears:
        chosen = choices[shape_key(linear.weight, linear.bias)]
        setattr(parent, name, AcceleratedLinear(linear, chosen))
    model.output_product = AcceleratedProduct(choices[output_shape])
    return choices


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; all of them where unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def running_load() -> float:
    """The machine's load: processes running or waiting for a core, averaged over the last
    minute (0 where the platform does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def free_threads(cores: int, load: float) -> int:
    """The threads a decoding process should use: the ``cores`` minus the ``load`` already
    running, rounded, at least 1, at most ``cores``.

    More threads than free cores is oversubscription: PyTorch's threads wait for each other at
    every operation, and each waits for a core another process holds. On 2 cores with a
    training run beside it, a 5-line file took 21-26 s with PyTorch's default of 2 threads and
    7.8 s with 1 (issue 40, item 8).
    """
    return max(1, min(cores, math.floor(cores - load + 0.5)))


def choose_threads(
    requested: int = 0,
    environ: Mapping[str, str] = os.environ,
    cores: int | None = None,
    load: float | None = None,
) -> int:
    """How many threads PyTorch should decode with: ``requested`` when given, 0 (keep PyTorch's
    own) when the user set :data:`THREAD_ENV_VARS`, else :func:`free_threads` of the cores this
    process may use and the machine's load.

    Args:
        requested: threads the user asked for (``--threads``); 0: choose.
        environ: the environment (tests pass their own).
        cores: usable cores; None: :func:`usable_cores`.
        load: running load; None: :func:`running_load`.

    Raises:
        ConfigError: ``requested`` is negative.
    """
    if requested < 0:
        raise ConfigError(f"threads must be 0 (choose) or more, got {requested}")
    if requested:
        return requested
    if any(environ.get(name, "").strip() for name in THREAD_ENV_VARS):
        return 0
    cores = usable_cores() if cores is None else cores
    load = running_load() if load is None else load
    return free_threads(cores, load)
