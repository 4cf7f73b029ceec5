"""Display model: boxes, edges, weights, groups, repeats, categories (no Qt)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.viewmodel import (
    CATEGORIES, build_display_graph, build_group_tree, category_of, function_graph,
)
from editor.viewmodel.categories import category_table
from editor.viewmodel.groups import MAX_CHILDREN, scopes_of
from tests.conftest import CORPUS


def _mlp_block(i: int, x: str) -> list[onnx.NodeProto]:
    p = f"/model/layers.{i}"
    return [
        helper.make_node("MatMul", [x, f"w{i}"], [f"{p}/mm"], name=f"{p}/mlp/MatMul"),
        helper.make_node("Relu", [f"{p}/mm"], [f"{p}/r"], name=f"{p}/mlp/Relu"),
        helper.make_node("Add", [f"{p}/r", x], [f"{p}/out"], name=f"{p}/Add"),
    ]


def _model(layers: int = 4) -> onnx.ModelProto:
    nodes = []
    x = "x"
    inits = []
    for i in range(layers):
        nodes += _mlp_block(i, x)
        x = f"/model/layers.{i}/out"
        inits.append(numpy_helper.from_array(np.zeros((8, 8), np.float32), f"w{i}"))
    nodes.append(helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.ones(8, np.float32)),
                                  name="/model/const"))
    nodes.append(helper.make_node("Mul", [x, "c"], ["y"], name="/head/Mul"))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], initializer=inits,
                          value_info=[helper.make_tensor_value_info("/model/layers.0/mm", TensorProto.FLOAT, [1, 8])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_flat_view_boxes_edges_weights():
    m = _model()
    ids = [100 + i for i in range(len(m.graph.node))]
    dg = build_display_graph(m.graph, ids, opsets={"": 18})
    keys = [b.key for b in dg.boxes]
    assert keys[0] == "in:x" and keys[-1] == "out:y"
    # the Constant is attached to its consumer, not drawn
    assert f"n:{ids[-2]}" not in keys
    mul = next(b for b in dg.boxes if b.label == "Mul")
    assert mul.weights == (("c", "8 float32"),)
    mm = next(b for b in dg.boxes if b.label == "MatMul")
    assert mm.weights == (("w0", "8x8 float32"),) and mm.category == "layer" and mm.n_in == 2
    # edges: stable keys, shapes as labels where known
    e = next(e for e in dg.edges if e.value == "/model/layers.0/mm")
    assert e.key == f"{e.src}:{e.src_port}->{e.dst}:{e.dst_port}" and e.label == "1x8"
    assert any(e.src == "in:x" for e in dg.edges) and any(e.dst == "out:y" for e in dg.edges)
    assert len(dg.boxes) == 1 + 4 * 3 + 1 + 1


def test_collapsed_view_groups_with_deduplicated_boundary_edges():
    m = _model()
    ids = list(range(len(m.graph.node)))
    dg = build_display_graph(m.graph, ids, opsets={"": 18}, expanded=set())
    groups = [b for b in dg.boxes if b.kind == "group"]
    # "/model" holds everything but the head: it is a real group; layers.N live inside it
    assert [g.key for g in groups] == ["g:/model"]
    assert groups[0].child_count == 12
    dg2 = build_display_graph(m.graph, ids, opsets={"": 18}, expanded={"/model"})
    gk = [b.key for b in dg2.boxes if b.kind == "group"]
    assert gk == [f"g:/model/layers.{i}" for i in range(4)]
    # x feeds MatMul and Add of layers.0: one boundary edge, one input port
    into0 = [e for e in dg2.edges if e.dst == "g:/model/layers.0"]
    assert len(into0) == 1
    g0 = next(b for b in dg2.boxes if b.key == "g:/model/layers.0")
    assert (g0.n_in, g0.n_out) == (1, 1)
    # the four layers are the same block
    assert set(dg2.repeats) == {f"/model/layers.{i}" for i in range(4)}
    assert len(set(dg2.repeats.values())) == 1
    # opening one layer shows its nodes, but its single-node sub-scope "mlp" (2 nodes) is a group
    dg3 = build_display_graph(m.graph, ids, opsets={"": 18}, expanded={"/model", "/model/layers.1"})
    assert "g:/model/layers.1/mlp" in {b.key for b in dg3.boxes}
    # open groups are reported per box, for outlines and "collapse"
    assert dg3.box_groups["g:/model/layers.1/mlp"] == "/model/layers.1"
    assert dg3.box_groups["g:/model/layers.0"] == "/model"
    add1 = next(b for b in dg3.boxes if b.name == "/model/layers.1/Add")
    assert dg3.box_groups[add1.key] == "/model/layers.1"
    assert "in:x" not in dg3.box_groups


def test_scopes_and_group_tree_rules():
    assert scopes_of("/model/layers.3/self_attn/q_proj/MatMul") == [
        "/model", "/model/layers.3", "/model/layers.3/self_attn", "/model/layers.3/self_attn/q_proj"]
    assert scopes_of("conv1") == []
    names = ["/a/b/x", "/a/b/y", "/a/c/z"]
    t = build_group_tree(names, [0, 1, 2])
    assert "/a" not in t            # holds everything: skipped
    assert "/a/b" in t and "/a/c" not in t   # single-node scope is no group
    big = [f"n{i}" for i in range(3 * MAX_CHILDREN)]
    t = build_group_tree(big, list(range(len(big))))
    parts = t.children("")
    assert len(parts) <= MAX_CHILDREN and all(t.size[p] <= MAX_CHILDREN for p in parts)
    assert sum(t.size[p] for p in parts) == len(big)


def test_large_flat_graph_collapsed_view_is_small():
    n = 2000
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}") for i in range(n)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, [1])])
    dg = build_display_graph(g, list(range(n)), opsets={"": 18}, expanded=set())
    assert len(dg.boxes) <= MAX_CHILDREN + 2
    assert all(b.kind in ("group", "input", "output") for b in dg.boxes)
    # the artificial parts form a chain
    assert len(dg.edges) == len(dg.boxes) - 1


def test_categories_come_from_onnx_defs():
    assert set(category_table().values()) <= set(CATEGORIES)
    expect = {"Conv": "layer", "Gemm": "layer", "Relu": "activation", "Sigmoid": "activation",
              "MaxPool": "pool", "GlobalAveragePool": "pool", "BatchNormalization": "normalization",
              "Reshape": "shape", "Concat": "tensor", "If": "control", "Loop": "control",
              "Equal": "logic", "QuantizeLinear": "quantization", "ReduceMean": "reduce", "Add": "math",
              "Dropout": "dropout", "Constant": "generator"}
    got = {k: category_of(k) for k in expect}
    assert got == expect
    assert category_of("LinearClassifier", "ai.onnx.ml") == "ml"
    assert category_of("MyCustomOp", "com.example") == "custom"
    assert category_of("Upsample", "", 9) in ("deprecated", "shape", "tensor")
    # every registered operator gets a category, and they are not all the same
    assert len(set(category_table().values())) >= 12


def test_function_and_subgraph_bodies_are_display_graphs():
    body = helper.make_graph([helper.make_node("Relu", ["a"], ["b"])], "then", [],
                             [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    dg = build_display_graph(g, [7], opsets={"": 18})
    box = next(b for b in dg.boxes if b.kind == "node")
    assert sorted(box.subgraphs) == ["else_branch", "then_branch"] and box.category == "control"
    sub = build_display_graph(body, [0], opsets={"": 18})
    assert [b.kind for b in sub.boxes] == ["node", "output"]
    fn = helper.make_function("local", "F", ["x"], ["z"], [helper.make_node("Neg", ["x"], ["z"])],
                              [helper.make_opsetid("", 18)])
    fdg = build_display_graph(function_graph(fn), [0], opsets={"": 18})
    assert [b.key for b in fdg.boxes] == ["in:x", "n:0", "out:z"]


def test_node_ids_length_checked():
    m = _model(1)
    with pytest.raises(ValueError):
        build_display_graph(m.graph, [1], opsets={"": 18})


def test_core_does_not_import_qt():
    import editor.layout
    import editor.layout.incremental
    import editor.viewmodel
    import editor.layout.sugiyama
    import editor.viewmodel.categories
    import editor.viewmodel.groups

    for mod in (editor.layout, editor.layout.sugiyama, editor.layout.incremental, editor.viewmodel,
                editor.viewmodel.groups, editor.viewmodel.categories):
        src = open(mod.__file__).read()
        assert "PySide6" not in src and "shiboken" not in src, mod.__name__


def test_real_model_repeats_recognised():
    path = CORPUS / "onnx-backend" / "light" / "light_densenet121.onnx"
    m = onnx.load(str(path), load_external_data=False)
    dg = build_display_graph(m.graph, list(range(len(m.graph.node))),
                             opsets={o.domain: o.version for o in m.opset_import}, expanded=set())
    assert len(dg.boxes) < 50


def test_default_expanded_opens_the_single_big_group():
    m = _model(6)
    from editor.viewmodel import default_expanded

    opened = default_expanded(m.graph, target=6)
    assert opened == {"/model"}
    # a small model simply opens completely
    assert default_expanded(m.graph) >= {"/model", "/model/layers.0"}
    dg = build_display_graph(m.graph, list(range(len(m.graph.node))), opsets={"": 18}, expanded=opened)
    assert sum(b.kind == "group" for b in dg.boxes) >= 6


def test_torch_dynamo_name_scopes_become_groups():
    from editor.viewmodel.groups import scoped_name

    node = helper.make_node("Add", ["a", "b"], ["c"], name="node_add_12")
    p = node.metadata_props.add()
    p.key = "pkg.torch.onnx.name_scopes"
    p.value = "['', 'model', 'model.layers.3', 'model.layers.3.self_attn', 'add_12']"
    assert scoped_name(node) == "/model/layers.3/self_attn/node_add_12"
    plain = helper.make_node("Add", ["a", "b"], ["c"], name="/x/y/Add")
    assert scoped_name(plain) == "/x/y/Add"


def test_name_scopes_are_found_wherever_each_node_keeps_them():
    """scoped_name looks first where the last node had the scopes entry: a node with the
    entry elsewhere, or with metadata and no entry, gets its own answer whatever came before."""
    from editor.viewmodel.groups import TORCH_SCOPES_KEY, scoped_name

    def node(name: str, props: list[tuple[str, str]]):
        n = helper.make_node("Add", ["a", "b"], ["c"], name=name)
        for key, value in props:
            p = n.metadata_props.add()
            p.key, p.value = key, value
        return n

    scopes = "['', 'model', 'model.layers.3', 'add_12']"
    nodes = [
        node("node_a", [("namespace", "x"), ("fx_node", "y"), (TORCH_SCOPES_KEY, scopes)]),
        node("node_b", [(TORCH_SCOPES_KEY, "['', 'enc', 'enc.block', 'mul']")]),
        node("node_c", [("namespace", "x"), ("fx_node", "y"), ("other", "z")]),
        node("node_d", [("namespace", "x")]),
        node("node_e", [("namespace", "x"), ("fx_node", "y"), (TORCH_SCOPES_KEY, scopes)]),
        node("", [("namespace", "x"), ("fx_node", "y"), (TORCH_SCOPES_KEY, scopes)]),
    ]
    expected = ["/model/layers.3/node_a", "/enc/block/node_b", "node_c", "node_d", "/model/layers.3/node_e",
                "/model/layers.3/node"]
    for order in (nodes, nodes[::-1], nodes[1:] + nodes[:1]):
        seen = {n.name: scoped_name(n) for n in order}
        want = {n.name: e for n, e in zip(nodes, expected)}
        assert seen == want, f"in the order {[n.name for n in order]}: expected {want}, got {seen}"


def test_a_groups_inputs_from_one_box_follow_its_output_order():
    """A closed group's input order means nothing: the inputs that one box feeds sit in that
    box's output order, so they do not cross on the way (a DynamicQuantizeLinear's scale
    and zero point went into a group's inputs 2 and 1, read in that order inside it)."""
    from editor.layout import layout_graph
    from editor.layout.quality import count_crossings

    mk = helper.make_node
    nodes = [mk("Split", ["x"], ["a", "b", "c"], name="/pre/split", axis=0, num_outputs=3),
             # inside /post: c is read first, then b, then a
             mk("Neg", ["c"], ["nc"], name="/post/neg"),
             mk("Abs", ["b"], ["ab"], name="/post/abs"),
             mk("Sum", ["a", "ab", "nc"], ["y"], name="/post/sum")]
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("x", "y")]
    m = helper.make_model(helper.make_graph(nodes, "g", vi[:1], vi[1:]), opset_imports=[helper.make_opsetid("", 18)])
    dg = build_display_graph(m.graph, list(range(4)), opsets={"": 18}, expanded={"/pre"})
    into = sorted((e.src_port, e.dst_port) for e in dg.edges if e.dst == "g:/post")
    assert into == [(0, 0), (1, 1), (2, 2)], f"(source output, group input) pairs: {into}"
    res = layout_graph(dg)
    assert count_crossings(list(res.routes.values())) == 0
