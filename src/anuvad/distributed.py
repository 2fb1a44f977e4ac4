"""The processes ``torchrun`` starts: joining the group, this process' place in it, and the few
collectives that training (DistributedDataParallel, :mod:`anuvad.training.distributed`) and
sharded translation (:mod:`anuvad.inference.sharding`) share.

``torchrun`` sets ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``; without them training runs in one
process. NCCL is used between GPUs and gloo between CPU processes.

Single node, 4 GPUs::

    torchrun --standalone --nproc-per-node 4 -m anuvad.cli.main train --config configs/base.yaml

Two nodes, 8 GPUs each (run on both, with node 0's address)::

    torchrun --nnodes 2 --nproc-per-node 8 --node-rank {0|1} \\
        --rdzv-backend c10d --rdzv-endpoint HOST0:29500 \\
        -m anuvad.cli.main train --config configs/big.yaml

Translation shards the same way (``anuvad backtranslate`` / ``anuvad translate`` under
``torchrun``: each rank translates whole chunks, rank 0 writes them in input order)::

    torchrun --standalone --nproc-per-node 2 -m anuvad.cli.main backtranslate --model M.pt ...
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as _dt
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import torch
import torch.distributed as dist

from anuvad.errors import TrainingError

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How long a rank waits in a collective (or for the others to join) before it fails: a rank that
# died without its launcher noticing ends the others within this time.
COLLECTIVE_TIMEOUT = _dt.timedelta(minutes=10)
PR_SET_PDEATHSIG = 1  # prctl(2)
_joined = False  # whether this process joined a process group (see end_worker)


@dataclass(frozen=True)
class DistributedContext:
    """This process' place in the job."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @property
    def is_main(self) -> bool:
        """Only rank 0 writes checkpoints, logs and the model file."""
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        """Whether more than one process takes part."""
        return self.world_size > 1


def init_distributed(device: str = "auto") -> DistributedContext:
    """Join the process group ``torchrun`` set up, or describe a single process.

    Args:
        device: "auto" (one GPU per local rank when CUDA is there, else the CPU), "cpu", or
            "cuda" / "cuda:N" (N is ignored under torchrun: each rank takes its local GPU).
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    if use_cuda:
        if not torch.cuda.is_available():
            raise TrainingError(
                f"train.device={device} but no CUDA GPU is usable here (torch "
                f"{torch.__version__}, CUDA {torch.version.cuda or 'not built in'}); set "
                "train.device=cpu, or auto to use a GPU when there is one"
            )
        if world_size > 1 and local_rank >= torch.cuda.device_count():
            raise TrainingError(
                f"local rank {local_rank} has no GPU of its own: this machine has "
                f"{torch.cuda.device_count()} and NCCL needs one per process; start torchrun "
                f"with --nproc-per-node {torch.cuda.device_count()} or set train.device=cpu"
            )
        if world_size > 1 or device in ("auto", "cuda"):
            chosen = torch.device("cuda", local_rank if world_size > 1 else 0)
        else:
            chosen = torch.device(device)
        torch.cuda.set_device(chosen)
    else:
        chosen = torch.device("cpu")
    if world_size > 1 and not dist.is_initialized():
        exit_with_launcher()
        backend = "nccl" if use_cuda else "gloo"
        dist.init_process_group(backend=backend, timeout=COLLECTIVE_TIMEOUT)
        global _joined
        _joined = True
        logger.info("rank %d of %d joined (%s, %s)", rank, world_size, backend, chosen)
    return DistributedContext(rank, world_size, local_rank, chosen)


def end_worker(code: int) -> int:
    """Return ``code``, or, in a process that joined ``torchrun``'s process group, flush the
    output and end the process at once with it (``os._exit``), skipping the interpreter's
    finalization.

    Why: gloo's worker threads free a finished collective's work object after the collective
    has returned; a barrier's work holds the gather before it, whose tensors have Python objects.
    When that happens while the interpreter finalizes, the thread's request for the GIL ends it
    mid-destructor and C++ aborts the process ("terminate called without an active exception",
    SIGABRT) after all its work was done, and torchrun reports the job failed (about 1 run in 25
    of a 2-worker ``anuvad translate`` on 2 cores). Nothing is left to finalize: files are
    closed, the group shut down (:func:`shutdown_distributed`).
    """
    if not _joined:
        return code
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken: nothing can go out
            stream.flush()
    os._exit(code)


def exit_with_launcher() -> None:
    """Have the kernel end this worker when its launcher (torchrun's agent, the parent) dies,
    so that a killed launcher leaves no orphans holding the run folder (Linux: the parent-death
    signal; elsewhere the collective timeout below ends them)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        logger.warning("could not ask to end with the launcher (errno %d)", ctypes.get_errno())
    if os.getppid() == 1:  # the launcher died before the request: end now
        raise TrainingError("the launcher (torchrun) is gone; this worker stops")


def barrier(context: DistributedContext) -> None:
    """Wait for every rank (no-op in a single process)."""
    if context.enabled:
        dist.barrier()


def any_rank(flag: bool, context: DistributedContext) -> bool:
    """True on every rank only if ``flag`` is True on any rank (e.g. "stop now")."""
    if not context.enabled:
        return flag
    tensor = torch.tensor([1.0 if flag else 0.0], device=context.device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return bool(tensor.item() > 0)


def broadcast_from_main(value: T | None, context: DistributedContext) -> T:
    """Rank 0's ``value`` on every rank (pickled; a collective). In one process: ``value``."""
    if context.enabled:
        box: list[Any] = [value if context.is_main else None]
        dist.broadcast_object_list(box, src=0, device=context.device)
        value = box[0]
    assert value is not None, "rank 0 sends a value"
    return value


def from_main(compute: Callable[[], T], context: DistributedContext) -> T:
    """``compute()`` on rank 0, its value on every rank (one decision for all: where an
    interrupted job resumes, whether there is anything to do).

    Raises:
        Exception: whatever ``compute`` raised on rank 0, raised on every rank, so that no rank
            waits for a value that will never come.
    """
    if not context.enabled:
        return compute()
    outcome: tuple[bool, Any] | None = None
    if context.is_main:
        try:
            outcome = (True, compute())
        except Exception as exc:  # raised below, on every rank
            outcome = (False, exc)
    ok, payload = broadcast_from_main(outcome, context)
    if not ok:
        raise payload
    return cast(T, payload)


def gather_to_main(value: T, context: DistributedContext) -> list[T] | None:
    """Every rank's ``value``, in rank order, on rank 0 (None on the others; ``[value]`` in a
    single process). Values travel pickled (gloo between CPU processes, NCCL between GPUs)."""
    if not context.enabled:
        return [value]
    received: list[T] | None = [value] * context.world_size if context.is_main else None
    dist.gather_object(value, received, dst=0)
    return received


def shutdown_distributed(context: DistributedContext, wait_for_all: bool = False) -> None:
    """Leave the process group.

    Args:
        wait_for_all: meet every rank first (the normal end of a job): a rank that left while
            another was still reading its last message (a gather's) closed the connection under
            it, and gloo aborted that rank ("terminate called without an active exception",
            SIGABRT). Not after an error, where the other ranks may never come.
    """
    if context.enabled and dist.is_initialized():
        if wait_for_all:
            dist.barrier()
        dist.destroy_process_group()
