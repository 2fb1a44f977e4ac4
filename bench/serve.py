"""Serving benchmark: many concurrent clients against ``anuvad serve``, with and without batching.

    python bench/serve.py --model data/trained_models/enhi.pt            # 50 clients x 20 requests
    python bench/serve.py --model m.pt --clients 8 --requests 5 --decoding greedy   # a quick check
    python bench/serve.py --model data/trained_models/enhi.pt --engines torch,ctranslate2
    python bench/serve.py --model m.pt --engines torch,ctranslate2@1x2,ctranslate2@2x1
    python bench/serve.py --model data/trained_models/enhi.pt --attack 5   # under attack

An engine may carry ``:TYPE`` (CTranslate2's compute type, ``anuvad serve --compute-type``, e.g.
``ctranslate2:int8``) and ``@RxT``: R model replicas (``anuvad serve --replicas``, CTranslate2 only)
of T threads each (``--threads``); without it the server's defaults apply (1 replica, one thread
per core).

For each mode the server runs in its own process (``anuvad serve`` on a free 127.0.0.1 port), so
its peak memory (VmHWM) is its own and the clients do not share its interpreter. Every client
sends its requests one after another (one sentence each); all clients start together. Prints a
markdown table: errors, p50 / p99 latency, sentences per second, model calls, peak memory.

``--attack N`` measures the server under attack instead: in one server process the normal load
runs twice, first alone, then while N attackers send worst-case requests without pause
(degenerate repetitive input at the largest beam and text count with repetition blocking off,
a 20,000-character document at beam 16, many long texts at beam 16, a 2 MB body sent chunked
without a Content-Length). It prints the normal clients' errors, 5xx and lost or reordered
sentences, their p99 latency with and without attack and the ratio, what the attackers got (by
status) and the server's peak memory. Targets (issue 21): 0 5xx, 0 lost or reordered, p99 under
attack at most 3x, peak RSS at most 2 GiB.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

SENTENCES = [
    "The weather is nice today.",
    "A man is riding a bicycle down the street.",
    "Two children are playing in the garden.",
    "Where is the railway station?",
    "She is reading a book under a tree.",
    "The shop opens at nine o'clock.",
    "A woman in a red dress is walking her dog.",
    "We will eat dinner at eight.",
    "The computer screen is turned on.",
    "Birds are flying over the river.",
    "My father is a teacher in a small school.",
    "Please close the window, it is cold.",
]


@dataclass
class Result:
    engine: str
    mode: str
    requests: int
    errors: int
    p50_ms: float
    p99_ms: float
    sentences_per_s: float
    wall_s: float
    model_calls: int
    peak_mb: float


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM; Linux), in MB."""
    status = Path(f"/proc/{pid}/status")
    if not status.is_file():
        return float("nan")
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def parse_engine(spec: str) -> tuple[str, str, int, int]:
    """``torch`` / ``ctranslate2`` / ``ctranslate2:int8@2x1`` -> (engine, compute type,
    replicas, threads; 0 = the server's default)."""
    name, _, shape = spec.partition("@")
    name, _, compute_type = name.partition(":")
    if not shape:
        return name, compute_type or "default", 0, 0
    replicas, _, threads = shape.partition("x")
    return name, compute_type or "default", int(replicas), int(threads or 0)


def start_server(
    args: argparse.Namespace, batching: bool, spec: str
) -> tuple[subprocess.Popen[bytes], str]:
    engine, compute_type, replicas, threads = parse_engine(spec)
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "anuvad.cli.main",
        "serve",
        "--model",
        args.model,
        "--port",
        str(port),
        "--device",
        args.device,
        "--engine",
        engine,
        "--replicas",
        str(replicas),
        "--threads",
        str(threads or args.threads),
        "--compute-type",
        compute_type,
    ]
    if not batching:
        command.append("--no-batching")
    if args.server_cpus:  # pin the server (its clients run on the other CPUs)
        command = ["taskset", "-c", args.server_cpus, *command]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + args.start_timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode() if server.stderr else ""
            raise SystemExit(f"the server exited with {server.returncode}:\n{err}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.kill()
    raise SystemExit(f"the server did not answer /health within {args.start_timeout} s")


class Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams: the load generator.

    httpx's AsyncClient spent ~9 ms of client CPU per request here (measured: 50 clients x 20
    ``GET /health`` topped out at 114 requests/s with the client process at 100 % of a core),
    so on 2 cores the benchmark measured its own client. This writes a request and reads the
    response by its Content-Length: a fraction of a millisecond per request.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post_json(self, path: str, body: dict[str, object]) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = json.dumps(body).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        self.writer.write(head.encode() + data)
        await self.writer.drain()
        status_line, _, headers = (await self.reader.readuntil(b"\r\n\r\n")).partition(b"\r\n")
        length = 0
        for line in headers.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        return int(status_line.split()[1]), payload

    async def close(self) -> None:
        """Close the connection; the next request opens a new one."""
        writer, self.reader, self.writer = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


@dataclass
class Tally:
    """What the normal clients saw."""

    errors: int = 0  # no answer, or not 200
    server_errors: int = 0  # 5xx answers
    lost_or_reordered: int = 0  # a 200 whose sentences are not the ones sent, in order
    statuses: dict[int, int] = field(default_factory=dict)  # errors by status (0: no answer)
    answered: list[tuple[float, float, int]] = field(default_factory=list)  # (ms, sent at, n)


async def client(
    connection: Connection,
    index: int,
    args: argparse.Namespace,
    latencies: list[float],
    tally: Tally | None = None,
) -> int:
    errors = 0
    for i in range(args.requests):
        first = (index * args.requests + i) % len(SENTENCES)
        # Under --attack every third request is a two-sentence text: its sentences must come
        # back complete and in order.
        two = tally is not None and i % 3 == 2
        sent = (
            SENTENCES[first : first + 2]
            if two and first + 1 < len(SENTENCES)
            else [SENTENCES[first]]
        )
        body = {"text": " ".join(sent), "decoding": args.decoding, "beam_size": args.beam_size}
        if args.no_scores:
            body["scores"] = False
        start = time.perf_counter()
        status = 0
        try:
            status, payload = await asyncio.wait_for(
                connection.post_json("/translate", body), args.timeout
            )
            ok = status == 200 and bool(json.loads(payload)["translations"])
            if ok and tally is not None:
                (translation,) = json.loads(payload)["translations"]
                got = [s["source"] for s in translation["sentences"]]
                tally.lost_or_reordered += got != sent or translation["source"] != body["text"]
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError):
            ok = False
            await connection.close()  # the next request reconnects
        latencies.append((time.perf_counter() - start) * 1000)
        if tally is not None:
            tally.answered.append((latencies[-1], start, len(sent)))
        errors += not ok
        if tally is not None:
            tally.errors += not ok
            tally.server_errors += status >= 500
            if not ok:
                tally.statuses[status] = tally.statuses.get(status, 0) + 1
    return errors


async def load(url: str, args: argparse.Namespace) -> tuple[list[float], int, float]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connections = [Connection(host, int(port)) for _ in range(args.clients)]
    latencies: list[float] = []
    await connections[0].post_json("/translate", {"text": SENTENCES[0], "decoding": args.decoding})
    start = time.perf_counter()
    errors = await asyncio.gather(
        *(client(connections[c], c, args, latencies) for c in range(args.clients))
    )
    wall = time.perf_counter() - start
    for connection in connections:
        await connection.close()
    return latencies, sum(errors), wall


REPETITIVE = "1 2 3 4 5 6 7 8 9 10 " * 20  # ~400 characters of digits
WORST_CASES: list[tuple[str, dict[str, object]]] = [
    (
        "64 repetitive texts, beam 16, nbest 16, no blocking",
        {
            "text": [REPETITIVE] * 64,
            "beam_size": 16,
            "nbest": 16,
            "no_repeat_ngram_size": 0,
            "split_sentences": False,
        },
    ),
    (
        "a 20,000-character document, beam 16",
        {"text": (" ".join(SENTENCES) + "\n\n") * 30, "beam_size": 16},
    ),
    (
        "64 long texts, beam 16",
        {
            "text": [" ".join(random.Random(i).sample(SENTENCES, 6)) for i in range(64)],
            "beam_size": 16,
        },
    ),
]


async def chunked_oversized_body(host: str, port: int, megabytes: int = 2) -> int:
    """POST /translate a JSON body of ``megabytes`` MB sent chunked (no Content-Length); the
    answer's status (0: the server closed the connection first)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(
            f"POST /translate HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: "
            "application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b'{"text": "' + b"a" * 65_000
        for i in range(megabytes * 16):
            data = chunk if i == 0 else b"a" * 65_000
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
        writer.write(b'3\r\n"}\n\r\n0\r\n\r\n')
        await writer.drain()
    except (ConnectionError, OSError):
        pass
    try:
        line = await asyncio.wait_for(reader.readline(), 30)
        return int(line.split()[1]) if line else 0
    except (ConnectionError, OSError, asyncio.TimeoutError, IndexError, ValueError):
        return 0
    finally:
        writer.close()


async def attacker(
    host: str, port: int, index: int, until: asyncio.Event, statuses: dict[str, int]
) -> None:
    """Send worst-case requests one after another until ``until`` is set."""
    connection = Connection(host, port)
    kinds = len(WORST_CASES) + 1
    turn = index
    while not until.is_set():
        kind = turn % kinds
        turn += 1
        if kind == len(WORST_CASES):
            status = await chunked_oversized_body(host, port)
            name = "a 2 MB body sent chunked"
        else:
            name, body = WORST_CASES[kind]
            try:
                status, _ = await connection.post_json("/translate", body)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                status = 0
                await connection.close()
        statuses[f"{name}: {status or 'connection closed'}"] = (
            statuses.get(f"{name}: {status or 'connection closed'}", 0) + 1
        )
    await connection.close()


async def load_under_attack(
    url: str, args: argparse.Namespace, attackers: int
) -> tuple[list[float], Tally, float, dict[str, int]]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connections = [Connection(host, int(port)) for _ in range(args.clients)]
    latencies: list[float] = []
    tally = Tally()
    statuses: dict[str, int] = {}
    until = asyncio.Event()
    attacks = [
        asyncio.ensure_future(attacker(host, int(port), i, until, statuses))
        for i in range(attackers)
    ]
    await asyncio.sleep(2.0 if attackers else 0.0)  # the attack is under way first
    start = time.perf_counter()
    await asyncio.gather(
        *(client(connections[c], c, args, latencies, tally) for c in range(args.clients))
    )
    wall = time.perf_counter() - start
    until.set()
    await asyncio.gather(*attacks)
    for connection in connections:
        await connection.close()
    return latencies, tally, wall, statuses


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def run_attack(args: argparse.Namespace, engine: str) -> bool:
    """The normal load alone, then under attack, on one server; prints the report and says
    whether every target was met."""
    server, url = start_server(args, True, engine)
    try:
        # Warm up with the load's own shape (first calls allocate, fill caches): 2 rounds.
        asyncio.run(load(url, argparse.Namespace(**{**vars(args), "requests": 2})))
        calm, calm_tally, calm_wall, _ = asyncio.run(load_under_attack(url, args, 0))
        attacked, tally, wall, statuses = asyncio.run(load_under_attack(url, args, args.attack))
        health = httpx.get(f"{url}/health", timeout=30).status_code
        peak = peak_memory_mb(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    ratio = p99(attacked) / p99(calm)
    met = {
        "0 5xx": tally.server_errors == 0 and calm_tally.server_errors == 0,
        "0 lost or reordered": tally.lost_or_reordered == 0 and calm_tally.lost_or_reordered == 0,
        "p99 under attack <= 3x": ratio <= 3.0,
        "peak RSS <= 2 GiB": peak <= 2048,
    }
    search = "greedy" if args.decoding == "greedy" else f"beam {args.beam_size}"
    lines = [
        f"{args.clients} clients x {args.requests} requests ({search}; every third a two-sentence "
        f"text) alone, then beside {args.attack} attackers; engine {engine}, model "
        f"{Path(args.model).name}, device {args.device}",
        "",
        "| run | requests | errors | 5xx | lost or reordered | p50 ms | p99 ms | sentences/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, lat, t, w in (
        ("alone", calm, calm_tally, calm_wall),
        ("under attack", attacked, tally, wall),
    ):
        lines.append(
            f"| {name} | {len(lat)} | {t.errors} | {t.server_errors} | {t.lost_or_reordered} | "
            f"{statistics.median(lat):.0f} | {p99(lat):.0f} | {len(lat) / w:.1f} |"
        )
    failed = {"alone": calm_tally.statuses, "under attack": tally.statuses}
    began = min(at for _, at, _ in tally.answered)
    worst = [f"{ms:.0f} ms ({n} sentences, sent at {at - began:.1f} s)"
             for ms, at, n in sorted(tally.answered, reverse=True)[:5]]  # fmt: skip
    lines += [
        "",
        "normal requests failed, by status (0: no answer): "
        + "; ".join(f"{run} {dict(sorted(s.items())) or 'none'}" for run, s in failed.items()),
        "",
        "slowest normal requests under attack: " + ", ".join(worst),
        "",
        f"p99 under attack / alone: {ratio:.2f}x; server peak RSS {peak:.0f} MB; /health after: "
        f"{health}",
        "",
        "| attack request: status | count |",
        "|---|---:|",
        *(f"| {name} | {count} |" for name, count in sorted(statuses.items())),
        "",
        "targets: " + ", ".join(f"{k} {'met' if v else 'MISSED'}" for k, v in met.items()),
    ]
    print("\n".join(lines))
    return all(met.values())


def run_mode(args: argparse.Namespace, batching: bool, engine: str) -> Result:
    server, url = start_server(args, batching, engine)
    try:
        latencies, errors, wall = asyncio.run(load(url, args))
        calls = httpx.get(f"{url}/health").json()["model_calls"]
        peak = peak_memory_mb(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    ordered = sorted(latencies)
    return Result(
        engine=engine,
        mode="batched" if batching else "one call per request",
        requests=len(latencies),
        errors=errors,
        p50_ms=statistics.median(ordered),
        p99_ms=ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
        sentences_per_s=len(latencies) / wall,
        wall_s=wall,
        model_calls=calls - 1,  # minus the warm-up request
        peak_mb=peak,
    )


def markdown(results: list[Result], args: argparse.Namespace) -> str:
    search = "greedy" if args.decoding == "greedy" else f"beam {args.beam_size}"
    lines = [
        f"{args.clients} concurrent clients x {args.requests} requests (one sentence each, "
        f"{search}), model {Path(args.model).name}, device {args.device}",
        "",
        "| engine | mode | requests | errors | p50 ms | p99 ms | sentences/s | model calls "
        "| peak MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.engine} | {r.mode} | {r.requests} | {r.errors} | {r.p50_ms:.0f} | "
            f"{r.p99_ms:.0f} | {r.sentences_per_s:.1f} | {r.model_calls} | {r.peak_mb:.0f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a model file (.pt)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="requests per client")
    parser.add_argument("--decoding", choices=["greedy", "beam"], default="beam")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument(
        "--no-scores", action="store_true", help='requests send "scores": false (no quality pass)'
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--threads", type=int, default=0, help="server threads per model call (0: its default)"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="per request, seconds")
    parser.add_argument("--start-timeout", type=float, default=300.0)
    parser.add_argument(
        "--modes", default="batched,unbatched", help="which to run: batched, unbatched or both"
    )
    parser.add_argument(
        "--engines",
        default="torch",
        help="torch, ctranslate2 or both (comma-separated), each optionally @RxT (replicas x "
        "threads); ctranslate2 exports the .pt once into the user cache on its first start",
    )
    parser.add_argument(
        "--attack",
        type=int,
        default=0,
        metavar="N",
        help="measure the normal load alone and beside N clients sending worst-case requests",
    )
    parser.add_argument(
        "--server-cpus", default="", help="pin the server to these CPUs (taskset -c), e.g. 0,1"
    )
    args = parser.parse_args()
    if args.attack:
        met = [run_attack(args, engine.strip()) for engine in args.engines.split(",")]
        return 0 if all(met) else 1
    modes = [m.strip() for m in args.modes.split(",")]
    engines = [e.strip() for e in args.engines.split(",")]
    results = [
        run_mode(args, batching=mode == "batched", engine=engine)
        for engine in engines
        for mode in modes
    ]
    print(markdown(results, args))
    return 1 if any(r.errors for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
