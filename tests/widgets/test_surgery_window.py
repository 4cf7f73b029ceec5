"""The Surgery menu: fp16 (off the GUI thread), Append Model with its checked mapping
table, and Set Input/Output Type, each one undo step on a real model."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto

from editor.passes.extract import extract_model
from tests.conftest import CORPUS
from tests.widgets.test_edit_support import edit_copy

MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"
VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"


@pytest.mark.timeout(120)
def test_fp16_from_the_menu_is_one_undo_step(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, VAD, tmp_path)
    depth = doc.stack.index

    def accept(dialog):
        dialog.keep_io.setChecked(True)
        dialog.keep_ops.setText("NoSuchOp")
        assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()  # checked as typed
        dialog.keep_ops.setText("")
        return True

    editing.run_dialog = accept
    window.registry.action("surgery.fp16").trigger()
    qtbot.waitUntil(lambda: doc.stack.index == depth + 1, timeout=60_000)
    assert any(t.data_type == TensorProto.FLOAT16 for t in doc.model.graph.initializer)
    assert all(i.type.tensor_type.elem_type == TensorProto.FLOAT for i in doc.model.graph.input)
    doc.undo()
    assert doc.serialize() == original


@pytest.mark.timeout(120)
def test_append_model_with_mapping_table(qtbot, window, tmp_path):
    editing, tab, doc, _ = edit_copy(qtbot, window, MAGIKA, tmp_path)
    ids = list(doc.main.node_ids)
    k = len(ids) // 2
    a, b = extract_model(doc, node_ids=ids[:k]), extract_model(doc, node_ids=ids[k:])
    total = len(doc.model.graph.node)
    # the open document becomes the first half; B is appended to it
    from editor.passes.apply import ApplyModel

    doc.execute(ApplyModel(a, "cut"))
    onnx.save(b, tmp_path / "b.onnx")
    seen = {}

    def accept(dialog):
        seen["rows"] = dialog.table.rowCount()
        seen["ok"] = dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
        seen["status"] = dialog.status.text()
        dialog.combos[0].setCurrentIndex(0)  # "(stays an input)": still a valid merge
        dialog.combos[0].setCurrentText(dialog.inputs[0])
        return True

    editing.run_dialog = accept
    editing.surgery.append_model(str(tmp_path / "b.onnx"))
    assert seen["ok"] and seen["rows"] >= 1 and "renamed" in seen["status"]
    assert len(doc.model.graph.node) == total
    assert [o.name for o in doc.model.graph.output] == ["target_label"]


def test_set_io_type_dialog_refuses_what_does_not_fit(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, MAGIKA, tmp_path)
    seen = {}

    def accept(dialog):
        dialog.name.setCurrentText("bytes")
        dialog.dtype.setCurrentIndex(dialog.dtype.findData(TensorProto.INT64))
        seen["refused"] = dialog.status.text()
        dialog.dtype.setCurrentIndex(dialog.dtype.findData(TensorProto.UINT8))
        return True

    editing.run_dialog = accept
    window.registry.action("surgery.io_type").trigger()
    assert "fit" in seen["refused"]
    assert doc.model.graph.input[0].type.tensor_type.elem_type == TensorProto.UINT8
    assert doc.model.graph.node[0].op_type == "Cast"
    doc.undo()
    assert doc.serialize() == original
