"""``POST /detect``: which of the served models' source languages a text is written in (by its
script), and which served model translates from it (:mod:`anuvad.server.routing`)."""

from __future__ import annotations

from fastapi import APIRouter

from anuvad.server.errors import ERRORS
from anuvad.server.model_schemas import DetectRequest, DetectResponse, LanguageScore
from anuvad.server.routing import detect_served
from anuvad.server.state import State

router = APIRouter()

DESCRIPTION = """\
`{"text": "कप्तान ने 85 रन बनाए।"}` →
`{"language": "hi", "confidence": 1.0, "candidates": [{"language": "hi", "confidence": 1.0},
{"language": "en", "confidence": 0.0}], "model": "hien_d256_L3"}`.

The language is told by the script of the text's letters (English and Hindi never share one),
among the languages the served models translate from; `model` is the served model that
`POST /translate` chooses for the text when the request names none (null: no served model reads
it, and `/translate` refuses the text with a 422)."""


@router.post(
    "/detect",
    response_model=DetectResponse,
    responses={k: v for k, v in ERRORS.items() if k in (413, 415, 422)},
    description=DESCRIPTION,
)
async def detect(body: DetectRequest, state: State) -> DetectResponse:
    """The language a text is written in, among the served source languages."""
    found = detect_served(state, body.text)
    best = found.candidates[0].confidence if found.candidates else 0.0
    return DetectResponse(
        language=found.language,
        confidence=round(best, 4),
        candidates=[
            LanguageScore(language=c.language, confidence=round(c.confidence, 4))
            for c in found.candidates
        ],
        model=found.model.id if found.model else None,
    )
