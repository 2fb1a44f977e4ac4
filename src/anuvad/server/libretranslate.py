"""LibreTranslate's API on anuvad's models (issue 34): the apps and libraries that speak
LibreTranslate (``libretranslatepy``, translation plug-ins, browser extensions) work with anuvad
pointed at ``http://HOST:PORT/libretranslate/``. The routes are in
:mod:`anuvad.server.routes.libretranslate`; this module reads their bodies and maps them onto
anuvad's own requests, so a LibreTranslate request is translated exactly as ``POST /translate``
translates it (:mod:`anuvad.server.planning`), with the model's own search settings.

Differences from LibreTranslate, by design: languages are the served models' (``GET
/libretranslate/languages``); ``source: "auto"`` tells the language by its script
(:mod:`anuvad.server.routing`), so its ``confidence`` is the share of letters in that script
(0-100); a text in another script than ``source``'s is refused (400) instead of translated into
nonsense; ``alternatives`` for a text of several sentences put each sentence's next candidates
together. Errors keep LibreTranslate's shape and codes: ``{"error": "..."}`` with 400 (invalid
request), 403 (invalid API key), 429 (the server is busy: retry), 500 (translation failed).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import Request
from pydantic import BaseModel, Field, ValidationError
from starlette.datastructures import FormData

from anuvad.server.answer_schemas import TranslateResponse
from anuvad.server.auth import bearer_token, key_matches
from anuvad.server.errors import ApiError, error_message
from anuvad.server.languages import language_name
from anuvad.server.limits import MAX_BEAM_SIZE
from anuvad.server.routing import detect_served
from anuvad.server.schemas import TranslateRequest
from anuvad.server.state import ServerState

# The name LibreTranslate's clients show for source "auto".
AUTO = "auto"


class LibreTranslateError(Exception):
    """A request answered ``{"error": message}`` with ``status``, as LibreTranslate does."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------------------ bodies (docs)


class LtTranslateBody(BaseModel):
    """``POST /libretranslate/translate`` (JSON, or the same fields as a form)."""

    q: str | list[str] = Field(description="the text, or a list of texts", examples=["Hello!"])
    source: str = Field(description="source language code, or 'auto'", examples=["en"])
    target: str = Field(description="target language code", examples=["hi"])
    format: Literal["text", "html"] = Field("text", description="'text' or 'html'")
    alternatives: int = Field(0, ge=0, description="other translations to return per text")
    api_key: str | None = Field(None, description="an API key, when the server asks for one")


class LtDetectBody(BaseModel):
    """``POST /libretranslate/detect`` (JSON or form)."""

    q: str = Field(description="the text", examples=["नमस्ते"])
    api_key: str | None = None


class LtDetected(BaseModel):
    """A language and how sure (0-100: the share of the text's letters in its script)."""

    confidence: float
    language: str


class LtTranslation(BaseModel):
    """The answer of ``POST /libretranslate/translate`` (lists for a list ``q``)."""

    translatedText: str | list[str]  # noqa: N815 (LibreTranslate's names)
    detectedLanguage: LtDetected | list[LtDetected] | None = Field(  # noqa: N815
        None, description="with source 'auto' only"
    )
    alternatives: list[str] | list[list[str]] | None = Field(
        None, description="with alternatives > 0 only"
    )


class LtLanguage(BaseModel):
    """One language of ``GET /libretranslate/languages``."""

    code: str
    name: str
    targets: list[str]


class LtError(BaseModel):
    """Every error: LibreTranslate's shape."""

    error: str


# ------------------------------------------------------------------------------ reading bodies


async def read_body(request: Request) -> dict[str, Any]:
    """The request's fields: its JSON object, or its form (urlencoded or multipart), over the
    query string's (LibreTranslate reads either).

    Raises:
        LibreTranslateError: 400 for a JSON body that is not an object.
    """
    fields: dict[str, Any] = dict(request.query_params)
    declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if declared == "application/json":
        try:
            body = json.loads(await request.body() or b"{}")
        except (ValueError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict):
            raise LibreTranslateError(400, "Invalid JSON format")
        fields.update(body)
    elif declared in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form: FormData = await request.form()
        fields.update({k: v for k, v in form.items() if isinstance(v, str)})
    return fields


def check_key(state: ServerState, request: Request, fields: dict[str, Any]) -> None:
    """The API key in the body (``api_key``) or the ``Authorization: Bearer`` header, when the
    server asks for one (``anuvad serve --api-key-file``).

    Raises:
        LibreTranslateError: 400 without a key, 403 with a key the server does not know.
    """
    if not state.limits.api_key_required:
        return
    key = fields.get("api_key") or bearer_token(request.scope)
    if not key:
        raise LibreTranslateError(400, "Please contact the server operator to get an API key")
    if not isinstance(key, str) or not key_matches(key, state.api_keys):
        raise LibreTranslateError(403, "Invalid API key")


def required(fields: dict[str, Any], name: str) -> Any:
    """A field LibreTranslate requires (400 naming it when missing or empty)."""
    value = fields.get(name)
    if value in (None, "", []):
        raise LibreTranslateError(400, f"Invalid request: missing {name} parameter")
    return value


# ------------------------------------------------------------------------------ answers


def languages(state: ServerState) -> list[LtLanguage]:
    """Every served language (source or target), each with the targets it translates to."""
    served = [m.info for m in state.models.values()]
    codes = dict.fromkeys(c for m in served for c in (m.src_lang, m.tgt_lang))
    return [
        LtLanguage(
            code=code,
            name=language_name(code),
            targets=sorted({m.tgt_lang for m in served if m.src_lang == code}),
        )
        for code in codes
    ]


def detections(state: ServerState, text: str) -> list[LtDetected]:
    """The served source languages, best first, with LibreTranslate's 0-100 confidence."""
    found = detect_served(state, text)
    return [
        LtDetected(confidence=round(100 * c.confidence, 1), language=c.language)
        for c in found.candidates
    ]


def pick_model(state: ServerState, source: str, target: str) -> str:
    """The id of the first served model translating ``source`` → ``target``.

    Raises:
        LibreTranslateError: 400 naming what is not served, as LibreTranslate words it.
    """
    codes = {c for m in state.models.values() for c in (m.info.src_lang, m.info.tgt_lang)}
    for code in (source, target):
        if code not in codes:
            raise LibreTranslateError(400, f"{code} is not supported")
    for model in state.models.values():
        if (model.info.src_lang, model.info.tgt_lang) == (source, target):
            return model.id
    raise LibreTranslateError(
        400,
        f"{language_name(target)} ({target}) is not available as a target language from "
        f"{language_name(source)} ({source})",
    )


def anuvad_request(
    state: ServerState, model_id: str, texts: str | list[str], text_format: str, alternatives: int
) -> TranslateRequest:
    """The ``POST /translate`` request that translates ``texts`` (one or a list) as asked: the
    model's own
    search, wide enough for ``alternatives`` more candidates; no scores (not in the answer).

    Raises:
        LibreTranslateError: 400 for what anuvad's limits refuse (the message names it).
    """
    nbest = min(alternatives + 1, MAX_BEAM_SIZE)
    beam = state.models[model_id].engine.decode.beam_size
    try:
        return TranslateRequest.model_validate(
            {"text": texts, "model": model_id, "format": text_format, "nbest": nbest,
             "beam_size": max(beam, nbest) if nbest > beam else None, "scores": False}
        )  # fmt: skip
    except ValidationError as exc:
        problems = "; ".join(
            str(e.get("msg", "invalid")).removeprefix("Value error, ") for e in exc.errors()
        )
        raise LibreTranslateError(400, f"Invalid request: {problems}") from None


def alternatives_of(response: TranslateResponse, index: int, count: int) -> list[str]:
    """Up to ``count`` other translations of text ``index``: a one-sentence text's next
    candidates; for several sentences, the text with each sentence's k-th candidate (its best
    where it has fewer); none for HTML."""
    out = response.translations[index]
    if len(out.sentences) == 1:
        return [c.text for c in out.nbest[1 : count + 1]]
    if any(s.run is not None for s in out.sentences):
        return []
    deepest = max((len(s.nbest) for s in out.sentences), default=1)
    found: list[str] = []
    for k in range(1, min(count, deepest - 1) + 1):
        text, position = "", 0
        for s in out.sentences:
            text += out.source[position : s.start] + s.nbest[min(k, len(s.nbest) - 1)].text
            position = s.end
        found.append(text + out.source[position:])
    return found


def from_api_error(exc: ApiError) -> LibreTranslateError:
    """anuvad's error as LibreTranslate answers it: 400 for a request it refuses, 429 when the
    server is busy (LibreTranslate's "slow down"), 500 when translating failed."""
    message = error_message(exc)
    if exc.status in (400, 413, 422):
        return LibreTranslateError(400, f"Invalid request: {message}")
    if exc.status == 503:
        return LibreTranslateError(429, f"Slowdown: {message}")
    return LibreTranslateError(500, f"Cannot translate text: {message}")


__all__ = [
    "AUTO",
    "LibreTranslateError",
    "LtDetectBody",
    "LtDetected",
    "LtError",
    "LtLanguage",
    "LtTranslateBody",
    "LtTranslation",
    "alternatives_of",
    "anuvad_request",
    "check_key",
    "detections",
    "from_api_error",
    "languages",
    "pick_model",
    "read_body",
    "required",
]
