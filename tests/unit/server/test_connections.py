"""The connection rules (idle and header timeouts, the silent-per-client cap, trusted proxies) on
a real uvicorn server with a tiny app (no model): silent, slow and flooding connections cannot
hold the server, and clients that send requests are never refused however many share an address
(issue 40: 50 clients on one address lost 108 of 300 requests to the first cap)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn

from anuvad.server.connection_limits import ConnectionLimits
from anuvad.server.connections import uvicorn_options

RELEASE = threading.Event()  # /slow answers once this is set


async def tiny_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/slow`` waits for RELEASE (a request in progress); ``/client`` answers the client
    address the app sees; anything else answers at once."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/slow":
        while not RELEASE.is_set():
            await asyncio.sleep(0.01)
    body = str(scope["client"][0]).encode() if scope["path"] == "/client" else b"ok"
    length = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": length})
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def serving(limits: ConnectionLimits) -> Iterator[tuple[uvicorn.Server, int]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(tiny_app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="off", **uvicorn_options(limits))  # fmt: skip
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


def response(connection: socket.socket, timeout: float = 10) -> bytes:
    """Everything the server sends on ``connection`` until it closes it."""
    connection.settimeout(timeout)
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := connection.recv(4096):
            data += chunk
    return data


def request(path: str, headers: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n".encode()


def get(port: int, path: str = "/", headers: str = "") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request(path, headers))
        return response(connection)


def wait_until(condition: Callable[[], bool], seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


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


def test_clients_sending_requests_are_never_refused_however_many_share_an_address() -> None:
    """Ten requests in progress on one address with a cap of 2: each is answered 200, and an
    eleventh connection is served too (the first cap answered it 503)."""
    limits = ConnectionLimits(idle_timeout_s=30, header_timeout_s=30, max_per_client=2)
    with serving(limits) as (server, port):
        busy: list[socket.socket] = []
        try:
            for _ in range(10):  # each in progress before the next connects
                busy.append(socket.create_connection(("127.0.0.1", port)))
                busy[-1].sendall(request("/slow"))
                wait_until(lambda: len(server.server_state.tasks) == len(busy))
            with socket.create_connection(("127.0.0.1", port)) as eleventh:
                eleventh.sendall(request("/slow"))
                wait_until(lambda: len(server.server_state.tasks) == 11)
                RELEASE.set()
                assert response(eleventh).startswith(b"HTTP/1.1 200")
            for connection in busy:
                assert response(connection).startswith(b"HTTP/1.1 200")
        finally:
            for connection in busy:
                connection.close()


def test_a_burst_of_new_connections_has_time_to_send_its_requests() -> None:
    """Twelve connections opened at once on one address (cap 3, burst cap 12 not passed) each
    send their request 0.3 s later, within ``silent_after_s``: none is closed for being silent,
    all are answered."""
    limits = ConnectionLimits(idle_timeout_s=30, header_timeout_s=30, max_per_client=3,
                              silent_after_s=1.0)  # fmt: skip
    with serving(limits) as (_, port):
        burst = [socket.create_connection(("127.0.0.1", port)) for _ in range(12)]
        try:
            time.sleep(0.3)
            for connection in burst:
                connection.sendall(request("/"))
            assert all(response(c).startswith(b"HTTP/1.1 200") for c in burst)
        finally:
            for connection in burst:
                connection.close()


def test_silent_connections_past_the_cap_are_closed_oldest_first_once_silent_long_enough() -> None:
    limits = ConnectionLimits(idle_timeout_s=30, header_timeout_s=30, max_per_client=4,
                              silent_after_s=0.3)  # fmt: skip
    with serving(limits) as (server, port):
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(10)]
        try:
            time.sleep(0.1)
            assert not closed_within(silent[0], 0.05)  # not yet: they may be a burst of clients
            wait_until(lambda: len(server.server_state.connections) <= limits.max_per_client)
            assert closed_within(silent[0], 1)  # the oldest went first
            assert not closed_within(silent[-1], 0.2)  # the newest stay
            assert get(port).startswith(b"HTTP/1.1 200")
        finally:
            for connection in silent:
                connection.close()


def test_a_flood_of_silent_connections_is_cut_to_the_burst_cap_at_once() -> None:
    """However long ``silent_after_s``, one address never holds more than ``BURST_FACTOR``
    times its cap of silent connections: a for loop of sockets cannot fill the server."""
    limits = ConnectionLimits(idle_timeout_s=60, header_timeout_s=60, max_per_client=2,
                              silent_after_s=60)  # fmt: skip
    with serving(limits) as (server, port):
        flood = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        try:
            wait_until(lambda: len(server.server_state.connections) <= limits.burst_cap)
            assert closed_within(flood[0], 1) and not closed_within(flood[-1], 0.1)
            assert get(port).startswith(b"HTTP/1.1 200")
        finally:
            for connection in flood:
                connection.close()


def test_x_forwarded_for_names_the_client_only_from_a_trusted_proxy() -> None:
    forwarded = "X-Forwarded-For: 203.0.113.7\r\n"
    with serving(ConnectionLimits()) as (_, port):  # trusting nobody (the default)
        assert get(port, "/client", forwarded).endswith(b"\r\n\r\n127.0.0.1")
    with serving(ConnectionLimits(trusted_proxies=("127.0.0.0/8",))) as (_, port):
        assert get(port, "/client", forwarded).endswith(b"\r\n\r\n203.0.113.7")
        assert get(port, "/client").endswith(b"\r\n\r\n127.0.0.1")  # no header: the peer


def test_a_trusted_proxy_is_not_capped() -> None:
    limits = ConnectionLimits(idle_timeout_s=30, header_timeout_s=30, max_per_client=1,
                              silent_after_s=0.05, trusted_proxies=("127.0.0.1",))  # fmt: skip
    with serving(limits) as (server, port):
        pooled = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
        try:
            time.sleep(0.3)
            assert not any(closed_within(c, 0.01) for c in pooled)
            assert len(server.server_state.connections) == 6
        finally:
            for connection in pooled:
                connection.close()


@pytest.mark.parametrize(
    ("limits", "problem"),
    [
        (ConnectionLimits(idle_timeout_s=0), "idle timeout"),
        (ConnectionLimits(header_timeout_s=-1), "header timeout"),
        (ConnectionLimits(max_per_client=-1), "per client"),
        (ConnectionLimits(silent_after_s=0), "silent-after"),
        (ConnectionLimits(trusted_proxies=("proxy.example",)), "'proxy.example'"),
    ],
)
def test_limits_out_of_range_are_named(limits: ConnectionLimits, problem: str) -> None:
    assert any(problem in p for p in limits.problems())
    assert ConnectionLimits(trusted_proxies=("10.0.0.0/8", "::1")).problems() == []


def test_anuvad_serve_reads_x_forwarded_for_only_from_the_proxies_it_is_given() -> None:
    """uvicorn's own default trusts X-Forwarded-For from any process on the loopback;
    ``anuvad serve`` takes it only with --forwarded-allow-ips."""
    from anuvad.cli.main import build_parser
    from anuvad.cli.serve import server_config

    plain = server_config(None, "127.0.0.1", 8000)
    assert plain.proxy_headers is False
    args = build_parser().parse_args(["serve", "--forwarded-allow-ips", "10.0.0.0/8", "::1"])
    limits = ConnectionLimits(trusted_proxies=tuple(args.forwarded_allow_ips))
    proxied = server_config(None, "127.0.0.1", 8000, connections=limits)
    assert proxied.proxy_headers is True
    assert list(proxied.forwarded_allow_ips) == ["10.0.0.0/8", "::1"]
