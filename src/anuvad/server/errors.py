"""How the HTTP API fails: the error body every 4xx/5xx has (:class:`ErrorResponse`), the
exceptions the endpoints raise, and the handlers that turn each into its status."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from anuvad.server.jobs import OverloadedError, RequestTimeoutError
from anuvad.server.schemas import ErrorResponse
from anuvad.server.settings import ModelFailedError

RETRY_AFTER_S = 1  # what a 503 (queue full) tells the client to wait, in seconds

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "the model cannot translate this input"},
    413: {"model": ErrorResponse, "description": "request body too large"},
    422: {"model": ErrorResponse, "description": "invalid request (the message names the field)"},
    500: {"model": ErrorResponse, "description": "the model failed"},
    503: {"model": ErrorResponse, "description": "too many requests waiting; retry"},
    504: {"model": ErrorResponse, "description": "past the time limit per request (stopped)"},
}


class UnknownModelError(Exception):
    """A request named a model id that is not served (422, naming the field)."""


class ClientGoneError(Exception):
    """The client closed its connection before its translation was ready."""


class TooLongError(Exception):
    """A text holds a sentence the model cannot take, even cut at clause boundaries (422)."""


def error_response(
    status: int, message: str, details: list[dict[str, Any]] | None = None
) -> JSONResponse:
    """The JSON body of every error: a readable message and per-field details."""
    body = ErrorResponse(error=message, details=details or [])
    return JSONResponse(status_code=status, content=body.model_dump())


def _describe(error: dict[str, Any]) -> str:
    """One pydantic error as ``field: message``, e.g. ``beam_size: Input should be <= 16``."""
    location = [str(part) for part in error.get("loc", ()) if part != "body"]
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    if error.get("type") == "json_invalid":
        return f"the body is not valid JSON ({error.get('ctx', {}).get('error', message)})"
    return f"{'.'.join(location)}: {message}" if location else message


Handler = Callable[[Request, Any], Awaitable[Response]]
_HANDLERS: list[tuple[type[Exception], Handler]] = []


def _handles(kind: type[Exception]) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _HANDLERS.append((kind, handler))
        return handler

    return register


@_handles(RequestValidationError)
async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
    errors = [dict(e) for e in exc.errors()]
    messages = [_describe(e) for e in errors]
    details = [
        {"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "message": m}
        for e, m in zip(errors, messages, strict=True)
    ]
    return error_response(422, "; ".join(messages), details)


@_handles(StarletteHTTPException)
async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    # FastAPI's own errors (404, 405, a body that is not UTF-8) in the same shape as ours.
    response = error_response(exc.status_code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


@_handles(OverloadedError)
async def overloaded(_: Request, exc: OverloadedError) -> JSONResponse:
    response = error_response(503, str(exc))
    response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response


@_handles(ClientGoneError)
async def client_gone(_: Request, exc: ClientGoneError) -> Response:
    return Response(status_code=499)  # nobody reads it; the metrics count it as 499


@_handles(RequestTimeoutError)
async def timed_out(_: Request, exc: RequestTimeoutError) -> JSONResponse:
    return error_response(504, str(exc))


@_handles(TooLongError)
async def too_long(_: Request, exc: TooLongError) -> JSONResponse:
    return error_response(422, f"text: {exc}", [{"field": "text", "message": str(exc)}])


@_handles(UnknownModelError)
async def unknown_model(_: Request, exc: UnknownModelError) -> JSONResponse:
    return error_response(422, str(exc), [{"field": "model", "message": str(exc)}])


@_handles(ModelFailedError)
async def failed(_: Request, exc: ModelFailedError) -> JSONResponse:
    return error_response(exc.status, str(exc))


def add_error_handlers(app: FastAPI) -> None:
    """Answer each exception above with its status and an :class:`ErrorResponse` body."""
    for kind, handler in _HANDLERS:
        app.add_exception_handler(kind, handler)
