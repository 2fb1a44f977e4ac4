"""``POST /attention``: cross-attention (every layer and head) and cosine similarities for one
sentence and its best translation, for the web page's heatmap."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response

from anuvad.server.errors import ERRORS
from anuvad.server.limits import MAX_ATTENTION_TOKENS
from anuvad.server.responses import attention_out
from anuvad.server.schemas import AttentionRequest, AttentionResponse
from anuvad.server.settings import search_settings
from anuvad.server.state import State

router = APIRouter()


@router.post("/attention", response_model=AttentionResponse, responses=ERRORS)
async def attention(body: AttentionRequest, request: Request, state: State) -> Response:
    """Cross-attention (every layer and head) and cosine similarities for one sentence."""
    start = time.perf_counter()
    state.check_open()
    model = state.pick(body.model)
    # A bad setting: 422 here. The view is capped (a sentence, MAX_ATTENTION_TOKENS output
    # pieces) and built and serialised on the model thread, never on the event loop.
    settings = search_settings(model.engine, body, max_output_tokens=MAX_ATTENTION_TOKENS)

    def compute() -> bytes:
        view = model.engine.attention(body.text, settings)
        elapsed_ms = (time.perf_counter() - start) * 1000
        return attention_out(view, model.id, elapsed_ms).model_dump_json().encode()

    payload = await state.model_work(request, model.batcher.call(compute))
    state.requests += 1
    return Response(payload, media_type="application/json")
