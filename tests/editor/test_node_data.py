"""Per-node data files (editor.node_data): JSON and CSV forms, numbers and labels, errors."""

from __future__ import annotations

import pytest

from editor.errors import StudioError
from editor.node_data import load_node_data


def test_json_object_list_and_nodes_forms(tmp_path) -> None:
    a = tmp_path / "a.json"
    a.write_text('{"conv1": 0.5, "relu": "slow", "x": 3}')
    d = load_node_data(a)
    assert d.values == {"conv1": 0.5, "relu": "slow", "x": 3.0} and not d.numeric
    b = tmp_path / "b.json"
    b.write_text('{"nodes": [{"node": "conv1", "ms": 1.5}, {"node": "conv2", "ms": 2}]}')
    d = load_node_data(b)
    assert d.values == {"conv1": 1.5, "conv2": 2.0} and d.column == "ms" and d.numeric
    assert d.match({1: "conv1", 2: "other"}) == {1: 1.5} and d.unmatched == ["conv2"]


def test_csv_with_header_and_chosen_column(tmp_path) -> None:
    c = tmp_path / "p.csv"
    c.write_text("layer;accuracy;time\nconv1;0.91;3\nconv2;0.5;4\n")
    assert load_node_data(c).values == {"conv1": 0.91, "conv2": 0.5}
    assert load_node_data(c, "time").values == {"conv1": 3.0, "conv2": 4.0}


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"), ("[1, 2]", "not an object"), ("name\nconv1\n", "only one column"),
    ('{"a": {"b": 1}}', "names no node"), ("", "header row")])
def test_bad_files_are_one_line_errors(tmp_path, content, message) -> None:
    f = tmp_path / ("bad.json" if content.startswith(("{", "[")) else "bad.csv")
    f.write_text(content)
    with pytest.raises(StudioError, match=message):
        load_node_data(f)
    with pytest.raises(StudioError, match="no such file"):
        load_node_data(tmp_path / "missing.json")


def test_box_values_give_nodes_their_value_and_groups_the_largest_inside() -> None:
    from editor.node_data import box_values

    boxes = [("n:1", "/a/conv"), ("g:/b", "/b/")]
    names = {1: "/a/conv", 2: "/b/x/relu", 3: "/b/y", 4: "/c/lonely"}
    out = box_values(boxes, {1: 0.5, 2: 3.0, 3: 7.0, 4: 1.0}, names)
    assert out == {"n:1": 0.5, "g:/b": 7.0}  # /c/lonely has no box: not shown anywhere
    labels = box_values(boxes, {2: "slow", 3: "fast", 1: "fast"}, {**names, 5: "/b/z"} | {})
    assert labels["g:/b"] in ("slow", "fast") and labels["n:1"] == "fast"


def test_overlay_amounts_are_non_negative_and_text_gives_back_the_value() -> None:
    from editor.node_data import legend_entries, overlay_amounts

    values = {"n:1": -2.0, "n:2": 0.5, "n:3": 4.0}
    amounts, text = overlay_amounts(values, True)
    assert min(amounts.values()) == 0.0
    assert [float(text(amounts[k])) for k in values] == list(values.values())
    legend = legend_entries(values, True)
    assert float(legend[0][1]) == -2.0 and float(legend[-1][1]) == 4.0
    assert [a for a, _ in legend] == sorted(a for a, _ in legend)
    labels = {"n:1": "b", "n:2": "a", "n:3": "b"}
    amounts, text = overlay_amounts(labels, False)
    assert {text(amounts[k]) for k in labels} == {"a", "b"}
    assert [t for _, t in legend_entries(labels, False)] == ["a", "b"]


def test_an_onnxruntime_profile_gives_each_nodes_kernel_time(tmp_path):
    """View ▸ Node Data Overlay reads the profile onnxruntime writes (issue 29): a profile
    recorded on the target device colours the graph without a script."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from editor.runtime.profiling import profile_node_names

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])
    nodes = [helper.make_node("MatMul", ["x", "x"], ["m"], name="matmul"),
             helper.make_node("Relu", ["m"], ["y"])]  # no name: onnxruntime calls it Relu_1
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "profile")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    for _ in range(3):
        session.run(None, {"x": np.ones((64, 64), np.float32)})
    profile = session.end_profiling()
    data = load_node_data(profile)
    assert data.numeric and data.ort_profile and data.column == "kernel time (onnxruntime profile)", data.column
    assert set(data.values) == {"matmul", "Relu_1"}, data.values
    assert all(v > 0 for v in data.values.values()), data.values
    assert profile_node_names((n.name, n.op_type) for n in nodes) == ["matmul", "Relu_1"]
    # matched over a document: the unnamed Relu by onnxruntime's name for it (window, render, web page)
    from editor.document import Document

    doc = Document.open(path)
    matched = data.match_doc(doc)
    ops = sorted(doc.node(nid).op_type for nid in matched)
    assert ops == ["MatMul", "Relu"] and not data.unmatched, (ops, data.unmatched)
