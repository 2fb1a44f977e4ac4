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
    "device": 2,
    "model": 3, "data": 3, "evaluation": 3,
    "decoding": 4, "checkpoint": 4,
    "parsing": 5, "inference": 5,
    "training": 6,
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
