"""Passes: each one is exact (same outputs under onnxruntime), one undo step, and undoable
back to the original bytes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.document import Document
from editor.passes import (
    plan_constant_folding,
    plan_convert_opset,
    plan_fuse_bn_into_conv,
    plan_fuse_matmul_add,
    plan_infer_shapes,
    plan_remove_identity,
    plan_remove_unused,
    plan_toposort,
    run_to_fixed_point,
)
from tests.conftest import CORPUS

rng = np.random.default_rng(0)


def _run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _init(name: str, a: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(a.astype(np.float32), name)


def conv_bn_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y0"], name="bn", epsilon=1e-3),
        helper.make_node("Relu", ["y0"], ["y"], name="relu"),
    ]
    inits = [
        _init("w", rng.normal(size=(4, 3, 3, 3))),
        _init("b", rng.normal(size=4)),
        _init("s", rng.uniform(0.5, 1.5, 4)),
        _init("bb", rng.normal(size=4)),
        _init("m", rng.normal(size=4)),
        _init("v", rng.uniform(0.5, 2, 4)),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def assert_pass_exact(model: onnx.ModelProto, planner, feeds: dict, expect_change: bool = True) -> Document:
    doc = Document(model)
    original = doc.serialize()
    before = _run(doc.model, feeds)
    plan = planner(doc)
    assert plan.empty is not expect_change, plan
    if expect_change:
        assert plan.changes
        doc.execute(plan.command)
        doc.check_invariants()
        assert doc.stack.index == 1
        onnx.checker.check_model(doc.model, full_check=True)
        after = _run(doc.model, feeds)
        for a, b in zip(before, after):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        doc.undo()
        assert doc.serialize() == original
        doc.redo()
    return doc


def test_fuse_bn_into_conv_is_exact() -> None:
    doc = assert_pass_exact(conv_bn_model(), plan_fuse_bn_into_conv, {"x": rng.normal(size=(1, 3, 8, 8)).astype(np.float32)})
    ops = [n.op_type for n in doc.model.graph.node]
    assert ops == ["Conv", "Relu"]
    # the old weights are now unused and "remove unused" takes them away
    plan = plan_remove_unused(doc)
    assert {c.split("'")[1] for c in plan.changes} == {"w", "b", "s", "bb", "m", "v"}


def test_fuse_matmul_add_into_gemm() -> None:
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "B"], ["y"], name="add"),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          [_init("W", rng.normal(size=(5, 3))), _init("B", rng.normal(size=3))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    doc = assert_pass_exact(m, plan_fuse_matmul_add, {"x": rng.normal(size=(2, 5)).astype(np.float32)})
    assert [n.op_type for n in doc.model.graph.node] == ["Gemm"]


def test_matmul_with_unknown_rank_is_kept_with_a_reason() -> None:
    nodes = [helper.make_node("MatMul", ["x", "W"], ["mm"]), helper.make_node("Add", ["mm", "B"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [_init("W", rng.normal(size=(5, 3))), _init("B", rng.normal(size=3))])
    plan = plan_fuse_matmul_add(Document(helper.make_model(g)))
    assert plan.empty and "not known to be 2-D" in plan.warnings[0]


def test_constant_folding_and_fixed_point() -> None:
    nodes = [
        helper.make_node("Constant", [], ["c1"], value=numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))),
        helper.make_node("Transpose", ["c1"], ["t"], name="tr"),
        helper.make_node("Mul", ["t", "t"], ["sq"], name="sq"),
        helper.make_node("Add", ["x", "sq"], ["y"], name="add"),
        helper.make_node("RandomUniform", [], ["r"], shape=[3, 2], name="rand"),
        helper.make_node("Add", ["y", "r"], ["z"], name="add2"),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, 2])])
    doc = Document(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    original = doc.serialize()
    rounds = run_to_fixed_point(doc, plan_constant_folding)
    assert len(rounds) == 1  # Transpose and Mul fold in one round (results feed forward)
    ops = [n.op_type for n in doc.model.graph.node]
    assert "Transpose" not in ops and "Mul" not in ops and "RandomUniform" in ops
    sq = numpy_helper.to_array(doc.initializer(0, "sq")[1])
    np.testing.assert_array_equal(sq, (np.arange(6, dtype=np.float32).reshape(2, 3).T) ** 2)
    run_to_fixed_point(doc, plan_remove_unused)
    assert "Constant" not in [n.op_type for n in doc.model.graph.node]
    doc.undo_all()
    assert doc.serialize() == original


def test_remove_identity_keeps_graph_interface() -> None:
    nodes = [
        helper.make_node("Identity", ["x"], ["a"], name="id1"),
        helper.make_node("Relu", ["a"], ["b"], name="relu"),
        helper.make_node("Identity", ["b"], ["y"], name="id2"),
        helper.make_node("Identity", ["x"], ["y2"], name="passthrough"),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                           helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    doc = assert_pass_exact(m, plan_remove_identity, {"x": np.array([-1, 2], np.float32)})
    names = [n.name for n in doc.model.graph.node]
    assert "passthrough" in names and "id1" not in names
    assert [o.name for o in doc.model.graph.output] == ["b", "y2"] or [o.name for o in doc.model.graph.output][1] == "y2"


def test_toposort_keeps_ids_and_orders() -> None:
    nodes = [
        helper.make_node("Relu", ["a"], ["y"], name="second"),
        helper.make_node("Neg", ["x"], ["a"], name="first"),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    doc = Document(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    ids = {doc.node(n).name: n for n in doc.main.node_ids}
    original = doc.serialize()
    doc.execute(plan_toposort(doc).command)
    assert [doc.node(n).name for n in doc.main.node_ids] == ["first", "second"]
    assert {doc.node(n).name: n for n in doc.main.node_ids} == ids
    onnx.checker.check_model(doc.model)
    doc.undo()
    assert doc.serialize() == original
    assert plan_toposort(Document(doc.model)).changes  # still unsorted after undo


def test_toposort_moves_only_what_it_must_and_names_a_cycle() -> None:
    from editor.passes import topological_order

    # of the nodes ready at each step the earliest in the file goes first: "uses_late" waits
    nodes = [
        helper.make_node("Neg", ["x"], ["p"], name="p1"),
        helper.make_node("Relu", ["late_out"], ["q"], name="uses_late"),
        helper.make_node("Abs", ["x"], ["r"], name="r1"),
        helper.make_node("Neg", ["x"], ["late_out"], name="late"),
        helper.make_node("Sum", ["p", "q", "r"], ["y"], name="sum"),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    doc = Document(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    order = [doc.node(n).name for n in topological_order(doc, doc.index.main)]
    assert order == ["p1", "r1", "late", "uses_late", "sum"]
    # a cycle: no order, and the plan says which nodes form it
    loop = [
        helper.make_node("Add", ["x", "b"], ["a"], name="n_a"),
        helper.make_node("Relu", ["a"], ["b"], name="n_b"),
        helper.make_node("Neg", ["a"], ["y"], name="out"),
    ]
    g = helper.make_graph(loop, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    doc = Document(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    assert topological_order(doc, doc.index.main) is None
    plan = plan_toposort(doc)
    assert plan.command is None and "n_a" in plan.warnings[0] and "n_b" in plan.warnings[0]
    assert "out" not in plan.warnings[0]


@pytest.mark.parametrize("model", ["light/light_squeezenet.onnx", "node/test_conv_with_strides_padding/model.onnx"])
def test_convert_opset_is_one_undoable_step(model: str) -> None:
    path = CORPUS / "onnx-backend" / model
    doc = Document(onnx.load(str(path)))
    original = doc.serialize()
    ids_before = list(doc.main.node_ids)
    plan = plan_convert_opset(doc, 13 if doc.opset("") != 13 else 12)
    assert not plan.empty, plan.warnings
    doc.execute(plan.command)
    doc.check_invariants()
    assert doc.opset("") in (12, 13)
    # most nodes are unchanged by a conversion, and those keep their ids
    assert len(set(ids_before) & set(doc.main.node_ids)) > len(ids_before) // 2
    doc.undo()
    assert doc.serialize() == original


def test_convert_opset_reports_refusal() -> None:
    doc = Document(onnx.load(str(CORPUS / "real" / "ort_logreg_iris.onnx")))
    plan = plan_convert_opset(doc, 1)
    assert plan.empty and plan.warnings


def test_infer_shapes_records_value_info() -> None:
    doc = Document(conv_bn_model())
    plan = plan_infer_shapes(doc)
    doc.execute(plan.command)
    assert {vi.name for vi in doc.model.graph.value_info} >= {"c", "y0"}
    doc.check_invariants()
