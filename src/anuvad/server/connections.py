"""Connections that cannot hold the server: idle and slow-header connections are closed after a
timeout, and one client address holds at most a few connections at once.

Why (issue 33): uvicorn starts no timer on a new connection and none while request headers
trickle in, and its ``limit_concurrency`` counts open connections, so ~512 silent or slow
sockets (one ``for`` loop) made every other client's request a 503 for as long as they stayed
open; API keys did not help, as they are checked only once a request arrives.

:class:`GuardedH11Protocol` is uvicorn's own HTTP/1.1 protocol (h11) with three rules:

- **idle**: a connection that sends nothing for ``idle_timeout_s`` after it opens is closed
  (after a response, uvicorn's keep-alive timeout, set to the same value, does the same);
- **headers**: a request's headers must be complete within ``header_timeout_s`` of the
  connection opening or of its previous response, however slowly bytes keep coming;
- **per client**: an address with ``max_per_client`` connections open that opens one more
  loses its oldest idle one (no request in progress), so that its new request is served; with
  none idle, the new connection is refused with a 503.

Pass :func:`guarded_protocol`'s class as ``uvicorn.Config(http=...)`` (``anuvad serve`` does).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from anuvad.server.connection_limits import ConnectionLimits

logger = logging.getLogger(__name__)

_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"connection: close\r\nretry-after: 1\r\ncontent-length: %d\r\n\r\n%s"
)


class ClientConnections:
    """The open connections of each client address, oldest first (one registry per server)."""

    def __init__(self) -> None:
        self._by_client: dict[str, OrderedDict[GuardedH11Protocol, None]] = {}

    def add(self, client: str, connection: GuardedH11Protocol) -> OrderedDict[Any, None]:
        """Count ``connection`` for ``client``; returns the client's connections, oldest first."""
        connections = self._by_client.setdefault(client, OrderedDict())
        connections[connection] = None
        return connections

    def remove(self, client: str, connection: GuardedH11Protocol) -> None:
        """Forget ``connection`` (closed)."""
        connections = self._by_client.get(client)
        if connections is not None:
            connections.pop(connection, None)
            if not connections:
                del self._by_client[client]

    def count(self, client: str) -> int:
        """How many connections ``client`` holds open."""
        return len(self._by_client.get(client, ()))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the idle, header and per-client rules of the module
    docstring. Subclasses made by :func:`guarded_protocol` set the class attributes."""

    limits = ConnectionLimits()
    clients = ClientConnections()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None
        self._idle_timer: asyncio.TimerHandle | None = None
        self._header_timer: asyncio.TimerHandle | None = None
        self._waiting_for: object = None  # the cycle a header deadline was set after
        self._refused = False  # answered 503 (too many busy connections from its address)

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle_timer = self.loop.call_later(self.limits.idle_timeout_s, self._idle_expired)
        self._await_headers()
        self._address = self.client[0] if self.client else None
        if self._address is None or not self.limits.max_per_client:
            return
        connections = self.clients.add(self._address, self)
        if len(connections) > self.limits.max_per_client:
            self._make_room(connections)

    def data_received(self, data: bytes) -> None:
        if self._refused or self.transport.is_closing():  # what follows is not for the app
            return
        if self._idle_timer is not None:  # the client spoke: no longer silent
            self._idle_timer.cancel()
            self._idle_timer = None
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._idle_timer, self._header_timer):
            if timer is not None:
                timer.cancel()
        if self._address is not None:
            self.clients.remove(self._address, self)
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()  # the next request's headers have the same time

    # -- the rules ----------------------------------------------------------------------------

    def busy(self) -> bool:
        """Whether a request is in progress (its headers arrived, its response is not done)."""
        return self.cycle is not None and not self.cycle.response_complete

    def _await_headers(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._waiting_for = self.cycle
        self._header_timer = self.loop.call_later(
            self.limits.header_timeout_s, self._headers_expired
        )

    def _idle_expired(self) -> None:
        self._idle_timer = None
        if not self.busy():
            self._close("sent nothing", self.limits.idle_timeout_s)

    def _headers_expired(self) -> None:
        self._header_timer = None
        # No request started since the deadline was set (nor one pipelined behind the last).
        if self.cycle is self._waiting_for and not self.busy():
            self._close("sent no whole request headers", self.limits.header_timeout_s)

    def _close(self, what: str, seconds: float) -> None:
        if not self.transport.is_closing():
            # debug, not info: a flood of silent sockets would flood the log too
            logger.debug(
                "closed a connection from %s that %s in %g s", self._address, what, seconds
            )
            self.transport.close()

    def _make_room(self, connections: OrderedDict[Any, None]) -> None:
        """The client holds one connection too many (this new one): close its oldest idle one,
        or, with every one busy, refuse this one."""
        for connection in connections:
            if connection is not self and not connection.busy():
                logger.debug(
                    "%s opened more than %d connections: closed its oldest idle one",
                    self._address,
                    self.limits.max_per_client,
                )
                connection.transport.close()
                self.clients.remove(self._address or "", connection)
                return
        message = (
            f'{{"error":"{self.limits.max_per_client} connections from your address are busy; '
            'wait for an answer before opening more","details":[]}'
        ).encode()
        self.transport.write(_REFUSED % (len(message), message))
        # Half-close and read on until the client closes: closing with its request unread
        # would reset the connection, and the client might never see the 503.
        self.transport.write_eof()
        self._refused = True
        self.clients.remove(self._address or "", self)  # a refused connection takes no place
        self.loop.call_later(self.limits.header_timeout_s, self.transport.close)


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` that applies ``limits``, with its own
    registry of client connections (one per server)."""

    class Guarded(GuardedH11Protocol):
        pass

    Guarded.limits = limits
    Guarded.clients = ClientConnections()
    return Guarded
