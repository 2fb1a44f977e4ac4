"""Optional bearer-token API keys, for a server reachable beyond loopback.

``anuvad serve --api-key-file keys.txt`` reads one key per line (blank lines and ``#`` comments
ignored); a request to the API (``/translate``, ``/attention``, ``/models``, ``/metrics``) then
needs ``Authorization: Bearer <key>`` with one of them, else 401 (the same for
``/translate/stream``, ``/detect`` and every file of the web exports under ``/web/`` but their
code and docs (``.js``, ``.mjs``, ``.html``, ``.md``, ``.txt``): the weights are not handed to
anyone the API would refuse, while a browser imports modules and starts workers without
headers). The web page, its assets, the
API docs and ``/health`` (for load balancers) stay open; the page asks for a key when the API
answers 401. Keys are compared in constant time.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Collection
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from anuvad.errors import ConfigError

MIN_KEY_CHARS = 16  # a shorter key is guessable; secrets.token_urlsafe() makes a good one
PROTECTED_PATHS = frozenset(
    {"/translate", "/translate/stream", "/attention", "/detect", "/models", "/metrics"}
)
# The web exports (`anuvad serve --web`): everything but the code a browser imports or opens
# without headers (modules, workers, the page) and the docs needs the key: the model files
# (graphs, SentencePiece models, model.json: the runtime reads them with the page's key), also
# those of an older export's layout, or under a name a route might normalise ("model.json/").
WEB_PREFIX = "/web/"
WEB_OPEN_FILES = (".js", ".mjs", ".html", ".md", ".txt")


def is_protected(path: str) -> bool:
    """Whether a request to ``path`` needs a key when the server has keys."""
    if path.startswith(WEB_PREFIX):
        return not path.lower().endswith(WEB_OPEN_FILES)
    return path in PROTECTED_PATHS


def load_api_keys(path: Path) -> frozenset[str]:
    """The keys in ``path``, one per line.

    Raises:
        ConfigError: the file cannot be read, holds no key, or a key is too short or has
            spaces inside; the message names the file and line.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the API key file {path}: {exc}") from exc
    keys: set[str] = set()
    for number, line in enumerate(lines, start=1):
        key = line.strip()
        if not key or key.startswith("#"):
            continue
        if any(c.isspace() for c in key):
            raise ConfigError(f"{path}:{number}: an API key has no spaces; one key per line")
        if len(key) < MIN_KEY_CHARS:
            raise ConfigError(
                f"{path}:{number}: an API key needs at least {MIN_KEY_CHARS} characters "
                f"(got {len(key)}); make one with: python -c "
                f'"import secrets; print(secrets.token_urlsafe())"'
            )
        keys.add(key)
    if not keys:
        raise ConfigError(f"{path} holds no API key; write one key per line")
    return frozenset(keys)


def bearer_token(scope: Scope) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if the request has one."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = bytes(value).decode("latin-1").partition(" ")
            token = token.strip()
            if scheme.lower() == "bearer" and token:
                return token
    return None


def key_matches(token: str, keys: Collection[str]) -> bool:
    """Whether ``token`` is one of ``keys``, comparing every key in constant time."""
    found = False
    for key in keys:
        found |= hmac.compare_digest(token.encode(), key.encode())
    return found


class ApiKeyMiddleware:
    """401 for a request to a protected path without a valid bearer key (plain ASGI)."""

    def __init__(self, app: ASGIApp, keys: Collection[str]) -> None:
        self.app = app
        self.keys = frozenset(keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_protected(scope["path"]):
            await self.app(scope, receive, send)
            return
        token = bearer_token(scope)
        if token is not None and key_matches(token, self.keys):
            await self.app(scope, receive, send)
            return
        message = (
            "this server needs an API key: send the header 'Authorization: Bearer <key>'"
            if token is None
            else "the API key is not valid for this server"
        )
        body = json.dumps({"error": message, "details": []}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="anuvad"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
