"""Cross-origin isolation for a server that offers translation in the browser (``--web``).

onnxruntime-web runs its WASM kernels on several threads only in a page that is cross-origin
isolated (``crossOriginIsolated``: ``SharedArrayBuffer`` is then available), which takes two
response headers, ``Cross-Origin-Opener-Policy: same-origin`` and ``Cross-Origin-Embedder-Policy:
require-corp``. The page, its scripts, workers and the exports are all this server's own (nothing
is fetched from elsewhere), so the headers cost the page nothing; with them the in-browser
translator uses up to four threads (onnxruntime-web's default: half the cores) instead of one.
Added only where web exports are served.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ISOLATION_HEADERS = (
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-embedder-policy", b"require-corp"),
)


class IsolationMiddleware:
    """ASGI middleware: every HTTP response gets :data:`ISOLATION_HEADERS` (those it sets
    itself are kept)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_isolated(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {bytes(name).lower() for name, _ in headers}
                headers += [(n, v) for n, v in ISOLATION_HEADERS if n not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_isolated)


__all__ = ["ISOLATION_HEADERS", "IsolationMiddleware"]
