"""``anuvad serve``: the HTTP API and web page for one or more model files (uvicorn + FastAPI)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from anuvad.cli.options import add_engine_options, add_glossary_option, read_glossary
from anuvad.server.connection_limits import ConnectionLimits

DEFAULT_HOST = "127.0.0.1"  # loopback only unless the user asks for more
DEFAULT_PORT = 8000


def shipped_folder() -> Path:
    """Where the shipped models are: ``$ANUVAD_MODELS`` when set, else ``data/trained_models``
    of the current folder when there is one, else that of the repository this anuvad was
    installed from (``pip install -e .``: ``anuvad translate`` works from any folder)."""
    given = os.environ.get("ANUVAD_MODELS")
    if given:
        return Path(given)
    here = Path("data/trained_models")
    beside = Path(__file__).resolve().parents[3] / "data" / "trained_models"
    return beside if not here.is_dir() and beside.is_dir() else here


SHIPPED_MODELS = shipped_folder()


def shipped_model(folder: str | Path = SHIPPED_MODELS, pair: str = "enhi") -> Path:
    """The newest model file for ``pair`` shipped in ``folder``.

    Release files are named ``<pair>_d<D>_L<layers>_V<vocab>_<timestamp>.pt`` (``anuvad
    export``); the newest timestamp of the pair wins.

    Args:
        folder: the release folder.
        pair: source and target language codes run together, e.g. "enhi" or "hien".

    Raises:
        CheckpointError: the folder holds no model file for ``pair``.
    """
    from anuvad.errors import CheckpointError

    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(
            f"there is no folder {folder}/ (from {Path.cwd()}): the shipped models are in "
            "data/trained_models/ of the anuvad repository; run anuvad there, set "
            "ANUVAD_MODELS to that folder, or pass a model file with --model PATH"
        )
    models = sorted(
        folder.glob(f"{pair}_*.pt"), key=lambda path: (path.name.rsplit("_", 1)[-1], path.name)
    )
    if not models:
        others = sorted(path.name for path in folder.glob("*.pt"))
        raise CheckpointError(
            f"no {pair} model file ({pair}_*.pt) in {folder}/"
            + (f" (it holds {', '.join(others)})" if others else "")
            + ": pass a model file with --model PATH or a pair it holds by name (anuvad "
            "translate --model hien, anuvad serve --pair hien), or train one (anuvad train "
            "--config configs/enhi_d256_L3.yaml) and release it with anuvad export "
            "runs/enhi_d256_L3/model.pt --out data/trained_models/"
        )
    return models[-1]


def shipped_models(folder: str | Path = SHIPPED_MODELS) -> list[Path]:
    """The newest shipped model of every pair in ``folder``: English→Hindi first, then the
    other pairs by name (what ``anuvad serve`` and ``make demo`` serve by default).

    Raises:
        CheckpointError: the folder holds no English→Hindi model file.
    """
    pairs = sorted({path.name.split("_", 1)[0] for path in Path(folder).glob("*_*.pt")})
    ordered = ["enhi", *(pair for pair in pairs if pair != "enhi")]
    return [shipped_model(folder, pair) for pair in ordered]


# SIGTERM / Ctrl+C: the requests in flight are answered 503 at once and their searches stop
# (anuvad.server.shutdown); uvicorn's grace period only bounds what that cannot stop. Beyond
# LIMIT_CONCURRENCY open connections and tasks new requests get 503: the connection rules of
# anuvad.server.connections keep silent, slow and crowding clients from filling that.
SHUTDOWN_GRACE_S = 10
LIMIT_CONCURRENCY = 512
CONNECTIONS = ConnectionLimits()  # the defaults of --idle-timeout, --header-timeout, ...


def server_config(
    app: Any,
    host: str,
    port: int,
    log_level: str = "info",
    connections: ConnectionLimits = CONNECTIONS,
) -> Any:
    """The uvicorn settings ``anuvad serve`` runs ``app`` with (a ``uvicorn.Config``): HTTP/1.1
    with ``connections``' timeouts, per-client cap on silent connections, and
    ``X-Forwarded-For`` read only from its trusted proxies."""
    import uvicorn

    from anuvad.server.connections import uvicorn_options

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        limit_concurrency=LIMIT_CONCURRENCY,
        **uvicorn_options(connections),
    )


def check_model_paths(models: Sequence[str | Path], engine: str) -> None:
    """Refuse the model paths that cannot be served before any model loads, all at once.

    A folder is a model only for the ctranslate2 engine (an exported folder); given to the
    torch engine it is named as a folder, not reported as missing (issue 33).

    Raises:
        CheckpointError: a path does not exist, or is a folder for the torch engine.
    """
    from anuvad.errors import CheckpointError

    problems = []
    for model in models:
        path = Path(model)
        if path.is_dir() and engine != "ctranslate2":
            inside = sorted(p.name for p in path.glob("*.pt"))
            holds = f" (it holds {', '.join(inside[:3])}{', ...' * (len(inside) > 3)})"
            problems.append(
                f"{path} is a folder, not a model file (.pt){holds if inside else ''}; give "
                "--model a .pt file, or serve a folder written by anuvad export --format "
                "ctranslate2 with --engine ctranslate2"
            )
        elif not path.exists():
            problems.append(f"model file {path} does not exist")
    if problems:
        raise CheckpointError("; ".join(problems))


def serve(
    models: Sequence[str | Path],
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    device: str = "auto",
    engine: str = "torch",
    batching: bool = True,
    max_wait_ms: float = 5.0,
    threads: int = 0,
    replicas: int = 0,
    compute_type: str = "default",
    request_timeout_s: float | None = 60.0,
    api_key_file: Path | None = None,
    glossary_file: Path | None = None,
    connections: ConnectionLimits = CONNECTIONS,
    log_level: str = "info",
    web: Sequence[Path] = (),
) -> None:
    """Load ``models`` with ``engine`` ("torch" or "ctranslate2", see
    :mod:`anuvad.inference.engine`) and serve them until interrupted (prints the address first); the
    first is the default. ``threads``, ``replicas`` and ``compute_type``: see
    :func:`anuvad.inference.engine.load_engine`; ``replicas`` 0 chooses them with the threads
    (:func:`anuvad.inference.engine.server_layout`).

    ``api_key_file``: bearer keys the API asks for (:func:`anuvad.server.auth.load_api_keys`).
    ``glossary_file``: terms the first model's translations must use (merged with requests').
    ``connections``: the idle and header timeouts and the per-client connection cap
    (:mod:`anuvad.server.connections`).
    ``web``: web export folders, each served under ``/web/<model id>/`` beside the model it was
    exported from, for the page's "Translate in this browser" (:mod:`anuvad.server.routes.web`).

    Raises:
        CheckpointError: a model file is missing or unreadable, or a folder (torch engine); a
            ``web`` folder is not a web export or matches no served model.
        ConfigError: the API key file is unreadable or holds a bad key (file and line named),
            or ``connections`` is out of range.
    """
    import torch

    from anuvad.errors import ConfigError
    from anuvad.inference.engine import load_engine, server_layout
    from anuvad.inference.pairs import pairs_of
    from anuvad.server.app import create_app
    from anuvad.server.auth import load_api_keys
    from anuvad.server.shutdown import DrainingServer
    from anuvad.server.state import app_state
    from anuvad.web.served import read_export

    # Everything that can be checked without the models first: loading them takes seconds.
    api_keys = load_api_keys(api_key_file) if api_key_file is not None else None
    glossary = read_glossary(glossary_file)
    if connections.problems():
        raise ConfigError("; ".join(connections.problems()))
    check_model_paths(models, engine)
    for folder in web:
        read_export(folder)  # matched to the models once they are loaded (create_app)
    threads, replicas = server_layout(engine, device, threads, replicas)
    loaded = [
        load_engine(
            model,
            engine=engine,
            device=device,
            threads=threads,
            replicas=replicas,
            compute_type=compute_type,
        )
        for model in models
    ]
    # A multilingual model file serves every pair it was imported for, each as a model.
    served = [(model, one) for model, e in zip(models, loaded, strict=True) for one in pairs_of(e)]
    translators = [one for _, one in served]
    # Bound to the IPv4 loopback (the default), the server answers its own names only: a web
    # page elsewhere cannot reach it through DNS rebinding.
    loopback = host in ("127.0.0.1", "localhost")
    app = create_app(
        translators,
        batching=batching,
        max_wait_ms=max_wait_ms,
        request_timeout_s=request_timeout_s,
        allowed_hosts=["127.0.0.1", "localhost"] if loopback else None,
        api_keys=api_keys,
        glossary=glossary,
        web=web,
    )
    shown = f"[{host}]" if ":" in host else host
    lines = []
    for model, translator in served:
        config = translator.model_file.config
        lines.append(
            f"anuvad: serving {config.name} ({config.data.src_lang} -> {config.data.tgt_lang}) "
            f"from {model} on {translator.device} ({engine}"
            f"{', ' + compute_type if compute_type != 'default' else ''})"
        )
    print(
        "\n".join(lines) + f"\n"
        f"  web page: http://{shown}:{port}/\n"
        f"  API docs: http://{shown}:{port}/docs\n"
        + "".join(f"  in the browser: {m.id} from /web/{m.id}/\n" for m in served_web(app))
        + f"  batching: {'on' if batching else 'off'}, {translators[0].parallel_calls} model "
        f"call(s) at once per model, {threads or torch.get_num_threads()} thread(s) each; stop "
        f"with Ctrl+C",
        flush=True,
    )
    config = server_config(app, host, port, log_level, connections)
    DrainingServer(config, app_state(app)).run()


def served_web(app: Any) -> list[Any]:
    """The served models of ``app`` with a web export."""
    from anuvad.server.state import app_state

    return [m.info for m in app_state(app).models.values() if m.info.web is not None]


def cmd_serve(args: argparse.Namespace) -> int:
    if args.model:
        models: list[str | Path] = list(args.model)
    elif args.pair:
        models = [shipped_model(pair=pair) for pair in args.pair]
    else:
        models = list(shipped_models())
    serve(
        models,
        host=args.host,
        port=args.port,
        device=args.device,
        engine=args.engine,
        batching=not args.no_batching,
        max_wait_ms=args.max_wait_ms,
        threads=args.threads,
        replicas=args.replicas,
        compute_type=args.compute_type,
        request_timeout_s=args.request_timeout or None,
        api_key_file=args.api_key_file,
        glossary_file=args.glossary,
        connections=ConnectionLimits(
            idle_timeout_s=args.idle_timeout,
            header_timeout_s=args.header_timeout,
            max_per_client=args.max_connections_per_client,
            trusted_proxies=tuple(args.forwarded_allow_ips),
        ),
        log_level="debug" if args.verbose else "info",
        web=args.web or (),
    )
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad serve`` to the CLI."""
    p = add("serve", "Serve a model over HTTP: the translation API, its docs and a web page.")
    p.add_argument(
        "--model",
        action="append",
        help=f"a model file (.pt); repeat to serve several (the first is the default); "
        f"default: the newest shipped model of every pair in {SHIPPED_MODELS}/, "
        f"English->Hindi first",
    )
    p.add_argument(
        "--pair",
        action="append",
        help=f"without --model: serve the newest shipped model of this pair from "
        f"{SHIPPED_MODELS}/ (enhi: English->Hindi; hien: Hindi->English); repeatable",
    )
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    add_engine_options(p)  # --device, --engine, --compute-type
    p.add_argument(
        "--no-batching", action="store_true", help="one model call per request (no micro-batching)"
    )
    p.add_argument(
        "--max-wait-ms",
        type=float,
        default=5.0,
        help="how long a request waits for others to batch with (default 5)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads per model call (default 0: one per core this process may use)",
    )
    p.add_argument(
        "--replicas",
        type=int,
        default=0,
        help="ctranslate2 only: model replicas decoding batches in parallel, each with --threads "
        "threads (default 0: on a CPU with --threads unset, one 1-thread replica per core; "
        "else 1)",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time a translation request may take, queue included: past it the answer is 504 "
        "and its search stops at the next decoding step (ctranslate2: between batches; "
        "0 = no limit; default 60)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=CONNECTIONS.idle_timeout_s,
        metavar="SECONDS",
        help="close a connection that sends nothing for this long, new or between requests "
        f"(default {CONNECTIONS.idle_timeout_s:g})",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=CONNECTIONS.header_timeout_s,
        metavar="SECONDS",
        help="close a connection whose request headers are not complete this long after it "
        "opened or after its previous answer, however slowly bytes keep coming (default "
        f"{CONNECTIONS.header_timeout_s:g})",
    )
    p.add_argument(
        "--max-connections-per-client",
        type=int,
        default=CONNECTIONS.max_per_client,
        metavar="N",
        help="silent connections (no whole request yet) one client address may hold; past it "
        "the oldest silent one is closed, so one address cannot fill the server with idle "
        "sockets; a connection that sends requests is never refused (0 = no cap; default "
        f"{CONNECTIONS.max_per_client})",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        nargs="+",
        default=[],
        metavar="ADDRESS",
        help="reverse proxies (addresses or networks, e.g. 127.0.0.1 10.0.0.0/8) whose "
        "X-Forwarded-For names the real client: the per-address cap then counts clients, not "
        "the proxy (default: none; the header is ignored)",
    )
    add_glossary_option(p)
    p.add_argument(
        "--web",
        action="append",
        type=Path,
        metavar="DIR",
        help="a web export of a served model (anuvad export MODEL --format web --out DIR): "
        "served read-only under /web/<model id>/, and the page offers 'Translate in this "
        "browser' for that model; repeatable",
    )
    p.add_argument(
        "--api-key-file",
        type=Path,
        metavar="FILE",
        help="API keys, one per line: the API then needs 'Authorization: Bearer <key>' (the "
        "web page asks for one); for a server reachable beyond this machine",
    )
    p.set_defaults(func=cmd_serve)
