"""The LibreTranslate-compatible API under ``/libretranslate/`` (beside anuvad's own, which it
does not clash with): ``POST translate``, ``POST translate_file`` and ``GET download_file``,
``POST detect``, ``GET languages``, ``GET frontend/settings``. Bodies as JSON or forms; answers
and errors in LibreTranslate's shapes (:mod:`anuvad.server.libretranslate` maps them onto
anuvad's requests)."""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from anuvad.server.answer_schemas import SentenceOut, TranslateResponse
from anuvad.server.errors import ApiError, ClientGoneError
from anuvad.server.libretranslate import (
    AUTO,
    alternatives_of,
    anuvad_request,
    check_key,
    detections,
    from_api_error,
    languages,
    route_texts,
)
from anuvad.server.libretranslate_bodies import (
    LibreTranslateError,
    LtDetectBody,
    LtDetected,
    LtError,
    LtFileTranslation,
    LtLanguage,
    LtTranslateBody,
    LtTranslation,
    body_of,
    read_body,
)
from anuvad.server.libretranslate_files import (
    FORMATS,
    content_disposition,
    for_the_file,
    read_form,
    read_upload,
)
from anuvad.server.limits import MAX_TEXT_CHARS
from anuvad.server.planning import plan_request
from anuvad.server.state import ServerState, State

router = APIRouter(prefix="/libretranslate", tags=["LibreTranslate-compatible"])

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": LtError,
        "description": "invalid request: a field missing or out of its schema; or one the "
        "schema cannot state: the characters of all texts together, a source and target no "
        "served model translates between, a text in another language than its source",
    },
    403: {"model": LtError, "description": "invalid API key"},
    413: {"model": LtError, "description": "the request body is larger than the server reads"},
    429: {"model": LtError, "description": "the server is busy; retry"},
    500: {"model": LtError, "description": "translation failed"},
}


def body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads JSON or a form itself."""
    schema = {"schema": model.model_json_schema()}
    kinds = ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
    return {"requestBody": {"required": True, "content": dict.fromkeys(kinds, schema)}}


def lt_error(exc: LibreTranslateError) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=exc.status)


@router.post(
    "/translate",
    response_model=LtTranslation,
    response_model_exclude_none=True,
    responses=ERRORS,
    openapi_extra=body_doc(LtTranslateBody),
)
async def translate(request: Request, state: State) -> Any:
    """Translate a text or a list of texts (LibreTranslate's `/translate`): `q`, `source` (a
    code or `auto`), `target`, `format` (`text` or `html`), `alternatives`, `api_key`."""
    try:
        body = await read_body(request, LtTranslateBody)
        check_key(state, request, body.api_key)
        return await translate_body(state, request, body)
    except LibreTranslateError as exc:
        return lt_error(exc)
    except ClientGoneError:
        raise
    except ApiError as exc:
        return lt_error(from_api_error(exc))


async def translate_body(
    state: ServerState,
    request: Request,
    body: LtTranslateBody,
    sentences: list[SentenceOut] | None = None,
) -> LtTranslation:
    """The answer to a LibreTranslate translate request (its one text's sentences, with word
    alignments, added to ``sentences`` when given: a translated file's inline elements).

    Raises:
        LibreTranslateError: what LibreTranslate answers with an error.
        ApiError: what anuvad refused or failed at (:func:`from_api_error` maps it).
    """
    state.check_open()  # a closing server refuses even what it would give back unchanged
    q, alternatives = body.q, body.alternatives
    texts = q if isinstance(q, list) else [q]
    routed = route_texts(state, texts, body.source, body.target, body.format == "html")
    translated: list[str] = list(texts)
    others: list[list[str]] = [[] for _ in texts]
    for model_id, indices in routed.groups.items():
        mine = [texts[i] for i in indices] if isinstance(q, list) else q
        asked = anuvad_request(
            state, model_id, mine, body.format, alternatives, align=sentences is not None
        )
        response = await translated_by(state, request, asked)
        if sentences is not None:
            sentences.extend(s for t in response.translations for s in t.sentences)
        for k, i in enumerate(indices):
            translated[i] = response.translations[k].text
            others[i] = alternatives_of(response, k, alternatives)
    batch = isinstance(q, list)
    detected: list[LtDetected] = [
        LtDetected(
            confidence=round(100 * (f.candidates[0].confidence if f.candidates else 0), 1),
            language=language,
        )
        for f, language in zip(routed.found, routed.sources, strict=False)
    ]
    return LtTranslation(
        translatedText=translated if batch else translated[0],
        detectedLanguage=(detected if batch else detected[0]) if detected else None,
        alternatives=(others if batch else others[0]) if alternatives else None,
    )


async def translated_by(state: ServerState, request: Request, body: Any) -> TranslateResponse:
    """``body`` (a :class:`TranslateRequest`) answered as ``POST /translate`` answers it."""
    start = time.perf_counter()
    state.check_open()
    plan = await plan_request(state, body)
    results = await state.model_work(request, plan.work(state, quality=body.scores))
    state.requests += 1
    return plan.response(results, (time.perf_counter() - start) * 1000)


_FILE_FIELDS = {
    "file": {
        "type": "string",
        "format": "binary",
        "description": f"a {', '.join(FORMATS)} document (text and HTML in UTF-8)",
    },
    "source": {"type": "string", "minLength": 1, "description": "a language code or auto"},
    "target": {"type": "string", "minLength": 1, "description": "a language code"},
    "api_key": {"type": "string"},
}
FILE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "source", "target"],
                    "properties": _FILE_FIELDS,
                }
            }
        },
    }
}


@router.post(
    "/translate_file", response_model=LtFileTranslation, responses=ERRORS, openapi_extra=FILE_BODY
)
async def translate_file(request: Request, state: State) -> Any:
    """Translate a document (LibreTranslate's `/translate_file`): .txt and .html as `translate`
    translates their text (HTML: the markup kept); .docx, .pptx, .xlsx, .odt, .odp and .epub
    paragraph by paragraph, everything else in them kept; .srt and .vtt subtitles cue by cue,
    their timing kept; fetched from `translatedFileUrl`."""
    try:
        form = await read_form(request)
        key = form.get("api_key")
        check_key(state, request, key if isinstance(key, str) else None)
        upload = await read_upload(form)
    except LibreTranslateError as exc:
        return lt_error(exc)
    places = upload.places()
    translations: list[str] = []
    sentences: list[SentenceOut] = []
    for first, offset, part in upload.parts():  # a long document: part by part
        try:
            fields = {**upload.fields, "q": part, "format": upload.format}
            body = body_of(LtTranslateBody, fields)
            found: list[SentenceOut] | None = [] if upload.inline else None
            answer = await translate_body(state, request, body, found)
        except LibreTranslateError as exc:
            return lt_error(for_the_file(exc, upload.name, places[first:]))
        except ClientGoneError:
            raise
        except ApiError as exc:
            return lt_error(for_the_file(from_api_error(exc), upload.name, places[first:]))
        translations.append(str(answer.translatedText))
        sentences += [
            s.model_copy(update={"start": s.start + offset, "end": s.end + offset})
            for s in found or ()
        ]
    name = upload.translated_name(body.target)
    data = await asyncio.to_thread(upload.translated_file, "\n".join(translations), sentences)
    token = state.files.put(name, data, upload.media_type)
    url = request.url_for("download_file", filename=f"{token}.{quote(name, safe='')}")
    return LtFileTranslation(translatedFileUrl=str(url))


@router.get("/download_file/{filename}", responses={404: {"model": LtError}})
async def download_file(filename: str, state: State) -> Response:
    """A translated file, as `translate_file` made it (`<token>.<its name>`; kept a while)."""
    files = state.files
    stored = files.get(filename.split(".", 1)[0])
    if stored is None:
        minutes = round(files.keep_seconds / 60)
        return JSONResponse(
            {"error": f"no such file: it was never made, or it is gone (a translation waits "
                      f"{minutes} minutes, less when {files.max_files} newer ones wait); send "
                      "the document to translate_file again"},
            status_code=404,
        )  # fmt: skip
    headers = {
        "Content-Disposition": content_disposition(stored.name),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox",  # an uploaded page's scripts never run here
        "Cache-Control": "no-store",
    }
    return Response(stored.data, media_type=stored.media_type, headers=headers)


@router.post(
    "/detect",
    response_model=list[LtDetected],
    responses=ERRORS,
    openapi_extra=body_doc(LtDetectBody),
)
async def detect(request: Request, state: State) -> Any:
    """The languages a text may be in, best first (LibreTranslate's `/detect`); confidence
    0-100 is the share of the text's letters in the language's script."""
    try:
        body = await read_body(request, LtDetectBody)
        check_key(state, request, body.api_key)
        return detections(state, body.q)
    except LibreTranslateError as exc:
        return lt_error(exc)


@router.get("/languages", response_model=list[LtLanguage])
async def supported_languages(state: State) -> list[LtLanguage]:
    """The served languages and the targets each translates to (LibreTranslate's
    `/languages`)."""
    return languages(state)


@router.get("/frontend/settings")
async def frontend_settings(state: State) -> dict[str, Any]:
    """What LibreTranslate's web front-end and some clients read before translating."""
    served = languages(state)
    source = next((lang for lang in served if lang.targets), served[0])
    target = source.targets[0] if source.targets else source.code
    return {
        "charLimit": MAX_TEXT_CHARS,  # what one text may hold (a list: more in all)
        "frontendTimeout": 500,
        "apiKeys": state.limits.api_key_required,
        "keyRequired": state.limits.api_key_required,
        "suggestions": False,
        "filesTranslation": True,
        "supportedFilesFormat": list(FORMATS),
        "language": {
            "source": {"code": AUTO, "name": "Auto Detect"},
            "target": {"code": target, "name": next(lang.name for lang in served
                                                     if lang.code == target)},
        },
    }  # fmt: skip
