"""``anuvad serve`` as a real process on the shipped English→Hindi model, under the two pressures
of issue 33: a SIGTERM while a long request decodes, and 600 silent connections from one address.

- SIGTERM: the request in flight is answered with the API's JSON 503 and the process exits
  within seconds (the goal is 3 s; the assertion allows 10 on a loaded machine). On 56f2af0 it
  took 20 s, decoding at full CPU, and the client got uvicorn's plain-text 500.
- 600 silent connections: a normal request from the same address is still answered 200 at once
  (on 56f2af0: 503 for as long as they stayed open), and a connection that trickles its
  headers is closed after ``--header-timeout`` however slowly it keeps sending.

The measured times are printed (``pytest -s``). Measured on 2 shared cores: exit 0.27-0.37 s
after SIGTERM (56f2af0: 20.3 s); the request among 600 silent connections answered in 0.35-0.65 s
(56f2af0: 503); the trickling connection closed 3.00 s after it opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import EN_HI_PAIRS

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "trained_models"

pytestmark = pytest.mark.slow


def shipped_enhi() -> Path:
    from anuvad.cli.serve import shipped_model
    from anuvad.errors import CheckpointError

    try:
        return shipped_model(SHIPPED, "enhi")
    except CheckpointError as exc:
        pytest.skip(str(exc))


def http(port: int, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
    """A request on a new connection: (status, decoded JSON body or text)."""
    data = b"" if body is None else json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request_bytes(method, path, data))
        return read_response(connection)


def request_bytes(method: str, path: str, data: bytes) -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode() + data


def read_response(connection: socket.socket) -> tuple[int, Any]:
    """Status and body (JSON when it parses) of the response, read until the server closes."""
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode("utf-8", "replace")


@contextlib.contextmanager
def anuvad_serve(*options: str) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``anuvad serve`` on the shipped model and a free loopback port, once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    command = [sys.executable, "-m", "anuvad.cli.main", "serve", "--model", str(shipped_enhi()),
               "--port", str(port), "--request-timeout", "0", *options]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "anuvad serve did not start"
            with contextlib.suppress(OSError):
                if http(port, "GET", "/health", timeout=2)[0] == 200:
                    break
            time.sleep(0.2)
        yield process, port
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def model_calls(port: int) -> int:
    return int(http(port, "GET", "/health")[1]["model_calls"])


def test_sigterm_answers_a_long_request_503_and_the_server_exits_within_seconds() -> None:
    # 320 sentences at beam 16: half a minute of decoding on 2 cores (longer than uvicorn's
    # 10 s grace period, as a long document is).
    sentences = [
        f"At {i} o'clock, {en[0].lower()}{en[1:]}" for i, (en, _) in enumerate(EN_HI_PAIRS)
    ]
    texts = [" ".join((sentences * 8)[5 * i : 5 * i + 5]) for i in range(64)]
    body = {"text": texts, "decoding": "beam", "beam_size": 16}
    answer: dict[str, Any] = {}
    with anuvad_serve() as (process, port):
        calls = model_calls(port)
        connection = socket.create_connection(("127.0.0.1", port), timeout=60)

        def read() -> None:
            answer["response"] = read_response(connection)
            answer["at"] = time.monotonic()

        connection.sendall(request_bytes("POST", "/translate", json.dumps(body).encode()))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while model_calls(port) == calls:  # the request reached the model: it is decoding
            assert time.monotonic() < deadline and "response" not in answer, answer
            time.sleep(0.05)
        time.sleep(0.5)
        assert "response" not in answer, "the request ended before the SIGTERM: make it longer"
        sent = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        process.wait(60)
        exited = time.monotonic() - sent
        reader.join(10)
        connection.close()
    print(f"\nSIGTERM with a 320-sentence beam-16 request decoding: exit in {exited:.2f} s")
    status, error = answer["response"]
    assert status == 503 and "shutting down" in error["error"], (status, error)
    assert answer["at"] - sent < 3  # answered, not dropped
    assert exited < 10, exited  # the goal is 3 s; generous for a loaded machine


def test_600_silent_connections_leave_room_and_a_slow_header_is_cut_off() -> None:
    header_timeout = 3.0
    with anuvad_serve("--header-timeout", str(header_timeout)) as (_, port):
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(600)]
        try:
            began = time.monotonic()
            status, body = http(port, "POST", "/translate", {"text": "The sky is blue.",
                                                             "decoding": "greedy"})  # fmt: skip
            answered = time.monotonic() - began
            assert status == 200, body
            assert http(port, "GET", "/health")[0] == 200
            time.sleep(0.5)
            held = 0  # of the 600, still open on the server's side (it keeps its cap at most)
            for connection in silent:
                connection.setblocking(False)
                try:
                    connection.recv(1)  # b"": closed by the server
                except BlockingIOError:  # open, nothing to read
                    held += 1
                except ConnectionResetError:
                    pass
        finally:
            for connection in silent:
                connection.close()
        print(f"\n600 silent connections: a request answered 200 in {answered:.2f} s; "
              f"the server still held {held} of them")  # fmt: skip
        assert answered < 10 and held <= 32

        slow = socket.create_connection(("127.0.0.1", port))
        began = time.monotonic()
        closed_after = None
        for byte in b"POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
            try:
                slow.sendall(bytes([byte]))  # one byte every 0.25 s: never silent
                slow.settimeout(0.25)
                if slow.recv(1) == b"":
                    closed_after = time.monotonic() - began
                    break
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed_after = time.monotonic() - began
                break
        slow.close()
        print(f"a connection trickling its headers was closed after {closed_after} s")
        assert closed_after is not None and header_timeout - 0.5 < closed_after < header_timeout + 3
