"""``anuvad train`` for the tests, with two instruments: the gradients each optimizer step
receives, and a SIGKILL at a chosen step (load-independent, unlike a kill after polling).

    python train_worker.py CONFIG DATA RUN [--gradients OUT] [--kill-at-step N] [a.b=c ...]

Alone or under ``torchrun``. ``--gradients``: rank 0 writes ``{"adam_eps", "gradients"}`` (a list
of name -> gradient dicts, one per update) to OUT. ``--kill-at-step``: rank 0 SIGKILLs its whole
process group right after update N; under torchrun it kills torchrun's group first (the other
workers end with their launcher). Start the worker, or torchrun, in a session of its own.
"""

from __future__ import annotations

import argparse
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import torch

from anuvad.config import load_config
from anuvad.distributed import end_worker
from anuvad.training import launch
from anuvad.training.trainer import Trainer


def instrumented(kill_at_step: int) -> tuple[type[Trainer], list[dict[str, torch.Tensor]]]:
    """A Trainer class that records gradients before each optimizer step and kills the process
    group (and torchrun's) after update ``kill_at_step`` (0: never), and the list it records
    into."""
    recorded: list[dict[str, torch.Tensor]] = []

    class InstrumentedTrainer(Trainer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)

            def record(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
                grads = {
                    n: cast(torch.Tensor, p.grad).detach().clone()  # every parameter has one
                    for n, p in self.model.named_parameters()
                }
                recorded.append(grads)

            self.optimizer.register_step_pre_hook(record)

        def train_step(self, local_groups: Sequence[list[int]], global_tokens: int) -> float:
            loss = super().train_step(local_groups, global_tokens)
            if kill_at_step > 0 and self.context.is_main and self.progress.step == kill_at_step:
                if self.context.enabled:  # torchrun's group; its workers die with it
                    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
                os.killpg(os.getpgid(0), signal.SIGKILL)
            return loss

    return InstrumentedTrainer, recorded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("data")
    parser.add_argument("run")
    parser.add_argument("--gradients", type=Path)
    parser.add_argument("--kill-at-step", type=int, default=0)
    args, overrides = parser.parse_known_args()
    config = load_config(args.config, overrides)
    trainer_class, recorded = instrumented(args.kill_at_step)
    # Monkeypatch: launch imports Trainer without re-exporting it.
    launch.Trainer = trainer_class  # type: ignore[attr-defined]
    launch.run_training(config, Path(args.data), Path(args.run), show_progress=False)
    if args.gradients and os.environ.get("RANK", "0") == "0":
        torch.save({"adam_eps": config.train.adam_eps, "gradients": recorded}, args.gradients)


if __name__ == "__main__":
    main()
    end_worker(0)  # as anuvad.cli.main ends a worker (gloo's threads and finalization)
