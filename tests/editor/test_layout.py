"""Layout: determinism, invariants, incremental stability, progress and cancellation."""

from __future__ import annotations

import copy

import onnx
import pytest
from onnx import helper

from editor.layout import CancelToken, Cancelled, LayoutResult, layout_graph, port_position
from editor.layout.sugiyama import REF_MIN_FANOUT, REF_SPAN
from editor.viewmodel import Box, DisplayGraph, Edge, build_display_graph
from tests.conftest import CORPUS
from tests.editor.layout_checks import assert_layout_invariants, kept_up_to_room

LIGHT = CORPUS / "onnx-backend" / "light"
REAL = CORPUS / "real"


def _load(path):
    m = onnx.load(str(path), load_external_data=False)
    return m, {o.domain: o.version for o in m.opset_import}


def _dg(model, opsets, ids=None, expanded=None):
    ids = list(range(len(model.graph.node))) if ids is None else ids
    return build_display_graph(model.graph, ids, opsets=opsets, expanded=expanded)


def _chain_graph(n: int, *, skip: bool = False, fanout: int = 0) -> DisplayGraph:
    boxes = [Box(key=f"n:{i}", kind="node", label="Relu", name=f"r{i}", category="activation",
                 width=60 + (i % 3) * 10, height=26 + (i % 2) * 13, n_in=2, n_out=1, node_id=i)
             for i in range(n)]
    edges = [Edge(key=f"n:{i}:0->n:{i + 1}:0", src=f"n:{i}", src_port=0, dst=f"n:{i + 1}", dst_port=0,
                  value=f"v{i}") for i in range(n - 1)]
    if skip:  # residual connections over 3 nodes
        edges += [Edge(key=f"n:{i}:0->n:{i + 3}:1", src=f"n:{i}", src_port=0, dst=f"n:{i + 3}", dst_port=1,
                       value=f"v{i}") for i in range(0, n - 3, 3)]
    if fanout:
        for j in range(fanout):
            k = f"f:{j}"
            boxes.append(Box(key=k, kind="node", label="Mul", name=k, category="math", width=56, height=26,
                             n_in=1, n_out=0, node_id=1000 + j))
            edges.append(Edge(key=f"n:0:0->{k}:0", src="n:0", src_port=0, dst=k, dst_port=0, value="v0"))
    return DisplayGraph(boxes=tuple(boxes), edges=tuple(edges))


def test_port_position_top_and_bottom():
    b = Box(key="n:1", kind="node", label="Add", name="", category="math", width=100, height=30, n_in=2, n_out=1)
    assert port_position(b, (10, 20), "in", 0) == pytest.approx((10 + 100 / 3, 20))
    assert port_position(b, (10, 20), "in", 1) == pytest.approx((10 + 200 / 3, 20))
    assert port_position(b, (10, 20), "out", 0) == pytest.approx((60, 50))
    with pytest.raises(ValueError):
        port_position(b, (0, 0), "left", 0)


def test_chain_with_residuals_and_fanout_is_valid_and_layered():
    dg = _chain_graph(40, skip=True, fanout=50)
    res = layout_graph(dg)
    assert_layout_invariants(dg, res, where="chain")
    ys = [res.positions[f"n:{i}"][1] for i in range(40)]
    assert all(a < b for a, b in zip(ys, ys[1:])), "data flows downward"
    # the 50 consumers of one tensor share one layer right below it
    fy = {res.positions[f"f:{j}"][1] + 0 for j in range(50)}
    assert len({round(res.ranks[f"f:{j}"]) for j in range(50)}) == 1
    assert len(fy) <= 2


def test_checker_catches_overlap_and_bad_ports():
    dg = _chain_graph(5)
    res = layout_graph(dg)
    pos = dict(res.positions)
    pos["n:1"] = pos["n:0"]
    bad = LayoutResult(positions=pos, routes=res.routes, references=res.references, width=res.width,
                       height=res.height)
    with pytest.raises(AssertionError):
        assert_layout_invariants(dg, bad)
    routes = dict(res.routes)
    k = dg.edges[0].key
    routes[k] = tuple(reversed(routes[k]))
    bad = LayoutResult(positions=res.positions, routes=routes, references=res.references, width=res.width,
                       height=res.height)
    with pytest.raises(AssertionError):
        assert_layout_invariants(dg, bad)


def test_deterministic():
    m, ops = _load(LIGHT / "light_inception_v1.onnx")
    a = layout_graph(_dg(m, ops))
    b = layout_graph(_dg(m, ops))
    assert a == b


def test_broadcast_edges_become_references():
    # one value feeding consumers far down a long chain (like rotary tables in an LLM)
    n = 60
    dg = _chain_graph(n)
    boxes = list(dg.boxes) + [Box(key="in:rope", kind="input", label="rope", name="rope", category="input",
                                  width=60, height=24, n_in=0, n_out=1)]
    edges = list(dg.edges) + [Edge(key=f"in:rope:0->n:{i}:1", src="in:rope", src_port=0, dst=f"n:{i}",
                                   dst_port=1, value="rope") for i in range(5, n, 5)]
    g = DisplayGraph(boxes=tuple(boxes), edges=tuple(edges))
    res = layout_graph(g)
    assert_layout_invariants(g, res)
    spans = {e.key: res.ranks[e.dst] - res.ranks[e.src] for e in edges if e.src == "in:rope"}
    assert len(spans) >= REF_MIN_FANOUT
    for k, s in spans.items():
        if s > REF_SPAN and s != min(spans.values()):
            assert k in res.references
    assert any(k not in res.references for k in spans), "the nearest consumer stays connected"


def test_progress_and_cancel():
    dg = _chain_graph(200, skip=True)
    seen: list[float] = []
    layout_graph(dg, progress=seen.append)
    assert seen and seen[-1] == 1.0 and all(0 <= s <= 1 for s in seen)
    assert seen == sorted(seen)
    tok = CancelToken()
    assert not tok.cancelled
    calls = []

    def prog(f):
        calls.append(f)
        if len(calls) == 3:
            tok.cancel()

    with pytest.raises(Cancelled):
        layout_graph(dg, progress=prog, cancel=tok)
    assert tok.cancelled


def test_cycles_from_collapsed_groups_still_layout():
    boxes = tuple(Box(key=k, kind="node", label=k, name=k, category="math", width=60, height=26, n_in=1, n_out=1)
                  for k in ("a", "b", "c"))
    edges = (Edge("a:0->b:0", "a", 0, "b", 0, "x"), Edge("b:0->c:0", "b", 0, "c", 0, "y"),
             Edge("c:0->a:0", "c", 0, "a", 0, "z"))
    dg = DisplayGraph(boxes=boxes, edges=edges)
    res = layout_graph(dg)
    assert_layout_invariants(dg, res)


# --------------------------------------------------------------------------- incremental

def _kept_fraction(before: LayoutResult, after: LayoutResult, skip: set[str]) -> float:
    common = [k for k in before.positions if k in after.positions and k not in skip]
    same = sum(1 for k in common if before.positions[k] == after.positions[k])
    return same / max(len(common), 1)


def _edit_add(m: onnx.ModelProto, k: int) -> tuple[onnx.ModelProto, list[int], set[str]]:
    m2 = copy.deepcopy(m)
    g = m2.graph
    out = g.node[k].output[0]
    new_out = out + "__relu"
    for node in g.node:
        for j, v in enumerate(node.input):
            if v == out:
                node.input[j] = new_out
    for o in g.output:
        if o.name == out:
            o.name = new_out
    g.node.insert(k + 1, helper.make_node("Relu", [out], [new_out], name="inserted_relu"))
    ids = list(range(len(m.graph.node)))
    ids.insert(k + 1, 10_000_000)
    return m2, ids, {"n:10000000"}


def _edit_remove(m, k):
    m2 = copy.deepcopy(m)
    del m2.graph.node[k]
    ids = [i for i in range(len(m.graph.node)) if i != k]
    return m2, ids, {f"n:{k}"}


def _edit_rename(m, k):
    m2 = copy.deepcopy(m)
    m2.graph.node[k].op_type = "Sigmoid" if m2.graph.node[k].op_type != "Sigmoid" else "Relu"
    return m2, list(range(len(m.graph.node))), {f"n:{k}"}


@pytest.mark.parametrize("model", ["light/light_resnet50.onnx", "light/light_inception_v1.onnx",
                                   "../real/ppocrv4_det.onnx"])
@pytest.mark.parametrize("edit", [_edit_add, _edit_remove, _edit_rename])
def test_incremental_edit_keeps_positions(model, edit):
    m, ops = _load(LIGHT.parent / model)
    before = layout_graph(_dg(m, ops))
    # edit a node in the middle that is drawn (not a weight Constant) and has an output
    nodes = m.graph.node
    k = next(i for i in range(len(nodes) // 2, len(nodes)) if nodes[i].op_type not in ("Constant",)
             and nodes[i].output)
    m2, ids, touched = edit(m, k)
    dg2 = _dg(m2, ops, ids)
    after = layout_graph(dg2, previous=before)
    assert_layout_invariants(dg2, after, where=f"{model} {edit.__name__}")
    frac = _kept_fraction(before, after, touched)
    assert frac >= 0.95, f"only {frac:.1%} of untouched boxes kept their position"
    # and a fresh layout of the same graph is still valid (incremental is an optimisation)
    assert_layout_invariants(dg2, layout_graph(dg2), where="fresh")


def test_incremental_large_change_falls_back_to_full_layout():
    small = _chain_graph(10)
    big = _chain_graph(60, skip=True)
    before = layout_graph(small)
    after = layout_graph(big, previous=before)
    assert after == layout_graph(big)


def test_open_groups_get_frames_holding_their_members():
    from tests.editor.test_viewmodel import _model

    m = _model(4)
    ids = list(range(len(m.graph.node)))
    dg = build_display_graph(m.graph, ids, opsets={"": 18}, expanded={"/model", "/model/layers.1",
                                                                       "/model/layers.1/mlp"})
    res = layout_graph(dg)
    assert_layout_invariants(dg, res, where="compound")
    assert set(res.frames) == {"/model", "/model/layers.1", "/model/layers.1/mlp"}
    boxes = {b.key: b for b in dg.boxes}
    for key, g in dg.box_groups.items():
        fx, fy, fw, fh = res.frames[g]
        x, y = res.positions[key]
        assert fx <= x and x + boxes[key].width <= fx + fw and fy <= y and y + boxes[key].height <= fy + fh
    # nested frames nest; sibling boxes outside a frame do not enter it
    ox, oy, ow, oh = res.frames["/model"]
    ix, iy, iw, ih = res.frames["/model/layers.1"]
    assert ox <= ix and ix + iw <= ox + ow and oy <= iy and iy + ih <= oy + oh
    for key, b in boxes.items():
        if dg.box_groups.get(key) not in ("/model/layers.1", "/model/layers.1/mlp"):
            x, y = res.positions[key]
            assert x + b.width <= ix or x >= ix + iw or y + b.height <= iy or y >= iy + ih, key
    assert layout_graph(dg) == res  # deterministic


@pytest.mark.parametrize("model", ["../real/magika_standard_v3_3.onnx", "../real/silero_vad_16k_op15.onnx",
                                   "../real/fw_silero_vad_v6.onnx"])
@pytest.mark.parametrize("edit", [_edit_add, _edit_remove, _edit_rename])
def test_incremental_edit_in_grouped_view_keeps_positions(model, edit):
    """The app's first view has open groups (compound layout): edits keep the picture too."""
    from editor.viewmodel import default_expanded

    m, ops = _load(LIGHT.parent / model)
    exp = default_expanded(m.graph)
    assert exp, "these models have name scopes"
    dg = _dg(m, ops, expanded=exp)
    before = layout_graph(dg)
    assert before.frames
    visible = {b.node_id for b in dg.boxes if b.kind == "node"}
    nodes = m.graph.node
    k = next(i for i in range(len(nodes) // 2, len(nodes)) if i in visible and nodes[i].output)
    m2, ids, touched = edit(m, k)
    dg2 = _dg(m2, ops, ids, expanded=exp)
    after = layout_graph(dg2, previous=before)
    assert_layout_invariants(dg2, after, where=f"{model} {edit.__name__}")
    # NOTE: an edit that widens a group's frame past its level's slack makes room the way
    # opening a group does: what lies right of the frame moves right by one offset (silero:
    # the sr input's side column of 3 boxes). So up to that room the picture stays, and
    # nearly all of it stays exactly.
    untouched = {k: p for k, p in before.positions.items() if k not in touched}
    kept, exact, moves = kept_up_to_room(untouched, after.positions)
    n = sum(1 for k in untouched if k in after.positions)
    assert kept >= 0.95 * n, f"only {kept} of {n} untouched boxes kept their place up to the room made: {moves}"
    assert exact >= 0.85 * n, f"only {exact} of {n} untouched boxes kept their exact position: {moves}"


def test_a_group_opened_mid_chain_stays_in_the_chain():
    """Opening a group in the middle of a chain (another group already open, so the root
    level is re-laid out from the previous picture) puts its frame between its neighbours,
    not below the end of the chain or at its far right (issue 30)."""
    nodes, prev = [], "x"
    for g, n in (("/a", 3), ("/b", 3), ("/mid", 12), ("/c", 3), ("/d", 3)):
        for i in range(n):
            nodes.append(helper.make_node("Relu", [prev], [f"{g}_{i}"], name=f"{g}/Relu_{i}"))
            prev = f"{g}_{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(prev, onnx.TensorProto.FLOAT, [1])])
    ids = list(range(len(nodes)))
    before = layout_graph(build_display_graph(graph, ids, opsets={"": 17}, expanded={"/a"}))
    dg = build_display_graph(graph, ids, opsets={"": 17}, expanded={"/a", "/mid"})
    after = layout_graph(dg, previous=before)
    assert_layout_invariants(dg, after, where="mid-chain group opened")
    fx, fy, fw, fh = after.frames["/mid"]
    (bx, by), (cx, cy) = after.positions["g:/b"], after.positions["g:/c"]
    bw = next(b.width for b in dg.boxes if b.key == "g:/b")
    assert by < fy and fy + fh < cy, f"/mid's frame spans y {fy}..{fy + fh}, not between /b (y {by}) and /c (y {cy})"
    assert fx < bx + bw and bx < fx + fw, f"/mid's frame spans x {fx}..{fx + fw}, beside the chain (/b: {bx}..{bx + bw})"
    # the picture made room: what lies above stays, what lies below moved down together
    assert after.positions["g:/b"] == before.positions["g:/b"]
    assert after.frames["/a"] == before.frames["/a"]
    dy = {k: after.positions[k][1] - before.positions[k][1] for k in ("g:/c", "g:/d")}
    assert dy["g:/c"] == dy["g:/d"] > 0, f"/c and /d moved down by one offset: {dy}"
