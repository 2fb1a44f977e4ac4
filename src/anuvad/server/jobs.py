"""What waits in the micro-batcher's queue (:mod:`anuvad.server.batcher`): a translate job (a
request's sentences and how far they got), a call job (work that runs alone on the model
thread), their queue entries, and the queue itself (:class:`RequestQueue`: its order, its
limits, and the small requests it hands out between a long call's decoding steps)."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from anuvad.decode_config import DecodeConfig
from anuvad.inference.glossary import Glossary
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import Verbatim
from anuvad.server.errors import OverloadedError

logger = logging.getLogger(__name__)

# Called on the model thread after each model call that translated some of a job's sentences:
# (index of the first of them in the job's texts, their translations in order).
Progress = Callable[[int, list[Translation]], None]


@dataclass
class TranslateJob:
    """One request's sentences, their search settings and glossary, and the translations done
    so far (a long request is served in several model calls)."""

    key: DecodeConfig
    texts: list[str]
    deadline: float | None = None  # time.monotonic() after which nobody waits for the result
    future: Future[list[Translation]] = field(default_factory=Future)
    abandoned: threading.Event = field(default_factory=threading.Event)  # the caller gave up
    glossary: Glossary | None = None  # terms this request's translations must use
    verbatim: Verbatim | None = None  # what they must copy (numbers, links, kept names)
    # Word probabilities and confidence: from the signals the search records as it goes, plus
    # a forced pass of the reverse model where the calibration uses one; requests with and
    # without it get separate model calls, so one that asked for none pays nothing for it.
    quality: bool = True
    results: list[Translation] = field(default_factory=list)  # of texts[: len(results)]
    started: bool = False  # its future is running (set once, by the first chunk)
    # Told of each model call's translations as they are made (POST /translate/stream): the
    # same queue and model calls as any request, the results handed out early.
    progress: Progress | None = None
    arrival: int = -1  # its place in the queue's arrival order (set when first queued)
    # The engine that translates it (None: the batcher's own); the pairs of one multilingual
    # network share a batcher, each request naming its pair's engine (server/state.py).
    engine: Any = None
    on_call: Callable[[int, int, float], None] | None = None  # its model's call metrics

    def add_results(self, translations: list[Translation]) -> None:
        """Record the translations of the next ``len(translations)`` sentences and tell
        :attr:`progress` (a failing callback is logged: it never costs the model call)."""
        first = len(self.results)
        self.results.extend(translations)
        if self.progress is None or not translations:
            return
        try:
            self.progress(first, translations)
        except Exception:
            logger.exception("a progress callback failed")

    def gone(self) -> bool:
        """Whether nobody will read this job's result any more."""
        expired = self.deadline is not None and time.monotonic() >= self.deadline
        return expired or self.abandoned.is_set()

    def remaining(self) -> list[str]:
        """The sentences not translated yet."""
        return self.texts[len(self.results) :]


@dataclass
class CallJob:
    """Work that must run alone on the model thread (e.g. attention for one sentence)."""

    function: Callable[[], Any]
    future: Future[Any] = field(default_factory=Future)


STOP = object()
URGENT_ROWS = 64  # a new request of at most this many sentences x beam may run between steps
URGENT_SCAN = 64  # queue entries looked at for such requests, per decoding step
LAST = float("inf")  # the stop marks' place in the queue: after all work


@dataclass(order=True)
class QueueEntry:
    """A queue entry: served first when ``served`` (sentences already translated for it) is
    lowest, then by arrival."""

    served: float
    arrival: int
    job: Any = field(compare=False)


class RequestQueue:
    """The requests waiting for the model: the one served least (fewest sentences translated)
    first, arrival order among equals; at most ``max_pending`` requests and
    ``max_pending_texts`` sentences wait, beyond which :meth:`submit` raises
    :class:`OverloadedError`."""

    def __init__(self, max_pending: int, max_pending_texts: int) -> None:
        self.max_pending = max_pending
        self.max_pending_texts = max_pending_texts
        self.pending_texts = 0  # sentences submitted and not yet taken by a worker
        self._entries: queue.PriorityQueue[QueueEntry] = queue.PriorityQueue()
        self._arrivals = itertools.count()
        self._lock = threading.Lock()

    def submit(self, job: TranslateJob | CallJob) -> None:
        """Queue a new job behind every job that arrived before it.

        Raises:
            OverloadedError: too many requests or sentences are waiting already.
        """
        texts = len(job.texts) if isinstance(job, TranslateJob) else 0
        with self._lock:
            if self._entries.qsize() >= self.max_pending:
                raise OverloadedError(
                    f"{self._entries.qsize()} requests are already waiting for the model; "
                    "retry shortly"
                )
            if texts and self.pending_texts + texts > self.max_pending_texts:
                raise OverloadedError(
                    f"{self.pending_texts} sentences are already waiting for the model (the "
                    f"limit is {self.max_pending_texts}); retry shortly"
                )
            self.pending_texts += texts
        arrival = next(self._arrivals)
        if isinstance(job, TranslateJob):
            job.arrival = arrival
        self.put(job, 0, arrival)

    def put(self, job: Any, served: float, arrival: int | None = None) -> None:
        """Queue ``job`` by ``served`` (sentences done), then ``arrival`` (default: now)."""
        place = next(self._arrivals) if arrival is None or arrival < 0 else arrival
        self._entries.put(QueueEntry(served, place, job))

    def get(self, timeout: float | None = None) -> Any:
        """The next job (blocking; ``timeout`` 0: only what is there; raises queue.Empty)."""
        if timeout is None:
            return self._entries.get().job
        if timeout <= 0:
            return self._entries.get_nowait().job
        return self._entries.get(timeout=timeout).job

    def taken(self, texts: int) -> None:
        """A worker took ``texts`` sentences off the queue: they no longer wait."""
        with self._lock:
            self.pending_texts -= texts

    def size(self) -> int:
        """Jobs waiting (approximate, as any queue size)."""
        return self._entries.qsize()

    def take_urgent(self) -> list[Any]:
        """The small requests (at most :data:`URGENT_ROWS` hypothesis rows) that no model call
        has served yet, off the queue among its first :data:`URGENT_SCAN` entries; the others
        go back with their places."""
        urgent: list[Any] = []
        passed: list[QueueEntry] = []
        for _ in range(URGENT_SCAN):
            try:
                entry = self._entries.get_nowait()
            except queue.Empty:
                break
            if entry.served > 0:  # served before: so is everything behind it
                passed.append(entry)
                break
            job = entry.job
            small = isinstance(job, CallJob) or (
                isinstance(job, TranslateJob)
                and len(job.remaining()) * max(1, job.key.beam_size) <= URGENT_ROWS
            )
            if small:
                urgent.append(job)
            else:
                passed.append(entry)
        for entry in passed:
            self._entries.put(entry)
        return urgent
