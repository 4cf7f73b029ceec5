"""Canvas: If/Loop/Scan bodies expanded in place inside a DocumentTab (silero's nested Ifs)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import onnx  # noqa: E402

from editor.document import Document  # noqa: E402
from tests.conftest import CORPUS  # noqa: E402
from tests.widgets.canvas_support import kept_up_to_room  # noqa: E402
from widgets.window.document_tab import DocumentTab  # noqa: E402
from widgets.common.selection import Target  # noqa: E402

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"


def _tab(qtbot) -> DocumentTab:
    doc = Document(onnx.load(str(SILERO), load_external_data=False), path=str(SILERO))
    tab = DocumentTab(doc)
    qtbot.addWidget(tab)
    tab.resize(1200, 900)
    qtbot.waitUntil(lambda: tab.is_ready, timeout=20000)
    return tab


def _first_if(doc) -> int:
    main = doc.scope(doc.index.main)
    return next(nid for nid, n in zip(main.node_ids, main.graph.node) if n.op_type == "If")


def test_toggle_body_in_place_keeps_the_picture_and_selects_body_nodes(qtbot):
    tab = _tab(qtbot)
    doc, scene, controller = tab.doc, tab.canvas.scene, tab.canvas.controller
    nid = _first_if(doc)
    main = doc.scope(doc.index.main)
    controller.expand_paths(list(tab._tree().chain(main.position(nid))), sync=True)
    assert scene.item_for(f"n:{nid}") is not None
    before = dict(scene.layout_result.positions)

    # double-click on the If box (the tab's activated handler) toggles its bodies in place
    with qtbot.waitSignal(controller.laidOut, timeout=20000):
        tab._on_activated(f"n:{nid}")
    assert tab.scope_id == doc.index.main  # no separate view
    after = scene.layout_result.positions
    frames = scene.layout_result.frames
    assert f"@{nid}" in frames
    bodies = doc.index.children[nid]
    body_nodes = [b for sid in bodies for b, n in zip(doc.scope(sid).node_ids, doc.scope(sid).graph.node)
                  if n.op_type != "Constant"]
    assert body_nodes and all(scene.item_for(f"n:{b}") is not None for b in body_nodes)
    for sid in bodies:
        assert f"@{nid}/{doc.scope(sid).attr}" in frames
    # boxes the toggle did not touch keep their places: the picture makes room for the
    # bodies' frame where the If was (what lies below moves down, what lies right of the
    # grown frames moves right, each by one offset), it does not put them out of the way
    common = [k for k in before if k in after]
    assert len(common) == len(before)
    kept, exact, moves = kept_up_to_room(before, after)
    assert kept >= 0.9 * len(common), f"{kept} of {len(common)} boxes kept their place up to the room made: {moves}"
    assert exact >= 0.3 * len(common), f"what lies above and left stays put: {moves}"

    # clicking a body node selects it as a node of its body scope
    body = body_nodes[0]
    scene.select_keys([f"n:{body}"])
    assert list(tab.selection.targets) == [Target.of_node(doc.index.node_scope[body], body)]
    assert doc.index.node_scope[body] in bodies

    # the context menu offers collapsing and the separate view
    menu = tab.canvas.view.context_menu(scene.item_for(f"n:{nid}"))
    texts = [a.text() for a in menu.actions()]
    assert "Collapse bodies" in texts and "Open body as its own view" in texts
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=20000):
        next(a for a in menu.actions() if a.text() == "Open body as its own view").trigger()
    assert tab.scope_id == bodies[0]
    with qtbot.waitSignal(controller.laidOut, timeout=20000):
        tab.show_scope(doc.index.main)


def test_collapse_and_reveal_a_nested_body_node(qtbot):
    tab = _tab(qtbot)
    doc, scene, controller = tab.doc, tab.canvas.scene, tab.canvas.controller
    nid = _first_if(doc)
    main = doc.scope(doc.index.main)
    controller.expand_paths(list(tab._tree().chain(main.position(nid))) + [f"@{nid}"], sync=True)
    assert f"@{nid}" in scene.layout_result.frames
    # a click on a body sub-frame's title closes the owner's bodies (it is no group itself)
    attr = doc.scope(doc.index.children[nid][0]).attr
    controller.toggle_group(f"g:@{nid}/{attr}", sync=True)
    assert f"@{nid}" not in scene.layout_result.frames
    assert f"@{nid}/{attr}" not in controller.expanded()
    controller.toggle_body(nid, sync=True)
    assert f"@{nid}" in scene.layout_result.frames
    controller.toggle_body(nid, sync=True)
    assert f"@{nid}" not in scene.layout_result.frames
    assert f"@{nid}" not in (scene.graph.group_parents or {})

    # a node two bodies deep (silero nests Ifs)
    nested = [s for s, sc in doc.index.scopes.items()
              if sc.kind == "subgraph" and doc.scope(doc.index.node_scope[sc.owner]).kind == "subgraph"
              and sc.graph.node]
    assert nested, "silero has Ifs inside If bodies"
    sid = nested[0]
    target_nid = next(b for b, n in zip(doc.scope(sid).node_ids, doc.scope(sid).graph.node) if n.op_type != "Constant")
    # with every body around it open in this view, selecting it elsewhere selects it here
    paths = tab._body_paths(target_nid)
    assert paths is not None
    controller.expand_paths(paths, sync=True)
    owner = doc.scope(sid).owner
    assert f"@{owner}" in scene.layout_result.frames and scene.item_for(f"n:{target_nid}") is not None
    tab.selection.select([Target.of_node(sid, target_nid)], "test")
    qtbot.waitUntil(lambda: f"n:{target_nid}" in scene.selected_keys(), timeout=20000)
    assert tab.scope_id == doc.index.main
    # with its bodies closed, it opens its own graph (the separate view) as before
    controller.toggle_body(owner, sync=True)
    tab.selection.select([Target.of_node(doc.index.main, nid)], "test")
    tab.selection.select([Target.of_node(sid, target_nid)], "test")
    qtbot.waitUntil(lambda: tab.scope_id == sid, timeout=20000)
