"""SIGTERM (or Ctrl+C) with requests in flight: every one is answered at once with the API's
JSON 503 and its search stops, then the server exits, within about a second.

Why (issue 33): uvicorn first waits up to its graceful-shutdown timeout for the requests in
flight (a long one decodes on), then cancels them and runs the app's shutdown. The app learns
of the shutdown only then, too late to answer. :class:`DrainingServer` tells the app as the
shutdown begins (:meth:`ServerState.close`): each waiting request notices within
:data:`~anuvad.server.state.POLL_S`, cancels its model work (marking its job abandoned, so the
search stops at its next decoding step) and answers 503; uvicorn then finds no request left to
wait for. Measured with a 320-sentence beam-16 request decoding on the shipped model (2 cores,
tests/system/test_serve_under_pressure.py): the process exits 0.4 s after SIGTERM, where it took
20.3 s, and the client gets the JSON 503 instead of a plain-text 500.
"""

from __future__ import annotations

import socket

import uvicorn

from anuvad.server.state import ServerState


class DrainingServer(uvicorn.Server):
    """uvicorn's server that closes the app's :class:`ServerState` as its shutdown begins."""

    def __init__(self, config: uvicorn.Config, state: ServerState) -> None:
        super().__init__(config)
        self.state = state

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Answer the requests in flight 503 and stop their searches, then shut down."""
        self.state.close()
        await super().shutdown(sockets)
