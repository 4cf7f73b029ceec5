"""Frames of open groups and bodies: routes cross a frame's border straight at the pin they
join, and an open If's outputs come out below its branches (issue 30: bodies that connect)."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from editor.document import Document
from editor.layout import layout_graph
from editor.layout.compound import FRAME_PAD, FRAME_TITLE
from editor.viewmodel import build_display_graph, document_bodies, group_tree
from editor.viewmodel.bodies import all_body_paths
from tests.conftest import CORPUS
from tests.editor.layout_checks import assert_layout_invariants


@pytest.fixture(scope="module")
def silero_open():
    """silero's VAD with every group and every If body open (``render --bodies``)."""
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    doc = Document(onnx.load(str(path), load_external_data=False), path=str(path))
    main = doc.scope(doc.index.main)
    expanded = set(group_tree(main.graph).parent) | all_body_paths(doc, groups="all")
    dg = build_display_graph(main.graph, list(main.node_ids), opsets=doc.opsets(), expanded=expanded,
                             bodies=document_bodies(doc))
    return dg, layout_graph(dg)


def test_routes_cross_frame_borders_straight(silero_open):
    """A frame's port sits right above (below) the pin it joins inside, so a route runs
    straight through the frame's title band and bottom padding; with evenly spread ports
    it jogged sideways there at every level (silero: 71 jogs, 35,734 px)."""
    dg, res = silero_open
    assert_layout_invariants(dg, res, where="silero, all open")
    jogs = []
    for key, pts in res.routes.items():
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            if ay != by or abs(ax - bx) <= 1:
                continue
            for path, (fx, fy, fw, fh) in res.frames.items():
                inside = fx <= min(ax, bx) and max(ax, bx) <= fx + fw
                if inside and (fy <= ay <= fy + FRAME_TITLE + 30 or fy + fh - FRAME_PAD - 30 <= ay <= fy + fh):
                    jogs.append((key, path, round(abs(ax - bx))))
    assert not jogs, f"{len(jogs)} sideways runs along a frame's border, e.g. {jogs[:3]}"


def test_an_open_if_returns_its_branch_outputs_below_them(silero_open):
    dg, res = silero_open
    boxes = {b.key: b for b in dg.boxes}
    owners = [p for p in res.frames if p.startswith("@") and "/" not in p]
    assert owners, "silero's Ifs are open"
    for frame in owners:
        owner = f"n:{frame[1:]}"
        branches = [p for p in res.frames if p.startswith(frame + "/") and p.count("/") == 1]
        back = [e for e in dg.edges if e.dst == owner and e.kind == "body"]
        # every output of every branch returns to the If (dashed, labelled with its branch)
        outs = [b.key for b in dg.boxes if b.kind == "output" and any(b.key.startswith(f"out:{p}:") for p in branches)]
        assert sorted(e.src for e in back) == sorted(outs), (frame, [e.src for e in back], outs)
        assert all(e.label.endswith(("out then", "out else")) for e in back), [e.label for e in back]
        assert boxes[owner].n_in >= max(e.dst_port for e in back) + 1
        # and the If lies below its branches, so its outputs leave from where they end
        y_if = res.positions[owner][1]
        for p in branches:
            fx, fy, fw, fh = res.frames[p]
            assert fy + fh < y_if, f"{owner} at y {y_if:.0f} is not below its branch {p} (bottom {fy + fh:.0f})"


def test_a_closed_if_has_no_return_edges():
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], "g",
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    doc = Document(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    main = doc.scope(doc.index.main)
    nid = main.node_ids[0]
    kw = dict(opsets=doc.opsets(), bodies=document_bodies(doc))
    closed = build_display_graph(main.graph, list(main.node_ids), expanded=set(), **kw)
    assert [e.label for e in closed.edges if e.dst == f"n:{nid}" and e.kind == "body"] == ["1 · in else/then"]
    opened = build_display_graph(main.graph, list(main.node_ids), expanded={f"@{nid}"}, **kw)
    back = sorted((e.src, e.dst_port, e.label) for e in opened.edges if e.dst == f"n:{nid}" and e.kind == "body")
    assert back == [(f"out:@{nid}/else_branch:e", 1, "out else"), (f"out:@{nid}/then_branch:t", 2, "out then")], \
        f"each branch output returns to the If, after its input: {back}"
    res = layout_graph(opened)
    assert_layout_invariants(opened, res, where="open If")
    assert res.positions[f"n:{nid}"][1] > max(fy + fh for p, (_, fy, _, fh) in res.frames.items() if "/" in p)
