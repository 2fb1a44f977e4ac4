"""How long a connection may stay silent or slow, and how many one client address may hold
(:mod:`anuvad.server.connections` applies them). A plain dataclass with no imports, so that the
CLI can show the defaults in ``anuvad serve --help`` without loading the server."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a connection may stay silent or slow, and how many one address may hold.

    Attributes:
        idle_timeout_s: a connection with no request in progress that sends nothing for this
            long is closed.
        header_timeout_s: a request's headers must arrive whole within this long of the
            connection opening (or of its previous response).
        max_per_client: connections one client address may hold at once (0: no cap). Behind a
            reverse proxy every client has the proxy's address: raise it or set 0 there.
    """

    idle_timeout_s: float = 5.0
    header_timeout_s: float = 10.0
    max_per_client: int = 32

    def problems(self) -> list[str]:
        """What is wrong with these limits (empty: nothing)."""
        found = []
        if self.idle_timeout_s <= 0:
            found.append(f"the idle timeout must be > 0 seconds, not {self.idle_timeout_s:g}")
        if self.header_timeout_s <= 0:
            found.append(f"the header timeout must be > 0 seconds, not {self.header_timeout_s:g}")
        if self.max_per_client < 0:
            found.append(f"connections per client must be >= 0, not {self.max_per_client}")
        return found
