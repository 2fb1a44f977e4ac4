"""The server's micro-batcher on its own, with a fake engine (no model): worker threads, merging,
stopping."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from anuvad.config import DecodeConfig
from anuvad.inference.translation import Translation
from anuvad.server.batcher import MicroBatcher

KEY = DecodeConfig(beam_size=1)


class BarrierEngine:
    """Each call waits until ``parties`` calls are inside at once (or times out)."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=5)
        self.threads: set[str] = set()
        self.calls: list[list[str]] = []

    def translate(self, texts: Sequence[str], *_: Any, **__: Any) -> list[Translation]:
        self.threads.add(threading.current_thread().name)
        self.calls.append(list(texts))
        self.barrier.wait()
        return [Translation(t, t.upper(), [], 0.0, True, []) for t in texts]


async def translate_all(batcher: MicroBatcher, texts: list[str]) -> list[list[Translation]]:
    return await asyncio.gather(*(batcher.translate([t], KEY) for t in texts))


def test_two_workers_run_two_model_calls_at_once() -> None:
    engine = BarrierEngine(parties=2)  # a single worker would never get both calls inside
    batcher = MicroBatcher(engine, batching=False, workers=2)  # type: ignore[arg-type]
    results = asyncio.run(translate_all(batcher, ["a", "b"]))
    batcher.stop()
    assert [r[0].text for r in results] == ["A", "B"]
    assert engine.threads == {"anuvad-model-0", "anuvad-model-1"}
    assert batcher.model_calls == 2
    assert not any(t.name.startswith("anuvad-model") for t in threading.enumerate())


def test_one_worker_runs_calls_one_after_another() -> None:
    engine = BarrierEngine(parties=1)
    batcher = MicroBatcher(engine, batching=False, workers=1)  # type: ignore[arg-type]
    results = asyncio.run(translate_all(batcher, ["a", "b", "c"]))
    batcher.stop()
    assert [r[0].text for r in results] == ["A", "B", "C"]
    assert engine.threads == {"anuvad-model-0"}


def test_batching_with_two_workers_keeps_every_request_and_its_order() -> None:
    engine = BarrierEngine(parties=1)
    batcher = MicroBatcher(engine, batching=True, max_wait_ms=50, workers=2)  # type: ignore[arg-type]
    texts = [f"t{i}" for i in range(40)]
    results = asyncio.run(translate_all(batcher, texts))
    batcher.stop()
    assert [r[0].text for r in results] == [t.upper() for t in texts]
    assert sorted(t for call in engine.calls for t in call) == sorted(texts)
    assert len(engine.calls) < len(texts)  # requests were merged


def test_a_stopped_batcher_starts_again_and_workers_must_be_positive() -> None:
    engine = BarrierEngine(parties=1)
    batcher = MicroBatcher(engine, workers=2)  # type: ignore[arg-type]
    assert asyncio.run(translate_all(batcher, ["x"]))[0][0].text == "X"
    batcher.stop()
    assert asyncio.run(translate_all(batcher, ["y"]))[0][0].text == "Y"
    batcher.stop()
    with pytest.raises(ValueError, match="workers"):
        MicroBatcher(engine, workers=0)  # type: ignore[arg-type]


class EndlessEngine:
    """Decodes "forever" (one step per 10 ms) unless ``stop`` says so; "quick" texts finish."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.steps = 0

    def translate(
        self, texts: Sequence[str], *_: Any, stop: Any = None, **__: Any
    ) -> list[Translation]:
        from anuvad.errors import SearchStoppedError

        if texts != ["quick"]:
            self.started.set()
            for _step in range(5_000):  # a 50 s safety bound: the test fails long before
                if stop is not None and stop():
                    self.stopped.set()
                    raise SearchStoppedError("stopped")
                self.steps += 1
                threading.Event().wait(0.01)
        return [Translation(t, t.upper(), [], 0.0, True, []) for t in texts]


def test_a_request_past_its_time_limit_stops_its_search_and_frees_the_model() -> None:
    from anuvad.server.batcher import RequestTimeoutError

    engine = EndlessEngine()
    batcher = MicroBatcher(engine)  # type: ignore[arg-type]

    async def scenario() -> list[Translation]:
        with pytest.raises(RequestTimeoutError, match="limit per request"):
            await batcher.translate(["loop loop loop"], KEY, timeout=0.2)
        assert engine.stopped.wait(5)  # the model thread was freed at its next step
        return await batcher.translate(["quick"], KEY, timeout=5)

    try:
        (result,) = asyncio.run(scenario())
    finally:
        batcher.stop()
    assert result.text == "QUICK"


def test_a_cancelled_request_stops_its_search() -> None:
    engine = EndlessEngine()
    batcher = MicroBatcher(engine)  # type: ignore[arg-type]

    async def scenario() -> None:
        task = asyncio.ensure_future(batcher.translate(["loop"], KEY))
        while not engine.started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()  # what a disconnected client's handler does
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(engine.stopped.wait, 5)

    try:
        asyncio.run(scenario())
    finally:
        batcher.stop()


def test_a_call_shared_with_a_live_request_goes_on() -> None:
    """Two merged requests: one gives up, the other still waits, so the search continues."""
    engine = EndlessEngine()
    batcher = MicroBatcher(engine, max_wait_ms=200)  # type: ignore[arg-type]

    async def scenario() -> None:
        patient = asyncio.ensure_future(batcher.translate(["a"], KEY, timeout=30))
        impatient = asyncio.ensure_future(batcher.translate(["b"], KEY, timeout=0.3))
        with pytest.raises(Exception, match="limit per request"):
            await impatient
        steps = engine.steps
        for _ in range(500):  # up to 5 s: the step count moves on while "a" still waits
            if engine.steps > steps + 3:
                break
            await asyncio.sleep(0.01)
        assert not engine.stopped.is_set() and engine.steps > steps + 3
        patient.cancel()
        with pytest.raises(asyncio.CancelledError):
            await patient
        assert await asyncio.to_thread(engine.stopped.wait, 5)

    try:
        asyncio.run(scenario())
    finally:
        batcher.stop()


def test_the_queue_is_bounded_in_sentences() -> None:
    from anuvad.server.batcher import OverloadedError

    engine = EndlessEngine()
    batcher = MicroBatcher(engine, max_pending_texts=5)  # type: ignore[arg-type]

    async def scenario() -> None:
        busy = asyncio.ensure_future(batcher.translate(["loop"], KEY))  # holds the model
        while not engine.started.is_set():
            await asyncio.sleep(0.01)
        waiting = asyncio.ensure_future(batcher.translate(["quick"] * 4, KEY))
        await asyncio.sleep(0)
        with pytest.raises(OverloadedError, match="4 sentences are already waiting"):
            await batcher.translate(["x", "y"], KEY)  # 4 + 2 > 5
        for task in (busy, waiting):
            task.cancel()
        await asyncio.gather(busy, waiting, return_exceptions=True)

    try:
        asyncio.run(scenario())
    finally:
        batcher.stop()
