"""The JavaScript runtime of a web export, run under Node on onnxruntime-node, gives the torch
engine's tokens: greedy and beam 4, on the tiny model (the shipped models: tests/system; issue
42). Skipped, with the reason, where node or the npm packages (``make web-runtime``) are
missing."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from anuvad.checkpoint import export_model_file, load_model

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')")

from anuvad.web.export import export_web
from anuvad.web.node_check import node_problem, node_translate
from anuvad.web.settings import normalization
from web_samples import SENTENCES, equal_to_torch, js_normalize

NO_NODE = node_problem()
pytestmark = [
    pytest.mark.skipif(NO_NODE is not None, reason=f"web runtime under Node: {NO_NODE}"),
    pytest.mark.usefixtures("one_thread"),
]


def test_tiny_model_js_search_equals_the_torch_engine(
    tiny_enhi_model: Path, tiny_enhi_web: Path
) -> None:
    # (the export itself checked its graphs against torch: test_web_export.py)
    equal_to_torch(tiny_enhi_model, tiny_enhi_web, SENTENCES)


def test_int8_export_translates(tiny_enhi_model: Path, tiny_enhi_web: Path, tmp_path: Path) -> None:
    float32 = tiny_enhi_web
    int8, _ = export_web(tiny_enhi_model, tmp_path / "int8", dtype="int8")
    assert json.loads((int8 / "model.json").read_text())["dtype"] == "int8"
    assert (int8 / "decoder.onnx.gz").stat().st_size < (float32 / "decoder.onnx.gz").stat().st_size
    (run,) = node_translate(int8, SENTENCES[:3], [{"beam_size": 2, "nbest": 2}])["runs"]
    assert [len(r["candidates"]) >= 1 for r in run["results"]] == [True] * 3


def test_a_float16_model_file_exports_at_half_size_and_equal_to_torch(
    tiny_enhi_model: Path, tiny_enhi_web: Path, tmp_path: Path
) -> None:
    """A model file saved in float16 (as the shipped ones): the float32 export stores its weights
    as float16 (the numbers float32 widens them to are the model's own), half the bytes, and the
    runtime still gives the torch engine's tokens."""
    half = export_model_file(tiny_enhi_model, tmp_path / "half.pt", dtype="float16")
    web, comparison = export_web(half, tmp_path / "web")
    weights = json.loads((web / "model.json").read_text())["weights"]
    packed = json.loads((tiny_enhi_web / "model.json").read_text())["weights"]
    assert packed["float16"] == 0  # the tiny model is saved in float32: nothing is rounded
    assert weights["float16"] > 4 * weights["float32"]  # float32: the sinusoids, small vectors
    assert comparison.argmax_agree == comparison.steps
    for graph in ("encoder.onnx.gz", "decoder.onnx.gz"):
        full, small = (
            gzip.decompress((tiny_enhi_web / graph).read_bytes()),
            gzip.decompress((web / graph).read_bytes()),
        )
        assert len(small) < 0.75 * len(full), graph  # the tiny graphs: their nodes weigh too
    equal_to_torch(half, web, SENTENCES)


def test_files_a_host_sent_unpacked_are_read_as_they_are(
    tiny_enhi_web: Path, tmp_path: Path
) -> None:
    """A host that sends the .gz files with ``Content-Encoding: gzip`` hands the page unpacked
    bytes under the same names: the runtime reads them too, and translates the same."""
    copy = Path(shutil.copytree(tiny_enhi_web, tmp_path / "unpacked"))
    packed = sorted(copy.rglob("*.gz"))
    assert {p.name for p in packed} >= {"encoder.onnx.gz", "decoder.onnx.gz", "source.model.gz"}
    for path in packed:
        path.write_bytes(gzip.decompress(path.read_bytes()))
    runs = [{"beam_size": 2}]
    before = node_translate(tiny_enhi_web, SENTENCES[:4], runs)["runs"][0]["results"]
    after = node_translate(copy, SENTENCES[:4], runs)["runs"][0]["results"]
    assert [r["token_ids"] for r in after] == [r["token_ids"] for r in before]
    assert all(r["token_ids"] for r in after)


def test_js_normaliser_equals_python(tiny_enhi_model: Path) -> None:
    from anuvad.data.cleaning import normalizer_for

    loaded = load_model(tiny_enhi_model)
    loaded.config.data.clean.normalize = True
    spec = normalization(loaded)
    texts = [
        *SENTENCES,
        "ＡＢＣ１２３，（test）！  spaced  out ",
        "«quoted» \u00a0»here« and `ticks'' and ‘single’ quotes",
        "a\u0007control\u200bchar and 5 % and 3\u00a0000",
        'dots..."after" and "before", then',
    ]
    python = normalizer_for("en")
    assert js_normalize(spec, texts) == [python(t) for t in texts]


def test_js_strip_equals_python_strip(tiny_enhi_model: Path) -> None:
    """A model trained without normalisation: the runtime strips what ``str.strip`` strips
    (JavaScript's trim() strips U+FEFF and keeps U+001C-U+001F and U+0085)."""
    loaded = load_model(tiny_enhi_model)
    loaded.config.data.clean.normalize = False
    spec = normalization(loaded)
    assert spec["kind"] == "strip"
    edges = ["\ufeff", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u3000", " \t\n"]
    texts = [f"{e}I am  going\x1fhome.{e}" for e in edges] + ["", " ", "\ufeff\x85\ufeff"]
    assert js_normalize(spec, texts) == [t.strip() for t in texts]
