"""editor.passes.extract: subgraph extraction that checks, runs and matches the original."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.document import Document
from editor.errors import CommandError
from editor.io.tensors import iter_tensors, uses_external_data
from editor.passes.extract import captured_names, extract_model
from editor.runtime.intermediates import expose_outputs
from tests.conftest import CORPUS
from tests.editor.test_summary_support import external_model

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"
SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"
PPOCR = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _real_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def check_against_original(doc: Document, part: onnx.ModelProto, feed: dict[str, np.ndarray]) -> None:
    """Run the original with the extract's boundary values exposed, feed the extract the
    values it needs and compare its outputs with the original's intermediates."""
    onnx.checker.check_model(part, full_check=True)
    inputs = [i.name for i in _real_inputs(part)]
    outputs = [o.name for o in part.graph.output]
    exposed = expose_outputs(doc.model, inputs + outputs)
    names = [o.name for o in exposed.graph.output]
    values = dict(zip(names, _session(exposed).run(None, feed)))
    got = _session(part).run(None, {n: values[n] for n in inputs})
    assert outputs
    for name, value in zip(outputs, got):
        ref = values[name]
        scale = float(np.abs(ref).max()) if ref.size else 1.0
        np.testing.assert_allclose(value, ref, rtol=1e-4, atol=1e-5 * max(scale, 1.0), err_msg=name)


def squeezenet_feed(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    (x,) = _real_inputs(model)
    shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
    return {x.name: np.random.default_rng(0).random(shape, dtype=np.float32)}


def test_middle_of_squeezenet_by_nodes_matches_original() -> None:
    doc = Document.open(SQUEEZENET)
    before = doc.model.SerializeToString()
    compute = [nid for nid in doc.main.node_ids if doc.node(nid).op_type != "ConstantOfShape"]
    part = extract_model(doc, node_ids=compute[15:40])
    assert doc.model.SerializeToString() == before and not doc.is_modified
    assert len(part.graph.node) == 25
    assert part.ir_version == doc.model.ir_version and list(part.opset_import) == list(doc.model.opset_import)
    check_against_original(doc, part, squeezenet_feed(doc.model))


def test_by_names_gives_the_same_cut() -> None:
    doc = Document.open(SQUEEZENET)
    compute = [nid for nid in doc.main.node_ids if doc.node(nid).op_type != "ConstantOfShape"]
    by_nodes = extract_model(doc, node_ids=compute[15:40])
    ins = [i.name for i in _real_inputs(by_nodes)]
    outs = [o.name for o in by_nodes.graph.output]
    by_names = extract_model(doc, inputs=ins, outputs=outs)
    assert [n.output[0] for n in by_names.graph.node] == [n.output[0] for n in by_nodes.graph.node]
    check_against_original(doc, by_names, squeezenet_feed(doc.model))


def test_whole_model_by_names() -> None:
    doc = Document.open(SQUEEZENET)
    ins = [i.name for i in _real_inputs(doc.model)]
    part = extract_model(doc, inputs=ins, outputs=[o.name for o in doc.model.graph.output])
    assert len(part.graph.node) == len(doc.model.graph.node)  # the ConstantOfShape weights come along
    check_against_original(doc, part, squeezenet_feed(doc.model))


def silero_feed() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {"input": rng.standard_normal((1, 512), dtype=np.float32) * 0.1,
            "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}


def test_chunk_with_if_nodes_captures_outer_values() -> None:
    doc = Document.open(SILERO)
    # 81..: three If nodes; every boundary value of this cut has a known shape (the checker
    # wants one on graph I/O; cuts right after an If may not: see the module docstring)
    ids = doc.main.node_ids[81:]
    ifs = [nid for nid in ids if doc.node(nid).op_type == "If"]
    assert ifs
    part = extract_model(doc, node_ids=ids)
    # every value the If bodies read from outside comes in as an input or an initializer
    provided = {i.name for i in part.graph.input} | {t.name for t in part.graph.initializer}
    provided |= {o for n in part.graph.node for o in n.output}
    for nid in ifs:
        node = doc.node(nid)
        for attr in node.attribute:
            for name in captured_names(attr.g):
                assert name in provided
    check_against_original(doc, part, silero_feed())


def test_constant_nodes_feeding_the_selection_become_initializers() -> None:
    doc = Document.open(PPOCR)
    conv = next(nid for nid in doc.main.node_ids if doc.node(nid).op_type == "Conv")
    part = extract_model(doc, node_ids=[conv])
    node = doc.node(conv)
    weights = {t.name for t in part.graph.initializer}
    assert node.input[1] in weights  # produced by a Constant node in the original
    assert [n.op_type for n in part.graph.node] == ["Conv"]
    (x,) = _real_inputs(part)
    assert x.name == node.input[0] and x.type.tensor_type.elem_type == TensorProto.FLOAT
    rng = np.random.default_rng(2)
    exposed = expose_outputs(doc.model, [x.name])
    x_shape = [d.dim_value if d.dim_value > 0 else 1 for d in doc.model.graph.input[0].type.tensor_type.shape.dim]
    x_shape[2:] = [48, 192]
    feed = {doc.model.graph.input[0].name: rng.random(x_shape, dtype=np.float32)}
    check_against_original(doc, part, feed)
    del exposed


def _small() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    then_g = helper.make_graph([helper.make_node("Add", ["h", "w"], ["t"], name="inner_add")], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["h"], ["e"], name="inner_neg")], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Twice", ["y"], ["z"], name="twice", domain="local"),
        helper.make_node("Sigmoid", ["z"], ["s"], name="sig"),
    ]
    g = helper.make_graph(nodes, "small",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3])], [w])
    twice = helper.make_function("local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])],
                                 [helper.make_opsetid("", 17)])
    unused = helper.make_function("local", "Unused", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
                                  [helper.make_opsetid("", 17)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                             functions=[twice, unused], ir_version=10)


def _ids(doc: Document, *names: str) -> list[int]:
    return [next(nid for _, nid, n in doc.index.iter_nodes() if n.name == name) for name in names]


def test_used_functions_and_captured_values() -> None:
    doc = Document(_small())
    part = extract_model(doc, node_ids=_ids(doc, "if", "twice"))
    onnx.checker.check_model(part, full_check=True)
    assert [f.name for f in part.functions] == ["Twice"]
    assert [i.name for i in part.graph.input] == ["c", "h"]  # h: captured by the then branch
    assert [t.name for t in part.graph.initializer] == ["w"]
    assert [o.name for o in part.graph.output] == ["z"]
    h = np.ones((2, 3), np.float32)
    (z,) = _session(part).run(None, {"c": np.array(True), "h": h})
    np.testing.assert_allclose(z, 2 * (h + np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert extract_model(doc, node_ids=_ids(doc, "sig")).functions == []


def test_selection_inside_a_subgraph() -> None:
    doc = Document(_small())
    (nid,) = _ids(doc, "inner_add")
    part = extract_model(doc, node_ids=[nid], scope=doc.index.node_scope[nid])
    onnx.checker.check_model(part, full_check=True)
    assert [i.name for i in part.graph.input] == ["h"] and [t.name for t in part.graph.initializer] == ["w"]
    assert [o.name for o in part.graph.output] == ["t"]
    assert part.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT  # typed by inference


def test_refusals() -> None:
    doc = Document(_small())
    with pytest.raises(CommandError, match="no node with id 999"):
        extract_model(doc, node_ids=[999])
    with pytest.raises(CommandError, match="no nodes selected"):
        extract_model(doc, node_ids=[])
    with pytest.raises(CommandError, match="'nope' does not exist"):
        extract_model(doc, inputs=["nope"], outputs=["s"])
    with pytest.raises(CommandError, match="'nope' does not exist"):
        extract_model(doc, inputs=["h"], outputs=["nope"])
    with pytest.raises(CommandError, match="depends on graph input 'c'"):
        extract_model(doc, inputs=["h"], outputs=["s"])
    with pytest.raises(CommandError, match="input 'x' does not lead to any of the outputs 'z'"):
        extract_model(doc, inputs=["x", "y"], outputs=["z"])
    with pytest.raises(CommandError, match="not both"):
        extract_model(doc, node_ids=_ids(doc, "sig"), inputs=["z"], outputs=["s"])
    with pytest.raises(CommandError, match="is not in graph"):
        extract_model(doc, node_ids=_ids(doc, "inner_add"))
    with pytest.raises(CommandError, match="function"):
        extract_model(doc, node_ids=[doc.index.scopes[doc.index.function_scopes[0]].node_ids[0]],
                      scope=doc.index.function_scopes[0])


def test_names_cut_is_minimal() -> None:
    doc = Document(_small())
    part = extract_model(doc, inputs=["y"], outputs=["s"])
    assert [n.name for n in part.graph.node] == ["twice", "sig"]
    (s,) = _session(part).run(None, {"y": np.zeros((2, 3), np.float32)})
    np.testing.assert_allclose(s, np.full((2, 3), 0.5, np.float32))


def test_untyped_boundary_gets_type_from_inference() -> None:
    m = _small()
    assert not m.graph.value_info
    doc = Document(m)
    part = extract_model(doc, node_ids=_ids(doc, "sig"))
    (z,) = part.graph.input
    assert z.name == "z" and [d.dim_value for d in z.type.tensor_type.shape.dim] == [2, 3]


def test_external_data_inline_or_kept(tmp_path: Path) -> None:
    arrays = {"w": np.arange(600, dtype=np.float32).reshape(20, 30), "b": np.ones(30, np.float32)}
    path = external_model(tmp_path, arrays)
    m = onnx.load(path, load_external_data=False)
    m.graph.node.extend([helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
                         helper.make_node("Add", ["mm", "b"], ["y"], name="add")])
    m.graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 20]))
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 30]))
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("", 17))
    onnx.save(m, path)
    doc = Document.open(path)
    try:
        part = extract_model(doc, node_ids=_ids(doc, "mm"))
        assert not any(uses_external_data(s.tensor) for s in iter_tensors(part))
        (w,) = part.graph.initializer
        np.testing.assert_array_equal(numpy_helper.to_array(w), arrays["w"])
        x = np.ones((1, 20), np.float32)
        (mm,) = _session(part).run(None, {"x": x})
        np.testing.assert_allclose(mm, x @ arrays["w"])
        kept = extract_model(doc, node_ids=_ids(doc, "mm"), inline_external=False)
        assert [uses_external_data(t) for t in kept.graph.initializer] == [True]
    finally:
        doc.store.close()


def test_shapes_fill_what_inference_cannot_tell() -> None:
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["r"], name="sum", keepdims=1),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                       helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    doc = Document(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=10))
    relu = _ids(doc, "relu")
    part = extract_model(doc, node_ids=relu)
    (r,) = part.graph.input
    assert r.type.tensor_type.elem_type == TensorProto.FLOAT and not r.type.tensor_type.HasField("shape")
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(part)
    part = extract_model(doc, node_ids=relu, shapes={"r": [2, "one"], "y": [2, None]})
    onnx.checker.check_model(part, full_check=True)
    dims = part.graph.input[0].type.tensor_type.shape.dim
    assert (dims[0].dim_value, dims[1].dim_param) == (2, "one")
    (y,) = _session(part).run(None, {"r": np.array([[-1.0], [2.0]], np.float32)})
    np.testing.assert_array_equal(y, [[0.0], [2.0]])
