"""Rename any value from the canvas: F2 on a clicked edge or a graph output box, the edge's
own context menu (a right-click on an edge opens the value's menu, not the background's),
and the Properties panel; each is one undo step named "Rename value 'a' → 'b'", and the
rename reaches every use (values captured by If bodies included)."""

from __future__ import annotations

import math

import onnx
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.widgets.test_edit_support import SILERO, SQUEEZENET, edit_copy, wait_layout
from widgets.actions.context import context_menu
from widgets.actions.palette import entries, ranked

LEFT = Qt.MouseButton.LeftButton


def edge_point(tab, value: str) -> QPoint:
    """A viewport point on an edge carrying ``value`` where that edge is the one hit."""
    view, scene = tab.canvas.view, tab.canvas.scene
    view.set_zoom(0.55)
    for edge, route, _ in scene.edge_geometry().routed:
        if edge.value != value:
            continue
        for a, b in sorted(zip(route, route[1:]), key=lambda s: -math.dist(*s)):
            mid = QPointF((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
            view.centerOn(mid)
            pos = view.mapFromScene(mid)
            hit = view.edge_at(pos)
            if view.key_at(pos) is None and hit is not None and hit.value == value:
                return pos
    raise AssertionError(f"no clickable edge carries {value!r}")


def type_into_editor(qtbot, editing, text: str) -> None:
    editor = editing._rename_editor
    assert editor is not None and editor.isVisible(), "F2 opened no editor over the canvas"
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def test_f2_on_a_clicked_edge_renames_the_value_everywhere_one_undo(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SILERO, tmp_path)
    main = doc.index.main
    # a value the main graph makes and two If bodies capture
    old = "/model/encoder/3/activation/Relu_output_0"
    uses = doc.consumers(main, old, nested=True)
    assert any(doc.index.node_scope[n] != main for n, _ in uses), "the value is captured by a body"
    window.activateWindow()
    QTest.mouseClick(tab.canvas.view.viewport(), LEFT, Qt.KeyboardModifier.NoModifier, edge_point(tab, old))
    assert tab.canvas.scene.selected_value() == old
    QTest.keyClick(tab.canvas.view, Qt.Key.Key_F2)
    type_into_editor(qtbot, editing, "encoder_out")
    assert doc.stack.undo_label == f"Rename value {old!r} → 'encoder_out'", doc.stack.undo_label
    assert [doc.node(n).input[k] for n, k in uses] == ["encoder_out"] * len(uses)
    assert "encoder_out" in doc.node(doc.producer(main, "encoder_out")).output
    onnx.checker.check_model(doc.model, full_check=True)
    # the selection follows the value to its new name, drawn as the clicked edge
    assert tab.selection.targets[0].name == "encoder_out"
    wait_layout(qtbot, tab)
    qtbot.waitUntil(lambda: tab.canvas.scene.selected_value() == "encoder_out", timeout=10_000)
    doc.undo()
    assert doc.serialize() == original, "one undo step restores the file exactly"


def test_graph_output_box_f2_and_properties_rename(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    main = doc.index.main
    out = doc.scope(main).output_names()[0]
    window.activateWindow()
    view = tab.canvas.view
    view.set_zoom(0.55)
    view.center_on(f"out:{out}")
    box = tab.canvas.scene.item_for(f"out:{out}").scene_rect().center()
    QTest.mouseClick(view.viewport(), LEFT, Qt.KeyboardModifier.NoModifier, view.mapFromScene(box))
    QTest.keyClick(view, Qt.Key.Key_F2)
    type_into_editor(qtbot, editing, "probabilities")
    assert doc.scope(main).output_names()[0] == "probabilities"
    assert doc.stack.undo_label == f"Rename value {out!r} → 'probabilities'"
    wait_layout(qtbot, tab)
    qtbot.waitUntil(lambda: tab.canvas.scene.selected_keys() == ["out:probabilities"], timeout=10_000)
    # Properties: the value's Name row edits in place; a taken name is refused, nothing changes
    props = window.properties
    assert props.rows().get("Value/Name") == "probabilities", props.rows()
    taken = doc.node(doc.scope(main).node_ids[0]).output[0]
    before = doc.serialize()
    _edit_name_row(qtbot, props, taken)
    assert doc.serialize() == before and "already used" in window.statusBar().currentMessage()
    assert props.rows().get("Value/Name") == "probabilities", "the refused name is not left in the row"
    _edit_name_row(qtbot, props, "scores")
    assert doc.scope(main).output_names()[0] == "scores"
    assert doc.stack.undo_label == "Rename value 'probabilities' → 'scores'"
    doc.undo_all()
    assert doc.serialize() == original


def _edit_name_row(qtbot, props, text: str) -> None:
    """Double-click the Name row's value cell, type ``text``, Enter: as a user edits it."""
    item = props._name_item
    assert item is not None, "the value's Name row is editable"
    tree = props.tree
    rect = tree.visualItemRect(item)
    cell = QPoint(tree.header().sectionPosition(1) + 10, rect.center().y())
    QTest.mouseClick(tree.viewport(), LEFT, Qt.KeyboardModifier.NoModifier, cell)  # the press a double-click follows
    QTest.mouseDClick(tree.viewport(), LEFT, Qt.KeyboardModifier.NoModifier, cell)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None and QApplication.focusWidget() is not tree)
    editor = QApplication.focusWidget()
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # the delegate commits in a queued call
    qtbot.waitUntil(lambda: tree.state() != tree.State.EditingState)


def test_right_click_on_an_edge_opens_the_value_menu(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    main = doc.index.main
    relu = next(n for n in doc.scope(main).node_ids if doc.node(n).op_type == "Relu")
    value = doc.node(relu).output[0]
    pos = edge_point(tab, value)
    view = tab.canvas.view
    menu = context_menu(window, tab, pos, view.mapToGlobal(pos), exec_menu=False)
    titles = [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]
    for wanted in ("Rename Value…", "Copy Value Name", "Make Value a Graph Output",
                   "Run Capturing Selected Values", "Select Consumers"):
        assert wanted in titles, f"expected {wanted!r} in the edge's menu, saw {titles}"
    assert "Add Node Here…" not in titles, "the background's menu is not the edge's"
    assert all(window.registry.owns(a) for a in menu.actions() if not a.isSeparator())
    # the menu acts on what is visibly selected: the right-clicked edge's value
    assert tab.canvas.scene.selected_value() == value and tab.selection.targets[0].name == value
    consumers = sorted(n for n, _ in doc.consumers(main, value, nested=True))
    next(a for a in menu.actions() if a.text().replace("&", "") == "Select Consumers").trigger()
    assert sorted(t.node for t in tab.selection.targets) == consumers
    # the palette finds the value actions by name
    found = [e.spec.id for e in ranked("rename value", entries(window.registry))[:3]]
    assert "value.rename" in found, found
    assert doc.serialize() == original
