"""Big and unusual models read like their architecture (issue 30): per-call groups, blocks
found by structure, shape plumbing as rows, small constants by value, body edges (no Qt)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from editor.viewmodel import build_display_graph, default_expanded, group_tree
from tests.editor.layout_checks import level_cycle

mk = helper.make_node


def _graph(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in inputs],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in outputs],
                          initializer=list(inits))
    return g


def _reused(calls: int = 3) -> onnx.GraphProto:
    """``/layer`` called ``calls`` times with a ``/norms.k`` between the calls."""
    nodes, x = [], "x"
    for k in range(calls):
        nodes += [mk("Relu", [x], [f"a{k}"], name=f"/layer/Relu{'_' + str(k) if k else ''}"),
                  mk("Sigmoid", [f"a{k}"], [f"b{k}"], name=f"/layer/Sigmoid{'_' + str(k) if k else ''}"),
                  mk("Neg", [f"b{k}"], [f"c{k}"], name=f"/norms.{k}/Neg"),
                  mk("Abs", [f"c{k}"], [f"d{k}"], name=f"/norms.{k}/Abs")]
        x = f"d{k}"
    return _graph(nodes, ["x"], [x])


def test_a_reused_scope_is_one_group_per_call_in_order():
    g = _reused(3)
    tree = group_tree(g)
    calls = sorted((p for p in tree.parent if p.startswith("/layer")), key=lambda p: min(tree.members(p)))
    assert calls == ["/layer", "/layer#2", "/layer#3"], calls
    assert [tree.label(p) for p in calls] == ["layer #1", "layer #2", "layer #3"]
    dg = build_display_graph(g, list(range(len(g.node))), opsets={"": 18}, expanded=set())
    assert not level_cycle(dg), [(e.src, e.dst) for e in dg.edges]
    # the calls are identical blocks
    assert len({dg.repeats.get(p) for p in calls}) == 1 and "/layer" in dg.repeats


def test_a_scopeless_node_between_scoped_ones_joins_their_scope():
    nodes = [mk("Relu", ["x"], ["a"], name="/blk/Relu"), mk("Neg", ["a"], ["b"], name="Neg__7"),
             mk("Abs", ["b"], ["c"], name="/blk/Abs"), mk("Exp", ["c"], ["y"], name="/head/Exp")]
    tree = group_tree(_graph(nodes, ["x"], ["y"]))
    assert tree.node_group.get(1) == "/blk" and not tree.instances


def test_an_overfull_scopeless_graph_is_cut_into_repeated_blocks():
    nodes, x = [], "x"
    for k in range(300):   # 300 "layers" of 4 nodes: 1,200 children of the root
        nodes += [mk("Relu", [x], [f"r{k}"]), mk("Sigmoid", [f"r{k}"], [f"s{k}"]),
                  mk("Mul", [f"r{k}", f"s{k}"], [f"m{k}"]), mk("Add", [x, f"m{k}"], [f"y{k}"])]
        x = f"y{k}"
    g = _graph(nodes, ["x"], [x])
    tree = group_tree(g)
    top = tree.children("")
    assert 2 <= len(top) <= 500 and not any("part" in tree.label(p) for p in tree.parent)
    labels = {tree.label(p) for p in top}
    assert labels == {"Relu … Add"}, labels
    dg = build_display_graph(g, list(range(len(g.node))), opsets={"": 18}, expanded=set(), groups=tree)
    assert len(set(dg.repeats.values())) == 1 and len(dg.repeats) == len(top)


def test_shape_plumbing_is_a_row_of_its_readers_and_can_be_shown():
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [mk("Relu", ["x"], ["h"], name="relu"),
             mk("Shape", ["h"], ["s"], name="shape"),
             mk("Gather", ["s", "zero"], ["b"], name="gather", axis=0),
             mk("Unsqueeze", ["b", "axes"], ["bu"], name="unsq"),
             mk("Concat", ["bu", "minus1"], ["target"], name="concat", axis=0),
             mk("Reshape", ["h", "target"], ["r1"], name="reshape1"),
             mk("Reshape", ["r1", "target"], ["y"], name="reshape2"),
             mk("Mul", ["y", "half"], ["z"], name="mul")]
    g = _graph(nodes, ["x"], ["z"], [i64("zero", 0), i64("axes", [0]), i64("minus1", [-1]),
                                     numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    ids = list(range(len(nodes)))
    dg = build_display_graph(g, ids, opsets={"": 18})
    labels = [b.label for b in dg.boxes if b.kind == "node"]
    assert labels == ["Relu", "Reshape", "Reshape", "Mul"], labels
    rs = [b for b in dg.boxes if b.label == "Reshape"]
    assert all(("shape", "Shape → Gather → Unsqueeze → Concat") in b.weights for b in rs), [b.weights for b in rs]
    assert set(dg.folded["n:5"]) == {1, 2, 3, 4} and set(dg.folded["n:6"]) == {1, 2, 3, 4}
    mul = next(b for b in dg.boxes if b.label == "Mul")
    assert mul.weights == (("B", "0.5"),), mul.weights   # a scalar by its value, named by its role
    shown = build_display_graph(g, ids, opsets={"": 18}, show_plumbing=True)
    assert [b.label for b in shown.boxes if b.kind == "node"][:5] == ["Relu", "Shape", "Gather", "Unsqueeze", "Concat"]
    one = build_display_graph(g, ids, opsets={"": 18}, unfold={5})
    assert "n:1" in {b.key for b in one.boxes} and any(e.src == "n:4" and e.dst == "n:5" for e in one.edges)


def test_outer_values_read_in_a_closed_body_are_dashed_edges_into_it():
    body = helper.make_graph([mk("Add", ["state", "x"], ["o"], name="add")], "then", [],
                             [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 4])])
    els = helper.make_graph([mk("Identity", ["state"], ["o2"], name="id")], "else", [],
                            [helper.make_tensor_value_info("o2", TensorProto.FLOAT, [1, 4])])
    nodes = [mk("Relu", ["x"], ["c0"], name="relu"), mk("ReduceMax", ["c0"], ["c1"], name="rmax", keepdims=0),
             mk("Cast", ["c1"], ["cond"], name="cast", to=TensorProto.BOOL),
             mk("If", ["cond"], ["y"], name="if", then_branch=body, else_branch=els)]
    g = _graph(nodes, ["x", "state"], ["y"])
    dg = build_display_graph(g, list(range(len(nodes))), opsets={"": 18})
    body_edges = [e for e in dg.edges if e.kind == "body"]
    assert {(e.src, e.dst) for e in body_edges} == {("in:state", "n:3"), ("in:x", "n:3")}, body_edges
    assert all("then" in e.label and "else" in e.label and " · in " in e.label for e in body_edges), [
        e.label for e in body_edges]
    box = next(b for b in dg.boxes if b.key == "n:3")
    assert box.n_in == 3 and {e.dst_port for e in body_edges} == {1, 2}


def test_first_view_of_the_reused_fixture_has_no_false_cycle():
    g = _reused(7)
    exp = default_expanded(g)
    dg = build_display_graph(g, list(range(len(g.node))), opsets={"": 18}, expanded=exp)
    assert not level_cycle(dg), level_cycle(dg)


def test_outputs_read_by_one_box_sit_side_by_side():
    """A DynamicQuantizeLinear's values (0) and zero point (2) feed one MatMulInteger, its
    scale (1) a Mul: drawn in schema order the scale's edge starts between two edges that end
    on one box and crosses one of them, whatever the layout does."""
    from editor.layout import layout_graph, port_position
    from editor.layout.quality import count_crossings

    w = numpy_helper.from_array(np.ones((4, 4), np.int8), "W")
    ws = numpy_helper.from_array(np.array(0.5, np.float32), "ws")
    nodes = [mk("DynamicQuantizeLinear", ["x"], ["q", "s", "zp"], name="dql"),
             mk("MatMulInteger", ["q", "W", "zp"], ["acc"], name="mmi"),
             mk("Cast", ["acc"], ["accf"], name="cast", to=TensorProto.FLOAT),
             mk("Mul", ["s", "ws"], ["scale"], name="scale"),
             mk("Mul", ["accf", "scale"], ["y"], name="y")]
    g = _graph(nodes, ["x"], ["y"], inits=[w, ws])
    dg = build_display_graph(g, list(range(len(nodes))), opsets={"": 18})
    dql = next(b for b in dg.boxes if b.key == "n:0")
    xs = [port_position(dql, (0.0, 0.0), "out", p)[0] for p in range(3)]
    assert sorted(range(3), key=xs.__getitem__) in ([0, 2, 1], [1, 0, 2]), f"outputs 0 and 2 apart: x = {xs}"
    res = layout_graph(dg)
    crossings = count_crossings(list(res.routes.values()))
    assert crossings == 0, f"expected no crossing with the ports side by side, saw {crossings}"
