"""``POST /translate/stream``: ``/translate`` whose sentences arrive as they are translated
(issue 34, item 9: a 200-sentence text showed a spinner for 29 s).

Not a second translation path: the request is planned as ``/translate`` plans it
(:mod:`anuvad.server.planning`) and queued on the same micro-batcher, which serves a long request
a model call at a time (at most the settings' ``batch_size`` sentences, e.g. 32 at beam 4) and
tells the job's ``progress`` callback after each call (:class:`~anuvad.server.jobs.TranslateJob`).
The route turns those calls into NDJSON lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, RootModel

from anuvad.inference.translation import Translation
from anuvad.server.answer_schemas import (
    StreamDone,
    StreamError,
    StreamEvent,
    StreamSentence,
    StreamStart,
)
from anuvad.server.errors import (
    ERRORS,
    AlignmentRefusedError,
    ApiError,
    ClientGoneError,
    NamesRefusedError,
    error_message,
)
from anuvad.server.planning import RequestPlan, plan_request
from anuvad.server.schemas import TranslateRequest
from anuvad.server.state import ServerState, State

router = APIRouter()

MEDIA_TYPE = "application/x-ndjson"


class StreamLine(RootModel[Annotated[StreamEvent, Field(discriminator="event")]]):
    """One line of a ``POST /translate/stream`` answer (told apart by ``event``)."""


class NdjsonResponse(StreamingResponse):
    """JSON objects, one per line, sent as they are made."""

    media_type = MEDIA_TYPE


DESCRIPTION = """\
`POST /translate` with the sentences sent as they are translated: the same body, the same
checks (a request refused before its translation starts gets the status and error body that
`/translate` gives), and `application/x-ndjson` answering one JSON object per line:

1. `{"event": "start", "total": n, "sentences": [per text], "model": id, "detected_language": ...}`
2. `{"event": "sentence", "text": i, "sentence": j, "done": k, "total": n, "result": SentenceOut}`
   for each sentence as it is translated: sentence `j` of text `i` (its index in that text's
   `sentences`), `k` of the `n` done. They come in the order the model finishes them: a long
   request is translated a model call at a time (up to 32 sentences at beam 4), the sentences of
   one call together, in order.
3. `{"event": "done", "response": TranslateResponse}`: the whole answer, as `/translate` gives;
   or, when the translation fails after the stream began (queue full, time limit, shutdown, the
   model failed), `{"event": "error", "status": 503|504|500|400, "error": "..."}`.

A client that disconnects stops the translation at its next decoding step, as for `/translate`.
Lines may gain fields and new events may be added: read `event`, ignore the unknown.
"""


@router.post(
    "/translate/stream",
    response_class=NdjsonResponse,
    responses={
        200: {"model": StreamLine, "description": "NDJSON lines as they are made"},
        **ERRORS,
    },
    description=DESCRIPTION,
)
async def translate_stream(
    body: TranslateRequest, request: Request, state: State
) -> NdjsonResponse:
    """Translate as `/translate` does, sending each sentence as it is translated (NDJSON)."""
    start = time.perf_counter()
    state.check_open()
    if body.names != "off":
        raise NamesRefusedError(
            "names translates some sentences twice, which the stream cannot send as they are "
            "done: send names 'off', or ask POST /translate"
        )
    if body.alignment:
        raise AlignmentRefusedError(
            "alignment is read once every sentence is translated, which the stream cannot send "
            "as they are done: send alignment false, or ask POST /translate"
        )
    plan = await plan_request(state, body)
    lines = stream_lines(state, request, plan, body.scores, start)
    return NdjsonResponse(lines, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def stream_lines(
    state: ServerState, request: Request, plan: RequestPlan, quality: bool, start: float
) -> AsyncIterator[str]:
    """The answer's lines: start, each sentence as its model call ends, then done or error."""
    total = len(plan.sentences())
    yield line(
        StreamStart(
            total=total,
            sentences=plan.sentence_counts(),
            model=plan.model.id,
            detected_language=plan.detected_language,
        )
    )
    loop = asyncio.get_running_loop()
    updates: asyncio.Queue[tuple[int, list[Translation]]] = asyncio.Queue()

    def progress(first: int, translations: list[Translation]) -> None:  # on the model thread
        loop.call_soon_threadsafe(updates.put_nowait, (first, translations))

    work = plan.work(state, quality, progress)
    task = asyncio.ensure_future(work)
    done = 0
    try:
        async with contextlib.aclosing(state.watch(request, task, updates)) as arrivals:
            async for first, translations in arrivals:
                for index, result in enumerate(translations, start=first):
                    done += 1
                    unit, sentence, _ = plan.places[index]
                    out = plan.sentence(index, result)
                    yield line(StreamSentence(text=unit.text, sentence=sentence, done=done,
                                              total=total, result=out))  # fmt: skip
        response = plan.response(task.result(), (time.perf_counter() - start) * 1000)
        state.requests += 1
        yield line(StreamDone(response=response))
    except ClientGoneError:
        return  # nobody reads on
    except ApiError as exc:
        yield line(StreamError(status=exc.status, error=error_message(exc)))
    finally:
        if not task.done():  # the reader went away mid-stream: the search stops
            task.cancel()


def line(event: BaseModel) -> str:
    """One NDJSON line."""
    return event.model_dump_json() + "\n"
