"""A micro-batcher: concurrent requests with the same decode settings share one model call.

Requests are queued; one worker thread takes the first, waits up to ``max_wait_ms`` for more
(and takes at once whatever queued while the model was busy), groups them by their settings and
translates each group with a single :meth:`Translator.translate` call. The model is only ever
called from that thread, so a :class:`~anuvad.inference.translator.Translator` needs no locking, and
the event loop stays free to accept requests while the model runs. The pairs of one multilingual
network (:mod:`anuvad.inference.pairs`) share one batcher, each served pair a view of it
(:mod:`anuvad.server.engine_batcher`): a one-sentence request of one pair waits one decoding
step of another pair's long call, as within one model.

**No request holds the model for long.** One model call takes at most the settings'
``batch_size`` sentences (the server derives it from its rows x steps budget); a request with
more goes back to the queue with the rest of its sentences; one that fits a call is never
split across two (its second half, ranked behind every new request, waited 30-55 s under
``bench/serve.py --attack 5``: issue 40), it waits whole for the next call in its place. The
queue serves the request that has had the fewest sentences translated first (arrival order
among equals). And a long call
yields between two decoding steps: the search asks the batcher whether to stop, and the
batcher first runs the small new requests that are waiting (at most
:data:`~anuvad.server.jobs.URGENT_ROWS` hypothesis rows each: a few sentences at a normal beam,
or an attention view) on the same thread, nested, before the long search takes its next step.
So a one-sentence request waits one decoding step, not a whole call, even behind a 64-text
document at beam 16. The long call
keeps about half of the model thread: small requests start between its steps only while the
time they took in this call is at most the time the call itself has stepped (the batch that
starts may end past that share). Without that rule a steady stream of small requests starved
the large call they kept overtaking: under the 50-client benchmark a few requests in 1,000
waited 6 s while the median took 0.35 s.

Without batching (``batching=False``) every request is its own model call, still on the worker
thread (the baseline that ``bench/serve.py`` compares against).

An engine that runs several model calls at once (CTranslate2 with ``replicas`` > 1, each replica
on its own threads) gets that many worker threads: each collects its own batch from the shared
queue, so one batch is decoded while the next one gathers.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from anuvad.decode_config import DecodeConfig
from anuvad.errors import AnuvadError, SearchStoppedError
from anuvad.inference.engine import TranslationEngine
from anuvad.inference.glossary import Glossary
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import Verbatim
from anuvad.server.errors import RequestTimeoutError
from anuvad.server.jobs import LAST, STOP, CallJob, Progress, RequestQueue, TranslateJob

logger = logging.getLogger(__name__)

T = TypeVar("T")


class MicroBatcher:
    """Serialise model calls onto one worker thread, merging concurrent translate requests.

    Args:
        translator: the model; only the worker thread calls it.
        batching: merge concurrent requests (False: one model call per request).
        max_wait_ms: how long the first request of a batch waits for company.
        max_batch_texts: the most sentences one model call gets.
        max_pending: requests allowed to wait; beyond it :meth:`translate` raises
            :class:`~anuvad.server.errors.OverloadedError`.
        max_pending_texts: sentences allowed to wait (all requests together); beyond it
            :meth:`translate` raises it too.
        workers: worker threads, i.e. model calls that may run at once; more than 1 only for an
            engine whose ``parallel_calls`` allows it (the torch engine is not thread-safe).
        on_call: called after each translate call with (sentences, target tokens of the best
            candidates, seconds), e.g. for metrics.
        clock: seconds, for the time share between a long call and the small requests that
            run between its steps (tests give a fake one).
    """

    def __init__(
        self,
        translator: TranslationEngine,
        *,
        batching: bool = True,
        max_wait_ms: float = 5.0,
        max_batch_texts: int = 256,
        max_pending: int = 4096,
        max_pending_texts: int = 8192,
        workers: int = 1,
        on_call: Callable[[int, int, float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.translator = translator
        self.batching = batching
        self.max_wait = max_wait_ms / 1000.0
        self.max_batch_texts = max_batch_texts
        self.waiting = RequestQueue(max_pending, max_pending_texts)
        self.workers = workers
        self.model_calls = 0  # translate calls into the model (read by /health and tests)
        self.on_call = on_call
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.clock = clock
        # Per worker: .active (running urgent work between steps), .call_started and
        # .nested_seconds (the running long call's start, and the urgent work done inside it).
        self._nested = threading.local()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker threads (idempotent; a stopped batcher can be started again)."""
        with self._lock:
            if any(thread.is_alive() for thread in self._threads):
                return
            self._threads = [
                threading.Thread(target=self._run, name=f"anuvad-model-{i}", daemon=True)
                for i in range(self.workers)
            ]
            for thread in self._threads:
                thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the queued work, then stop the worker threads (one stop mark each)."""
        with self._lock:
            threads, self._threads = self._threads, []
        alive = [thread for thread in threads if thread.is_alive()]
        for _ in alive:
            self.waiting.put(STOP, LAST)
        for thread in alive:
            thread.join(timeout)

    # -- the API the endpoints use ---------------------------------------------------------------

    async def translate(
        self,
        texts: Sequence[str],
        key: DecodeConfig,
        timeout: float | None = None,
        glossary: Glossary | None = None,
        quality: bool = True,
        progress: Progress | None = None,
        verbatim: Verbatim | None = None,
        engine: TranslationEngine | None = None,
        on_call: Callable[[int, int, float], None] | None = None,
    ) -> list[Translation]:
        """Translate ``texts`` (in order), possibly in one model call with other requests.

        A model call stops between two decoding steps once every request in it has passed its
        time limit or been cancelled (e.g. its client went away), so an abandoned request
        frees the model thread within one step.

        Args:
            texts: the sentences.
            key: the search settings (requests with equal settings share model calls).
            timeout: seconds this request may wait and run in all; None: no limit.
            glossary: terms the translations must use (requests with different glossaries
                still share model calls).
            quality: give the translations their :class:`Quality` (requests with and without
                it go to separate model calls).
            progress: called on the model thread after each model call that translated some
                of ``texts``, with the index of the first and their translations (a long
                request is served in several calls of at most ``key.batch_size`` sentences).
            verbatim: what the translations must copy (numbers, links, kept names); like the
                glossary, requests with different policies still share model calls.
            engine: the engine that translates them (None: the batcher's own): the pairs of one
                multilingual network share a batcher (:mod:`anuvad.server.engine_batcher`);
                requests of different engines never share a model call.
            on_call: told of the model calls that translate them (None: the batcher's own).

        Raises:
            OverloadedError: too many requests are waiting.
            RequestTimeoutError: ``timeout`` passed first.
            Exception: whatever the translator raised.
        """
        if not texts:  # nothing to translate (e.g. a text with no sentence): no model call
            return []
        deadline = None if timeout is None else time.monotonic() + timeout
        job = TranslateJob(
            key=key,
            texts=list(texts),
            deadline=deadline,
            glossary=glossary,
            quality=quality,
            progress=progress,
            verbatim=verbatim,
            engine=engine,
            on_call=on_call,
        )
        self._submit(job)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(job.future), timeout)
        except (TimeoutError, asyncio.TimeoutError, SearchStoppedError) as exc:  # either side first
            job.abandoned.set()
            raise RequestTimeoutError(
                f"not translated within the server's {timeout:g} s limit per request; send "
                "less text, fewer texts or a smaller beam"
            ) from exc
        except asyncio.CancelledError:
            job.abandoned.set()  # the search stops at its next step
            raise

    async def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` alone on the model thread and return its result."""
        job = CallJob(function=function)
        self._submit(job)
        result: T = await asyncio.wrap_future(job.future)
        return result

    def pending(self) -> int:
        """Requests waiting for the model (approximate, as any queue size)."""
        return self.waiting.size()

    def _submit(self, job: TranslateJob | CallJob) -> None:
        self.waiting.submit(job)  # raises OverloadedError past the limits
        self.start()

    # -- the worker thread -----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            first = self.waiting.get()
            if first is STOP:
                if self.waiting.size():  # work put back after this mark was queued: do it first
                    self.waiting.put(STOP, LAST)
                    continue
                return
            jobs = [first] if not self.batching else self._collect(first)
            self._process(jobs)

    def _collect(self, first: Any) -> list[Any]:
        """``first`` and whatever arrives within ``max_wait`` (up to ``max_batch_texts``)."""
        jobs = [first]
        texts = len(first.texts) if isinstance(first, TranslateJob) else 0
        deadline = time.monotonic() + self.max_wait
        while texts < self.max_batch_texts:
            try:
                job = self.waiting.get(max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if job is STOP:  # stop after this batch
                self.waiting.put(STOP, LAST)
                break
            jobs.append(job)
            if isinstance(job, TranslateJob):
                texts += len(job.remaining())
        return jobs

    def _process(self, jobs: list[TranslateJob | CallJob]) -> None:
        groups: dict[tuple[DecodeConfig, bool, int], list[TranslateJob]] = {}
        for job in jobs:
            if isinstance(job, CallJob):
                self._run_call(job)
            elif job.gone():  # timed out or cancelled while it waited: no model time for it
                self.waiting.taken(len(job.remaining()))
                if job.started or job.future.set_running_or_notify_cancel():
                    job.future.set_exception(SearchStoppedError("abandoned before it ran"))
            elif job.started or job.future.set_running_or_notify_cancel():
                job.started = True
                groups.setdefault((job.key, job.quality, id(job.engine)), []).append(job)
            else:  # cancelled before it ran
                self.waiting.taken(len(job.remaining()))
        for (key, _, _), group in groups.items():
            if self.batching:
                self._run_group(key, group)
            else:
                for job in group:
                    self._run_group(key, [job])

    @staticmethod
    def _run_call(job: CallJob) -> None:
        if not job.future.set_running_or_notify_cancel():
            return
        try:
            job.future.set_result(job.function())
        except Exception as exc:  # handed to the waiting request, which answers 500
            job.future.set_exception(exc)

    def _run_group(self, key: DecodeConfig, group: list[TranslateJob]) -> None:
        """One model call for at most ``key.batch_size`` sentences of ``group`` (jobs with equal
        settings and quality flag, in order); a job with sentences left goes back to the queue
        behind the jobs served less."""
        budget = max(1, key.batch_size)
        taken: list[tuple[TranslateJob, int]] = []  # (job, sentences in this call)
        for job in group:
            if not job.remaining():  # nothing (left) to translate: done without the model
                job.future.set_result(job.results)
                continue
            left = len(job.remaining())
            count = min(left, budget - sum(n for _, n in taken))
            if count <= 0 or count < left <= budget:  # not in this call, or not whole in it
                self.waiting.put(job, len(job.results), job.arrival)  # waits in its place
                continue
            taken.append((job, count))
        if not taken:  # never a model call with no sentences (issue 33: it looped forever)
            return
        texts = [t for job, n in taken for t in job.remaining()[:n]]
        glossaries = [job.glossary for job, n in taken for _ in range(n)]
        policies = [job.verbatim for job, n in taken for _ in range(n)]
        extra: dict[str, Any] = {"glossary": glossaries} if any(glossaries) else {}
        if any(policies):
            extra["verbatim"] = policies
        self.waiting.taken(len(texts))
        calling = [job for job, _ in taken]
        started = time.perf_counter()
        if not getattr(self._nested, "active", False):  # an outer call: its time share starts
            self._nested.call_started, self._nested.nested_seconds = self.clock(), 0.0
        try:
            with self._lock:
                self.model_calls += 1
            quality = group[0].quality  # the same for the whole group (grouped by it)
            translator = group[0].engine or self.translator  # the same too
            results = translator.translate(
                texts,
                key,
                stop=lambda: self._serve_waiting_then_check_stop(calling),
                quality=quality,
                **extra,
            )
        except Exception as exc:  # each waiting request gets the error (500, or 504 if stopped)
            if isinstance(exc, SearchStoppedError):
                logger.info("stopped a model call of %d texts: its requests gave up", len(texts))
            elif isinstance(exc, AnuvadError):  # the input cannot be translated: a 400
                logger.info("a model call of %d texts refused its input: %s", len(texts), exc)
            else:
                logger.exception("translating a batch of %d texts failed", len(texts))
            for job, count in taken:
                self._fail(job, exc, in_flight=count)
            return
        logger.debug("one model call for %d requests, %d texts", len(calling), len(texts))
        try:
            on_call = group[0].on_call or self.on_call
            if on_call is not None:
                tokens = sum(len(r.nbest[0].token_ids) for r in results if r.nbest)
                on_call(len(texts), tokens, time.perf_counter() - started)
        except Exception:  # metrics must never cost a request its answer
            logger.exception("recording a model call failed")
        start = 0
        for job, count in taken:
            job.add_results(results[start : start + count])
            start += count
            if not job.remaining():
                job.future.set_result(job.results)
            elif job.gone():
                self._fail(job, SearchStoppedError("abandoned between model calls"))
            else:
                self.waiting.put(job, len(job.results))

    def _serve_waiting_then_check_stop(self, calling: list[TranslateJob]) -> bool:
        """The search's stop hook, which does more than check: called between two decoding
        steps of a model call, it first runs the small new requests that wait, as whole model
        calls of their own on this thread, nested inside the suspended search (once: urgent
        work does not yield in turn), if their time in this call so far is at most the call's
        own stepping time. Then it answers the search's question: stop, because every request
        of this call gave up?

        Returns:
            True when nobody waits for this call's results any more.
        """
        local = self._nested
        if not getattr(local, "active", False) and self.waiting.size():
            now = self.clock()
            spent = getattr(local, "nested_seconds", 0.0)  # both set when the outer call starts
            stepping = now - getattr(local, "call_started", now) - spent
            urgent = self.waiting.take_urgent() if spent <= stepping else []
            if urgent:
                local.active = True
                try:
                    self._process(urgent)
                finally:
                    local.active = False
                    local.nested_seconds = spent + self.clock() - now
        return all(job.gone() for job in calling)

    def _fail(self, job: TranslateJob, exc: Exception, in_flight: int = 0) -> None:
        """End ``job`` with ``exc``; its sentences no longer wait (``in_flight`` of them were
        taken by the failed call already)."""
        self.waiting.taken(len(job.remaining()) - in_flight)
        job.results.clear()
        job.texts = []
        job.future.set_exception(exc)
