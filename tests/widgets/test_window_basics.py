"""Netron basics and docks that follow their document (issue 15), driven through the window.

- File > Export Image… writes a PNG or an SVG (whole graph or selection, light or dark);
- the canvas context menu copies a node's name, a value's name, a node's weight shapes;
- enum attributes read by name: Cast ``to: int64`` on the box and in Properties;
- the Diff dock says whose comparison it shows once another tab is current;
- Graph > Set Dimension edits the inputs the user ticks, renames a symbol where it appears
  (never a fixed dim), and previews the change.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog

from tests.conftest import CORPUS
from tests.widgets.conftest import LOAD_TIMEOUT_MS, open_model
from tests.widgets.test_views_land import shot

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"
MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"
IRIS = CORPUS / "real" / "ort_logreg_iris.onnx"


def _menu_action(window, menu: str, text: str):
    found = window.registry.menu(menu)
    return next(a for a in found.actions() if a.text().replace("&", "") == text)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt,dark,selection", [("png", True, False), ("svg", False, True)])
def test_export_image_from_the_file_menu(qtbot, window, tmp_path, monkeypatch, fmt, dark, selection):
    from widgets.export.image import ExportImageDialog

    tab = open_model(qtbot, window, MAGIKA)
    if selection:
        first = sorted(k for k in tab.canvas.scene.node_items() if k.startswith("n:"))[:3]
        tab.canvas.view.select_keys(first)
    out = tmp_path / f"picture.{fmt}"

    def choose(dialog):
        assert dialog.selected.isEnabled() == selection
        QTest.mouseClick(dialog.svg if fmt == "svg" else dialog.png, Qt.MouseButton.LeftButton)
        QTest.mouseClick(dialog.dark if dark else dialog.light, Qt.MouseButton.LeftButton)
        QTest.mouseClick(dialog.selected if selection else dialog.whole, Qt.MouseButton.LeftButton)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportImageDialog, "exec", choose)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(tmp_path / "picture"), "")))
    action = _menu_action(window, "File", "Export Image…")
    assert action.isEnabled()
    action.trigger()
    assert out.exists() and out.stat().st_size > 1000
    if fmt == "png":
        image = QImage(str(out))
        assert not image.isNull() and image.width() > 200
        corner = image.pixelColor(2, 2)
        assert corner.lightness() < 80, "a dark export has a dark background"
        shot_path = out
    else:
        text = out.read_text(encoding="utf-8")
        assert text.lstrip().startswith(("<?xml", "<svg")) and "</svg>" in text
        # the selection's region only: fewer boxes than the whole graph
        assert text.count("<rect") < 60
        shot_path = None
    # the live canvas kept its theme and selection
    assert tab.canvas.scene.is_dark() == bool(window.theme and window.theme.dark)
    if shot_path is not None:
        QImage(str(shot_path)).scaledToWidth(1200).save(str(tmp_path / "export_view.png"))


def _context_actions(window, tab, key: str) -> dict:
    view = tab.canvas.view
    item = tab.canvas.scene.item_for(key)
    view.centerOn(item.scene_rect().center())
    pos = view.mapFromScene(item.scene_rect().center())
    menu = window.editing.context_menu(tab, pos, view.viewport().mapToGlobal(pos), exec_menu=False)
    return {a.text(): a for a in menu.actions() if a.text()}


@pytest.mark.timeout(120)
def test_context_menu_copies_node_name_value_name_and_weight_shapes(qtbot, window, tmp_path):
    tab = open_model(qtbot, window, MAGIKA)
    doc, scene = tab.doc, tab.canvas.scene
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        tab.canvas.controller.expand_paths(sorted(tab._tree().parent))
    # a MatMul: it reads a weight initializer
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "MatMul"
               and any(i in doc.main.initializer_names() for i in doc.node(n).input))
    node = doc.node(nid)
    actions = _context_actions(window, tab, f"n:{nid}")
    actions["Copy Node Name"].trigger()
    assert QApplication.clipboard().text() == node.name
    actions["Copy Value Name"].trigger()
    assert QApplication.clipboard().text() == node.output[0]
    # Weights > <the weight> > Copy Name and Shape
    weight = next(i for i in node.input if i in doc.main.initializer_names())
    init = doc.initializer(doc.index.main, weight)[1]
    weights_menu = actions["Weights"].menu()
    entry = next(a for a in weights_menu.actions() if a.text() == weight).menu()
    next(a for a in entry.actions() if a.text() == "Copy Name and Shape").trigger()
    assert QApplication.clipboard().text() == f"{weight}: [{', '.join(str(d) for d in init.dims)}]"
    # a graph input box: its value name
    name = doc.main.graph.input[0].name
    actions = _context_actions(window, tab, f"in:{name}")
    actions["Copy Value Name"].trigger()
    assert QApplication.clipboard().text() == name
    assert "Copied value name" in window.statusBar().currentMessage()


def _cast_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.INT64),
         helper.make_node("EyeLike", ["y"], ["z"], name="eye", dtype=TensorProto.FLOAT16),
         helper.make_node("Pad", ["x", "pads"], ["p"], name="pad", mode="reflect")],
        "enums", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
                  helper.make_tensor_value_info("pads", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT16, [2, 2]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [None, None])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def test_enum_attributes_are_shown_by_name(qtbot, window, tmp_path):
    tab = open_model(qtbot, window, _cast_model(tmp_path / "enums.onnx"))
    doc, scene, view = tab.doc, tab.canvas.scene, tab.canvas.view
    ids = {doc.node(n).name: n for n in doc.main.node_ids}
    assert dict(scene.item_for(f"n:{ids['cast']}").box.details)["to"] == "int64"
    assert dict(scene.item_for(f"n:{ids['eye']}").box.details)["dtype"] == "float16"
    assert dict(scene.item_for(f"n:{ids['pad']}").box.details)["mode"] == "reflect"
    # click the Cast box: Properties says the same
    item = scene.item_for(f"n:{ids['cast']}")
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     view.mapFromScene(item.scene_rect().center()))
    assert window.properties.rows()["Attributes (1)/to"] == "int64"
    shot(window, "enum_attributes", tmp_path)


def test_enum_names_come_from_the_schemas():
    from editor.attr_names import enum_name, is_dtype_attribute

    # every data-type attribute the standard schemas document is named, for every value
    for op, attr in (("Cast", "to"), ("RandomNormal", "dtype"), ("QuantizeLinear", "output_dtype"),
                     ("LayerNormalization", "stash_type"), ("HannWindow", "output_datatype")):
        assert is_dtype_attribute(op, "", attr), (op, attr)
    for op, attr in (("Concat", "axis"), ("Gemm", "transA"), ("TopK", "largest")):
        assert not is_dtype_attribute(op, "", attr), (op, attr)
    for value in (TensorProto.FLOAT, TensorProto.INT8, TensorProto.BFLOAT16, TensorProto.BOOL):
        a = helper.make_attribute("to", value)
        assert enum_name("Cast", "", a) == helper.tensor_dtype_to_np_dtype(value).name or value == TensorProto.BFLOAT16
    assert enum_name("Cast", "", helper.make_attribute("to", 9999)) is None


@pytest.mark.timeout(120)
def test_diff_dock_says_whose_comparison_it_shows(qtbot, window, tmp_path):
    a = open_model(qtbot, window, SILERO)
    b = open_model(qtbot, window, CORPUS / "real" / "silero_vad_half.onnx")
    dock = window.compare_dock
    window.tabs.setCurrentWidget(a)
    assert dock.compare_with(b, a)
    qtbot.waitUntil(lambda: not dock.busy, timeout=LOAD_TIMEOUT_MS)
    banner = window.diff_owner
    assert banner.isHidden() and dock.windowTitle() == "Diff"
    window.tabs.setCurrentWidget(b)  # the other side of the same comparison: still its own
    assert banner.isHidden()
    third = open_model(qtbot, window, IRIS)
    assert window.current_tab() is third
    assert not banner.isHidden()
    assert "silero_vad_16k_op15.onnx" in banner.label.text() and "other tab" in banner.label.text()
    assert "other tab" in dock.windowTitle()
    shot(window, "diff_other_tab", tmp_path)
    QTest.mouseClick(banner.button, Qt.MouseButton.LeftButton)
    assert window.current_tab() is a
    assert banner.isHidden()


@pytest.mark.timeout(120)
def test_set_dimension_edits_the_ticked_inputs_and_only_the_same_symbol(qtbot, window, tmp_path):
    from tests.widgets.test_edit_support import edit_copy

    editing, tab, doc, original = edit_copy(qtbot, window, SILERO, tmp_path)
    from editor.dim_targets import value_dims

    main = doc.index.main
    assert value_dims(doc, main, "input") == ["batch", "sequence"]
    assert value_dims(doc, main, "state") == [2, "batch", 128]
    seen = {}

    def dialog_run(dialog):
        # every input is offered; for "batch size" all are ticked
        names = [dialog.inputs.item(i).data(Qt.ItemDataRole.UserRole) for i in range(dialog.inputs.count())]
        assert names == ["input", "state", "sr"]
        # the user unticks sr (a scalar), types N
        sr = dialog.inputs.item(2)
        rect = dialog.inputs.visualItemRect(sr)
        dialog.show()
        QTest.mouseClick(dialog.inputs.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         QPoint(rect.left() + 10, rect.center().y()))
        if sr.checkState() == Qt.CheckState.Checked:  # the click hit the text, not the box
            sr.setCheckState(Qt.CheckState.Unchecked)
        assert dialog.targets() == ["input", "state"]
        QTest.keyClicks(dialog.dim_edit, "N")
        seen["preview"] = [dialog.preview.item(i).text() for i in range(dialog.preview.count())]
        shot(dialog, "set_dimension", tmp_path)
        return dialog.apply()

    editing.run_dialog = dialog_run
    _menu_action(window, "Graph", "Set Dimension…").trigger()
    assert seen["preview"] == ["input: [batch, sequence] -> [N, sequence]", "state: [2, batch, 128] -> [2, N, 128]"]
    assert value_dims(doc, main, "input") == ["N", "sequence"]
    assert value_dims(doc, main, "state") == [2, "N", 128], "the fixed 2 was rewritten"
    doc.undo_all()
    assert doc.serialize() == original


def test_dim_plan_fixed_reference_touches_only_equal_sizes():
    from editor.dim_targets import plan_dim_changes
    from editor.document import Document

    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "g",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    doc = Document(helper.make_model(graph))
    changes = plan_dim_changes(doc, doc.index.main, ["a", "b"], 0, "N")
    assert [(c.name, c.axis, c.old) for c in changes] == [("a", 0, 1)]
    assert plan_dim_changes(doc, doc.index.main, ["a", "b"], 1, 3) == []
