"""``POST /translate``: one text or a list (plain text or HTML), each split into sentences (or
kept whole), all sentences translated through the model's micro-batcher, and each text put
back together with its layout or markup (:mod:`anuvad.server.planning`)."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request

from anuvad.server.answer_schemas import TranslateResponse
from anuvad.server.errors import ERRORS
from anuvad.server.planning import plan_request
from anuvad.server.schemas import TranslateRequest
from anuvad.server.state import State

router = APIRouter()


@router.post("/translate", response_model=TranslateResponse, responses=ERRORS)
async def translate(body: TranslateRequest, request: Request, state: State) -> TranslateResponse:
    """Translate one text or a list of texts (greedy or beam search, n-best lists).

    A text mostly in another script than the model's source language goes to a served model
    that reads it when the request names no model (the answer's `model` and
    `detected_language` say so), else it is refused with a 422 naming the language and the
    model that takes it. `format: "html"` translates the text between the tags and returns the
    markup untouched."""
    start = time.perf_counter()
    state.check_open()
    plan = await plan_request(state, body)
    results = await state.model_work(request, plan.work(state, quality=body.scores))
    state.requests += 1
    return plan.response(results, (time.perf_counter() - start) * 1000)
