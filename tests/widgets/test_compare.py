"""The Diff dock and "Extract Selection" in the main window: a real diff of squeezenet against
an edited copy (rename, attribute, delete), the change list, clicking a change, canvas
colours probed in a rendered image, the other model side by side, and extraction."""

from __future__ import annotations

from PySide6.QtCore import QPoint

import os

import onnx
import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import LOAD_TIMEOUT_MS, open_model

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"
CONV, RELU, POOL = 39, 40, 41  # first Conv, its Relu, the MaxPool after them (main graph ids)

pytestmark = pytest.mark.skipif(not SQUEEZENET.is_file(), reason="corpus not available")


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """squeezenet with node 39 renamed, MaxPool's kernel_shape changed and a Relu deleted,
    edited through commands and saved."""
    from editor import commands as C
    from editor.document import Document

    doc = Document.open(SQUEEZENET)
    assert doc.node(CONV).op_type == "Conv" and doc.node(RELU).op_type == "Relu"
    assert doc.node(POOL).op_type == "MaxPool"
    doc.execute(C.SetNodeField(CONV, "name", "conv1_renamed"))
    doc.execute(C.SetAttribute(POOL, "kernel_shape", [2, 2]))
    doc.execute(C.DeleteNodes([RELU], reconnect=True))
    path = tmp_path_factory.mktemp("diff") / "squeezenet_edited.onnx"
    doc.save(path)
    return path


@pytest.fixture
def dock(window):
    """The window's Diff dock."""
    return window.compare_dock


def compare(qtbot, dock, path, tab=None):
    assert dock.compare_with(path, tab)
    assert dock.busy and dock.panel.busy.isVisible() and dock.isVisible()
    qtbot.waitUntil(lambda: not dock.busy, timeout=LOAD_TIMEOUT_MS)
    assert dock.diff is not None, dock.panel.message.text()
    return dock.diff


def render(scene, rect):
    """``rect`` of the scene rendered 1:1 into an image."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    img = QImage(int(rect.width()), int(rect.height()), QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    scene.render(p, QRectF(0, 0, img.width(), img.height()), rect)
    p.end()
    return img


def frame_colour(scene, key):
    """The colour on the left edge of box ``key``'s diff frame (box rect less 3 px, 4 px pen)."""
    item = scene.item_for(key)
    assert item is not None, key
    box = item.scene_rect()
    area = box.adjusted(-20, -20, 20, 20)
    img = render(scene, area)
    x = int(box.left() - 3 - area.left())
    y = int(box.center().y() - area.top())
    return img.pixelColor(x, y)


def is_amber(c) -> bool:
    return c.red() > 200 and 110 < c.green() < 190 and c.blue() < 80


def test_install_adds_actions_menus_and_hidden_dock(window, dock) -> None:
    from PySide6.QtCore import Qt

    assert window.compare_dock is dock and not dock.isVisible()
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert "Tools" in titles and titles.index("Tools") < titles.index("Help")
    assert dock.act_compare.shortcut().toString() == "Ctrl+Shift+D"
    assert dock.act_extract.shortcut().toString() == "Ctrl+Shift+E"
    tools = window.registry.menu("Tools")
    assert dock.act_extract in tools.actions() and dock.act_compare in tools.actions()
    assert not dock.act_compare.isEnabled()  # no model open


def test_diff_lists_the_edits_selects_and_colours(qtbot, window, dock, edited, tmp_path) -> None:
    tab = open_model(qtbot, window, SQUEEZENET)
    diff = compare(qtbot, dock, edited)
    # exactly the three edits
    assert sorted(c.a.id for c in diff.nodes_changed) == [CONV, POOL]
    assert [r.id for r in diff.nodes_removed] == [RELU] and not diff.nodes_added
    assert not (diff.initializers_changed or diff.initializers_added or diff.initializers_removed
                or diff.io_changes or diff.model_changes)
    by_a = {c.a.id: c for c in diff.nodes_changed}
    assert by_a[CONV].kinds == ["renamed"] and by_a[CONV].b.name == "conv1_renamed"
    assert [(a.name, a.old, a.new) for a in by_a[POOL].attributes] == [("kernel_shape", "[3, 3]", "[2, 2]")]
    assert {k: v for k, v in diff.status_a.items() if v != "same"} == {CONV: "changed", POOL: "changed",
                                                                       RELU: "removed"}
    # the list: three node rows, the attribute shown old | new
    panel = dock.panel
    rows = panel.node_rows()
    assert len(rows) == 3
    assert "2 changed" in panel.summary.text() and "1 removed" in panel.summary.text()
    pool_row = next(r for r in rows if r.data(0, 256).a == POOL)
    attr = pool_row.child(next(i for i in range(pool_row.childCount())
                               if pool_row.child(i).text(0) == "attribute kernel_shape"))
    assert (attr.text(1), attr.text(2)) == ("[3, 3]", "[2, 2]")
    conv_row = next(r for r in rows if r.data(0, 256).a == CONV)
    name_row = conv_row.child(0)
    assert (name_row.text(0), name_row.text(2)) == ("name", "conv1_renamed")
    # clicking a change selects and centres the node on the canvas
    scene = tab.canvas.scene
    panel.tree.setCurrentItem(pool_row)
    assert tab.selection.current is not None and tab.selection.current.node == POOL
    qtbot.waitUntil(lambda: scene.selected_keys() == [f"n:{POOL}"])
    assert tab.canvas.view.visible_scene_rect().contains(scene.item_for(f"n:{POOL}").scene_rect().center())
    # the canvas: changed boxes amber, removed red, same boxes not coloured
    overlay = dock.overlay_for(tab)
    assert overlay.visible and overlay.overlay.scene() is scene
    assert is_amber(frame_colour(scene, f"n:{POOL}"))
    removed = frame_colour(scene, f"n:{RELU}")
    assert removed.red() > 190 and removed.green() < 90 and removed.blue() < 90
    assert not is_amber(frame_colour(scene, "n:42"))
    # toggle off and on
    panel.overlay_check.setChecked(False)
    assert overlay.overlay.scene() is None and not is_amber(frame_colour(scene, f"n:{POOL}"))
    panel.overlay_check.setChecked(True)
    assert is_amber(frame_colour(scene, f"n:{POOL}"))
    shot = os.environ.get("STUDIO_SHOT_DIR")
    if shot:  # for a human look: STUDIO_SHOT_DIR=/tmp pytest ...
        window.grab().save(os.path.join(shot, "diff_window.png"))
    # closing the dock clears the colours and the list
    dock.close()
    assert dock.diff is None and not panel.node_rows()
    assert overlay.overlay.scene() is None and not is_amber(frame_colour(scene, f"n:{POOL}"))


def test_other_model_side_by_side(qtbot, window, dock, edited) -> None:
    tab = open_model(qtbot, window, SQUEEZENET)
    compare(qtbot, dock, edited)
    with qtbot.waitSignal(window.modelShown, timeout=LOAD_TIMEOUT_MS):
        dock.open_other()
    tab_b = dock.tab_b
    assert tab_b is not None and tab_b.path == edited
    assert dock.panel.open_button.text() == "Show Other Model"
    assert window.tabs.indexOf(tab_b) == window.tabs.indexOf(tab) + 1
    pool_b = dock.diff.pairs[POOL]
    assert tab_b.doc.node(pool_b).op_type == "MaxPool"
    assert dock.overlay_for(tab_b).statuses_by_key()[f"n:{pool_b}"] == "changed"
    qtbot.waitUntil(lambda: tab_b.canvas.scene.item_for(f"n:{pool_b}") is not None)
    assert is_amber(frame_colour(tab_b.canvas.scene, f"n:{pool_b}"))
    # a changed node selects its match in both tabs
    row = next(r for r in dock.panel.node_rows() if r.data(0, 256).a == POOL)
    dock.panel.tree.setCurrentItem(row)
    assert tab.selection.current.node == POOL and tab_b.selection.current.node == pool_b
    if os.environ.get("STUDIO_SHOT_DIR"):
        window.tabs.setCurrentWidget(tab_b)
        qtbot.wait(50)
        window.grab().save(os.path.join(os.environ["STUDIO_SHOT_DIR"], "diff_other.png"))
    # a removed node is only in A: A's tab comes to the front
    window.tabs.setCurrentWidget(tab_b)
    row = next(r for r in dock.panel.node_rows() if r.data(0, 256).a == RELU)
    dock.panel.tree.setCurrentItem(row)
    assert window.current_tab() is tab and tab.selection.current.node == RELU
    # closing B's tab drops its overlay, the comparison stays
    window.close_tab(window.tabs.indexOf(tab_b))
    qtbot.waitUntil(lambda: dock.tab_b is None)
    assert dock.panel.open_button.text() == "Open Other in a Tab"
    assert dock.diff is not None and dock.overlay_for(tab) is not None


def test_compare_refuses_a_bad_file_with_one_line(qtbot, window, dock, tmp_path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    open_model(qtbot, window, SQUEEZENET)
    assert dock.compare_with(bad)
    qtbot.waitUntil(lambda: not dock.busy, timeout=LOAD_TIMEOUT_MS)
    assert dock.diff is None
    text = dock.panel.message.text()
    assert text.startswith("Cannot compare:") and "\n" not in text
    assert window.statusBar().currentMessage().startswith("Cannot compare:")


def test_extract_selection_opens_a_valid_untitled_model(qtbot, window, dock) -> None:
    from widgets.compare import selected_node_ids
    from widgets.common.selection import Target

    tab = open_model(qtbot, window, SQUEEZENET)
    # nothing selected: refused with one line, no new tab
    tab.selection.clear("test")
    assert dock.extract() is None and len(window.tab_list()) == 1
    assert window.statusBar().currentMessage() == "Cannot extract: select one or more nodes to extract"
    ids = [42, 43, 44]  # Conv -> Relu -> Conv of fire2
    tab.selection.select([Target.of_node(0, i) for i in ids], "test")
    assert selected_node_ids(tab) == ids
    with qtbot.waitSignal(window.modelShown, timeout=LOAD_TIMEOUT_MS) as blocker:
        doc = dock.extract()
    new_tab = blocker.args[0]
    assert new_tab.doc is doc and window.current_tab() is new_tab and len(window.tab_list()) == 2
    # unsaved work from its first moment (issue 29): Quit and tab close ask about it
    assert doc.path is None and doc.is_modified and new_tab.title() == "Untitled*"
    assert [n.op_type for n in doc.model.graph.node] == ["Conv", "Relu", "Conv"]
    onnx.checker.check_model(doc.model, full_check=True)
    assert not tab.doc.is_modified  # the source document is untouched
    # the canvas context menu offers it too
    from widgets.actions.context import context_menu

    window.tabs.setCurrentWidget(tab)
    menu = context_menu(window, tab, QPoint(1, 1), QPoint(1, 1), exec_menu=False)
    assert dock.act_extract in menu.actions()


def test_menu_action_live_tab_stale_and_refresh(qtbot, monkeypatch, window, dock, edited) -> None:
    from PySide6.QtWidgets import QFileDialog

    from editor import commands as C

    tab = open_model(qtbot, window, SQUEEZENET)
    tab_b = open_model(qtbot, window, edited)
    window.tabs.setCurrentWidget(tab)
    # B is open and edited further: the menu action diffs against the open document as it is
    tab_b.doc.execute(C.SetNodeField(tab_b.doc.find_nodes("n3")[0], "name", "squeeze"))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(edited), "")))
    dock.act_compare.trigger()
    qtbot.waitUntil(lambda: not dock.busy, timeout=LOAD_TIMEOUT_MS)
    diff = dock.diff
    assert dock.tab_b is tab_b
    assert sorted(c.a.id for c in diff.nodes_changed) == [CONV, POOL, 42]
    assert dock.overlay_for(tab_b).statuses_by_key()[f"n:{diff.pairs[42]}"] == "changed"
    # an edit to A makes the list stale; Refresh compares again
    assert not dock.panel.refresh_button.isVisible()
    tab.doc.execute(C.SetAttribute(46, "pads", [0, 0, 0, 0]))  # the fire2 3x3 Conv
    assert dock.stale and dock.panel.refresh_button.isVisible()
    dock.panel.refresh_button.click()
    qtbot.waitUntil(lambda: not dock.busy, timeout=LOAD_TIMEOUT_MS)
    assert not dock.stale and not dock.panel.refresh_button.isVisible()
    assert sorted(c.a.id for c in dock.diff.nodes_changed) == [CONV, POOL, 42, 46]
    # an edit to the other open model counts too; closing the dock stops listening
    tab_b.doc.undo()
    assert dock.stale
    dock.close()
    assert not dock.stale
    tab.doc.undo()
    assert not dock.stale and not dock.panel.refresh_button.isVisible()


SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"


@pytest.mark.skipif(not SILERO.is_file(), reason="corpus not available")
def test_snapshot_ids_translate_to_live_ids_in_subgraphs() -> None:
    """A live document whose ids have gaps (a deleted node, an added one) and subgraphs:
    every node of a snapshot translates to the live node at the same place."""
    from editor import commands as C
    from editor.document import Document
    from editor.diff import diff_models
    from widgets.compare.task import DiffOutcome, SideMap, node_keys, snapshot, translate

    doc = Document.open(SILERO)
    assert any(s.kind == "subgraph" for s in doc.index.scopes.values())
    # a gap at the front of the main graph and a new node at its end: ids and positions disagree
    doc.execute(C.AddNode(0, "Identity", inputs=["/Constant_output_0"], outputs=["extra_out"]))
    doc.execute(C.DeleteNodes([0, 1], reconnect=False))
    snap = Document(snapshot(doc))
    live = SideMap.of(doc)
    keys = node_keys(snap.index)
    moved = 0
    for nid, key in keys.items():
        lid = live.ids[key]
        moved += lid != nid
        a, b = snap.node(nid), doc.node(lid)
        assert (a.op_type, a.name, list(a.input), list(a.output)) == (b.op_type, b.name, list(b.input), list(b.output))
    assert moved > 0
    assert len(keys) == sum(len(s.node_ids) for s in doc.index.scopes.values())
    # the diff of the document with itself, through the snapshot, lands on live ids
    other = Document.open(SILERO)
    outcome = DiffOutcome(diff_models(snap, other), keys, node_keys(other.index))
    diff = translate(outcome, live, SideMap.of(other))
    assert set(diff.status_a) == set(doc.index.nodes)
    assert all(doc.node(a).op_type == other.node(b).op_type for a, b in diff.pairs.items())


def test_group_boxes_take_the_strongest_status_inside() -> None:
    from types import SimpleNamespace

    from widgets.compare.overlay import box_statuses

    def item(name):
        return SimpleNamespace(box=SimpleNamespace(name=name))

    scene = SimpleNamespace(node_items=lambda: {"n:1": item("/a/x"), "g:/a/b/": item("/a/b/"), "g:/c": item("/c")})
    names = {1: "/a/x", 2: "/a/b/y", 3: "/a/b/z", 4: "/c/d/e", 5: "/elsewhere/q"}
    status = {1: "same", 2: "same", 3: "changed", 4: "same", 5: "removed"}
    assert box_statuses(scene, status, names) == {"n:1": "same", "g:/a/b/": "changed", "g:/c": "same"}
