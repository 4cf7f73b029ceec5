"""Collapsed groups never form a false cycle (issue 30): on an acyclic model, every level of
every view (its children, boxes and groups, joined where a box of one feeds a box of the
other) is acyclic, or the grouping falls back (editor.viewmodel.groups._dissolve_cycles).

Checked on the display models themselves (not on the grouping's own bookkeeping): random
models whose name scopes interleave (hypothesis), a hand-built pair of crossed groups, and a
walk of the corpus's first views."""

from __future__ import annotations

import onnx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from editor.viewmodel import build_display_graph, default_expanded, group_tree
from tests.conftest import CORPUS, corpus_walk
from tests.editor.layout_checks import level_cycle

SCOPES = ("", "/enc", "/enc/layer", "/enc/layer/attn", "/enc/layer/mlp", "/enc/norm", "/dec", "/dec/layer",
          "/mix", "/layer_1", "/enc/layer_1")


def _views(g: onnx.GraphProto, opsets: dict[str, int]):
    ids = list(range(len(g.node)))
    tree = group_tree(g)
    for label, expanded in (("first view", default_expanded(g, groups=tree)), ("all closed", set()),
                            ("all open", set(tree.parent))):
        yield label, build_display_graph(g, ids, opsets=opsets, expanded=expanded, groups=tree)


def _value(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1])


@st.composite
def interleaved_models(draw) -> onnx.GraphProto:
    """An acyclic model (graph order is a topological order) whose nodes switch name scope
    often and read values from anywhere above them."""
    pool = draw(st.lists(st.sampled_from(SCOPES), min_size=2, max_size=6, unique=True))
    n = draw(st.integers(4, 40))
    values, nodes = ["x"], []
    scope = pool[0]
    for i in range(n):
        if draw(st.integers(0, 2)) == 0:
            scope = draw(st.sampled_from(pool))
        ins = [values[-1 - draw(st.integers(0, len(values) - 1))] for _ in range(draw(st.integers(1, 2)))]
        op = "Relu" if len(ins) == 1 else "Add"
        nodes.append(helper.make_node(op, ins, [f"v{i}"], name=f"{scope}/{op}_{i}"))
        values.append(f"v{i}")
    read = {v for nd in nodes for v in nd.input}
    outs = [v for v in values[1:] if v not in read]
    return helper.make_graph(nodes, "g", [_value("x")], [_value(v) for v in outs])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(interleaved_models())
def test_no_view_of_interleaved_scopes_has_a_cycle(g):
    for label, dg in _views(g, {"": 18}):
        cycle = level_cycle(dg)
        assert not cycle, f"{label}: {' -> '.join(cycle)} on an acyclic model ({[n.name for n in g.node]})"


def test_crossed_groups_fall_back_to_one_group():
    """``/a`` and ``/b`` each hold two independent nodes, crossed: a1 feeds b2, b1 feeds a2.
    No path leaves a group and comes back (a per-call split finds nothing to split), yet
    closed, ``/a`` feeds ``/b`` and ``/b`` feeds ``/a``: one of them is not drawn as a group."""
    mk = helper.make_node
    g = helper.make_graph([mk("Relu", ["x"], ["a1"], name="/a/Relu"), mk("Relu", ["y"], ["b1"], name="/b/Relu"),
                           mk("Neg", ["b1"], ["a2"], name="/a/Neg"), mk("Neg", ["a1"], ["b2"], name="/b/Neg")],
                          "crossed", [_value("x"), _value("y")], [_value("a2"), _value("b2")])
    tree = group_tree(g)
    assert sorted(tree.parent) == ["/b"], f"expected /a dissolved (the smaller name of two equal groups), saw {tree.parent}"
    assert tree.members("/b") == [1, 3], tree.members("/b")
    dg = build_display_graph(g, [0, 1, 2, 3], opsets={"": 18}, expanded=set(), groups=tree)
    assert {b.key for b in dg.boxes} >= {"n:0", "n:2", "g:/b"}, [b.key for b in dg.boxes]
    assert not level_cycle(dg), [(e.src, e.dst) for e in dg.edges]


def test_corpus_first_views_have_no_cycle():
    bad = []
    for path in corpus_walk():
        m = onnx.load(str(path), load_external_data=False)
        if not any("/" in n.name for n in m.graph.node):
            continue   # no name scopes: no groups but structural blocks, cut in graph order
        opsets = {o.domain: o.version for o in m.opset_import}
        for label, dg in _views(m.graph, opsets):
            cycle = level_cycle(dg)
            if cycle:
                bad.append(f"{path.relative_to(CORPUS)} {label}: {' -> '.join(cycle[:6])}")
    assert not bad, "\n".join(bad)
