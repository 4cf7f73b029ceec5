"""``editor.summary``: what each count covers, on real models and hand-made ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from editor.document import Document
from editor.summary import summarize
from tests.conftest import CORPUS
from tests.editor.test_summary_support import FUNCTION_MODEL, external_model, model_with, reference_info, run_cli


def test_paddle_constants_are_weights() -> None:
    doc = Document.open(CORPUS / "real" / "ppocrv4_det.onnx")
    s = summarize(doc)
    m = onnx.load(str(CORPUS / "real" / "ppocrv4_det.onnx"))
    consts = [numpy_helper.to_array(n.attribute[0].t) for n in m.graph.node if n.op_type == "Constant"]
    assert s.initializers == 0 and s.weight_bytes == 0 and s.parameters == 0
    assert s.constants == len(consts) == 342
    assert s.constant_parameters == sum(a.size for a in consts)
    assert s.constant_bytes == sum(a.nbytes for a in consts)
    assert s.weights_by_dtype == {"float32": {"tensors": 342, "parameters": s.constant_parameters,
                                              "bytes": s.constant_bytes}}
    assert s.opset_imports == {"ai.onnx": 12}
    assert s.to_json()["total_parameters"] == s.constant_parameters
    assert s.to_json()["total_weight_bytes"] == s.constant_bytes
    assert s.inputs[0]["shape"] == ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]


def test_subgraphs_listed_with_owner_and_counts() -> None:
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    s = summarize(Document.open(path))
    ref = reference_info(path)
    assert s.nodes == 121 and s.nodes_total == ref["nodes_total"] == 350
    assert s.nodes + sum(g["nodes"] for g in s.subgraphs) == s.nodes_total
    top = [g for g in s.subgraphs if g["path"].count(".then_branch") + g["path"].count(".else_branch") == 1]
    assert all(g["owner_op"] == "If" for g in s.subgraphs)
    assert {g["attribute"] for g in s.subgraphs} == {"then_branch", "else_branch"}
    assert s.nodes + sum(g["nodes_total"] for g in top) == s.nodes_total


def test_sequence_of_maps_output_and_ml_domain() -> None:
    s = summarize(Document.open(CORPUS / "real" / "ort_logreg_iris.onnx"))
    assert s.outputs[1] == {"name": "probabilities", "elem_type": "sequence(map(int64,float32))", "shape": None,
                            "kind": "sequence"}
    assert s.op_types == {"ai.onnx.ml.LinearClassifier": 1, "ai.onnx.ml.Normalizer": 1, "ai.onnx.ml.ZipMap": 1}
    assert s.opset_imports == {"ai.onnx.ml": 1}


def test_unknown_dims_and_minus_one_kept() -> None:
    s = summarize(Document.open(CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"))
    assert -1 in s.inputs[0]["shape"]
    vi = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [None, "n", 4])
    m = model_with()
    m.graph.input.append(vi)
    m.graph.input.append(helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, None))
    s = summarize(Document(m))
    assert s.inputs[0] == {"name": "x", "elem_type": "bfloat16", "shape": [None, "n", 4], "kind": "tensor"}
    assert s.inputs[1]["elem_type"] == "float8e4m3fn" and s.inputs[1]["shape"] is None




def test_functions_and_function_op_types() -> None:
    import onnx.parser

    m = onnx.parser.parse_model(FUNCTION_MODEL)
    s = summarize(Document(m))
    assert s.op_types == {"custom.Double": 2}
    assert s.function_op_types == {"Add": 1, "Constant": 1, "Mul": 1}
    assert s.constants == 0  # the Constant inside a function is not a main-graph weight
    assert [(f["domain"], f["name"], f["overload"], f["nodes"]) for f in s.functions] == [
        ("custom", "Double", "", 2), ("custom", "Double", "v2", 1)]
    assert s.functions[0]["inputs"] == ["t"] and s.functions[0]["outputs"] == ["u"]
    assert s.nodes == s.nodes_total == 2
    assert s.producer_name == "hand" and s.producer_version == "0.1"


def test_sparse_and_constant_bytes_and_metadata() -> None:
    dense = numpy_helper.from_array(np.ones((3, 4), np.float16), "w")
    values = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "sp")
    indices = numpy_helper.from_array(np.array([1, 7], np.int64), "sp_idx")
    sparse = helper.make_sparse_tensor(values, indices, [100])
    const = helper.make_node("Constant", [], ["c"], value_ints=[1, 2, 3])
    const2 = helper.make_node("Constant", [], ["c2"], value=numpy_helper.from_array(np.zeros(5, np.int8), "c2"))
    m = model_with([dense], [const, const2], sparse=[sparse], outputs=["c", "c2"])
    helper.set_model_props(m, {"author": "me", "license": "MIT"})
    s = summarize(Document(m))
    assert s.initializers == 1 and s.sparse_initializers == 1
    assert s.weight_bytes == 24 + 8 + 16
    assert s.parameters == 12 + 100
    assert s.constants == 2 and s.constant_bytes == 24 + 5 and s.constant_parameters == 8
    assert s.weights_by_dtype["int64"] == {"tensors": 1, "parameters": 3, "bytes": 24}
    assert s.weights_by_dtype["float32"] == {"tensors": 1, "parameters": 100, "bytes": 8 + 16}
    assert s.metadata_props == {"author": "me", "license": "MIT"}
    j = s.to_json()
    json.dumps(j)  # plain data
    for key in ("ir_version", "producer_name", "opset_imports", "inputs", "outputs", "nodes", "nodes_total",
                "initializers", "weight_bytes", "op_types", "functions"):
        assert key in j


def test_external_data_files_sizes_without_reading(tmp_path: Path, capsys) -> None:
    arrays = {"a": np.arange(1000, dtype=np.float32), "b": np.ones((10, 10), np.int64)}
    path = external_model(tmp_path, arrays, data="w.bin")
    doc = Document.open(path)
    s = summarize(doc)
    assert s.weight_bytes == 4000 + 800 and s.initializers == 2
    assert s.external_data_files == [
        {"path": "w.bin", "bytes": (tmp_path / "w.bin").stat().st_size, "tensors": 2, "referenced_bytes": 4800}]
    assert doc.store.mapped_files == []  # sizes come from dims and stat: nothing was mapped
    text = run_cli("info", str(path))
    assert text.returncode == 0, text.stderr
    assert "external data (1 file)" in text.stdout and "w.bin" in text.stdout


def test_summary_follows_edits() -> None:
    from editor.commands import AddInitializer, AddNode

    doc = Document.new()
    doc.execute(AddInitializer(doc.index.main, "w", np.ones((2, 3), np.float32)))
    doc.execute(AddNode(doc.index.main, "Relu", inputs=["w"], outputs=["r"]))
    s = summarize(doc)
    assert s.initializers == 1 and s.weight_bytes == 24 and s.op_types == {"Relu": 1}
    doc.undo_all()
    s = summarize(doc)
    assert s.initializers == 0 and s.nodes == 0 and s.op_types == {}
