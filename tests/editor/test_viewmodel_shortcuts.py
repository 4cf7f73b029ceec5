"""The view model's shortcuts give what the general path gives (issue 35, no Qt).

The first view of a big export skips work where a cheap check says the general path would
find nothing: every scope's nodes consecutive in graph order (no repeated call to split),
every edge of every level running forward (no cycle to dissolve), the graph's own value
infos read only for a name the caller's lack. These tests build the same graphs with the
shortcuts on and off and compare everything the tree holds.
"""

from __future__ import annotations

import random

import pytest
from onnx import TensorProto, helper

from editor.viewmodel import build_display_graph, group_tree
from editor.viewmodel import groups as groups_mod

SEGMENTS = ["", "a", "b", "layer", "layer_1", "x", "x_1"]
OPS = ["Relu", "Add", "Mul", "Constant", "Shape", "Reshape", "Concat", "Identity"]


def _scope(r: random.Random) -> str:
    return "".join("/" + r.choice(SEGMENTS) for _ in range(r.choice([0, 1, 2, 2, 3])))


def _graph(r: random.Random, consecutive: bool):
    """A random graph of named nodes; ``consecutive``: each scope's nodes one after another."""
    n = r.randint(2, 40)
    scopes = sorted(_scope(r) for _ in range(n)) if consecutive else [_scope(r) for _ in range(n)]
    nodes, values = [], ["x"]
    for i, scope in enumerate(scopes):
        op = r.choice(OPS)
        name = f"{scope}/{op}{i}" if scope else f"{op}{i}"
        if op == "Constant":
            nodes.append(helper.make_node(op, [], [f"v{i}"], name=name,
                                          value=helper.make_tensor("t", TensorProto.INT64, [1], [3])))
        else:
            k = 1 if op in ("Relu", "Shape", "Identity") else 2
            nodes.append(helper.make_node(op, [r.choice(values[-6:] if r.random() < 0.8 else values)
                                               for _ in range(k)], [f"v{i}"], name=name))
        values.append(f"v{i}")
    return helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                             [helper.make_tensor_value_info(values[-1], TensorProto.FLOAT, [2])])


def _tree_state(tree) -> tuple:
    return (list(tree.parent.items()), tree.size, tree.labels, list(tree.node_group.items()),
            tree._direct, tree.instances, tree.names)


@pytest.fixture(scope="module")
def graphs():
    r = random.Random(35)
    return [_graph(r, consecutive=k % 2 == 0) for k in range(240)]


def test_group_trees_are_the_same_without_the_shortcuts(graphs, monkeypatch):
    taken = {"uninterrupted": 0, "forward": 0}
    uninterrupted, runs_forward = groups_mod._uninterrupted, groups_mod._runs_forward

    def counted(name, fn):
        def wrapped(*args):
            answer = fn(*args)
            taken[name] += answer
            return answer
        return wrapped

    monkeypatch.setattr(groups_mod, "_uninterrupted", counted("uninterrupted", uninterrupted))
    monkeypatch.setattr(groups_mod, "_runs_forward", counted("forward", runs_forward))
    fast = [(group_tree(g), build_display_graph(g, list(range(len(g.node))), opsets={"": 18}, expanded=set()))
            for g in graphs]
    monkeypatch.setattr(groups_mod, "_uninterrupted", lambda *args: False)
    monkeypatch.setattr(groups_mod, "_runs_forward", lambda *args: False)
    for k, g in enumerate(graphs):
        tree = group_tree(g)
        assert _tree_state(tree) == _tree_state(fast[k][0]), f"graph {k}: the shortcuts changed the group tree"
        slow = build_display_graph(g, list(range(len(g.node))), opsets={"": 18}, expanded=set())
        assert slow == fast[k][1], f"graph {k}: the shortcuts changed the collapsed view"
    # both shortcuts were taken on many graphs (and not taken on others: the general path ran)
    assert 40 < taken["uninterrupted"] < len(graphs), taken
    assert 40 < taken["forward"] < 2 * len(graphs), taken


@pytest.mark.parametrize("d", ["/a/b", "/a//b", "/a/", "a", "a/b", "//", "a//", "/" + "/x" * 3000])
def test_directory_scopes_are_those_of_scopes_of(d):
    made = groups_mod._dir_scopes([d, d.rpartition("/")[0]])
    assert made.get(d, []) == groups_mod.scopes_of(d + "/x"), (d[:40], made.get(d, [])[:3])


def test_the_callers_value_infos_win_and_the_graphs_fill_in():
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r"),
                           helper.make_node("Neg", ["y"], ["z"], name="n")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3])],
                          value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    given = {"x": helper.make_tensor_value_info("x", TensorProto.FLOAT, [7, 3])}
    dg = build_display_graph(g, [0, 1], opsets={"": 18}, value_info=given)
    labels = {e.value: e.label for e in dg.edges}
    assert labels == {"x": "7x3", "y": "1x4", "z": "1x3"}, labels
