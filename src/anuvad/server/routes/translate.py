"""``POST /translate``: one text or a list, each split into sentences (or kept whole), all
sentences translated through the model's micro-batcher, and each text reassembled with its
layout (:mod:`anuvad.inference.documents`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from fastapi import APIRouter, Request

from anuvad.errors import InputTooLongError
from anuvad.inference.documents import Segment, assemble_documents, split_document, whole_text
from anuvad.inference.glossary import UNSPELLABLE, Glossary
from anuvad.server.errors import ERRORS, ModelFailedError, TextRefusedError
from anuvad.server.responses import document_out
from anuvad.server.schemas import TranslateRequest, TranslateResponse
from anuvad.server.settings import search_settings
from anuvad.server.state import ServedModel, ServerState, State

router = APIRouter()


@router.post("/translate", response_model=TranslateResponse, responses=ERRORS)
async def translate(body: TranslateRequest, request: Request, state: State) -> TranslateResponse:
    """Translate one text or a list of texts (greedy or beam search, n-best lists)."""
    start = time.perf_counter()
    state.check_open()
    model = state.pick(body.model)
    settings = search_settings(model.engine, body)
    texts = body.texts()
    # Sentence splitting is CPU work: off the event loop.
    plans = await asyncio.to_thread(plan_texts, texts, model, body.split_sentences)
    terms = request_glossary(state, model, body)
    sentences = [segment.text for plan in plans for segment in plan]
    timeout = state.limits.request_timeout_s
    work = model.batcher.translate(sentences, settings, timeout, terms, quality=body.scores)
    results = await state.model_work(request, work)
    state.requests += 1
    documents = assemble_documents(texts, plans, results)
    return TranslateResponse(
        translations=[document_out(d, terms, model.engine.tgt_tokenizer) for d in documents],
        model=model.id,
        decoding=body.decoding,
        beam_size=settings.beam_size,
        elapsed_ms=(time.perf_counter() - start) * 1000,
    )


def plan_texts(
    texts: Sequence[str], model: ServedModel, split_sentences: bool
) -> list[list[Segment]]:
    """Each text's sentences, with their places in it: split (a sentence too long for the model
    cut at its clauses), or, with ``split_sentences`` false, the whole text as one sentence.

    Raises:
        TextRefusedError: a sentence the model cannot take even cut; or, unsplit, a text that
            is too long or holds several sentences (the model would translate the first and
            stop: text is never dropped silently, issue 33).
    """
    lang, fits = model.info.src_lang, model.fits
    plans: list[list[Segment]] = []
    for i, text in enumerate(texts):
        if split_sentences:
            try:
                plans.append(split_document(text, lang, fits=fits))
            except InputTooLongError as exc:
                raise TextRefusedError(str(exc)) from exc
            continue
        sentences = len(split_document(text, lang))
        if sentences > 1:
            raise TextRefusedError(
                f"text {i} holds {sentences} sentences, but with split_sentences false a text "
                "is translated as one sentence and the model stops after the first; send "
                "split_sentences true, or one sentence per text"
            )
        plan = whole_text(text)
        if not all(fits(segment.text) for segment in plan):
            raise TextRefusedError(
                f"text {i} is longer than the model can translate as one sentence; send it "
                "with split_sentences true, or shorter"
            )
        plans.append(plan)
    return plans


def request_glossary(
    state: ServerState, model: ServedModel, body: TranslateRequest
) -> Glossary | None:
    """The terms a request's translations must use: the server's (default model only) merged
    with the request's own (which wins for a shared term).

    Raises:
        ModelFailedError: 422 when a target cannot be spelled with the model's vocabulary, or
            the model's engine cannot use a glossary.
    """
    own = Glossary.from_pairs((t.source, t.target) for t in body.glossary or [])
    bad = own.unspellable(model.engine.tgt_tokenizer)
    if bad:  # a 422 naming the field, before the model
        i = bad[0]
        raise ModelFailedError(
            f"glossary.{i}.target: {own.entries[i].target!r} {UNSPELLABLE}; use other words for it",
            422,
        )
    base = state.glossary if model is state.default else None
    terms = base.merged(own) if base else own
    if not terms:
        return None
    if not model.engine.capabilities.glossary:
        raise ModelFailedError(
            f"glossary: this model is served by {model.engine.engine}, which cannot use a "
            "glossary; serve it with the torch engine (anuvad serve --engine torch)",
            422,
        )
    return terms
