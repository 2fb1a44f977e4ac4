"""The HTTP server: ``create_app(translators)`` → a FastAPI app with the API and the web page.

Endpoints (OpenAPI docs at ``/docs``), one module each under :mod:`anuvad.server.routes`:

- ``POST /translate``: one text or a list (plain text or HTML), each split into sentences and
  reassembled with its layout (:mod:`anuvad.server.planning`); greedy or beam search; n-best
  lists per sentence. ``POST /translate/stream``: the same, each sentence sent as it is done.
- ``POST /attention``: tokens, cross-attention per layer and head, cosine similarities.
- ``POST /detect``: which served source language a text is in (a text in another script than
  its model's is routed or refused: :mod:`anuvad.server.routing`).
- ``GET /health``, ``GET /models``, ``GET /metrics`` (Prometheus).
- ``/libretranslate/...``: LibreTranslate's API on the same models, for its clients
  (:mod:`anuvad.server.libretranslate`).
- ``GET /``: the web page (``static/``: plain HTML, JS and CSS, everything local).
- ``GET /web/{model}/...``: a model's web export (``create_app(web=...)``, ``anuvad serve
  --web DIR``), for the page's "Translate in this browser" (:mod:`anuvad.server.routes.web`).

A sentence's path: the page (or any client) posts JSON → the middleware checks its size, type
and key → pydantic checks it against the limits in :mod:`~anuvad.server.schemas` → the route
(:mod:`~anuvad.server.routes.translate`) picks the model and its search settings and splits the
texts → :class:`~anuvad.server.batcher.MicroBatcher` merges it with concurrent requests →
:meth:`Translator.translate` on the model thread → JSON back. The routes hold no ML logic. The
served models (e.g. English→Hindi and Hindi→English) are fixed when the app is created, each
with its own batcher, in one :class:`~anuvad.server.state.ServerState`; a request picks one by
its id (``model``, default the first) and never names a file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from anuvad import __version__
from anuvad.inference.engine import TranslationEngine
from anuvad.inference.glossary import Glossary
from anuvad.server.auth import ApiKeyMiddleware
from anuvad.server.body_limit import (
    JSON_PATHS,
    PATH_LIMITS,
    BodyLimitMiddleware,
    JsonOnlyMiddleware,
)
from anuvad.server.errors import add_error_handlers
from anuvad.server.hosts import AllowedHostsMiddleware
from anuvad.server.isolation import IsolationMiddleware
from anuvad.server.limits import MAX_BODY_BYTES, Limits
from anuvad.server.metrics import RequestMetricsMiddleware
from anuvad.server.openapi import publish_schema
from anuvad.server.routes import attention, detect, info, libretranslate, stream, translate
from anuvad.server.routes.page import add_page
from anuvad.server.routes.web import add_web
from anuvad.server.state import ServerState


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
    web: Sequence[str | Path] = (),
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
        web: web export folders (``anuvad export --format web``) served under
            ``/web/<model id>/`` beside the models they were exported from
            (:mod:`anuvad.server.routes.web`).

    Returns:
        The FastAPI application, its :class:`ServerState` in ``app.state.server``; run it with
        uvicorn (``anuvad serve`` does, through :mod:`anuvad.server.shutdown`).

    Raises:
        ValueError: no translator.
        CheckpointError: a ``web`` folder is not a web export or matches no served model.
    """
    engines = list(translators) if isinstance(translators, Sequence) else [translators]
    limits = Limits(request_timeout_s=request_timeout_s, api_key_required=api_keys is not None)
    state = ServerState.build(
        engines, limits=limits, batching=batching, max_wait_ms=max_wait_ms, glossary=glossary
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        state.start()
        yield
        await state.stop()  # off the event loop: cancelled requests still stop their searches

    served = state.models.values()
    directions = ", ".join(f"{m.info.src_lang} → {m.info.tgt_lang}" for m in served)
    app = FastAPI(
        title=title,
        version=__version__,
        description=f"Transformer translation ({directions}; models {', '.join(state.models)}). "
        f"The web page is at /.",
        lifespan=lifespan,
        docs_url=None,  # served by routes.page from local files
        redoc_url=None,
    )
    state.api_keys = frozenset(api_keys or ())
    app.state.server = state
    publish_schema(app, [m.info for m in state.models.values()])

    # The body limit holds for chunked bodies too (no Content-Length to check up front).
    app.add_middleware(BodyLimitMiddleware, limit=MAX_BODY_BYTES, paths=PATH_LIMITS)
    app.add_middleware(JsonOnlyMiddleware, paths=JSON_PATHS)
    if allowed_hosts is not None:  # a loopback server answers its own names only (DNS rebinding)
        app.add_middleware(AllowedHostsMiddleware, allowed_hosts=list(allowed_hosts))
    if api_keys is not None:
        app.add_middleware(ApiKeyMiddleware, keys=api_keys)
    # Added last, so outermost: it counts every response, the body limit's 413s too (as
    # endpoint "other": no route ran). A plain ASGI middleware (not @app.middleware), so the
    # endpoints see the server's own receive channel and request.is_disconnected() works.
    app.add_middleware(RequestMetricsMiddleware, metrics=state.metrics)
    if web:  # the in-browser translator runs on several threads in an isolated page
        app.add_middleware(IsolationMiddleware)
    add_error_handlers(app)
    for room in (translate, stream, attention, detect, info, libretranslate):
        app.include_router(room.router)
    add_web(app, state, web)
    add_page(app)
    return app
