"""Control-flow bodies (If/Loop/Scan) expanded in place as frames in the display model."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from editor.document import Document
from editor.layout import layout_graph
from editor.viewmodel import body_key, build_display_graph, document_bodies
from tests.conftest import CORPUS, corpus_models
from tests.editor.layout_checks import assert_layout_invariants

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"


def _has_bodies(p: Path) -> bool:
    b = p.read_bytes()
    if b"then_branch" not in b and b"body" not in b:
        return False
    m = onnx.load_from_string(b)
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for n in m.graph.node for a in n.attribute)


CONTROL_FLOW = [p for p in corpus_models() if _has_bodies(p)]


def _doc(p: Path) -> Document:
    return Document(onnx.load(str(p), load_external_data=False), path=str(p))


def _build(doc: Document, expanded: set[str]):
    main = doc.scope(doc.index.main)
    return build_display_graph(main.graph, main.node_ids, opsets=doc.opsets(), expanded=expanded,
                               bodies=document_bodies(doc))


def _open_everything(doc: Document):
    """Expand every name-scope group and every body, to a fixpoint (nested bodies too)."""
    exp: set[str] = set()
    while True:
        dg = _build(doc, exp)
        new = {b.name for b in dg.boxes if b.kind == "group"}
        new |= {body_key(b.node_id) for b in dg.boxes if b.subgraphs}
        if new <= exp:
            return dg, exp
        exp |= new


def test_control_flow_corpus_found():
    names = {p.parent.name if p.name == "model.onnx" else p.name for p in CONTROL_FLOW}
    assert {"test_if", "test_loop11", "test_scan9_sum", "silero_vad_16k_op15.onnx"} <= names


def test_collapsed_is_unchanged():
    doc = _doc(CORPUS / "onnx-backend" / "node" / "test_loop11" / "model.onnx")
    main = doc.scope(doc.index.main)
    plain = build_display_graph(main.graph, main.node_ids, opsets=doc.opsets(), expanded=set())
    with_bodies = _build(doc, set())
    assert plain == with_bodies
    assert plain == _build(doc, {"@12345"})  # a key of no node changes nothing


def test_loop_body_expanded():
    doc = _doc(CORPUS / "onnx-backend" / "node" / "test_loop11" / "model.onnx")
    main = doc.scope(doc.index.main)
    loop_i = [n.op_type for n in main.graph.node].index("Loop")
    nid = main.node_ids[loop_i]
    (sid,) = doc.index.children[nid]
    body = doc.scope(sid)
    dg = _build(doc, {body_key(nid)})
    keys = {b.key for b in dg.boxes}
    frame = body_key(nid)
    # the owner keeps its box and edges, inside its frame; the body has its own sub-frame
    assert f"n:{nid}" in keys and dg.box_groups[f"n:{nid}"] == frame
    assert dg.group_parents[frame] == "" and dg.group_parents[f"{frame}/body"] == frame
    assert dg.group_labels[f"{frame}/body"] == "body"
    drawn = [bid for bid, nd in zip(body.node_ids, body.graph.node) if nd.op_type != "Constant"]
    assert drawn
    for bid in drawn:
        assert f"n:{bid}" in keys
        assert dg.box_groups[f"n:{bid}"] == f"{frame}/body"
    # body inputs/outputs are boxes with keys that cannot collide with the outer graph's
    assert f"in:{frame}/body:iter_count" in keys or any(k.startswith(f"in:{frame}/body:") for k in keys)
    assert any(k.startswith(f"out:{frame}/body:") for k in keys)
    # every edge joins existing boxes, keys unique, deterministic
    assert len(keys) == len(dg.boxes)
    assert all(e.src in keys and e.dst in keys for e in dg.edges)
    assert dg == _build(doc, {body_key(nid)})
    # collapsing again gives today's picture
    assert _build(doc, set()) == build_display_graph(main.graph, main.node_ids, opsets=doc.opsets(),
                                                     expanded=set())


def _capture_model() -> onnx.ModelProto:
    h = onnx.helper
    f = onnx.TensorProto.FLOAT
    then_g = h.make_graph([h.make_node("Add", ["a", "y"], ["z0"], name="/blk/add"),
                           h.make_node("Mul", ["z0", "w"], ["z"], name="/blk/mul")], "then",
                          [], [h.make_tensor_value_info("z", f, [2])])
    else_g = h.make_graph([], "else", [], [h.make_tensor_value_info("a", f, [2])])
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["a"], name="/blk/relu"),
         h.make_node("Relu", ["a"], ["b"], name="/blk/relu2"),
         h.make_node("If", ["c"], ["o"], name="If_3", then_branch=then_g, else_branch=else_g)],
        "g", [h.make_tensor_value_info("x", f, [2]), h.make_tensor_value_info("y", f, [2]),
              h.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])],
        [h.make_tensor_value_info("o", f, [2]), h.make_tensor_value_info("b", f, [2])],
        initializer=[h.make_tensor("w", f, [2], [1.0, 2.0])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_captured_outer_values_are_wired():
    doc = Document(_capture_model())
    main = doc.scope(doc.index.main)
    if_nid, relu_nid = main.node_ids[2], main.node_ids[0]
    then_sid = next(s for s in doc.index.children[if_nid] if doc.scope(s).attr == "then_branch")
    add_nid = doc.scope(then_sid).node_ids[0]
    frame = body_key(if_nid)
    dg = _build(doc, {frame, "/blk"})
    edges = {(e.src, e.dst, e.value) for e in dg.edges}
    # outer producer -> body consumer, and outer graph input -> body consumer
    assert (f"n:{relu_nid}", f"n:{add_nid}", "a") in edges
    assert ("in:y", f"n:{add_nid}", "y") in edges
    # an else branch that just returns an outer value: outer producer -> body output box
    assert (f"n:{relu_nid}", f"out:{frame}/else_branch:a", "a") in edges
    assert dg.group_labels[frame] == "If_3"
    # an outer initializer read in the body is a weight of the body box, not an edge
    mul_nid = doc.scope(then_sid).node_ids[1]
    mul = next(b for b in dg.boxes if b.key == f"n:{mul_nid}")
    # (a two-element weight shows its value, named by the input it feeds: Mul input B)
    assert mul.weights == (("B", "[1, 2]"),)
    assert not any(e.value == "w" for e in dg.edges)
    # the body's "/blk" name scope does not merge with the outer "/blk" group
    assert dg.box_groups[f"n:{add_nid}"] == f"{frame}/then_branch"
    assert dg.box_groups[f"n:{relu_nid}"] == "/blk"
    # with the outer group closed, the captured edge leaves the group box
    dg2 = _build(doc, {frame})
    assert any(e.src == "g:/blk" and e.dst == f"n:{add_nid}" for e in dg2.edges)
    res = layout_graph(dg)
    assert_layout_invariants(dg, res, where="capture")


def test_if_branches_are_sub_frames():
    doc = _doc(CORPUS / "onnx-backend" / "node" / "test_if" / "model.onnx")
    main = doc.scope(doc.index.main)
    nid = main.node_ids[[n.op_type for n in main.graph.node].index("If")]
    dg = _build(doc, {body_key(nid)})
    frame = body_key(nid)
    assert {g for g, p in dg.group_parents.items() if p == frame} == {f"{frame}/then_branch", f"{frame}/else_branch"}
    for sid in doc.index.children[nid]:
        for bid in doc.scope(sid).node_ids:
            assert dg.box_groups.get(f"n:{bid}", "").startswith(f"{frame}/")


def test_silero_nested_bodies_and_groups_prefixed():
    doc = _doc(SILERO)
    dg, exp = _open_everything(doc)
    all_body_nodes = {nid for sid, sc in doc.index.scopes.items() if sc.kind == "subgraph" for nid in sc.node_ids}
    keys = {b.key for b in dg.boxes}
    drawn_body = {int(k[2:]) for k in keys if k.startswith("n:")} & all_body_nodes
    assert drawn_body, "no body node drawn"
    # nested Ifs: some body frame lies inside another body frame
    nested = [g for g, p in dg.group_parents.items() if g.startswith("@") and "/" not in g and p.startswith("@")]
    assert nested
    # name-scope groups from bodies are prefixed with their body frame path
    for g in dg.group_parents:
        if not g.startswith("/"):
            assert g.startswith("@"), g
    res = layout_graph(dg)
    assert_layout_invariants(dg, res, where="silero all open")
    assert set(dg.group_parents) <= set(res.frames)


@pytest.mark.parametrize("path", CONTROL_FLOW, ids=lambda p: p.parent.name if p.name == "model.onnx" else p.name)
def test_layout_invariants_all_bodies_open(path: Path):
    doc = _doc(path)
    dg, _ = _open_everything(doc)
    keys = [b.key for b in dg.boxes]
    assert len(set(keys)) == len(keys)
    assert all(e.src in set(keys) and e.dst in set(keys) for e in dg.edges)
    res = layout_graph(dg)
    assert_layout_invariants(dg, res, where=path.name)
    # every frame lies inside its parent frame
    for g, p in dg.group_parents.items():
        if p:
            x, y, w, h = res.frames[g]
            px, py, pw, ph = res.frames[p]
            assert px - 1e-6 <= x and x + w <= px + pw + 1e-6 and py - 1e-6 <= y and y + h <= py + ph + 1e-6
