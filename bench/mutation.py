"""Can the tests fail? A small mutation test of the paper's core: each mutant changes one
operator, comparison, constant or min/max in one function of a core module, and the unit tests
of that module must then fail ("kill" it). Survivors are printed with file:line and the change,
for a person to read (some are equivalent: the change cannot alter behaviour).

    .venv/bin/python bench/mutation.py --per-file 12 [--seed 0] [--files model/layers.py ...]

Mutants are written to a temporary copy of ``src/`` that comes first on ``PYTHONPATH``; the
repository is never modified. Each test run has a timeout (a mutant that hangs counts as
killed, as pytest-timeout would count it).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "anuvad"

# Core module → the unit tests that should catch a change in it.
TARGETS: dict[str, list[str]] = {
    "model/layers.py": ["tests/unit/model"],
    "model/attention.py": ["tests/unit/model"],
    "model/transformer.py": ["tests/unit/model"],
    "training/loss.py": ["tests/unit/training/test_loss_optim.py"],
    "training/optim.py": ["tests/unit/training/test_loss_optim.py"],
    "decoding/beam.py": ["tests/unit/decoding"],
    "decoding/search.py": ["tests/unit/decoding"],
}

SWAPS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.Pow: ast.Mult,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.And: ast.Or, ast.Or: ast.And,
}  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    file: str
    index: int  # which mutation site of the file (in ast.walk order)
    line: int
    change: str


def swap_text(kind: type) -> str:
    return f"{kind.__name__} -> {SWAPS[kind].__name__}"


def sites(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """Every mutable node inside a function body, with a description of its mutation."""
    found: list[tuple[ast.AST, str]] = []
    seen: set[int] = set()  # a nested function is inside its parent's walk too: count it once
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = func.body[1:] if ast.get_docstring(func) else func.body
        for statement in body:
            for node in ast.walk(statement):
                if id(node) in seen:
                    continue
                seen.add(id(node))
                if isinstance(node, ast.BinOp | ast.BoolOp) and type(node.op) in SWAPS:
                    found.append((node, swap_text(type(node.op))))
                elif isinstance(node, ast.Compare) and type(node.ops[0]) in SWAPS:
                    found.append((node, swap_text(type(node.ops[0]))))
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    found.append((node, "drop not"))
                elif (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, int | float)
                    and not isinstance(node.value, bool)
                ):
                    found.append((node, f"{node.value!r} -> {node.value + 1!r}"))
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in ("min", "max")
                ):
                    other = "max" if node.func.id == "min" else "min"
                    found.append((node, f"{node.func.id} -> {other}"))
    return found


def mutate(source: str, index: int) -> str:
    """``source`` with its ``index``-th site mutated."""
    tree = ast.parse(source)
    node, _ = sites(tree)[index]
    if isinstance(node, ast.BinOp | ast.BoolOp):
        node.op = SWAPS[type(node.op)]()
    elif isinstance(node, ast.Compare):
        node.ops[0] = SWAPS[type(node.ops[0])]()
    elif isinstance(node, ast.UnaryOp):
        replacement = node.operand
        for parent in ast.walk(tree):
            for name, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, name, replacement)
                elif isinstance(value, list):
                    value[:] = [replacement if v is node else v for v in value]
    elif isinstance(node, ast.Constant):
        assert isinstance(node.value, int | float)  # sites() picks numeric constants only
        node.value = node.value + 1
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        node.func.id = "max" if node.func.id == "min" else "min"
    return ast.unparse(ast.fix_missing_locations(tree))


def run_tests(pythonpath: Path, tests: list[str], timeout: float) -> bool:
    """True when the tests pass (the mutant survived)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        result = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-file", type=int, default=12, help="mutants sampled per file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", nargs="*", default=list(TARGETS))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per test run")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "src"
        shutil.copytree(SRC, copy / "anuvad")
        baseline = {tuple(TARGETS[f]) for f in args.files}
        for tests in baseline:  # the tests must pass on the unmutated copy
            if not run_tests(copy, list(tests), args.timeout):
                raise SystemExit(f"the tests {tests} fail without any mutation")
        killed, survivors, started = 0, [], time.perf_counter()
        for file in args.files:
            original = (SRC / file).read_text(encoding="utf-8")
            found = sites(ast.parse(original))
            chosen = sorted(rng.sample(range(len(found)), min(args.per_file, len(found))))
            for index in chosen:
                node, change = found[index]
                mutant = Mutant(file, index, getattr(node, "lineno", 0), change)
                (copy / "anuvad" / file).write_text(mutate(original, index), encoding="utf-8")
                survived = run_tests(copy, TARGETS[file], args.timeout)
                (copy / "anuvad" / file).write_text(original, encoding="utf-8")
                if survived:
                    survivors.append(mutant)
                else:
                    killed += 1
                status = "SURVIVED" if survived else "killed"
                print(f"{status:8} {file}:{mutant.line} {change}", flush=True)
        total = killed + len(survivors)
        minutes = (time.perf_counter() - started) / 60
        print(f"\n{killed} of {total} mutants killed, {len(survivors)} survived "
              f"({len(survivors) / max(1, total):.1%}), {minutes:.0f} min")  # fmt: skip
        for mutant in survivors:
            print(f"  survivor: src/anuvad/{mutant.file}:{mutant.line} {mutant.change}")


if __name__ == "__main__":
    main()
