"""``GET /metrics``: the server's counters in Prometheus' text format (prometheus-client).

One registry per app (several apps in one process, e.g. in tests, never mix their figures):

- ``anuvad_requests_total{endpoint, status}``: answered requests by endpoint and status code
  (errors by kind: 413 body too large, 422 invalid or too long, 503 overloaded, 500 failed).
- ``anuvad_request_seconds{endpoint}``: latency histogram of the translation endpoints.
- ``anuvad_queue_length{model}``: requests waiting for the model.
- ``anuvad_model_call_seconds{model}``, ``anuvad_batch_sentences{model}``: each model call's
  time and number of sentences (what micro-batching merged).
- ``anuvad_sentences_total{model}``, ``anuvad_target_tokens_total{model}``: work done.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_TYPE_LATEST", "ServerMetrics"]

_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class ServerMetrics:
    """The metrics of one app, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "anuvad_requests",
            "Answered HTTP requests by endpoint and status code",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "anuvad_request_seconds",
            "Time to answer a translation or attention request",
            ["endpoint"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.queue = Gauge(
            "anuvad_queue_length",
            "Requests waiting for the model",
            ["model"],
            registry=self.registry,
        )
        self.call_seconds = Histogram(
            "anuvad_model_call_seconds",
            "Time of one model call",
            ["model"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.batch_sentences = Histogram(
            "anuvad_batch_sentences",
            "Sentences per model call",
            ["model"],
            buckets=_BATCH_BUCKETS,
            registry=self.registry,
        )
        self.sentences = Counter(
            "anuvad_sentences", "Sentences translated", ["model"], registry=self.registry
        )
        self.tokens = Counter(
            "anuvad_target_tokens",
            "Target tokens written (best candidates)",
            ["model"],
            registry=self.registry,
        )

    def watch_queue(self, model: str, size: Callable[[], int]) -> None:
        """Report ``size()`` as the model's queue length whenever metrics are read."""
        self.queue.labels(model=model).set_function(lambda: float(size()))

    def model_call(self, model: str, sentences: int, tokens: int, seconds: float) -> None:
        """Record one model call."""
        self.call_seconds.labels(model=model).observe(seconds)
        self.batch_sentences.labels(model=model).observe(sentences)
        self.sentences.labels(model=model).inc(sentences)
        self.tokens.labels(model=model).inc(tokens)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)


class RequestMetricsMiddleware:
    """ASGI middleware counting every HTTP request by route template and status, and timing
    ``/translate`` and ``/attention``; a request whose client went away counts as status 499."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # unless a response starts

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except asyncio.CancelledError:
            status = 499  # the client closed the connection first
            raise
        finally:
            route = scope.get("route")
            endpoint = getattr(route, "path", None) or "other"  # templates only: bounded labels
            self.metrics.requests.labels(endpoint=endpoint, status=str(status)).inc()
            if endpoint in ("/translate", "/translate/stream", "/attention"):
                elapsed = time.perf_counter() - started
                self.metrics.latency.labels(endpoint=endpoint).observe(elapsed)
