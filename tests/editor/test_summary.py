"""``editor.summary`` and ``onnx-studio info``: counts match an independent walk with plain onnx."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.cli import main as cli_main
from editor.document import Document
from editor.summary import summarize
from tests.conftest import CORPUS, corpus_models, real_models
from tests.editor.test_summary_support import external_model, model_with, reference_info, run_cli

_SPECIAL = [
    "node/test_if/model.onnx",
    "node/test_if_seq/model.onnx",
    "node/test_loop11/model.onnx",
    "node/test_loop16_seq_none/model.onnx",
    "node/test_scan9_sum/model.onnx",
    "node/test_sequence_map_add_2_sequences/model.onnx",
    "node/test_affine_grid_2d_expanded/model.onnx",
    "node/test_range_float_type_positive_delta_expanded/model.onnx",
    "node/test_flexattention_causal_mask/model.onnx",
    "node/test_cast_INT4_to_FLOAT/model.onnx",
    "node/test_cast_FLOAT_to_FLOAT8E4M3FN/model.onnx",
    "node/test_constant/model.onnx",
    "light/light_inception_v1.onnx",
    "light/light_densenet121.onnx",
]


def _sample() -> list[Path]:
    backend = corpus_models(real=False)
    picked = backend[::40] + [CORPUS / "onnx-backend" / s for s in _SPECIAL]
    seen: set[Path] = set()
    return [p for p in picked if p.exists() and not (p in seen or seen.add(p))]


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" if p.name == "model.onnx" else p.name for p in paths]


def _info_json(path: Path, capsys) -> dict:
    assert cli_main(["info", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _check_against_reference(got: dict, want: dict) -> None:
    for key in ("ir_version", "producer_name", "opset_imports", "nodes", "nodes_total", "initializers",
                "weight_bytes", "op_types", "constants"):
        assert got[key] == want[key], key
    for side in ("inputs", "outputs"):
        assert len(got[side]) == len(want[side])
        for g, w in zip(got[side], want[side]):
            assert g["name"] == w["name"]
            assert isinstance(g["elem_type"], str) and g["elem_type"]
            if w["elem_type"] is not None:  # tensors; other kinds checked by type expression
                assert g["elem_type"] == w["elem_type"]
                assert g["shape"] == w["shape"]
            else:
                assert g["kind"] != "tensor" and g["shape"] is None
    assert [(f["domain"], f["name"], f["nodes"]) for f in got["functions"]] == want["functions"]


@pytest.mark.parametrize("path", real_models(), ids=_ids(real_models()))
def test_info_json_real_models(path: Path, capsys) -> None:
    _check_against_reference(_info_json(path, capsys), reference_info(path))


@pytest.mark.parametrize("path", _sample(), ids=_ids(_sample()))
def test_info_json_backend_sample(path: Path, capsys) -> None:
    _check_against_reference(_info_json(path, capsys), reference_info(path))


def test_sample_covers_subgraphs_and_enough_models() -> None:
    sample = _sample()
    assert len(sample) >= 50
    with_subgraphs = [p for p in sample if reference_info(p)["nodes_total"] > reference_info(p)["nodes"]]
    assert len(with_subgraphs) >= 5


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


FUNCTION_MODEL = """
<ir_version: 10, opset_import: ["" : 18, "custom" : 1], producer_name: "hand", producer_version: "0.1">
main (float[N] x) => (float[N] y) {
    a = custom.Double(x)
    y = custom.Double:v2(a)
}
<domain: "custom", opset_import: ["" : 18]>
Double (t) => (u) {
    two = Constant<value_float = 2.0>()
    u = Mul(t, two)
}
<domain: "custom", overload: "v2", opset_import: ["" : 18]>
Double (t) => (u) {
    u = Add(t, t)
}
"""


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
    assert "external data (1 files)" in text.stdout and "w.bin" in text.stdout


def test_text_output_lists_everything(capsys) -> None:
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    assert cli_main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(str(path)) and "ir 8" in lines[0] and "ai.onnx=15" in lines[0]
    assert "121 nodes (350 with subgraphs)" in lines[1]
    assert "inputs (3)" in lines and "outputs (2)" in lines
    assert any(ln.split()[:3] == ["state", "float32", "[2,"] for ln in lines)
    ops = lines.index(next(ln for ln in lines if ln.startswith("ops (")))
    counts = [int(ln.split()[0]) for ln in lines[ops + 1 : ops + 16]]
    assert counts == sorted(counts, reverse=True) and counts[0] == 160  # Constant, the most frequent
    assert any(ln.startswith("weights by dtype") for ln in lines)
    assert any(ln.startswith("subgraphs (24)") for ln in lines)
    assert max(len(ln) for ln in lines) <= 120


def test_info_text_mode_file(tmp_path: Path, capsys) -> None:
    path = tmp_path / "m.onnxtxt"
    path.write_text(FUNCTION_MODEL)
    j = _info_json(path, capsys)
    assert j["format"] == "text" and j["op_types"] == {"custom.Double": 2}


def test_info_subprocess_json_is_the_same(capsys) -> None:
    path = CORPUS / "real" / "asr_prep_kaldi.onnx"
    proc = run_cli("info", "--json", str(path))
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout) == _info_json(path, capsys)


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
