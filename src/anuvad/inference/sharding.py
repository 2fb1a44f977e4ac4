"""Translation of a long input split across the processes ``torchrun`` starts (issue 39).

The input is cut into chunks of ``chunk_size`` items; in each round, rank ``r`` of ``W`` takes the
round's chunk ``r``, and rank 0 receives the round's results in input order. A chunk is always
translated by one call on its own, whichever rank takes it, so the output is the same with one
worker or many: the same batches, the same padding, the same sampled draws (sampling is seeded
per search call, :mod:`anuvad.decoding.greedy`). Every rank takes part in every round (a rank past
the input's end gathers an empty chunk), as collectives need.

One process (no ``torchrun``) runs the same rounds with ``W = 1``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from anuvad.distributed import DistributedContext, gather_to_main

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["Round", "map_chunks"]


@dataclass(frozen=True)
class Round(Generic[R]):
    """What one round finished.

    Attributes:
        done: items finished so far, this round's included (the same on every rank).
        results: on rank 0, the results of the round's items in input order; empty elsewhere.
    """

    done: int
    results: list[R]


def map_chunks(
    items: Sequence[T],
    work: Callable[[int, Sequence[T]], list[R]],
    context: DistributedContext,
    *,
    chunk_size: int,
    start: int = 0,
) -> Iterator[Round[R]]:
    """Apply ``work`` to ``items`` chunk by chunk, the chunks shared among the ranks.

    Args:
        items: the whole input (every rank holds it; each reads only its chunks).
        work: ``work(offset, chunk)`` → one result per item of ``chunk``, which starts at
            ``items[offset]``.
        context: this process' place among the workers.
        chunk_size: items per chunk: the unit of work, and what an interrupted job loses.
        start: items already done by an earlier, interrupted job (a multiple of
            ``chunk_size`` keeps the chunks of an uninterrupted job).

    Yields:
        One :class:`Round` per round, on every rank.

    Raises:
        ValueError: ``chunk_size`` is below 1, or ``work`` gave a result count that is not its
            chunk's size.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    done = start
    while done < len(items):
        offset = done + context.rank * chunk_size
        chunk = items[offset : offset + chunk_size]
        results = work(offset, chunk) if chunk else []
        if len(results) != len(chunk):
            raise ValueError(f"work gave {len(results)} results for a chunk of {len(chunk)}")
        gathered = gather_to_main(results, context)
        done = min(len(items), done + context.world_size * chunk_size)
        ordered = [r for part in gathered for r in part] if gathered is not None else []
        yield Round(done, ordered)
