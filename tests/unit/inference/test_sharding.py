"""map_chunks in one process: the chunks, their offsets and a resumed start; two processes:
tests/integration/test_sharded_translation.py."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from anuvad.distributed import DistributedContext
from anuvad.inference.sharding import map_chunks


def test_one_process_sees_every_chunk_once_in_order_with_its_offset() -> None:
    items = list(range(10))
    calls: list[tuple[int, list[int]]] = []

    def work(offset: int, chunk: Sequence[int]) -> list[int]:
        calls.append((offset, list(chunk)))
        return [x * x for x in chunk]

    rounds = list(map_chunks(items, work, DistributedContext(), chunk_size=4))
    assert calls == [(0, [0, 1, 2, 3]), (4, [4, 5, 6, 7]), (8, [8, 9])]
    assert [r.done for r in rounds] == [4, 8, 10]
    assert [x for r in rounds for x in r.results] == [x * x for x in items]


def test_a_resumed_start_skips_the_chunks_done() -> None:
    seen: list[int] = []

    def work(offset: int, chunk: Sequence[str]) -> list[str]:
        seen.append(offset)
        return [s.upper() for s in chunk]

    rounds = list(map_chunks(list("abcdefg"), work, DistributedContext(), chunk_size=3, start=3))
    assert seen == [3, 6]
    assert [x for r in rounds for x in r.results] == list("DEFG")
    assert list(map_chunks(list("ab"), work, DistributedContext(), chunk_size=3, start=2)) == []


def test_a_wrong_result_count_and_an_empty_chunk_size_are_refused() -> None:
    with pytest.raises(ValueError, match="2 results for a chunk of 3"):
        list(map_chunks([1, 2, 3], lambda _o, c: list(c)[:2], DistributedContext(), chunk_size=3))
    with pytest.raises(ValueError, match="chunk_size must be at least 1"):
        list(map_chunks([1], lambda _o, c: list(c), DistributedContext(), chunk_size=0))
