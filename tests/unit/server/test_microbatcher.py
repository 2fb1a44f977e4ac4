"""The server's micro-batcher on its own, with a fake engine (no model): worker threads, merging,
stopping."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from anuvad.decode_config import DecodeConfig
from anuvad.inference.translation import Translation
from anuvad.server.batcher import MicroBatcher
from anuvad.server.engine_batcher import EngineBatcher
from anuvad.server.jobs import TranslateJob

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
    from anuvad.server.errors import RequestTimeoutError

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
    from anuvad.server.errors import OverloadedError

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


class GatedEngine:
    """Records each call; the first call waits for ``gate`` (so that others queue meanwhile)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.inside = threading.Event()
        self.calls: list[list[str]] = []

    def translate(self, texts: Sequence[str], *_: Any, **__: Any) -> list[Translation]:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.inside.set()
            assert self.gate.wait(5)
        return [Translation(t, t.upper(), [], 0.0, True, []) for t in texts]


def test_a_long_request_is_cut_into_calls_and_a_short_one_overtakes_it() -> None:
    """A 10-sentence request with batch_size 3 goes to the model 3 sentences at a time; a
    one-sentence request arriving meanwhile is served first in the next call, and every
    request gets its sentences back in order."""
    engine = GatedEngine()
    batcher = MicroBatcher(engine, max_wait_ms=0)  # type: ignore[arg-type]
    key = DecodeConfig(beam_size=1, batch_size=3)
    long = [f"long {i}" for i in range(10)]

    async def scenario() -> tuple[list[Translation], list[Translation]]:
        first = asyncio.ensure_future(batcher.translate(long, key))
        assert await asyncio.to_thread(engine.inside.wait, 5)
        before = batcher.pending()
        second = asyncio.ensure_future(batcher.translate(["short"], key))
        await queued(batcher, before + 1)  # behind the call in progress
        engine.gate.set()
        return await first, await second

    try:
        got_long, got_short = asyncio.run(scenario())
    finally:
        batcher.stop()
    assert [t.text for t in got_long] == [s.upper() for s in long]
    assert [t.text for t in got_short] == ["SHORT"]
    assert all(len(call) <= 3 for call in engine.calls)
    # The short request is first in the next call (the long one's next sentences may share it).
    assert engine.calls[0] == long[:3] and engine.calls[1][0] == "short"
    assert [t for call in engine.calls for t in call if t != "short"] == long
    assert batcher.waiting.pending_texts == 0  # every sentence counted out once


def test_a_request_that_fits_one_call_is_never_split_across_two() -> None:
    """With batch_size 2, one sentence taken and a two-sentence request next, the call takes the
    one-sentence request behind it instead, and the two sentences go together in the next call
    in their place. Split, the second half was ranked behind every new request, long ones
    included: under ``bench/serve.py --attack 5`` two-sentence requests waited 30-55 s (issue
    40)."""
    engine = GatedEngine()
    batcher = MicroBatcher(engine, max_wait_ms=0)  # type: ignore[arg-type]
    key = DecodeConfig(beam_size=1, batch_size=2)

    async def scenario() -> list[list[Translation]]:
        first = asyncio.ensure_future(batcher.translate(["x"], key))
        assert await asyncio.to_thread(engine.inside.wait, 5)
        waiting = []
        for texts in (["a"], ["b1", "b2"], ["c"], ["d"]):  # queued behind the call in progress
            waiting.append(asyncio.ensure_future(batcher.translate(texts, key)))
            await queued(batcher, len(waiting))
        engine.gate.set()
        return await asyncio.gather(first, *waiting)

    try:
        answers = asyncio.run(scenario())
    finally:
        batcher.stop()
    assert [[t.text for t in answer] for answer in answers] == [
        ["X"],
        ["A"],
        ["B1", "B2"],
        ["C"],
        ["D"],
    ]
    assert engine.calls == [["x"], ["a", "c"], ["b1", "b2"], ["d"]]
    assert batcher.waiting.pending_texts == 0


def test_a_cancelled_long_request_gives_back_the_model_between_calls() -> None:
    engine = GatedEngine()
    batcher = MicroBatcher(engine, max_wait_ms=0)  # type: ignore[arg-type]
    key = DecodeConfig(beam_size=1, batch_size=2)

    async def scenario() -> None:
        long = asyncio.ensure_future(batcher.translate([f"s{i}" for i in range(8)], key))
        assert await asyncio.to_thread(engine.inside.wait, 5)
        long.cancel()
        with pytest.raises(asyncio.CancelledError):  # the request knows it is cancelled ...
            await long
        engine.gate.set()  # ... before its first call ends (no race with the model thread)
        assert [t.text for t in await batcher.translate(["after"], key)] == ["AFTER"]

    try:
        asyncio.run(scenario())
    finally:
        batcher.stop()
    assert engine.calls[0] == ["s0", "s1"] and engine.calls[-1] == ["after"]
    assert len(engine.calls) == 2  # the rest of the cancelled request never ran
    assert batcher.waiting.pending_texts == 0


async def queued(batcher: MicroBatcher, count: int) -> None:
    """Wait until ``count`` requests wait in the batcher's queue (no fixed sleep: a busy machine
    only makes this take longer)."""
    for _ in range(10_000):
        if batcher.pending() >= count:
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"{count} requests never queued")


class SteppingEngine:
    """A search of ``steps`` decoding steps per call that asks ``stop`` before each step, like
    the torch engine; records the order in which calls start and end."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.events: list[str] = []
        self.first_step = threading.Event()
        self.release = threading.Event()

    def translate(
        self, texts: Sequence[str], key: Any, stop: Any = None, **_: Any
    ) -> list[Translation]:
        name = "+".join(texts)
        self.events.append(f"start {name}")
        for step in range(self.steps if texts[0].startswith("long") else 1):
            if step == 1:
                self.first_step.set()
                assert self.release.wait(5)  # the test queues a short request here
            if stop is not None and stop():
                raise AssertionError("nobody gave up")
        self.events.append(f"end {name}")
        return [Translation(t, t.upper(), [], 0.0, True, []) for t in texts]


def test_a_small_new_request_runs_between_two_steps_of_a_long_call() -> None:
    engine = SteppingEngine(steps=5)
    batcher = MicroBatcher(engine, max_wait_ms=0)  # type: ignore[arg-type]
    beam16 = DecodeConfig(beam_size=16, batch_size=8)
    beam4 = DecodeConfig(beam_size=4)

    async def scenario() -> tuple[list[Translation], list[Translation]]:
        long = asyncio.ensure_future(batcher.translate(["long a", "long b"], beam16))
        assert await asyncio.to_thread(engine.first_step.wait, 5)
        before = batcher.pending()
        short = asyncio.ensure_future(batcher.translate(["short"], beam4))
        await queued(batcher, before + 1)
        engine.release.set()
        return await long, await short

    try:
        got_long, got_short = asyncio.run(scenario())
    finally:
        batcher.stop()
    assert [t.text for t in got_long] == ["LONG A", "LONG B"]
    assert [t.text for t in got_short] == ["SHORT"]
    # The short request started and ended inside the long call.
    assert engine.events == ["start long a+long b", "start short", "end short", "end long a+long b"]
    assert batcher.waiting.pending_texts == 0


def test_two_engines_of_one_network_share_the_model_thread_and_its_steps() -> None:
    """The pairs of one multilingual network share a batcher: a one-sentence request of the
    second pair runs between two steps of the first pair's long call (not after it, as with a
    model thread each, which would also run two calls on one network at once), translated by
    its own engine, and each pair's calls reach its own metrics."""
    first, second = SteppingEngine(steps=5), SteppingEngine(steps=5)
    second.release.set()
    second.events = first.events  # one record of what ran when, on the one model thread
    by_second: list[str] = []
    own = second.translate

    def tagged(texts: Sequence[str], key: Any, stop: Any = None, **more: Any) -> list[Translation]:
        by_second.extend(texts)
        return own(texts, key, stop, **more)

    second.translate = tagged  # type: ignore[method-assign]
    first_calls: list[int] = []
    second_calls: list[int] = []
    shared = MicroBatcher(
        first,  # type: ignore[arg-type]
        max_wait_ms=0,
        on_call=lambda n, *_: first_calls.append(n),
    )
    other = EngineBatcher(shared, second, lambda n, *_: second_calls.append(n))  # type: ignore[arg-type]
    beam16 = DecodeConfig(beam_size=16, batch_size=8)

    async def scenario() -> tuple[list[Translation], list[Translation]]:
        long = asyncio.ensure_future(shared.translate(["long a", "long b"], beam16))
        assert await asyncio.to_thread(first.first_step.wait, 5)
        before = other.pending()
        short = asyncio.ensure_future(other.translate(["short"], DecodeConfig(beam_size=4)))
        await queued(shared, before + 1)
        first.release.set()
        return await long, await short

    try:
        got_long, got_short = asyncio.run(scenario())
    finally:
        other.stop()
    assert [t.text for t in got_long] == ["LONG A", "LONG B"]
    assert [t.text for t in got_short] == ["SHORT"]
    # The short request ran by its own engine, between two steps of the long call.
    assert first.events == ["start long a+long b", "start short", "end short", "end long a+long b"]
    assert by_second == ["short"] and first_calls == [2] and second_calls == [1]
    assert other.model_calls == shared.model_calls == 2
    assert not any(t.name.startswith("anuvad-model") for t in threading.enumerate())


def test_a_large_new_request_waits_for_the_call_boundary() -> None:
    engine = SteppingEngine(steps=3)
    batcher = MicroBatcher(engine, max_wait_ms=0)  # type: ignore[arg-type]
    key = DecodeConfig(beam_size=16, batch_size=8)

    async def scenario() -> None:
        first = asyncio.ensure_future(batcher.translate(["long a"], key))
        assert await asyncio.to_thread(engine.first_step.wait, 5)
        before = batcher.pending()
        second = asyncio.ensure_future(batcher.translate(["long x"] * 5, key))  # 80 rows
        await queued(batcher, before + 1)
        engine.release.set()
        await asyncio.gather(first, second)

    try:
        asyncio.run(scenario())
    finally:
        batcher.stop()
    assert engine.events[:2] == ["start long a", "end long a"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_small_requests_between_steps_start_only_within_their_share_of_a_long_call() -> None:
    """A new small request arrives before every step of a 9-step call; each step takes 1 s and
    each small call 3 s (a fake clock). Small calls start only while their time in this call is
    at most the call's own stepping time: after steps 1, 3, 6 and 9, not after every step (the
    last one ends past the share: 12 s against 9 s)."""
    clock = FakeClock()
    events: list[str] = []
    short_key = DecodeConfig(beam_size=4)
    batcher: MicroBatcher

    class StreamEngine:
        def translate(
            self, texts: Sequence[str], key: Any, stop: Any = None, **_: Any
        ) -> list[Translation]:
            if texts[0] == "long":
                for step in range(1, 10):
                    clock.now += 1.0
                    events.append(f"step {step}")
                    batcher._submit(TranslateJob(key=short_key, texts=[f"short {step}"]))
                    assert not stop()
            else:
                clock.now += 3.0
                events.append("small " + ",".join(t.split()[1] for t in texts))
            return [Translation(t, t.upper(), [], 0.0, True, []) for t in texts]

    batcher = MicroBatcher(StreamEngine(), max_wait_ms=0, clock=clock)  # type: ignore[arg-type]
    try:
        got = asyncio.run(batcher.translate(["long"], DecodeConfig(beam_size=16, batch_size=8)))
    finally:
        batcher.stop()
    assert [t.text for t in got] == ["LONG"]
    inside = events[: events.index("step 9") + 2]
    assert inside == [
        "step 1", "small 1", "step 2", "step 3", "small 2,3", "step 4", "step 5", "step 6",
        "small 4,5,6", "step 7", "step 8", "step 9", "small 7,8,9",
    ]  # fmt: skip
    assert batcher.waiting.pending_texts == 0


def test_requests_with_and_without_scores_get_separate_calls() -> None:
    """The quality pass is per model call: a request that asked for no scores does not pay for
    one that did, and each gets what it asked for."""
    calls: list[tuple[list[str], bool]] = []
    busy, release = threading.Event(), threading.Event()

    class RecordingEngine:
        def translate(
            self, texts: Sequence[str], key: Any, quality: bool = False, **_: Any
        ) -> list[Translation]:
            if texts == ["hold"]:  # keeps the model busy while the four requests queue
                busy.set()
                assert release.wait(5)
            calls.append((list(texts), quality))
            return [Translation(t, t.upper(), [], 0.0, True, []) for t in texts]

    batcher = MicroBatcher(RecordingEngine(), max_wait_ms=0)  # type: ignore[arg-type]

    async def scenario() -> None:
        hold = asyncio.ensure_future(batcher.translate(["hold"], KEY))
        assert await asyncio.to_thread(busy.wait, 5)
        waiting = [
            asyncio.ensure_future(batcher.translate([t], KEY, quality=t in "ac")) for t in "abcd"
        ]
        await queued(batcher, 4)
        release.set()
        await asyncio.gather(hold, *waiting)

    try:
        asyncio.run(scenario())
    finally:
        batcher.stop()
    assert sorted(calls[1:]) == [(["a", "c"], True), (["b", "d"], False)]


def test_a_request_with_no_sentences_is_answered_at_once_without_a_model_call() -> None:
    """Issue 33: a text of control characters has no sentence; the request used to reach the
    model as an empty batch and be requeued forever (504 after the time limit)."""
    engine = BarrierEngine(parties=1)
    batcher = MicroBatcher(engine)  # type: ignore[arg-type]
    try:
        assert asyncio.run(asyncio.wait_for(batcher.translate([], KEY), 5)) == []
    finally:
        batcher.stop(timeout=1)
    assert engine.calls == [] and batcher.model_calls == 0


def test_the_worker_never_calls_the_model_with_no_sentences_nor_requeues_an_empty_job() -> None:
    """Past :meth:`MicroBatcher.translate`'s own check: a job with nothing to translate that
    reaches the worker is answered there, and the jobs batched with it still run."""
    engine = GatedEngine()
    engine.gate.set()
    batcher = MicroBatcher(engine, max_wait_ms=200)  # type: ignore[arg-type]
    empty, real = TranslateJob(key=KEY, texts=[]), TranslateJob(key=KEY, texts=["a"])
    try:
        batcher._submit(empty)
        batcher._submit(real)
        assert empty.future.result(timeout=5) == []
        assert [t.text for t in real.future.result(timeout=5)] == ["A"]
        assert batcher.pending() == 0  # nothing went back to the queue
    finally:
        batcher.stop(timeout=1)
    assert engine.calls == [["a"]] and batcher.model_calls == 1


def test_progress_tells_each_model_call_s_translations_as_it_ends() -> None:
    """POST /translate/stream's hook (issue 34): a request served in several model calls is
    told each call's translations (the index of the first, in order) on the model thread, before
    the request's answer; one whose callback fails still gets its answer."""
    engine = BarrierEngine(parties=1)
    batcher = MicroBatcher(engine, max_wait_ms=0)  # type: ignore[arg-type]
    key = DecodeConfig(beam_size=1, batch_size=3)
    texts = [f"t{i}" for i in range(7)]
    told: list[tuple[int, list[str], str]] = []

    def progress(first: int, translations: list[Translation]) -> None:
        told.append((first, [t.text for t in translations], threading.current_thread().name))

    def failing(first: int, translations: list[Translation]) -> None:
        raise RuntimeError("a reader's bug")

    async def scenario() -> tuple[list[Translation], list[Translation]]:
        told_first = await batcher.translate(texts, key, progress=progress)
        return told_first, await batcher.translate(["x"], key, progress=failing)

    try:
        results, failed = asyncio.run(scenario())
    finally:
        batcher.stop()
    assert [t.text for t in results] == [t.upper() for t in texts]
    assert told == [
        (0, ["T0", "T1", "T2"], "anuvad-model-0"),
        (3, ["T3", "T4", "T5"], "anuvad-model-0"),
        (6, ["T6"], "anuvad-model-0"),
    ]
    assert [t.text for t in failed] == ["X"]
