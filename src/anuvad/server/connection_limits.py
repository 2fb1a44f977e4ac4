"""How long a connection may stay silent or slow, how many silent ones one client address may
hold, and which proxies are trusted to name the client (:mod:`anuvad.server.connections` applies
them). A plain dataclass with no imports beyond the standard library, so that the CLI can show
the defaults in ``anuvad serve --help`` without loading the server."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

# With this many silent connections (per cap) an address loses its oldest at once, however new:
# a burst of fresh connections may outgrow the cap for ``silent_after_s``, a flood may not.
BURST_FACTOR = 4


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a connection may stay silent or slow, and how many silent ones an address holds.

    Attributes:
        idle_timeout_s: a connection with no request in progress that sends nothing for this
            long is closed.
        header_timeout_s: a request's headers must arrive whole within this long of the
            connection opening (or of its previous response).
        max_per_client: silent connections one client address may hold at once (0: no cap). A
            connection is silent while it has sent no whole request for ``silent_after_s``
            since it opened; a connection that sends requests never counts, so any number of
            clients behind one proxy or NAT are served (issue 40).
        silent_after_s: how long a new connection has to send its first request's headers
            before it counts as silent.
        trusted_proxies: addresses or networks (``10.0.0.0/8``) of reverse proxies whose
            ``X-Forwarded-For`` header names the real client; empty (the default): the header
            is ignored and the peer's address is the client's.
    """

    idle_timeout_s: float = 5.0
    header_timeout_s: float = 10.0
    max_per_client: int = 32
    silent_after_s: float = 0.5
    trusted_proxies: tuple[str, ...] = ()

    @property
    def burst_cap(self) -> int:
        """Silent connections past which an address loses its oldest however new it is."""
        return BURST_FACTOR * self.max_per_client

    def problems(self) -> list[str]:
        """What is wrong with these limits, every problem (empty: nothing)."""
        found = []
        if self.idle_timeout_s <= 0:
            found.append(f"the idle timeout must be > 0 seconds, not {self.idle_timeout_s:g}")
        if self.header_timeout_s <= 0:
            found.append(f"the header timeout must be > 0 seconds, not {self.header_timeout_s:g}")
        if self.max_per_client < 0:
            found.append(f"connections per client must be >= 0, not {self.max_per_client}")
        if self.silent_after_s <= 0:
            found.append(f"silent-after must be > 0 seconds, not {self.silent_after_s:g}")
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                found.append(
                    f"trusted proxy {proxy!r} is not an IP address or network (e.g. 127.0.0.1, "
                    "10.0.0.0/8)"
                )
        return found
