"""The HTTP server: ``create_app(translators)`` → a FastAPI app with the API and the web page.

Endpoints (OpenAPI docs at ``/docs``):

- ``POST /translate``: one text or a list, each split into sentences and reassembled with its
  layout (:mod:`anuvad.inference.documents`); greedy or beam search; n-best lists per sentence.
- ``POST /attention``: tokens, cross-attention per layer and head, cosine similarities.
- ``GET /health``, ``GET /models``, ``GET /metrics`` (Prometheus).
- ``GET /``: the web page (``static/``: plain HTML, JS and CSS, everything local).

A sentence's path: the page (or any client) posts JSON → pydantic checks it against the limits
in :mod:`~anuvad.server.schemas` → :class:`~anuvad.server.batcher.MicroBatcher` merges it with
concurrent requests → :meth:`Translator.translate` on the model thread → JSON back. The
endpoints hold no ML logic. The served models (e.g. English→Hindi and Hindi→English) are fixed
when the app is created, each with its own batcher; a request picks one by its id (``model``,
default the first) and never names a file.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware
from swagger_ui_bundle import swagger_ui_path

from anuvad import __version__
from anuvad.errors import InputTooLongError
from anuvad.inference.documents import (
    assemble_documents,
    split_document,
    whole_text,
)
from anuvad.inference.engine import TranslationEngine, source_fits
from anuvad.inference.glossary import UNSPELLABLE, Glossary
from anuvad.server.auth import ApiKeyMiddleware
from anuvad.server.batcher import MicroBatcher
from anuvad.server.body_limit import BodyLimitMiddleware, JsonOnlyMiddleware
from anuvad.server.errors import (
    ERRORS,
    ClientGoneError,
    TooLongError,
    UnknownModelError,
    add_error_handlers,
)
from anuvad.server.jobs import OverloadedError, RequestTimeoutError
from anuvad.server.limits import (
    MAX_ATTENTION_TOKENS,
    MAX_BODY_BYTES,
    MAX_PENDING_SENTENCES,
    Limits,
)
from anuvad.server.metrics import CONTENT_TYPE_LATEST, RequestMetricsMiddleware, ServerMetrics
from anuvad.server.responses import attention_out, document_out, model_info
from anuvad.server.schemas import (
    AttentionRequest,
    AttentionResponse,
    HealthResponse,
    ModelInfo,
    ModelsResponse,
    TranslateRequest,
    TranslateResponse,
)
from anuvad.server.settings import ModelFailedError, publish_model_ids, search_settings

logger = logging.getLogger(__name__)
T = TypeVar("T")
DISCONNECT_POLL_S = 0.25  # how often a waiting request checks that its client is still there

STATIC_DIR = Path(__file__).resolve().parent / "static"


@dataclass
class ServedModel:
    """One served model: its id (``GET /models``), engine, batcher and description."""

    id: str
    translator: TranslationEngine
    batcher: MicroBatcher
    info: ModelInfo
    fits: Callable[[str], bool]  # whether the model takes a sentence whole


async def until_disconnected(request: Request, work: Awaitable[T]) -> T:
    """``work``'s result, unless the client disconnects first: then ``work`` is cancelled (a
    translation stops at its next decoding step) and so is this request's handler."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL_S)
            if done:
                return task.result()
            if await request.is_disconnected():
                task.cancel()
                logger.info("client went away; its translation was stopped")
                raise ClientGoneError
    except asyncio.CancelledError:  # the server cancelling the request at shutdown
        task.cancel()
        raise


def create_app(
    translators: TranslationEngine | Sequence[TranslationEngine],
    *,
    batching: bool = True,
    max_wait_ms: float = 5.0,
    request_timeout_s: float | None = 60.0,
    allowed_hosts: Sequence[str] | None = None,
    api_keys: Collection[str] | None = None,
    glossary: Glossary | None = None,
    title: str = "anuvad",
) -> FastAPI:
    """Build the app serving ``translators`` (the API, its docs and the web page).

    Args:
        translators: the model(s) to serve (either engine), fixed for the app's lifetime; the
            first answers requests that name no model. Ids are the config names (``-2``, ``-3``
            appended to repeats).
        batching: merge concurrent requests with the same settings into one model call.
        max_wait_ms: how long a request waits for others to batch with.
        request_timeout_s: the time a translation request may take, queue included; past it
            the answer is 504 and its search stops at the next decoding step (None: no limit).
            A request whose client disconnects is stopped the same way.
        allowed_hosts: the Host names answered (others get 400), e.g. the loopback names for a
            server bound to 127.0.0.1; None: any.
        api_keys: bearer keys the API asks for (:mod:`anuvad.server.auth`); None: open.
        glossary: terms the first (default) model's translations must use, merged with each
            request's own ``glossary``.
        title: the OpenAPI title.

    Returns:
        The FastAPI application; run it with uvicorn (``anuvad serve`` does).
    """
    engines: list[TranslationEngine] = (
        list(translators) if isinstance(translators, Sequence) else [translators]
    )
    if not engines:
        raise ValueError("create_app needs at least one translator")
    metrics = ServerMetrics()
    served: dict[str, ServedModel] = {}
    for engine in engines:
        name = engine.model_file.config.name
        model_id, repeat = name, 1
        while model_id in served:
            repeat += 1
            model_id = f"{name}-{repeat}"
        batcher = MicroBatcher(
            engine,
            batching=batching,
            max_wait_ms=max_wait_ms,
            workers=engine.parallel_calls,
            max_pending_texts=MAX_PENDING_SENTENCES,
            on_call=functools.partial(metrics.model_call, model_id),
        )
        metrics.watch_queue(model_id, batcher.pending)
        served[model_id] = ServedModel(
            model_id, engine, batcher, model_info(engine, model_id), source_fits(engine)
        )
    default = next(iter(served.values()))
    started = time.monotonic()
    counters = {"requests": 0}

    def request_glossary(model: ServedModel, body: TranslateRequest) -> Glossary | None:
        """The terms a request's translations must use: the server's (default model only)
        merged with the request's own.

        Raises:
            ModelFailedError: 422 when the model's engine cannot use a glossary.
        """
        own = Glossary.from_pairs((t.source, t.target) for t in body.glossary or [])
        bad = own.unspellable(model.translator.tgt_tokenizer)
        if bad:  # a 422 naming the field, before the model
            i = bad[0]
            raise ModelFailedError(
                f"glossary.{i}.target: {own.entries[i].target!r} {UNSPELLABLE}; use other words "
                "for it",
                422,
            )
        base = glossary if model is default else None
        terms = base.merged(own) if base else own
        if not terms:
            return None
        if model.translator.engine != "torch":
            raise ModelFailedError(
                f"glossary: this model is served by {model.translator.engine}; a glossary "
                "needs the torch engine (anuvad serve --engine torch)",
                422,
            )
        return terms

    def pick(model_id: str | None) -> ServedModel:
        if model_id is None:
            return default
        if model_id not in served:
            raise UnknownModelError(
                f"model: no served model {model_id!r}; served: {', '.join(served)} "
                f"(GET /models lists them)"
            )
        return served[model_id]

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        for model in served.values():
            model.batcher.start()
            logger.info("serving %s (%s -> %s)", model.id, model.info.src_lang, model.info.tgt_lang)
        yield
        for model in served.values():
            model.batcher.stop()

    directions = ", ".join(f"{m.info.src_lang} → {m.info.tgt_lang}" for m in served.values())
    app = FastAPI(
        title=title,
        version=__version__,
        description=f"Transformer translation ({directions}; models {', '.join(served)}). "
        f"The web page is at /.",
        lifespan=lifespan,
        # /docs is served below from local files: FastAPI's default loads them from a CDN,
        # which leaves the page blank on a machine without internet.
        docs_url=None,
        redoc_url=None,
    )
    publish_model_ids(app, list(served))
    app.state.batcher = default.batcher
    app.state.translator = default.translator
    app.state.served = served

    # The body limit holds for chunked bodies too (no Content-Length to check up front).
    app.add_middleware(BodyLimitMiddleware, limit=MAX_BODY_BYTES)
    app.add_middleware(JsonOnlyMiddleware, paths=frozenset({"/translate", "/attention"}))
    if allowed_hosts is not None:  # a loopback server answers its own names only (DNS rebinding)
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    if api_keys is not None:
        app.add_middleware(ApiKeyMiddleware, keys=api_keys)
    # Added last, so outermost: it counts every response, the body limit's 413s too (as
    # endpoint "other": no route ran). A plain ASGI middleware (not @app.middleware), so the
    # endpoints see the server's own receive channel and request.is_disconnected() works.
    app.add_middleware(RequestMetricsMiddleware, metrics=metrics)
    add_error_handlers(app)

    @app.post("/translate", response_model=TranslateResponse, responses=ERRORS)
    async def translate(body: TranslateRequest, request: Request) -> TranslateResponse:
        """Translate one text or a list of texts (greedy or beam search, n-best lists)."""
        start = time.perf_counter()
        model = pick(body.model)
        key = search_settings(model.translator, body)
        texts = body.texts()
        lang, fits = model.info.src_lang, model.fits
        try:
            if body.split_sentences:  # CPU work: off the event loop
                plans = await asyncio.to_thread(
                    lambda: [split_document(t, lang, fits=fits) for t in texts]
                )
            else:
                plans = [whole_text(t) for t in texts]
                for i, plan in enumerate(plans):
                    if not all(fits(segment.text) for segment in plan):
                        raise InputTooLongError(
                            f"text {i} is longer than the model can translate as one sentence; "
                            f"send it with split_sentences true, or shorter"
                        )
        except InputTooLongError as exc:
            raise TooLongError(str(exc)) from exc
        sentences = [segment.text for plan in plans for segment in plan]
        terms = request_glossary(model, body)
        try:
            results = await until_disconnected(
                request,
                model.batcher.translate(
                    sentences, key, request_timeout_s, terms, quality=body.scores
                ),
            )
        except (OverloadedError, RequestTimeoutError, ClientGoneError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise ModelFailedError.from_exception(exc) from exc
        counters["requests"] += 1
        documents = assemble_documents(texts, plans, results)
        return TranslateResponse(
            translations=[
                document_out(d, terms, model.translator.tgt_tokenizer) for d in documents
            ],
            model=model.id,
            decoding=body.decoding,
            beam_size=key.beam_size,
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    @app.post("/attention", response_model=AttentionResponse, responses=ERRORS)
    async def attention(body: AttentionRequest) -> Response:
        """Cross-attention (every layer and head) and cosine similarities for one sentence."""
        start = time.perf_counter()
        model = pick(body.model)
        # A bad setting: 422 here. The view is capped (a sentence, MAX_ATTENTION_TOKENS output
        # pieces) and built and serialised on the model thread, never on the event loop.
        settings = search_settings(model.translator, body, max_output_tokens=MAX_ATTENTION_TOKENS)

        def compute() -> bytes:
            view = model.translator.attention(body.text, settings)
            elapsed_ms = (time.perf_counter() - start) * 1000
            return attention_out(view, model.id, elapsed_ms).model_dump_json().encode()

        try:
            payload = await model.batcher.call(compute)
        except (OverloadedError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise ModelFailedError.from_exception(exc) from exc
        counters["requests"] += 1
        return Response(payload, media_type="application/json")

    @app.get("/health", response_model=HealthResponse)
    async def health() -> HealthResponse:
        """Liveness, the served models and request counters."""
        return HealthResponse(
            status="ok",
            model=default.id,
            models=list(served),
            uptime_s=time.monotonic() - started,
            batching=batching,
            requests=counters["requests"],
            model_calls=sum(m.batcher.model_calls for m in served.values()),
        )

    @app.get("/models", response_model=ModelsResponse)
    async def models() -> ModelsResponse:
        """The served models (the first is the default) and the request limits."""
        limits = Limits(request_timeout_s=request_timeout_s, api_key_required=api_keys is not None)
        return ModelsResponse(models=[m.info for m in served.values()], limits=limits)

    @app.get("/metrics", include_in_schema=False)
    async def prometheus() -> Response:
        """Counters and histograms in Prometheus' text format."""
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{title} API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
        )

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")

    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_path), name="docs-assets")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
