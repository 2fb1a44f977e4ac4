"""How far a reader walks: the anuvad modules one sentence from the web page runs through, and
the longest functions (issue 33's "walk through today's code").

    python bench/walk.py [--model FILE] [--top 8]
    PYTHONPATH=<other checkout>/src python bench/walk.py ...   # the same figures for another tree

One ``POST /translate`` (beam 4, the default settings) goes through the app in-process
(FastAPI's TestClient) after one warm-up request; every Python function call in any thread is
recorded while it runs, and the anuvad modules whose code ran are listed by package. The
function lengths are read from the source with ``ast`` (first line of the ``def`` through its
last line, decorators and docstring included).
"""

from __future__ import annotations

import argparse
import ast
import sys
import threading
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any


def longest_functions(src: Path, top: int) -> list[tuple[int, str]]:
    """The ``top`` longest functions under ``src`` as (lines, "module:qualified name")."""
    found: list[tuple[int, str]] = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(src.parent).with_suffix("").parts)

        def visit(node: ast.AST, prefix: str, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    end = child.end_lineno or child.lineno
                    found.append((end - first + 1, f"{module}:{prefix}{child.name}"))
                    visit(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")

        visit(tree, "")
    return sorted(found, reverse=True)[:top]


def modules_one_sentence_runs(model: str, text: str) -> list[str]:
    """The anuvad modules whose code runs while the server answers one /translate request."""
    from fastapi.testclient import TestClient

    import anuvad
    from anuvad.inference.engine import load_engine
    from anuvad.server.app import create_app

    root = str(Path(anuvad.__file__).resolve().parent)
    seen: set[str] = set()
    recording = threading.Event()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if recording.is_set() and event == "call":
            name = frame.f_code.co_filename
            if name.startswith(root):
                seen.add(name)

    threading.setprofile(profile)  # the model thread and the event loop start after this
    sys.setprofile(profile)
    app = create_app([load_engine(model)])
    body = {"text": text, "decoding": "beam", "beam_size": 4}
    with TestClient(app) as client:
        assert client.post("/translate", json=body).status_code == 200  # warm-up
        recording.set()
        response = client.post("/translate", json=body)
        recording.clear()
    sys.setprofile(None)
    threading.setprofile(None)
    assert response.status_code == 200, response.text
    return sorted(str(Path(name).relative_to(root)) for name in seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a model file (default: the shipped English->Hindi one)")
    parser.add_argument("--text", default="The weather is nice today.")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    import anuvad

    if args.model is None:
        from anuvad.cli.serve import shipped_model

        args.model = str(shipped_model(pair="enhi"))
    modules = modules_one_sentence_runs(args.model, args.text)
    by_package: dict[str, list[str]] = defaultdict(list)
    for name in modules:
        parts = name.split("/")
        by_package[parts[0] if len(parts) > 1 else "."].append(parts[-1].removesuffix(".py"))
    print(f"{len(modules)} anuvad modules run for one /translate request ({args.model}):")
    for package, names in sorted(by_package.items()):
        print(f"  {package}: {', '.join(names)}")
    src = Path(anuvad.__file__).resolve().parent
    print(f"\nlongest functions under {src}:")
    for lines, name in longest_functions(src, args.top):
        print(f"  {lines:4d}  {name}")


if __name__ == "__main__":
    main()
