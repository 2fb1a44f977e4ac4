"""A loopback server answers its own host names only (DNS rebinding): a request whose Host header
names another host gets a 400 in the API's error shape, as every other refusal does (Starlette's
``TrustedHostMiddleware``, which decides, answers in plain text)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["AllowedHostsMiddleware"]


class AllowedHostsMiddleware:
    """ASGI middleware: a request whose Host is one of ``allowed_hosts`` reaches ``app``
    (Starlette's rule); any other gets a JSON 400 naming its host and the names allowed."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str]) -> None:
        self.app = app
        self.allowed = list(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reached = False

        async def allowed(scope: Scope, receive: Receive, send: Send) -> None:
            nonlocal reached
            reached = True
            await self.app(scope, receive, send)

        async def answer(message: Any) -> None:
            if reached:
                await send(message)
            elif message["type"] == "http.response.start":  # refused: our body, not its text
                host = Headers(scope=scope).get("host", "")
                error = (
                    f"the Host header {host!r} names no host this server answers; open it as "
                    f"{' or '.join(self.allowed)}"
                )
                body = json.dumps({"error": error, "details": []}).encode("utf-8")
                headers = [(b"content-type", b"application/json"),
                           (b"content-length", str(len(body)).encode())]  # fmt: skip
                await send({"type": "http.response.start", "status": 400, "headers": headers})
                await send({"type": "http.response.body", "body": body})

        check = TrustedHostMiddleware(allowed, allowed_hosts=self.allowed, www_redirect=False)
        await check(scope, receive, answer)
