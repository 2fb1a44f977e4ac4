"""Connections that cannot hold the server: idle and slow-header connections are closed after a
timeout, and one client address holds at most a few *silent* connections at once.

Why (issue 33): uvicorn starts no timer on a new connection and none while request headers
trickle in, and its ``limit_concurrency`` counts open connections, so ~512 silent or slow
sockets (one ``for`` loop) made every other client's request a 503 for as long as they stayed
open; API keys did not help, as they are checked only once a request arrives.

Why only silent ones count (issue 40): the first cap counted every connection of an address and
refused a new one with a 503 when all were busy, but every client behind a reverse proxy or a
NAT shares one address: 50 clients of ``bench/serve.py`` on loopback lost 108 of 300 requests.
A connection that sends requests is a client, however many share its address; only a connection
that sends nothing can be a flood.

:class:`GuardedH11Protocol` is uvicorn's own HTTP/1.1 protocol (h11) with three rules:

- **idle**: a connection that sends nothing for ``idle_timeout_s`` after it opens is closed
  (after a response, uvicorn's keep-alive timeout, set to the same value, does the same);
- **headers**: a request's headers must be complete within ``header_timeout_s`` of the
  connection opening or of its previous response, however slowly bytes keep coming;
- **silent per client**: a connection is *silent* until its first request's headers are
  complete. An address may hold ``max_per_client`` silent connections; past that its oldest
  silent ones are closed once they have been open ``silent_after_s`` (a burst of new clients has
  that long to send their requests), and at once past ``BURST_FACTOR`` times the cap (a flood
  cannot fill the server meanwhile). A connection that has sent a request never counts and is
  never closed for its address, and no connection is refused. Trusted proxies
  (``trusted_proxies``) are not capped: one stands for many clients.

:func:`uvicorn_options` gives the ``uvicorn.Config`` settings that apply a
:class:`ConnectionLimits` (the protocol class, the keep-alive timeout, and ``X-Forwarded-For``
read only from the trusted proxies).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from anuvad.server.connection_limits import ConnectionLimits

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class SilentConnections:
    """The silent connections (no whole request yet) of each client address, oldest first (one
    registry per server)."""

    def __init__(self) -> None:
        self._by_client: dict[str, OrderedDict[GuardedH11Protocol, None]] = {}
        self._checks: set[str] = set()  # addresses with a later check scheduled

    def add(self, client: str, connection: GuardedH11Protocol) -> None:
        """Count ``connection`` (new) as silent for ``client``."""
        self._by_client.setdefault(client, OrderedDict())[connection] = None

    def remove(self, client: str, connection: GuardedH11Protocol) -> None:
        """Stop counting ``connection`` (it spoke, or closed); no error if it was not counted."""
        connections = self._by_client.get(client)
        if connections is not None:
            connections.pop(connection, None)
            if not connections:
                del self._by_client[client]

    def of(self, client: str) -> list[GuardedH11Protocol]:
        """``client``'s silent connections, oldest first."""
        return list(self._by_client.get(client, ()))

    def count(self, client: str) -> int:
        """How many silent connections ``client`` holds."""
        return len(self._by_client.get(client, ()))

    def schedule_check(self, client: str) -> bool:
        """Note that a later check of ``client`` is scheduled; False: one already is."""
        if client in self._checks:
            return False
        self._checks.add(client)
        return True

    def checked(self, client: str) -> None:
        """The scheduled check of ``client`` ran."""
        self._checks.discard(client)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the idle, header and silent-per-client rules of the module
    docstring. Subclasses made by :func:`guarded_protocol` set the class attributes."""

    limits = ConnectionLimits()
    clients = SilentConnections()
    trusted: tuple[Network, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None
        self._opened = 0.0  # loop time the connection opened
        self._silent = False  # counted among its address's silent connections
        self._idle_timer: asyncio.TimerHandle | None = None
        self._header_timer: asyncio.TimerHandle | None = None
        self._waiting_for: object = None  # the cycle a header deadline was set after

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._opened = self.loop.time()
        self._idle_timer = self.loop.call_later(self.limits.idle_timeout_s, self._idle_expired)
        self._await_headers()
        self._address = self.client[0] if self.client else None
        if self._address is None or not self.limits.max_per_client or self._is_trusted():
            return
        self.clients.add(self._address, self)
        self._silent = True
        self._make_room(self._address)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():  # what follows is not for the app
            return
        if self._idle_timer is not None:  # the client spoke: no longer idle
            self._idle_timer.cancel()
            self._idle_timer = None
        super().data_received(data)
        if self._silent and self.conn.their_state is not h11.IDLE:
            # Its first request's headers are complete: a client, whoever shares its address.
            self._stop_counting()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._idle_timer, self._header_timer):
            if timer is not None:
                timer.cancel()
        self._stop_counting()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()  # the next request's headers have the same time

    # -- the rules ----------------------------------------------------------------------------

    def busy(self) -> bool:
        """Whether a request is in progress (its headers arrived, its response is not done)."""
        return self.cycle is not None and not self.cycle.response_complete

    def silent_for(self) -> float | None:
        """Seconds this connection has been open without a whole request (None: it sent one)."""
        return self.loop.time() - self._opened if self._silent else None

    def _is_trusted(self) -> bool:
        if not self.trusted or self._address is None:
            return False
        try:
            address = ipaddress.ip_address(self._address)
        except ValueError:
            return False
        return any(address in network for network in self.trusted)

    def _stop_counting(self) -> None:
        if self._silent and self._address is not None:
            self.clients.remove(self._address, self)
        self._silent = False

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
        self._stop_counting()
        if not self.transport.is_closing():
            # debug, not info: a flood of silent sockets would flood the log too
            logger.debug(
                "closed a connection from %s that %s in %g s", self._address, what, seconds
            )
            self.transport.close()

    def _make_room(self, address: str) -> None:
        """Close ``address``'s oldest silent connections while it holds more than its cap:
        those silent for ``silent_after_s``, or any past the burst cap; with only newer ones
        over the cap, look again when the oldest has had its time."""
        limits = self.limits
        silent = self.clients.of(address)
        excess = len(silent) - limits.max_per_client
        for connection in silent[: max(0, excess)]:
            waited = connection.silent_for()
            if waited is None:  # spoke meanwhile (not counted any more)
                continue
            if waited < limits.silent_after_s and len(silent) <= limits.burst_cap:
                if self.clients.schedule_check(address):
                    self.loop.call_later(limits.silent_after_s - waited, self._check, address)
                return
            connection._close(
                f"was one of more than {limits.max_per_client} silent connections of its address "
                "and sent nothing",
                waited,
            )
            silent.remove(connection)

    def _check(self, address: str) -> None:
        self.clients.checked(address)
        self._make_room(address)


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` that applies ``limits``, with its own
    registry of silent connections (one per server)."""

    class Guarded(GuardedH11Protocol):
        pass

    Guarded.limits = limits
    Guarded.clients = SilentConnections()
    Guarded.trusted = tuple(ipaddress.ip_network(p, strict=False) for p in limits.trusted_proxies)
    return Guarded


def uvicorn_options(limits: ConnectionLimits) -> dict[str, Any]:
    """The ``uvicorn.Config`` keyword arguments that apply ``limits``: the guarded protocol,
    the keep-alive timeout (idle after a response as before one; uvicorn takes whole seconds),
    and ``X-Forwarded-For`` read only from ``limits.trusted_proxies`` (uvicorn's own default
    trusts any process on the loopback, which anyone on the machine can be)."""
    return {
        "http": guarded_protocol(limits),
        "timeout_keep_alive": math.ceil(limits.idle_timeout_s),
        "proxy_headers": bool(limits.trusted_proxies),
        "forwarded_allow_ips": list(limits.trusted_proxies) or None,
    }
