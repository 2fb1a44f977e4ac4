"""The web export of each shipped model, its JavaScript search under Node against the torch
engine on crafted sentences (numbers, quotes, dashes, capitals; Hindi dandas, pipes, nukta
letters, ZWJ/ZWNJ, both digit scripts): token for token, greedy and beam 4. In the system
tier: each export of a shipped model takes ~15 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.web.node_check import node_problem
from web_samples import HINDI, SENTENCES, equal_to_torch

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')")

from anuvad.web.export import export_web

REPO = Path(__file__).resolve().parents[2]
SHIPPED = {
    direction: sorted((REPO / "data" / "trained_models").glob(f"{direction}_*.pt"))
    for direction in ("enhi", "hien")
}
NO_NODE = node_problem()
pytestmark = [
    pytest.mark.skipif(NO_NODE is not None, reason=f"web runtime under Node: {NO_NODE}"),
    pytest.mark.usefixtures("one_thread"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("direction", "sentences"), [("enhi", SENTENCES), ("hien", HINDI)], ids=["enhi", "hien"]
)
def test_shipped_model_js_search_equals_the_torch_engine(
    direction: str, sentences: list[str], tmp_path: Path
) -> None:
    if not SHIPPED[direction]:
        pytest.skip(f"no shipped {direction}_*.pt in data/trained_models")
    export, _ = export_web(SHIPPED[direction][-1], tmp_path / "web")
    equal_to_torch(SHIPPED[direction][-1], export, sentences)
