"""A request body limit that holds whatever the client sends: a Content-Length above the limit is
refused before anything is read, and a body without one (chunked transfer encoding) is read only
up to the limit, then refused. Either way the client gets a 413 in the API's error shape and the
endpoint never sees the body."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from anuvad.server.limits import MAX_DOCUMENT_CHARS, MAX_FILE_BYTES, MAX_TEXT_CHARS

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = ["JSON_PATHS", "PATH_LIMITS", "BodyLimitMiddleware", "JsonOnlyMiddleware"]

# The API's POST endpoints that take JSON only (the LibreTranslate-compatible ones take forms too).
JSON_PATHS = frozenset({"/translate", "/translate/stream", "/attention", "/detect"})
FILE_PATH = "/libretranslate/translate_file"
# What a refused upload should become (the file's text has its own limit: MAX_TEXT_CHARS).
FILE_ADVICE = {
    FILE_PATH: f" (a document to translate: at most {MAX_DOCUMENT_CHARS} characters of text, "
    f"an HTML page {MAX_TEXT_CHARS}; split it into several files)",
}
# Paths whose bodies may be larger than the rest: an uploaded office document carries its images.
PATH_LIMITS = {FILE_PATH: MAX_FILE_BYTES}


class BodyLimitMiddleware:
    """ASGI middleware: at most ``limit`` body bytes per HTTP request (``paths``: other limits
    for some paths).

    The body is read here, up to the limit, and handed to the app unchanged (requests are small:
    the limit is about a megabyte, an uploaded document's a few), so a refused request costs at
    most its path's limit in memory.
    """

    def __init__(self, app: ASGIApp, limit: int, paths: dict[str, int] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.paths = paths or {}

    async def _refuse(self, scope: Scope, send: Send, message: str) -> None:
        message += FILE_ADVICE.get(scope.get("path", ""), "")
        body = json.dumps({"error": message, "details": []}).encode("utf-8")
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.paths.get(scope.get("path", ""), self.limit)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None:
            text = length.decode("latin-1")
            if not text.isdigit() or int(text) > limit:
                await self._refuse(
                    scope, send, f"request body of {text} bytes; the limit is {limit}"
                )
                return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client went away before sending its body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(
                    scope, send, f"request body of more than {limit} bytes; the limit is {limit}"
                )
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect, as usual

        await self.app(scope, replay, send)


class JsonOnlyMiddleware:
    """ASGI middleware: a POST to one of ``paths`` whose body is not declared
    ``application/json`` gets 415 (with what was sent and what to send), before any of it is
    read. Other paths and methods pass (a POST to a GET route still gets its 405)."""

    def __init__(self, app: ASGIApp, paths: frozenset[str]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in self.paths:
            declared = dict(scope.get("headers", [])).get(b"content-type", b"").decode("latin-1")
            if declared.split(";")[0].strip().lower() != "application/json":
                message = (
                    f"Content-Type {declared or '(none)'!r} is not accepted; send the body as "
                    "JSON with Content-Type: application/json"
                )
                body = json.dumps({"error": message, "details": []}).encode("utf-8")
                headers = [(b"content-type", b"application/json")]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({"type": "http.response.start", "status": 415, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
