"""The shape engine against its anchors, onnx's ``infer_shapes(data_prop=True)`` and
onnxruntime's symbolic shape inference: on every real model of the corpus it knows the
full shape of at least as many values of the main graph as the better of the two.

A dim counts as known for the anchors when it has a value or any name (onnx's fresh
``unk__7`` included, which is generous to them); for the engine when it is a number or a
formula. Values are the main graph's node outputs, the same list for all three."""

from __future__ import annotations

import os

import onnx
import pytest

from editor.shapes import infer_model
from tests.conftest import CORPUS

REAL = sorted((CORPUS / "real").glob("*.onnx"))
#: onnxruntime's symbolic inference takes ~25 s on the Paddle detector: there the default run
#: compares with onnx only; tests/benchmarks/bench_shapes_anchors.py compares all three
ORT_TOO_SLOW = {"ppocrv4_det"}


def _full(tp: onnx.TypeProto) -> bool:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return False
    return all(d.HasField("dim_value") or d.dim_param for d in tp.tensor_type.shape.dim)


def _anchor_count(model: onnx.ModelProto, names: set[str]) -> int:
    vis = list(model.graph.value_info) + list(model.graph.output)
    return len({vi.name for vi in vis if vi.name in names and _full(vi.type)})


def _onnx(model: onnx.ModelProto, names: set[str]) -> int:
    try:
        return _anchor_count(onnx.shape_inference.infer_shapes(model, data_prop=True), names)
    except Exception:  # noqa: BLE001 - an anchor that fails knows nothing
        return 0


def _ort(model: onnx.ModelProto, names: set[str], tmp_path) -> int:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    cwd = os.getcwd()
    os.chdir(tmp_path)  # it writes a temporary model into the working folder
    try:
        out = SymbolicShapeInference.infer_shapes(model, auto_merge=True, guess_output_rank=False)
    except Exception:  # noqa: BLE001
        return 0
    finally:
        os.chdir(cwd)
    return 0 if out is None else _anchor_count(out, names)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
@pytest.mark.timeout(120)
def test_the_engine_knows_at_least_as_many_shapes_as_the_better_anchor(path, tmp_path) -> None:
    model = onnx.load(str(path))
    names = {n for node in model.graph.node for n in node.output if n}
    table = infer_model(model)
    ours = sum(1 for n in names if table.get(n).dims is not None and None not in table.get(n).dims)
    ort = 0 if path.stem in ORT_TOO_SLOW else _ort(model, names, tmp_path)
    anchors = max(_onnx(model, names), ort)
    assert ours >= anchors, f"engine {ours}, better anchor {anchors}"
