"""The Diff dock and "Extract Selection" in the main window: a real diff of squeezenet against
an edited copy (rename, attribute, delete), the change list, clicking a change, canvas
colours probed in a rendered image, the other model side by side, and extraction."""

from __future__ import annotations

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
    from widgets.compare import install_compare

    return install_compare(window)


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
    edit = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Edit")
    assert dock.act_extract in edit.actions() and dock.act_compare in dock.tools_menu.actions()
    assert not dock.act_compare.isEnabled()  # no model open


def test_diff_lists_the_edits_selects_and_colours(qtbot, window, dock, edited, tmp_path) -> None:
    tab = open_model(qtbot, window, SQUEEZENET)
    diff = compare(qtbot, dock, edited)
    # exactly the three edits
    assert [c.a.id for c in diff.nodes_changed] == [CONV, POOL] or sorted(c.a.id for c in diff.nodes_changed) == [CONV, POOL]
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
    panel.tree.itemClicked.emit(pool_row, 0)
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
    assert window.tabs.indexOf(tab_b) == window.tabs.indexOf(tab) + 1
    pool_b = dock.diff.pairs[POOL]
    assert tab_b.doc.node(pool_b).op_type == "MaxPool"
    assert dock.overlay_for(tab_b).statuses_by_key()[f"n:{pool_b}"] == "changed"
    qtbot.waitUntil(lambda: tab_b.canvas.scene.item_for(f"n:{pool_b}") is not None)
    assert is_amber(frame_colour(tab_b.canvas.scene, f"n:{pool_b}"))
    # a changed node selects its match in both tabs
    row = next(r for r in dock.panel.node_rows() if r.data(0, 256).a == POOL)
    dock.panel.tree.itemClicked.emit(row, 0)
    assert tab.selection.current.node == POOL and tab_b.selection.current.node == pool_b
    # a removed node is only in A: A's tab comes to the front
    window.tabs.setCurrentWidget(tab_b)
    row = next(r for r in dock.panel.node_rows() if r.data(0, 256).a == RELU)
    dock.panel.tree.itemClicked.emit(row, 0)
    assert window.current_tab() is tab and tab.selection.current.node == RELU
    # closing B's tab drops its overlay, the comparison stays
    window.close_tab(window.tabs.indexOf(tab_b))
    qtbot.waitUntil(lambda: dock.tab_b is None)
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
    from widgets.selection import Target

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
    assert doc.path is None and new_tab.title() == "Untitled"
    assert [n.op_type for n in doc.model.graph.node] == ["Conv", "Relu", "Conv"]
    onnx.checker.check_model(doc.model, full_check=True)
    assert not tab.doc.is_modified  # the source document is untouched
    # the canvas context menu offers it too
    menu = tab.canvas.view.context_menu(None)
    assert dock.act_extract in menu.actions()
