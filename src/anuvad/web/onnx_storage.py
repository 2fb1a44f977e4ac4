"""How a web export stores the graphs' weights: the download is most of the export (issue 42).

Three choices, all computing in float32 in the page:

* ``float32``: the weights exactly as the model file holds them. Each float32 weight that float16
  holds exactly (every weight of a model file saved in float16, as anuvad's shipped models are)
  is stored as float16 and widened back by a ``Cast`` node that onnxruntime folds into a float32
  constant when it loads the graph: the same numbers, half the bytes.
* ``float16``: every float32 weight rounded to float16 and widened the same way (for a model
  saved in float32: half the size, not exactly the torch model's numbers); a weight beyond
  float16's range stays float32.
* ``int8``: onnxruntime's dynamic quantisation (int8 weights for the matrix products, the
  activations quantised per call); what it leaves in float32 is then stored as ``float32`` does.

Weights under :data:`MIN_ELEMENTS` (scalars, shapes) stay as they are: a ``Cast`` would cost more
than it saves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MIN_ELEMENTS = 64
GRAPHS = ("encoder.onnx", "decoder.onnx")


@dataclass(frozen=True)
class Storage:
    """What :func:`store_float16` did to one graph."""

    as_float16: int  # weights (elements) now stored as float16
    as_float32: int  # float32 weights (elements) left as they were


def store_float16(path: Path, exact_only: bool = True) -> Storage:
    """Store ``path``'s float32 weights as float16, each widened by a ``Cast`` to its old name
    (in place).

    Args:
        path: an ONNX file with its weights inside it.
        exact_only: convert only the weights float16 holds exactly (the graph computes the same
            numbers); False rounds every float32 weight.

    Returns:
        How many weight elements moved to float16 and how many stayed float32.
    """
    model = onnx.load(str(path))
    graph = model.graph
    casts: list[onnx.NodeProto] = []
    kept: list[onnx.TensorProto] = []
    moved = stayed = 0
    for weight in graph.initializer:
        if weight.data_type != TensorProto.FLOAT:
            kept.append(weight)
            continue
        values = numpy_helper.to_array(weight)  # float32, any shape
        with np.errstate(over="ignore"):
            narrow = values.astype(np.float16)
        lossless = np.array_equal(narrow.astype(np.float32), values, equal_nan=True)
        overflow = bool((np.isinf(narrow) & np.isfinite(values)).any())  # beyond float16's range
        if values.size < MIN_ELEMENTS or overflow or (exact_only and not lossless):
            kept.append(weight)
            stayed += values.size
            continue
        stored = numpy_helper.from_array(narrow, f"{weight.name}.float16")
        kept.append(stored)
        casts.append(
            helper.make_node("Cast", [stored.name], [weight.name], to=TensorProto.FLOAT,
                             name=f"widen.{weight.name}")
        )  # fmt: skip
        moved += values.size
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)  # the casts first: the graph stays topologically sorted
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return Storage(moved, stayed)


def quantize_int8(folder: Path) -> None:
    """Both graphs' weights to int8 (onnxruntime's dynamic quantisation), in place."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    for name in GRAPHS:
        full = folder / name
        quantized = folder / f"{full.stem}.int8.onnx"
        quantize_dynamic(str(full), str(quantized), weight_type=QuantType.QInt8)
        quantized.replace(full)


def store(folder: Path, dtype: str) -> Storage:
    """Store both graphs in ``folder`` as ``dtype`` says (see the module's docstring).

    Returns:
        The two graphs' :class:`Storage` added together.
    """
    if dtype == "int8":
        quantize_int8(folder)
    moved = stayed = 0
    for name in GRAPHS:
        done = store_float16(folder / name, exact_only=dtype != "float16")
        moved, stayed = moved + done.as_float16, stayed + done.as_float32
    return Storage(moved, stayed)


__all__ = ["GRAPHS", "MIN_ELEMENTS", "Storage", "quantize_int8", "store", "store_float16"]
