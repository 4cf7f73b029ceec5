"""Long values in Properties: a cell shows a one-line preview, the whole value is one copy
away, and a Name edited in place is the whole name."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from tests.widgets.conftest import open_model
from widgets.common.selection import Target
from widgets.panels import properties

CHARACTERS = "\n".join(chr(0x4E00 + i) for i in range(6600))  # an OCR model's character list
LONG_NAME = "encoder/" + "block_" * 50 + "out"


def _model(tmp_path):
    node = helper.make_node("Relu", ["x"], [LONG_NAME], name="relu")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(LONG_NAME, TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.metadata_props.add(key="character", value=CHARACTERS)
    model.doc_string = "first line\nsecond line"
    path = tmp_path / "long_values.onnx"
    onnx.save(model, str(path))
    return path


def _item(panel, key: str):
    tree = panel.tree
    for i in range(tree.topLevelItemCount()):
        section = tree.topLevelItem(i)
        for k in range(section.childCount()):
            if section.child(k).text(0) == key:
                return section.child(k)
    raise AssertionError(f"no row {key!r} in {panel.rows()}")


def test_a_long_value_is_previewed_and_copied_whole(qtbot, window, tmp_path) -> None:
    open_model(qtbot, window, _model(tmp_path))
    panel = window.properties
    item = _item(panel, "character")
    text = item.text(1)
    assert "\n" not in text and len(text) < properties.PREVIEW_CHARS + 60
    assert f"{len(CHARACTERS):,} characters" in text and "6,600 lines" in text
    assert len(item.toolTip(1)) < properties.TIP_CHARS + 100
    panel.tree.setCurrentItem(item)
    panel.tree.setFocus()
    QGuiApplication.clipboard().clear()
    QTest.keyClick(panel.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == CHARACTERS
    # a short multi-line text is one line too, nothing cut
    doc_item = _item(panel, "Doc string")
    assert doc_item.text(1) == "first line ↵ second line"
    assert panel.value_of(doc_item) == "first line\nsecond line"


def test_a_long_name_is_edited_whole(qtbot, window, tmp_path) -> None:
    tab = open_model(qtbot, window, _model(tmp_path))
    tab.selection.select([Target.of_value(tab.doc.index.main, LONG_NAME)], "test")
    panel = window.properties
    item = _item(panel, "Name")
    assert len(LONG_NAME) > properties.PREVIEW_CHARS
    assert item.text(1) == LONG_NAME  # what the in-place editor starts from
    assert panel.value_of(item) == LONG_NAME
