"""Run a web export's JavaScript runtime under Node (onnxruntime-node instead of
onnxruntime-web; the same ``anuvad.js``, search and text code), for the tests and
``bench/web_equality.py``: the browser's search, checked without a browser.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anuvad.web.vendor import WEB_DIR, node_modules

RUNNER = WEB_DIR / "node" / "translate.mjs"


def node_problem() -> str | None:
    """Why the runtime cannot run under Node here (None: it can): no ``node``, or the npm
    packages (onnxruntime-node among them) not installed."""
    if shutil.which("node") is None:
        return "node is not installed"
    try:
        modules = node_modules()
    except Exception as exc:  # CheckpointError: the message says how to install them
        return str(exc)
    if not (modules / "onnxruntime-node" / "package.json").is_file():
        return f"onnxruntime-node is not in {modules}; run `make web-runtime`"
    return None


def node_translate(
    export: Path,
    texts: Sequence[str],
    runs: Sequence[dict[str, Any]],
    threads: int = 1,
    timeout: float = 600.0,
) -> dict[str, Any]:
    """Translate ``texts`` with the export at ``export`` once per settings in ``runs`` (each
    a dict of ``translate`` options, e.g. ``{"beam_size": 4}``).

    Returns:
        ``{"load_seconds": float, "runs": [{"options", "seconds", "results": [...]}]}``, each
        result as ``Translator.translate`` gives it in JavaScript.

    Raises:
        RuntimeError: node failed (its stderr in the message).
    """
    request = json.dumps({"texts": list(texts), "runs": list(runs), "threads": threads})
    done = subprocess.run(
        ["node", str(RUNNER), str(export), str(node_modules())],
        input=request,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"node {RUNNER.name} failed: {done.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


__all__ = ["RUNNER", "node_problem", "node_translate"]
