"""How the HTTP API fails: the error body every 4xx/5xx has (:class:`ErrorResponse`), every
exception the server raises for a request (each :class:`ApiError` carries its status), and the
handlers that turn them into responses."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from anuvad.errors import AnuvadError
from anuvad.server.answer_schemas import ErrorResponse

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 1  # what a 503 (queue full, shutting down) tells the client to wait, in seconds

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "the model cannot translate this input"},
    413: {"model": ErrorResponse, "description": "request body too large"},
    415: {"model": ErrorResponse, "description": "the body is not declared application/json"},
    422: {
        "model": ErrorResponse,
        "description": "invalid request: a body that is not JSON, or a field out of its schema "
        "(the message names it); or one of the rules a JSON Schema cannot state: the characters "
        "of all texts together, a glossary translation the model's vocabulary cannot spell, a "
        "text of several sentences sent with split_sentences false, a text mostly in another "
        "script than the model's source language, names asked of a model that does not "
        "translate English into Hindi or on the stream",
    },
    500: {"model": ErrorResponse, "description": "the model failed"},
    503: {
        "model": ErrorResponse,
        "description": "too many requests waiting, or the server is shutting down; retry",
    },
    504: {"model": ErrorResponse, "description": "past the time limit per request (stopped)"},
}


class ApiError(Exception):
    """A request the server answers with ``status`` and an :class:`ErrorResponse` body.

    Attributes:
        status: the HTTP status.
        field: the request field the message is about (then the body's ``details`` name it
            and the message starts with it); None: the request as a whole.
        retry_after_s: sent as ``Retry-After`` (a 503: the client may retry).
    """

    status = 500
    field: str | None = None
    retry_after_s: int | None = None

    def details(self) -> list[dict[str, str]]:
        """The body's ``details``: the field and the message, when there is a field."""
        return [] if self.field is None else [{"field": self.field, "message": str(self)}]


class OverloadedError(ApiError):
    """More requests are waiting than the batcher accepts; the client should retry later."""

    status = 503
    retry_after_s = RETRY_AFTER_S


class ShuttingDownError(ApiError):
    """The server is shutting down (SIGTERM): a request in flight or arriving now gets a 503 at
    once and its search stops, instead of holding the exit (issue 33)."""

    status = 503
    retry_after_s = RETRY_AFTER_S


class RequestTimeoutError(ApiError):
    """A request was not translated within its time limit; its search was stopped."""

    status = 504


class UnknownModelError(ApiError):
    """A request named a model id that is not served."""

    status = 422
    field = "model"


class TextRefusedError(ApiError):
    """A text the server will not translate as sent: a sentence the model cannot take even cut
    at clause boundaries, or several sentences with ``split_sentences`` false."""

    status = 422
    field = "text"


class NamesRefusedError(ApiError):
    """``names`` asked where it cannot be given: a model that does not translate English into
    Hindi, or ``/translate/stream`` (names translate some sentences twice)."""

    status = 422
    field = "names"


class AlignmentRefusedError(ApiError):
    """``alignment`` asked of ``/translate/stream``, which sends sentences before they are
    aligned."""

    status = 422
    field = "alignment"


class WrongLanguageError(ApiError):
    """A text mostly in another script than the source language of the model asked to translate
    it (or of every served model): the model would write nonsense with confidence (issue 34)."""

    status = 422
    field = "text"


class ClientGoneError(ApiError):
    """The client closed its connection before its translation was ready (nobody reads the
    answer; the metrics count it as 499)."""

    status = 499


_FIELD = r"[a-z_]+(?:\.[a-z0-9_]+)*"  # "glossary.1.target"


class ModelFailedError(ApiError):
    """Translating a valid request failed: 400 for an :class:`AnuvadError` (the input cannot be
    translated, the message says why), 500 for anything else (logged with its traceback), or
    422 for a request the model cannot serve (e.g. a glossary on an engine without one)."""

    def __init__(self, message: str, status: int) -> None:
        # A 422 about fields says so ("glossary.1: the term …", "keep.0: …; keep.1: …"): the
        # body's details name each, as pydantic's 422s do.
        parts = re.split(r"; (?=[a-z_]+\.[a-z0-9_.]+: )", message) if status == 422 else []
        found = [re.match(f"({_FIELD}): ", part) for part in parts]
        self.problems = [
            (m.group(1), part[m.end() :]) for m, part in zip(found, parts, strict=True) if m
        ]
        if len(self.problems) != len(parts):
            self.problems = []  # one part without a field: the message as it is
        super().__init__(message[len(self.problems[0][0]) + 2 :] if self.problems else message)
        self.status = status
        self.field = self.problems[0][0] if self.problems else None

    def details(self) -> list[dict[str, str]]:
        return [{"field": field, "message": said} for field, said in self.problems]

    @classmethod
    def from_exception(cls, exc: Exception) -> ModelFailedError:
        """Wrap what the translator raised. A 500 shows a request id, never internal text;
        the server log has the traceback under that id."""
        if isinstance(exc, AnuvadError):
            return cls(f"cannot translate this request: {exc}", 400)
        request_id = uuid.uuid4().hex[:12]
        logger.error("request %s: the model failed", request_id, exc_info=exc)
        return cls(
            f"the model failed on this request (request id {request_id}; the server log has "
            "the details)",
            500,
        )


def error_response(
    status: int, message: str, details: list[dict[str, Any]] | None = None
) -> JSONResponse:
    """The JSON body of every error: a readable message and per-field details."""
    body = ErrorResponse(error=message, details=details or [])
    return JSONResponse(status_code=status, content=body.model_dump())


def _field(error: dict[str, Any]) -> str:
    """Where a pydantic error is, as the request names it: ``text.1``, not pydantic's union
    branches (``text.list[str].1``, ``text.str``)."""
    parts = [str(part) for part in error.get("loc", ()) if part != "body"]
    return ".".join(p for p in parts if "[" not in p and p not in _TYPE_NAMES)


_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict"})


def _describe(error: dict[str, Any]) -> str:
    """One pydantic error as ``field: message``, e.g. ``beam_size: Input should be <= 16``."""
    location = [_field(error)] if _field(error) else []
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    return f"{'.'.join(location)}: {message}" if location else message


def not_json(reason: str) -> JSONResponse:
    """422 for a body that is not JSON at all: about the request as a whole (no field)."""
    return error_response(422, f"the body is not valid JSON: {reason}")


def _position(document: str, offset: int) -> str:
    """Character ``offset`` of ``document`` as a person finds it: line and column, from 1."""
    line = document.count("\n", 0, offset) + 1
    column = offset - (document.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
    """422 for a body pydantic refused, each problem as ``field: message``; for a body that is
    not JSON, where it stops being JSON (FastAPI gives the character offset as the field)."""
    errors = [dict(e) for e in exc.errors()]
    broken = next((e for e in errors if e.get("type") == "json_invalid"), None)
    if broken is not None:
        offset = broken.get("loc", ())[-1:]
        reason = str(broken.get("ctx", {}).get("error", "JSON decode error"))
        document = exc.body if isinstance(exc.body, str) else ""
        if offset and isinstance(offset[0], int):
            reason += f" at {_position(document, offset[0])}"
        return not_json(reason)
    # A union's branch that failed deeper names the problem ("text.1" of a list): the other
    # branch's complaint about the whole field ("text: a valid string") only misleads.
    fields = [_field(e) for e in errors]
    errors = [
        e for e, f in zip(errors, fields, strict=True)
        if not any(other.startswith(f + ".") for other in fields)
    ]  # fmt: skip
    messages = [_describe(e) for e in errors]
    details = [{"field": _field(e), "message": m} for e, m in zip(errors, messages, strict=True)]
    # the branches of one field's union ("a valid string", "a valid list") read as one message
    joined: dict[str, list[str]] = {}
    for e, m in zip(errors, messages, strict=True):
        joined.setdefault(_field(e), []).append(m.removeprefix(f"{_field(e)}: "))
    text = "; ".join(
        f"{field}: {' or '.join(dict.fromkeys(said))}" if field else " or ".join(said)
        for field, said in joined.items()
    )
    return error_response(422, text, details)


async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    """FastAPI's own errors (404, 405) in the same shape as ours; a body that is not UTF-8 (a
    400 from FastAPI) as the 422 of any other body that is not JSON."""
    if isinstance(exc.__cause__, UnicodeDecodeError):
        cause = exc.__cause__
        return not_json(f"it is not UTF-8 text (byte 0x{cause.object[cause.start]:02x} at byte "
                        f"{cause.start})")  # fmt: skip
    response = error_response(exc.status_code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


def error_message(exc: ApiError) -> str:
    """What the client reads: the message, after the field it is about (``field: message``)."""
    return str(exc) if exc.field is None else f"{exc.field}: {exc}"


async def api_error(_: Request, exc: ApiError) -> Response:
    """An :class:`ApiError` as its status, message, field and ``Retry-After``."""
    if isinstance(exc, ClientGoneError):
        return Response(status_code=exc.status)  # nobody reads it
    response = error_response(exc.status, error_message(exc), exc.details())
    if exc.retry_after_s is not None:
        response.headers["Retry-After"] = str(exc.retry_after_s)
    return response


Handler = Callable[[Request, Any], Awaitable[Response]]
_HANDLERS: list[tuple[type[Exception], Handler]] = [
    (RequestValidationError, invalid_request),
    (StarletteHTTPException, http_error),
    (ApiError, api_error),
]


def add_error_handlers(app: FastAPI) -> None:
    """Answer each exception above with its status and an :class:`ErrorResponse` body."""
    for kind, handler in _HANDLERS:
        app.add_exception_handler(kind, handler)
