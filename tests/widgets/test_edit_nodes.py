"""Node edits through the window: inline rename, add from the palette, insert on an edge,
delete (with reconnect), change op type, the connect gesture with the mouse (and Esc),
cut/copy/paste within and between models; each checked with onnx.checker and
onnxruntime, undone back to the original bytes, and refusals that change nothing."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from tests.widgets.test_edit_support import (
    PPOCR,
    SQUEEZENET,
    box_point,
    check_saved,
    edit_copy,
    first_node,
    install,
    open_copy,
    ppocr_feed,
    select_node,
    select_value,
    squeezenet_feed,
    wait_layout,
)


def test_rename_inline_with_keyboard_and_undo_label(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    original = tab.doc.serialize()
    nid = first_node(tab.doc, "Conv")
    select_node(tab, nid)
    wait_layout_if_pending(qtbot, tab)
    window.registry.action("node.rename").trigger()
    editor = editing._rename_editor
    assert editor is not None and editor.isVisible()
    editor.selectAll()
    qtbot.keyClicks(editor, "stem")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert tab.doc.node(nid).name == "stem"
    # the Edit menu names the step: the node had no name, the core labels it by its id
    assert window.registry.action("edit.undo").text() == f"&Undo {tab.doc.stack.undo_label}"
    assert tab.doc.stack.undo_label.startswith("Rename node '")
    assert window.isWindowModified()
    # Esc cancels a second rename: nothing changes
    editing.rename_inline(nid)
    qtbot.keyClicks(editing._rename_editor, "zzz")
    qtbot.keyClick(editing._rename_editor, Qt.Key.Key_Escape)
    assert tab.doc.node(nid).name == "stem"
    tab.doc.undo_all()
    assert tab.doc.serialize() == original
    assert not window.isWindowModified()


def wait_layout_if_pending(qtbot, tab) -> None:
    qtbot.wait(10)


def test_palette_add_insert_on_edge_runs_in_onnxruntime(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, PPOCR, tmp_path)
    before = check_saved(doc, tmp_path / "before.onnx", ppocr_feed())

    def pick(text):
        def run(dialog):
            qtbot.keyClicks(dialog.filter, text)
            assert dialog.choice() is not None and dialog.choice()[1] == text
            dialog.accept()
            return True
        return run

    # insert an Identity on the output of the first Conv: same results
    conv = first_node(doc, "Conv")
    select_value(tab, doc.node(conv).output[0])
    editing.run_dialog = pick("Identity")
    out = editing.insert_on_edge()
    assert out is not None and doc.producer(doc.index.main, out) is not None
    assert "Insert Identity" in window.registry.action("edit.undo").text()
    after = check_saved(doc, tmp_path / "inserted.onnx", ppocr_feed())
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-6)
    # add a lone node from the palette: it lands on the stack, validation flags its open input
    editing.run_dialog = pick("Relu")
    nid = editing.add_node()
    assert nid is not None and doc.node(nid).op_type == "Relu"
    assert any(p.node_id == nid for p in tab.validator.problems) or doc.node(nid).input == [""]
    doc.undo_all()
    assert doc.serialize() == original


def test_palette_lists_imported_domains_and_contrib_ops(qtbot, window, tmp_path):
    from widgets.editing.nodes import NodePalette, palette_entries

    install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    entries = palette_entries(tab.doc)
    ops = {(d, o) for d, o, _ in entries}
    assert ("", "Conv") in ops and ("", "Gelu") not in ops  # opset 9 has no Gelu
    palette = NodePalette(tab.doc, window)
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.filter, "conv")
    visible = [palette.list.item(i).text() for i in range(palette.list.count()) if not palette.list.item(i).isHidden()]
    assert visible and all("conv" in v.lower() for v in visible)
    try:
        import onnxruntime.capi.onnxruntime_pybind11_state  # noqa: F401
        assert any(d == "com.microsoft" for d, _o, _n in entries)
    except ImportError:
        pass


def test_delete_reconnect_and_change_op_type(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    relu = first_node(doc, "Relu")
    select_node(tab, relu)
    # Relu -> Sigmoid through the palette, then back by undo
    def pick_sigmoid(dialog):
        qtbot.keyClicks(dialog.filter, "Sigmoid")
        dialog.accept()
        return True
    editing.run_dialog = pick_sigmoid
    assert editing.change_op_type()
    assert doc.node(relu).op_type == "Sigmoid"
    check_saved(doc, tmp_path / "sigmoid.onnx", squeezenet_feed())
    doc.undo()
    # Delete key with "reconnect through" (Shift+Del): the model still runs
    select_node(tab, relu)
    tab.canvas.view.setFocus()
    window.registry.action("node.delete_reconnect").trigger()
    assert not doc.has_node(relu)
    check_saved(doc, tmp_path / "reconnected.onnx", squeezenet_feed())
    doc.undo()
    # reconnect through a node with two outputs is refused; nothing changes
    dropout = first_node(doc, "Dropout")
    if len([o for o in doc.node(dropout).output if o]) == 2:
        snapshot = doc.serialize()
        select_node(tab, dropout)
        assert not editing.delete_selected(reconnect=True)
        assert doc.serialize() == snapshot
        assert "Refused" in window.statusBar().currentMessage()
    doc.undo_all()
    assert doc.serialize() == original


def test_connect_gesture_with_mouse_and_escape(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    view = tab.canvas.view
    scene = tab.canvas.scene
    # the Softmax reads the GlobalAveragePool; rewire it to read the Relu before it instead
    softmax, relu = first_node(doc, "Softmax"), None
    gap = first_node(doc, "GlobalAveragePool")
    relu = doc.producer(doc.index.main, doc.node(gap).input[0])
    view.set_zoom(1.0)
    start = box_point(tab, f"n:{relu}", where="bottom")
    hooks = editing.hooks_for(tab)
    n_items = len(scene.items())
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    assert hooks.connect.gesture is not None and len(scene.items()) == n_items + 1
    # Esc cancels: the temporary line goes, the model is untouched
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert hooks.connect.gesture is None and len(scene.items()) == n_items
    assert doc.serialize() == original
    # drag again and drop on the Softmax box
    start = box_point(tab, f"n:{relu}", where="bottom")
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    gesture = hooks.connect.gesture
    target = scene.item_for(f"n:{softmax}").scene_rect()
    end = view.mapFromScene(target.center())
    assert view.viewport().rect().contains(end), "both boxes must be on screen for a real drag"
    qtbot.mouseMove(view.viewport(), end)
    assert gesture.line.line().p2() == target.center() or gesture.line.line().length() > 0
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=end)
    assert doc.node(softmax).input[0] == doc.node(relu).output[0]
    assert doc.stack.undo_label == "Connect input"
    assert len(scene.items()) <= n_items + 1  # the line is gone (a relayout may follow)
    # a cycle is refused with the reason, nothing changes
    wait_layout(qtbot, tab)
    snapshot = doc.serialize()
    conv = first_node(doc, "Conv")
    gesture = hooks.connect.start(f"n:{softmax}", scene.item_for(f"n:{softmax}").scene_rect().center())
    assert not gesture.finish(scene.item_for(f"n:{conv}").scene_rect().center())
    assert doc.serialize() == snapshot
    assert "cycle" in window.statusBar().currentMessage()
    doc.undo_all()
    assert doc.serialize() == original


def test_copy_paste_within_and_between_models(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    squeeze = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    conv = first_node(squeeze.doc, "Conv")
    relu = squeeze.doc.consumers(squeeze.doc.index.main, squeeze.doc.node(conv).output[0])
    relu = next(iter(relu))[0]
    from widgets.common.selection import Target

    squeeze.selection.select([Target.of_node(0, conv), Target.of_node(0, relu)], "test")
    assert editing.copy() == 2
    n_before = len(squeeze.doc.model.graph.node)
    ids = editing.paste()
    assert len(ids) == 2 and len(squeeze.doc.model.graph.node) == n_before + 2
    pasted = [squeeze.doc.node(i) for i in ids]
    # outputs were renamed on collision; the pasted Relu reads the pasted Conv
    assert pasted[0].output[0] != squeeze.doc.node(conv).output[0]
    assert pasted[1].input[0] == pasted[0].output[0]
    assert squeeze.doc.stack.undo_label == "Paste 2 nodes"
    check_saved(squeeze.doc, tmp_path / "pasted.onnx", squeezenet_feed())
    # into another open model: the Conv's weights come along as initializers
    other = open_copy(qtbot, window, PPOCR, tmp_path)
    assert window.current_tab() is other
    original = other.doc.serialize()
    ids = editing.paste()
    assert len(ids) == 2
    bias = other.doc.node(ids[0]).input[2]  # conv1_b_0 is an initializer in squeezenet
    assert other.doc.initializer(other.doc.index.main, bias) is not None
    # the weight came from a ConstantOfShape that was not copied: validation says so
    weight = other.doc.node(ids[0]).input[1]
    assert any(p.value == weight or p.node_id == ids[0] for p in other.validator.problems)
    other.doc.undo_all()
    assert other.doc.serialize() == original
    # cut = copy + delete, one undo step for the delete
    window.tabs.setCurrentWidget(squeeze)
    squeeze.selection.select([Target.of_node(0, ids_ := first_node(squeeze.doc, "Softmax"))], "test")
    assert editing.cut() == 1 and not squeeze.doc.has_node(ids_)


def test_connect_gesture_appends_to_variadic_inputs(qtbot, window, tmp_path):
    """Dropping on the right end of a Concat box adds an input (AddNodePort), one step."""
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    scene = tab.canvas.scene
    concat = first_node(doc, "Concat")
    n_in = len(doc.node(concat).input)
    relu = first_node(doc, "Relu")  # an earlier Relu: no cycle
    hooks = editing.hooks_for(tab)
    src = scene.item_for(f"n:{relu}").scene_rect()
    gesture = hooks.connect.start(f"n:{relu}", src.center())
    r = scene.item_for(f"n:{concat}").scene_rect()
    drop = r.topRight() + (r.bottomRight() - r.topRight()) * 0.5
    drop.setX(r.right() - 1)
    assert gesture.target(drop) == (concat, n_in, True)
    depth = doc.stack.index
    assert gesture.finish(drop)
    assert doc.stack.index == depth + 1 and len(doc.node(concat).input) == n_in + 1
    assert doc.node(concat).input[-1] == doc.node(relu).output[0]
    doc.undo_all()
    assert doc.serialize() == original
