"""Weight-preparation chains fold into their consumer's box and unfold on demand (no Qt)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from editor.layout import layout_graph
from editor.viewmodel import build_display_graph, default_expanded
from tests.editor.layout_checks import assert_layout_invariants


def _quantized_matmul() -> onnx.ModelProto:
    """x -> MatMul(x, Transpose(DequantizeLinear(W int8))) -> Add(., b) -> y, plus a shared
    prepared weight (used by two MatMuls) and a ConstantOfShape bias."""
    mk = helper.make_node
    nodes = [
        mk("DequantizeLinear", ["W", "s", "z"], ["Wf"], name="dq"),
        mk("Transpose", ["Wf"], ["Wt"], name="tr", perm=[1, 0]),
        mk("MatMul", ["x", "Wt"], ["h"], name="mm"),
        mk("ConstantOfShape", ["shape"], ["b"], name="cos",
           value=numpy_helper.from_array(np.zeros(1, np.float32))),
        mk("Add", ["h", "b"], ["h2"], name="add"),
        mk("Cast", ["V"], ["Vf"], name="cast_shared", to=TensorProto.FLOAT),
        mk("MatMul", ["h2", "Vf"], ["y1"], name="mm1"),
        mk("MatMul", ["h2", "Vf"], ["y2"], name="mm2"),
    ]
    inits = [numpy_helper.from_array(np.zeros((4, 4), np.int8), "W"),
             numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "z"),
             numpy_helper.from_array(np.array([4], np.int64), "shape"),
             numpy_helper.from_array(np.zeros((4, 4), np.float16), "V")]
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 4]),
                           helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 4])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])


def test_weight_chain_folds_into_its_consumer_and_unfolds():
    m = _quantized_matmul()
    ids = [10 + i for i in range(len(m.graph.node))]
    dg = build_display_graph(m.graph, ids, opsets={"": 19})
    labels = {b.key: b.label for b in dg.boxes}
    # DequantizeLinear -> Transpose fold into the MatMul, ConstantOfShape into the Add
    for k in (10, 11, 13):
        assert f"n:{k}" not in labels
    assert dg.folded["n:12"] == (10, 11) and dg.folded["n:14"] == (13,)
    mm = next(b for b in dg.boxes if b.key == "n:12")
    (name, text), = mm.weights
    # the folded result is named by its role (MatMul input B), not by its made-up value name
    assert name == "B" and "int8" in text and "DequantizeLinear" in text and "Transpose" in text
    assert not any(e.src in ("n:10", "n:11", "n:13") for e in dg.edges)
    # a prepared weight read by two consumers stays a box of its own (both edges drawn)
    assert labels["n:15"] == "Cast" and {e.dst for e in dg.edges if e.src == "n:15"} == {"n:16", "n:17"}
    assert_layout_invariants(dg, layout_graph(dg), where="folded")
    # unfold the MatMul's chain: both preparation nodes are boxes again, wired to it
    dg2 = build_display_graph(m.graph, ids, opsets={"": 19}, unfold={12})
    keys2 = {b.key for b in dg2.boxes}
    assert {"n:10", "n:11"} <= keys2 and "n:13" not in keys2
    assert any(e.src == "n:10" and e.dst == "n:11" for e in dg2.edges)
    assert any(e.src == "n:11" and e.dst == "n:12" for e in dg2.edges)
    assert "n:12" not in dg2.folded and next(b for b in dg2.boxes if b.key == "n:12").weights == ()
    assert_layout_invariants(dg2, layout_graph(dg2), where="unfolded")


def test_unread_constant_chain_is_not_drawn_and_inputs_are_never_folded():
    m = _quantized_matmul()
    g = m.graph
    # a dead chain (nobody reads it) and a node over a graph input (data, never folded)
    g.node.append(helper.make_node("Cast", ["V"], ["dead"], name="dead", to=TensorProto.FLOAT))
    g.node.append(helper.make_node("Relu", ["x"], ["r"], name="relu"))
    g.output.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 4]))
    ids = list(range(len(g.node)))
    dg = build_display_graph(g, ids, opsets={"": 19})
    keys = {b.key for b in dg.boxes}
    assert f"n:{len(ids) - 2}" not in keys and dg.folded[""] == (len(ids) - 2,)
    assert f"n:{len(ids) - 1}" in keys


def test_collapsed_first_view_has_no_layer_of_weight_boxes(corpus_dir):
    """inception_v2's first view used to open with ~400 ConstantOfShape boxes in one layer."""
    m = onnx.load(str(corpus_dir / "onnx-backend" / "light" / "light_inception_v2.onnx"))
    ids = list(range(len(m.graph.node)))
    opsets = {o.domain: o.version for o in m.opset_import}
    for expanded in (None, default_expanded(m.graph)):
        dg = build_display_graph(m.graph, ids, opsets=opsets, expanded=expanded)
        assert not any(b.label == "ConstantOfShape" for b in dg.boxes)
        res = layout_graph(dg)
        ranks = {}
        for b in dg.boxes:
            r = res.ranks.get(b.key)
            if r is not None:
                ranks[r] = ranks.get(r, 0) + 1
        assert not ranks or max(ranks.values()) < 40
