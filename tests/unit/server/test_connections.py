"""The connection rules (idle and header timeouts, the per-client cap) on a real uvicorn server
with a tiny app (no model): silent, slow and crowding connections cannot hold the server."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from anuvad.server.connection_limits import ConnectionLimits
from anuvad.server.connections import guarded_protocol

RELEASE = threading.Event()  # /slow answers once this is set


async def tiny_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/slow`` waits for RELEASE (a request in progress); anything else answers at once."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/slow":
        while not RELEASE.is_set():
            await asyncio.sleep(0.01)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


@contextlib.contextmanager
def serving(limits: ConnectionLimits) -> Iterator[tuple[uvicorn.Server, int]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        tiny_app, host="127.0.0.1", port=port, log_level="warning", lifespan="off",
        http=guarded_protocol(limits), timeout_keep_alive=1,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield server, port
    finally:
        RELEASE.set()
        server.should_exit = True
        thread.join(10)
        RELEASE.clear()


def closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``connection`` within ``seconds`` (whatever it sent first)."""
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def get(port: int, path: str = "/", timeout: float = 5) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := connection.recv(4096):
            data += chunk
    return data


def test_a_silent_connection_is_closed_after_the_idle_timeout() -> None:
    with serving(ConnectionLimits(idle_timeout_s=0.3, header_timeout_s=5)) as (_, port):
        began = time.monotonic()
        with socket.create_connection(("127.0.0.1", port)) as silent:
            assert closed_within(silent, 3)
        assert 0.25 < time.monotonic() - began < 2


def test_a_slow_header_connection_is_closed_after_the_header_timeout_however_it_trickles() -> None:
    with serving(ConnectionLimits(idle_timeout_s=0.2, header_timeout_s=0.8)) as (_, port):
        began = time.monotonic()
        with socket.create_connection(("127.0.0.1", port)) as slow:
            closed = False
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
                try:
                    slow.sendall(bytes([byte]))  # a byte every 50 ms: never idle for 0.2 s
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                if closed_within(slow, 0.05):
                    closed = True
                    break
            assert closed
        assert 0.7 < time.monotonic() - began < 3
        assert get(port).startswith(b"HTTP/1.1 200")  # a whole request is still served


def test_one_address_keeps_at_most_its_cap_and_its_new_request_is_served() -> None:
    limits = ConnectionLimits(idle_timeout_s=30, header_timeout_s=30, max_per_client=4)
    with serving(limits) as (server, port):
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        try:
            assert get(port).startswith(b"HTTP/1.1 200")  # evicts the oldest idle one
            deadline = time.monotonic() + 5
            while len(server.server_state.connections) > limits.max_per_client:
                assert time.monotonic() < deadline, len(server.server_state.connections)
                time.sleep(0.01)
            assert closed_within(silent[0], 1)  # the oldest went first
            assert not closed_within(silent[-1], 0.2)  # the newest stay
        finally:
            for connection in silent:
                connection.close()


def test_busy_connections_are_never_evicted_a_new_one_is_refused_with_503() -> None:
    limits = ConnectionLimits(idle_timeout_s=30, header_timeout_s=30, max_per_client=2)
    with serving(limits) as (server, port):
        busy = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        try:
            for connection in busy:
                connection.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            deadline = time.monotonic() + 5
            while len(server.server_state.tasks) < 2:  # both requests are in progress
                assert time.monotonic() < deadline
                time.sleep(0.01)
            refused = get(port)
            assert refused.startswith(b"HTTP/1.1 503") and b"connections from your address" in (
                refused
            )
            RELEASE.set()
            for connection in busy:  # the requests in progress were served
                connection.settimeout(5)
                assert connection.recv(4096).startswith(b"HTTP/1.1 200")
        finally:
            for connection in busy:
                connection.close()


@pytest.mark.parametrize(
    ("limits", "problem"),
    [
        (ConnectionLimits(idle_timeout_s=0), "idle timeout"),
        (ConnectionLimits(header_timeout_s=-1), "header timeout"),
        (ConnectionLimits(max_per_client=-1), "per client"),
    ],
)
def test_limits_out_of_range_are_named(limits: ConnectionLimits, problem: str) -> None:
    assert any(problem in p for p in limits.problems())
    assert ConnectionLimits().problems() == []
