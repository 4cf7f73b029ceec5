"""Drawing quality: crossings are counted right, and the layout avoids them (no Qt)."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.layout import layout_graph
from editor.layout.ordering import layer_crossings
from editor.layout.quality import count_crossings, drawing_stats
from editor.viewmodel import build_display_graph
from tests.conftest import CORPUS
from tests.editor.layout_checks import assert_layout_invariants, edges_behind_boxes


def _resnet(blocks: int) -> onnx.ModelProto:
    """A ResNet-style chain: conv stacks with identity or projection skips (planar)."""
    mk = helper.make_node
    nodes, inits = [], []
    x = "x"
    for i in range(blocks):
        p = f"/layer{i // 3}/block{i}"
        w = numpy_helper.from_array(np.zeros((4, 4, 1, 1), np.float32), f"{p}/w")
        inits.append(w)
        nodes += [mk("Conv", [x, w.name], [f"{p}/c1"], name=f"{p}/conv1"),
                  mk("Relu", [f"{p}/c1"], [f"{p}/r1"], name=f"{p}/relu1"),
                  mk("Conv", [f"{p}/r1", w.name], [f"{p}/c2"], name=f"{p}/conv2"),
                  mk("Relu", [f"{p}/c2"], [f"{p}/r2"], name=f"{p}/relu2"),
                  mk("Conv", [f"{p}/r2", w.name], [f"{p}/c3"], name=f"{p}/conv3")]
        skip = x
        if i % 3 == 0:  # projection shortcut: a conv on the skip path
            nodes.append(mk("Conv", [x, w.name], [f"{p}/proj"], name=f"{p}/downsample"))
            skip = f"{p}/proj"
        nodes += [mk("Add", [f"{p}/c3", skip], [f"{p}/sum"], name=f"{p}/add"),
                  mk("Relu", [f"{p}/sum"], [f"{p}/out"], name=f"{p}/relu")]
        x = f"{p}/out"
    g = helper.make_graph(nodes, "resnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4, 8, 8])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_residual_chain_has_no_crossings_flat_and_grouped():
    m = _resnet(16)
    ids = list(range(len(m.graph.node)))
    for expanded in (None, {"/layer1", "/layer1/block4"}):
        dg = build_display_graph(m.graph, ids, opsets={"": 18}, expanded=expanded)
        res = layout_graph(dg)
        assert_layout_invariants(dg, res, where=f"resnet {expanded}")
        assert not res.references
        assert count_crossings(list(res.routes.values())) == 0
        assert layout_graph(dg) == res  # deterministic


def test_crossing_count_matches_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(30):
        routes = [[tuple(p) for p in rng.integers(0, 30, size=(int(rng.integers(2, 5)), 2)).astype(float)]
                  for _ in range(12)]
        segs = [(k, a, b) for k, r in enumerate(routes) for a, b in zip(r, r[1:]) if a != b]

        def cross(a, b, c, d):
            def o(p, q, r):
                v = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
                return int(v > 0) - int(v < 0)
            return o(c, d, a) * o(c, d, b) < 0 and o(a, b, c) * o(a, b, d) < 0

        brute = sum(1 for (k1, a, b), (k2, c, d) in itertools.combinations(segs, 2) if k1 != k2 and cross(a, b, c, d))
        assert count_crossings(routes) == brute
        # only the crossings a flagged route takes part in (what wrap_columns compares)
        flags = rng.random(len(routes)) < 0.3
        brute_flagged = sum(1 for (k1, a, b), (k2, c, d) in itertools.combinations(segs, 2)
                            if k1 != k2 and (flags[k1] or flags[k2]) and cross(a, b, c, d))
        got = count_crossings(routes, flags)
        assert got == brute_flagged, f"flagged {flags.nonzero()[0].tolist()}: counted {got}, brute force {brute_flagged}"
    # edges sharing an end (one output feeding two inputs) do not cross
    assert count_crossings([[(0, 0), (0, 10)], [(0, 0), (5, 10)]]) == 0
    for _ in range(30):
        m = int(rng.integers(0, 30))
        lay, up, lo = rng.integers(0, 3, m), rng.integers(0, 5, m).astype(float), rng.integers(0, 5, m).astype(float)
        brute = sum(1 for i, j in itertools.combinations(range(m), 2)
                    if lay[i] == lay[j] and (up[i] - up[j]) * (lo[i] - lo[j]) < 0)
        assert layer_crossings(lay, up, lo) == brute


def test_crossed_input_order_is_untangled():
    """Two parallel chains feeding an Add in the opposite order of the graph inputs: the
    ports decide, the Add's left input comes from the left chain and nothing crosses."""
    mk = helper.make_node
    nodes = []
    for c, src in (("a", "x"), ("b", "y")):
        v = src
        for k in range(4):
            nodes.append(mk("Relu", [v], [f"{c}{k}"], name=f"{c}{k}"))
            v = f"{c}{k}"
    nodes.append(mk("Add", ["b3", "a3"], ["s"], name="add"))
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1]) for n in ("x", "y")]
    g = helper.make_graph(nodes, "two", vi, [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    dg = build_display_graph(m.graph, list(range(len(nodes))), opsets={"": 18})
    res = layout_graph(dg)
    stats = drawing_stats(len(dg.boxes), len(dg.edges), res.routes, res.width, res.height)
    assert stats["crossings"] == 0 and stats["edges"] == len(dg.edges)
    x = {b.label + b.name: res.positions[b.key][0] for b in dg.boxes}
    assert x["Relub3"] < x["Relua3"]  # the chain feeding port 0 is on the left


def test_tall_drawing_wraps_into_columns_keeping_the_invariants():
    m = _resnet(30)
    ids = list(range(len(m.graph.node)))
    for expanded in (None, {"/layer1", "/layer4"}):
        dg = build_display_graph(m.graph, ids, opsets={"": 18}, expanded=expanded)
        strip = layout_graph(dg)
        res = layout_graph(dg, wrap=True)
        assert_layout_invariants(dg, res, where=f"wrapped {expanded}")
        assert not edges_behind_boxes(dg, res), f"wrapped {expanded}: edges behind boxes"
        if expanded is None:
            assert strip.height / strip.width > 8 >= res.height / res.width
            assert count_crossings(list(res.routes.values())) == 0
        assert layout_graph(dg, wrap=True) == res


def _fpn(n: int = 60, taps: tuple[int, ...] = (12, 24, 36, 48)) -> onnx.ModelProto:
    """A detector's shape: a long backbone chain whose features at several depths all feed
    one head at the bottom (a DBNet's FPN), so several long edges cross every cut."""
    mk = helper.make_node
    nodes, x = [], "x"
    for i in range(n):
        nodes.append(mk("Relu", [x], [f"r{i}"], name=f"relu{i}"))
        x = f"r{i}"
    nodes.append(mk("Concat", [f"r{t}" for t in taps] + [x], ["y"], name="head", axis=1))
    vi = [helper.make_tensor_value_info(n_, TensorProto.FLOAT, [1, 4]) for n_ in ("x", "y")]
    return helper.make_model(helper.make_graph(nodes, "fpn", vi[:1], vi[1:]), opset_imports=[helper.make_opsetid("", 18)])


def test_edges_through_the_gutters_never_cross_one_another():
    """Several edges crossing one cut nest in the gutter: the one that leaves its column
    rightmost runs innermost below it and up the gutter, and highest over the next column,
    so the columns add no crossing (one lane number for both ends crossed every pair over
    the next column: 2 to 20 crossings here, and a Paddle detector stayed a 1:22 strip)."""
    from editor.layout.wrap import _wrap_into

    dg = build_display_graph(_fpn().graph, list(range(61)), opsets={"": 18})
    strip = layout_graph(dg)
    assert count_crossings(list(strip.routes.values())) == 0
    for k in (2, 3, 4, 5):
        out = _wrap_into(dg, strip, k)
        crossings = count_crossings(list(out.routes.values()))
        assert crossings == 0, f"{k} columns: {crossings} crossings, expected none"
        assert not edges_behind_boxes(dg, out), f"{k} columns: edges behind boxes"
    res = layout_graph(dg, wrap=True)
    assert res.height / res.width <= 4, f"wrapped aspect h/w {res.height / res.width:.1f}, expected <= 4"


def test_a_tall_detector_is_set_in_columns():
    """PP-OCRv4's detector (a backbone chain and a DBNet head fed from four depths) was a
    1:22 strip, because every column count added crossings: now a picture within 1:4,
    with no more crossings than the strip."""
    m = onnx.load(str(CORPUS / "real" / "ppocrv4_det.onnx"), load_external_data=False)
    dg = build_display_graph(m.graph, list(range(len(m.graph.node))), opsets={o.domain: o.version for o in m.opset_import})
    strip = layout_graph(dg)
    res = layout_graph(dg, wrap=True)
    assert strip.height / strip.width > 8, "the strip is no longer tall: this test no longer tests columns"
    assert res.height / res.width <= 4, f"h/w {res.height / res.width:.1f} in columns, expected <= 4"
    before, after = (count_crossings(list(r.routes.values())) for r in (strip, res))
    assert after <= before, f"columns added crossings: {before} -> {after}"
    assert not edges_behind_boxes(dg, res), "edges behind boxes"


def _band_shifts(before, after, keys) -> dict[int, set[tuple[float, float]]]:
    """Column -> the set of moves of its boxes from ``before`` to ``after``."""
    starts = (0,) + before.cuts
    shifts: dict[int, set[tuple[float, float]]] = {}
    for k in keys:
        col = sum(before.ranks[k] >= c for c in starts) - 1
        (x0, y0), (x1, y1) = before.positions[k], after.positions[k]
        shifts.setdefault(col, set()).add((round(x1 - x0, 6), round(y1 - y0, 6)))
    return shifts


def test_an_edit_keeps_the_columns_where_they_were():
    """The window sets a tall graph in columns too: an edit is laid out incrementally in one
    column and set in the same columns again, so every column moves as a whole or not at
    all (the boxes the user knows keep their places relative to their neighbours). An
    edge that now runs upward (a new input from lower down) goes back the same way,
    through the gutter."""
    m = _fpn()
    # a second chain beside the backbone, so an input can come from lower down
    mk = helper.make_node
    g = m.graph
    g.node.extend([mk("Relu", ["x" if i == 0 else f"s{i - 1}"], [f"s{i}"], name=f"side{i}") for i in range(50)])
    g.output.append(helper.make_tensor_value_info("s49", TensorProto.FLOAT, [1, 4]))
    ids = list(range(len(g.node)))
    dg = build_display_graph(g, ids, opsets={"": 18})
    res = layout_graph(dg, wrap=True)
    assert res.cuts and res.strip is not None, "the two chains are not set in columns"
    # edit 1: an Identity between relu30 and relu31; edit 2: relu5 also adds side40's value
    e1 = onnx.ModelProto()
    e1.CopyFrom(m)
    e1.graph.node[31].input[0] = "ident"
    e1.graph.node.append(mk("Identity", ["r30"], ["ident"], name="ident"))
    e2 = onnx.ModelProto()
    e2.CopyFrom(m)
    e2.graph.node[5].op_type = "Add"
    e2.graph.node[5].input.append("s40")
    for edit, model in (("an Identity inserted", e1), ("an input from lower down", e2)):
        dg2 = build_display_graph(model.graph, list(range(len(model.graph.node))), opsets={"": 18})
        res2 = layout_graph(dg2, previous=res, wrap=True)
        assert res2.cuts == res.cuts, f"{edit}: columns {res.cuts} became {res2.cuts}"
        assert_layout_invariants(dg2, res2, where=edit)
        kept = [b.key for b in dg2.boxes if b.key in res.positions and res.sizes[b.key] == (b.width, b.height)]
        moved = {c: v for c, v in _band_shifts(res, res2, kept).items() if len(v) > 1}
        assert not moved, f"{edit}: boxes of one column moved apart: {moved}"


@pytest.mark.parametrize("model", ["ppocrv4_det", "asr_prep_kaldi", "silero_vad_16k_op15"])
def test_columns_never_draw_an_edge_behind_a_box(model):
    """An edge that crosses between columns runs below its column, up the gutter and over
    the next one: never across a box, also when it passes a whole column on its way (a
    Paddle detector's long edge ran behind 22 boxes of the column it passed)."""
    from editor.layout.wrap import _wrap_into

    m = onnx.load(str(CORPUS / "real" / f"{model}.onnx"), load_external_data=False)
    dg = build_display_graph(m.graph, list(range(len(m.graph.node))), opsets={o.domain: o.version for o in m.opset_import})
    res = layout_graph(dg)
    for k in (2, 3, 5):   # as many columns as wrap_columns may choose
        out = _wrap_into(dg, res, k)
        assert out is not None, f"{model}: no cut for {k} columns"
        hits = edges_behind_boxes(dg, out)
        assert not hits, f"{model} in {k} columns: {len(hits)} (edge, box) pairs, e.g. {hits[:3]}"
