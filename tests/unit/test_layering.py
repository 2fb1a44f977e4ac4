"""The package layout is the architecture: imports point downward only (docs: STYLE, issue 20).

Every ``anuvad`` import in ``src/anuvad`` (also those inside functions) is read with ``ast`` and
checked against the layers below. A package may import its own modules and anything in a lower
layer, never a higher one; parsing plugs into data and decoding through their hooks (a corpus
format entry point, an output constraint), so nothing generic imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "anuvad"

# Lower number = lower layer. Top-level modules and packages by their first name component.
LAYERS: dict[str, int] = {
    "errors": 0, "atomic": 0, "dataclass_io": 1, "decode_config": 1, "data_config": 1, "config": 2,
    "device": 2, "distributed": 2,
    "model": 3, "data": 3, "evaluation": 3,
    "decoding": 4, "checkpoint": 4,
    "parsing": 5, "inference": 5, "interop": 5,
    "training": 6, "web": 6,
    "server": 7, "cli": 8, "__main__": 9, "__init__": 0,
}  # fmt: skip
# Known breaks still to remove, each with the reason; the test fails when one disappears so
# the list cannot go stale.
KNOWN_BREAKS: set[tuple[str, str]] = set()
GENERIC = {"model", "data", "decoding", "inference", "evaluation", "training", "server"}


def anuvad_imports(path: Path) -> set[str]:
    """Dotted names (without "anuvad.") of every anuvad module ``path`` imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("anuvad."):
            names.add(node.module.removeprefix("anuvad."))
        elif isinstance(node, ast.Import):
            names.update(
                a.name.removeprefix("anuvad.") for a in node.names if a.name.startswith("anuvad.")
            )
    return names


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts)


def test_every_module_belongs_to_a_layer() -> None:
    unplaced = {
        module_name(p) for p in SRC.rglob("*.py") if module_name(p).split(".")[0] not in LAYERS
    }
    assert unplaced == set(), f"place these in LAYERS: {sorted(unplaced)}"


def test_imports_point_downward_and_nothing_generic_imports_parsing() -> None:
    upward, seen_breaks = [], set()
    for path in SRC.rglob("*.py"):
        here = module_name(path)
        for target in anuvad_imports(path):
            mine, theirs = here.split(".")[0], target.split(".")[0]
            if mine == theirs:
                continue
            wrong = LAYERS[theirs] > LAYERS[mine] or (theirs == "parsing" and mine in GENERIC)
            if (here, target) in KNOWN_BREAKS:
                seen_breaks.add((here, target))
            elif wrong:
                upward.append(f"{here} imports {target}")
    assert upward == [], "imports pointing upward:\n" + "\n".join(sorted(upward))
    assert seen_breaks == KNOWN_BREAKS, (
        f"fixed, remove from KNOWN_BREAKS: {KNOWN_BREAKS - seen_breaks}"
    )


def package_graph() -> dict[str, set[str]]:
    """Which top-level packages (and top-level modules) import which others."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        mine = module_name(path).split(".")[0]
        graph.setdefault(mine, set()).update(
            t.split(".")[0] for t in anuvad_imports(path) if t.split(".")[0] != mine
        )
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle among the packages of ``graph`` ([] when there is none), by depth-first
    search: a package reached again while still on the path closes a cycle."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str]:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        path.append(node)
        for target in sorted(graph.get(node, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return []

    for start in sorted(graph):
        cycle = visit(start)
        if cycle:
            return cycle
    return []


def test_find_cycle_finds_one_and_only_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycles_between_packages_even_of_one_layer() -> None:
    """Downward-only imports rule out cycles across layers; within a layer (model, data and
    evaluation; parsing and inference) two packages must not import each other either, or the
    layer is one package in disguise (issue 33)."""
    cycle = find_cycle(package_graph())
    assert cycle == [], "packages importing each other in a cycle: " + " -> ".join(cycle)
