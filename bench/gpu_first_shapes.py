"""Why a GPU training run's first epoch is slow: training steps on batch shapes the process has
not seen yet, against the same shapes seen again, for the d256 3+3 model (bf16 autocast, Adam),
with a profile of the first-seen steps. On a lent H200 the first epoch of both round-3 runs ran
at 15k-30k target tokens/s and every later epoch (the same batch shapes) at ~215k.

    python3 bench/gpu_first_shapes.py --device cuda [--pad-to 8]
"""

from __future__ import annotations

import argparse
import random
import time

import torch

from anuvad.config import ModelConfig
from anuvad.model.transformer import build_model
from anuvad.training.loss import label_smoothed_loss
from anuvad.training.precision import autocast_context


def shapes(count: int, budget: int, pad_to: int, seed: int) -> list[tuple[int, int, int]]:
    """``count`` distinct (B, S, T) batch shapes of about ``budget`` target tokens."""
    draw, found = random.Random(seed), set[tuple[int, int, int]]()
    while len(found) < count:
        t = draw.randint(6, 120)
        s = max(4, int(t * draw.uniform(0.5, 0.9)))
        if pad_to > 1:
            t, s = -(-t // pad_to) * pad_to, -(-s // pad_to) * pad_to
        found.add((max(1, budget // t), s, t))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--budget", type=int, default=8192)
    parser.add_argument("--pad-to", type=int, default=1)
    args = parser.parse_args()
    device = torch.device(args.device)
    config = ModelConfig(
        d_model=256, num_heads=8, d_ff=1024, num_encoder_layers=3, num_decoder_layers=3,
        dropout=0.2, src_vocab_size=8000, tgt_vocab_size=8000, init_std=0.02,
    )  # fmt: skip
    model = build_model(config).to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

    def step(b: int, s: int, t: int) -> None:
        src = torch.randint(4, 8000, (b, s), device=device)
        tgt = torch.randint(4, 8000, (b, t + 1), device=device)
        mask = torch.zeros(b, s, dtype=torch.bool, device=device)
        mask[: b // 2, s - 2 :] = True  # some padding, as real batches have
        with autocast_context(device, "bf16"):
            logits = model(src, tgt[:, :-1], mask)
        loss = label_smoothed_loss(logits, tgt[:, 1:], 0.1)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def timed(batch: list[tuple[int, int, int]]) -> float:
        if device.type == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        for shape in batch:
            step(*shape)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return (time.perf_counter() - started) / len(batch)

    warm = shapes(3, args.budget, args.pad_to, seed=0)
    timed(warm)  # the process's first steps (context, allocator, kernels' first load)
    new = [s for s in shapes(args.steps + 3, args.budget, args.pad_to, seed=1) if s not in warm]
    first = timed(new[: args.steps])
    again = timed(new[: args.steps])
    print(
        f"pad_to {args.pad_to}: first-seen shapes {1000 * first:.1f} ms/step, "
        f"the same shapes again {1000 * again:.1f} ms/step ({first / again:.1f}x)",
        flush=True,
    )
    fresh = shapes(8, args.budget, args.pad_to, seed=2)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    ) as profile:
        timed(fresh)
    print(profile.key_averages().table(sort_by="self_cpu_time_total", row_limit=18), flush=True)


if __name__ == "__main__":
    main()
