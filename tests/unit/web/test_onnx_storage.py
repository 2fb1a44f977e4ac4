"""How a web export stores its weights (anuvad.web.onnx_storage): float16 only where that is
exact (the graph computes the same numbers), every weight rounded when asked, nothing beyond
float16's range."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx", reason="onnx is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")

import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from anuvad.web.onnx_storage import MIN_ELEMENTS, store_float16


def _graph(path: Path, weights: dict[str, np.ndarray]) -> None:
    """x (2, 8) → x @ a @ b + c, with the given float32 weights."""
    nodes = [
        helper.make_node("MatMul", ["x", "a"], ["xa"]),
        helper.make_node("MatMul", ["xa", "b"], ["xab"]),
        helper.make_node("Add", ["xab", "c"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(path))


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def _weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    exact = rng.standard_normal((8, 8)).astype(np.float16).astype(np.float32)  # float16 holds it
    inexact = rng.standard_normal((8, 8)).astype(np.float32)  # float16 rounds it
    inexact[0, 0] = 1e6  # beyond float16's range: never stored as float16
    return {"a": exact, "b": inexact, "c": rng.standard_normal(8).astype(np.float32)}


def test_exact_storage_keeps_every_number(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    path = tmp_path / "g.onnx"
    _graph(path, _weights(rng))
    x = rng.standard_normal((2, 8)).astype(np.float32)
    before = _run(path, x)
    done = store_float16(path, exact_only=True)
    assert (done.as_float16, done.as_float32) == (64, 72)  # a moved; b kept; c under MIN_ELEMENTS
    assert MIN_ELEMENTS > 8
    stored = {w.name: w.data_type for w in onnx.load(str(path)).graph.initializer}
    float32, float16 = TensorProto.FLOAT, TensorProto.FLOAT16
    assert stored == {"a.float16": float16, "b": float32, "c": float32}
    assert np.array_equal(_run(path, x), before)


def test_rounded_storage_rounds_all_but_what_float16_cannot_hold(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    weights = _weights(rng)
    weights["b"][0, 0] = 0.5  # now in range: b is rounded too
    path = tmp_path / "g.onnx"
    _graph(path, weights)
    x = rng.standard_normal((2, 8)).astype(np.float32)
    before = _run(path, x)
    done = store_float16(path, exact_only=False)
    assert (done.as_float16, done.as_float32) == (128, 8)  # c: under MIN_ELEMENTS
    after = _run(path, x)
    assert not np.array_equal(after, before)  # b's rounding shows
    np.testing.assert_allclose(after, before, rtol=1e-2, atol=1e-2)
    weights["b"][0, 0] = 1e6
    _graph(path, weights)
    assert store_float16(path, exact_only=False).as_float32 == 72  # b stays float32
