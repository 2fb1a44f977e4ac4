"""``GET /health`` (liveness and counters), ``GET /models`` (the served models, what each
engine can do, and the request limits) and ``GET /metrics`` (Prometheus)."""

from __future__ import annotations

import time

from fastapi import APIRouter, Response

from anuvad.server.metrics import CONTENT_TYPE_LATEST
from anuvad.server.model_schemas import HealthResponse, ModelsResponse
from anuvad.server.state import State

router = APIRouter()


@router.get("/health", response_model=HealthResponse)
async def health(state: State) -> HealthResponse:
    """Liveness, the served models and request counters."""
    return HealthResponse(
        status="ok",
        model=state.default.id,
        models=list(state.models),
        uptime_s=time.monotonic() - state.started,
        batching=state.batching,
        requests=state.requests,
        model_calls=sum(m.batcher.model_calls for m in state.models.values()),
    )


@router.get("/models", response_model=ModelsResponse)
async def models(state: State) -> ModelsResponse:
    """The served models (the first is the default) and the request limits."""
    return ModelsResponse(models=[m.info for m in state.models.values()], limits=state.limits)


@router.get("/metrics", include_in_schema=False)
async def prometheus(state: State) -> Response:
    """Counters and histograms in Prometheus' text format."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
