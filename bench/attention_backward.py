"""Attention forward + backward on a CPU: PyTorch's fused kernel against the explicit product.

Times ``F.scaled_dot_product_attention`` and anuvad's explicit softmax(Q K^T / sqrt(d)) V
(:func:`anuvad.model.attention.attention_weights`, the path the attention modules take when training
under CPU bf16 autocast) for batches of 4,096 query positions, 8 heads of 32 dimensions, with a
key-padding mask, in fp32 and bf16. Each case: 2 untimed runs, then the mean of ``--repeats``.

    .venv/bin/python bench/attention_backward.py --threads 2
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from anuvad.model.attention import attention_weights

Attention = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]


def fused(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def explicit(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    return attention_weights(q, k, mask, causal=False) @ v


def time_case(fn: Attention, length: int, dtype: torch.dtype, repeats: int) -> tuple[float, float]:
    """Mean forward and backward milliseconds for (4096 / length) sentences of ``length``."""
    batch, heads, d_head = 4096 // length, 8, 32
    gen = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(batch, heads, length, d_head, generator=gen).to(dtype).requires_grad_()
        for _ in range(3)
    )
    mask = torch.ones(batch, 1, 1, length, dtype=torch.bool)  # (B, 1, 1, L) True = may attend
    mask[::2, :, :, -3:] = False  # every other sentence ends in 3 padding positions
    forward = backward = 0.0
    for index in range(2 + repeats):
        started = time.perf_counter()
        out = fn(q, k, v, mask)
        middle = time.perf_counter()
        out.backward(torch.ones_like(out))  # type: ignore[no-untyped-call]
        ended = time.perf_counter()
        if index >= 2:
            forward += middle - started
            backward += ended - middle
    return 1000 * forward / repeats, 1000 * backward / repeats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--lengths", type=int, nargs="+", default=[32, 64, 128, 256])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    capability = torch.backends.cpu.get_cpu_capability()
    print(f"torch {torch.__version__}, {args.threads} threads, {capability}")
    print("| dtype | keys | fused fwd ms | fused bwd ms | explicit fwd ms | explicit bwd ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for dtype in (torch.float32, torch.bfloat16):
        for length in args.lengths:
            f_fwd, f_bwd = time_case(fused, length, dtype, args.repeats)
            e_fwd, e_bwd = time_case(explicit, length, dtype, args.repeats)
            name = str(dtype).removeprefix("torch.")
            print(f"| {name} | {length} | {f_fwd:.1f} | {f_bwd:.1f} | {e_fwd:.1f} | {e_bwd:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
