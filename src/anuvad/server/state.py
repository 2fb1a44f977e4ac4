"""What one app serves and knows, as one typed object (``app.state.server``): the served models
(each with its engine, micro-batcher and description), the limits, the counters, and whether the
server is shutting down; and how a request waits for its model work.

The routes (:mod:`anuvad.server.routes`) get it with ``Depends(server_state)``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Request

from anuvad.inference.engine import TranslationEngine, source_fits
from anuvad.inference.glossary import Glossary
from anuvad.server.batcher import MicroBatcher
from anuvad.server.engine_batcher import EngineBatcher
from anuvad.server.errors import (
    ApiError,
    ClientGoneError,
    ModelFailedError,
    ShuttingDownError,
    UnknownModelError,
)
from anuvad.server.file_store import TranslatedFiles
from anuvad.server.limits import MAX_PENDING_SENTENCES, Limits
from anuvad.server.metrics import ServerMetrics
from anuvad.server.model_schemas import ModelInfo
from anuvad.server.responses import model_info

logger = logging.getLogger(__name__)
T = TypeVar("T")
U = TypeVar("U")

# How often a waiting request checks that its client is still there and the server is not
# shutting down: a SIGTERM answers the requests in flight within this time (issue 33).
POLL_S = 0.1
# At shutdown, how long the model threads get to finish their current decoding step. The
# searches of the requests answered 503 stop at their next step (milliseconds); a CTranslate2
# call stops only between batches, and the process does not wait for it longer than this.
STOP_WAIT_S = 2.0


@dataclass
class ServedModel:
    """One served model: its id (``GET /models``), engine, batcher and description."""

    id: str
    engine: TranslationEngine
    batcher: MicroBatcher | EngineBatcher  # a view of a shared one for a network's pairs
    info: ModelInfo
    fits: Callable[[str], bool]  # whether the model takes a sentence whole
    fits_well: Callable[[str], bool]  # whether it translates one well whole (else cut it)


@dataclass
class ServerState:
    """The served models (the first answers requests that name none) and the server's state.

    Attributes:
        models: the served models by id, the default first.
        metrics: the app's Prometheus metrics.
        limits: the request limits ``GET /models`` publishes (time limit, API key flag).
        glossary: terms the default model's translations must use (``--glossary``).
        batching: whether concurrent requests share model calls.
        started: ``time.monotonic()`` when the app was built.
        requests: translation and attention requests answered.
        closing: set when the server shuts down; requests then get 503 (:meth:`close`).
        api_keys: the keys the API asks for (:mod:`anuvad.server.auth`; empty: open), read by
            the routes that also take a key in the body (the LibreTranslate-compatible API).
        files: translated files waiting to be downloaded (LibreTranslate's ``translate_file``).
    """

    models: dict[str, ServedModel]
    metrics: ServerMetrics
    limits: Limits
    glossary: Glossary | None = None
    batching: bool = True
    started: float = field(default_factory=time.monotonic)
    requests: int = 0
    closing: threading.Event = field(default_factory=threading.Event)
    api_keys: frozenset[str] = frozenset()
    files: TranslatedFiles = field(default_factory=TranslatedFiles)

    @classmethod
    def build(
        cls,
        engines: Sequence[TranslationEngine],
        *,
        limits: Limits,
        batching: bool = True,
        max_wait_ms: float = 5.0,
        glossary: Glossary | None = None,
    ) -> ServerState:
        """Serve ``engines``, each with its own batcher; ids are the config names (``-2``,
        ``-3`` appended to repeats).

        Raises:
            ValueError: no engine.
        """
        if not engines:
            raise ValueError("a server needs at least one translator")
        metrics = ServerMetrics()
        models: dict[str, ServedModel] = {}
        # The pairs of one multilingual network (torch translators sharing a model lock) share
        # one batcher: one model thread for the network, each pair's requests naming its engine.
        networks: dict[int, MicroBatcher] = {}
        for engine in engines:
            name = engine.model_file.config.name
            model_id, repeat = name, 1
            while model_id in models:
                repeat += 1
                model_id = f"{name}-{repeat}"
            on_call = functools.partial(metrics.model_call, model_id)
            network = getattr(engine, "lock", None)
            batcher: MicroBatcher | EngineBatcher
            if network is not None and id(network) in networks:
                batcher = EngineBatcher(networks[id(network)], engine, on_call)
            else:
                batcher = MicroBatcher(
                    engine,
                    batching=batching,
                    max_wait_ms=max_wait_ms,
                    workers=engine.parallel_calls,
                    max_pending_texts=MAX_PENDING_SENTENCES,
                    on_call=on_call,
                )
                if network is not None:
                    networks[id(network)] = batcher
            metrics.watch_queue(model_id, batcher.pending)
            info = model_info(engine, model_id)
            models[model_id] = ServedModel(
                model_id, engine, batcher, info, source_fits(engine), source_fits(engine, well=True)
            )
        titles = [m.info.title for m in models.values()]
        for model in models.values():  # never a choice between two equal names
            if titles.count(model.info.title) > 1:
                model.info.title += f" ({model.id})"
        return cls(models, metrics, limits, glossary, batching)

    @property
    def default(self) -> ServedModel:
        """The model that answers requests naming none."""
        return next(iter(self.models.values()))

    def pick(self, model_id: str | None) -> ServedModel:
        """The served model ``model_id`` (None: the default).

        Raises:
            UnknownModelError: no such model is served (422 naming the field).
        """
        if model_id is None:
            return self.default
        if model_id not in self.models:
            raise UnknownModelError(
                f"no served model {model_id!r}; served: {', '.join(self.models)} "
                f"(GET /models lists them)"
            )
        return self.models[model_id]

    def start(self) -> None:
        """Start every model's batcher (the app's startup)."""
        self.closing.clear()
        for model in self.models.values():
            model.batcher.start()
            logger.info("serving %s (%s -> %s)", model.id, model.info.src_lang, model.info.tgt_lang)

    def close(self) -> None:
        """Begin shutting down: every request in flight is answered 503 within :data:`POLL_S`
        and its search stops at its next decoding step; new requests get 503 at once."""
        self.closing.set()

    async def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """Shut down (the app's shutdown): :meth:`close`, then stop the model threads, waiting
        at most ``wait_s`` for them off the event loop, so that the requests cancelled
        meanwhile still run their cleanup and mark their searches abandoned."""
        self.close()
        await asyncio.gather(
            *(asyncio.to_thread(m.batcher.stop, wait_s) for m in self.models.values())
        )

    def check_open(self) -> None:
        """Raises ShuttingDownError (503) once the server is shutting down."""
        if self.closing.is_set():
            raise ShuttingDownError("the server is shutting down; retry shortly")

    async def model_work(self, request: Request, work: Awaitable[T]) -> T:
        """``work``'s result (this request's model work), unless its client disconnects or the
        server shuts down first: then ``work`` is cancelled (a translation stops at its next
        decoding step) and so is the request. Call :meth:`check_open` before making ``work``.

        Raises:
            ClientGoneError: the client went away.
            ShuttingDownError: the server is shutting down (503).
            ApiError: what ``work`` raised for the client (e.g. 503 queue full, 504 too slow).
            ModelFailedError: anything else ``work`` raised (400 or 500).
        """
        task = asyncio.ensure_future(work)
        async for _ in self.watch(request, task):
            pass
        return task.result()

    async def watch(
        self, request: Request, task: asyncio.Future[Any], updates: asyncio.Queue[U] | None = None
    ) -> AsyncGenerator[U, None]:
        """Wait for ``task`` (a request's model work), yielding what arrives in ``updates``
        meanwhile (e.g. the sentences a stream sends as they are translated), in order, the
        last ones before it returns; ``task`` is done (with a result) when it returns. If the
        client disconnects, the server shuts down, or the caller stops iterating first,
        ``task`` is cancelled (a translation stops at its next decoding step).

        Raises:
            ClientGoneError: the client went away.
            ShuttingDownError: the server is shutting down (503).
            ApiError: what ``task`` raised for the client (e.g. 503 queue full, 504 too slow).
            ModelFailedError: anything else ``task`` raised (400 or 500).
        """
        getter: asyncio.Future[U] | None = None
        try:
            while True:
                if updates is not None and getter is None:
                    getter = asyncio.ensure_future(updates.get())
                waiting: set[asyncio.Future[Any]] = {task} if getter is None else {task, getter}
                await asyncio.wait(waiting, timeout=POLL_S, return_when=asyncio.FIRST_COMPLETED)
                if getter is not None and getter.done():
                    yield getter.result()
                    getter = None
                    continue  # the updates first: they were put before the task finished
                if task.done():
                    break
                if self.closing.is_set():
                    raise ShuttingDownError(
                        "the server is shutting down; this request was stopped (retry shortly)"
                    )
                if await request.is_disconnected():
                    logger.info("client went away; its translation was stopped")
                    raise ClientGoneError
            while updates is not None and not updates.empty():
                yield updates.get_nowait()
        finally:  # also when the request is cancelled, or the stream's reader goes away
            if getter is not None:
                getter.cancel()
            if not task.done():
                task.cancel()
        try:
            task.result()
        except ApiError:
            raise
        except Exception as exc:
            raise ModelFailedError.from_exception(exc) from exc


def server_state(request: Request) -> ServerState:
    """The state of the app serving ``request`` (a route dependency)."""
    return app_state(request.app)


def app_state(app: FastAPI) -> ServerState:
    """The state :func:`~anuvad.server.app.create_app` gave ``app``."""
    state: ServerState = app.state.server
    return state


# A route's parameter ``state: State`` is the app's :class:`ServerState`.
State = Annotated[ServerState, Depends(server_state)]
