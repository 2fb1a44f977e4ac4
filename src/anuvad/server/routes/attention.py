"""``POST /attention``: cross-attention (every layer and head) and cosine similarities for one
sentence and its best translation, for the web page's heatmap: the translation
``POST /translate`` gives the sentence with the same search fields, glossary and verbatim
fields."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response

from anuvad.inference.documents import count_sentences, split_document
from anuvad.server.answer_schemas import AttentionResponse
from anuvad.server.errors import ERRORS, TextRefusedError
from anuvad.server.limits import MAX_ATTENTION_TOKENS
from anuvad.server.planning import request_glossary, verbatim_policy
from anuvad.server.responses import attention_out
from anuvad.server.routing import choose_model
from anuvad.server.schemas import AttentionRequest
from anuvad.server.settings import search_settings
from anuvad.server.state import State

router = APIRouter()


@router.post("/attention", response_model=AttentionResponse, responses=ERRORS)
async def attention(body: AttentionRequest, request: Request, state: State) -> Response:
    """Cross-attention (every layer and head) and cosine similarities for one sentence, of the
    translation `/translate` gives it with the same search fields and glossary."""
    start = time.perf_counter()
    state.check_open()
    model, _ = choose_model(state, body.model, [body.text])  # as /translate would
    # One sentence only: the model stops after the first of several (the rest would be lost
    # without a word), and one too long is cut by the output limit.
    sentences = count_sentences(body.text, model.info.src_lang)
    if sentences > 1:
        raise TextRefusedError(
            f"the text holds {sentences} sentences, but the attention view is of one sentence "
            "(the model translates the first and stops); send one sentence (POST /translate "
            "splits a text into sentences)"
        )
    if not model.fits(body.text.strip()):
        raise TextRefusedError(
            "the text is longer than the model can translate as one sentence; send a shorter "
            "sentence"
        )
    # A bad setting or term: 422 here. The view is capped (a sentence, MAX_ATTENTION_TOKENS
    # output pieces) and built and serialised on the model thread, never on the event loop.
    settings = search_settings(model.engine, body, max_output_tokens=MAX_ATTENTION_TOKENS)
    # Issue 34: with a term the page showed one translation and the heatmap of another.
    terms = request_glossary(state, model, body)
    policy = verbatim_policy(body)

    # The sentence as /translate translates it: without the list marker and the emoji around
    # it, which are layout ("I love this movie 😀👍" gave another translation here).
    segments = split_document(body.text, model.info.src_lang)
    sentence = segments[0].text if segments else body.text

    def compute() -> bytes:
        (result,) = model.engine.translate([sentence], settings, glossary=terms, verbatim=policy)
        view = model.engine.attention_of(result)
        elapsed_ms = (time.perf_counter() - start) * 1000
        return attention_out(view, model.id, elapsed_ms).model_dump_json().encode()

    payload = await state.model_work(request, model.batcher.call(compute))
    state.requests += 1
    return Response(payload, media_type="application/json")
