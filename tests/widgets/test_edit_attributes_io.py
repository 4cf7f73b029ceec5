"""Attribute editor and graph input/output edits through their dialogs: typed editors with
schema defaults, enum combos, add/remove, refusals; rename/retype inputs, make a value a
graph output, batch size across the model with the hard-coded Reshape constants listed."""

from __future__ import annotations

import numpy as np
import onnx
from PySide6.QtWidgets import QComboBox, QLineEdit

from tests.widgets.test_edit_support import (
    PPOCR,
    SQUEEZENET,
    check_saved,
    edit_copy,
    first_node,
    install,
    open_copy,
    ppocr_feed,
    select_node,
    select_value,
    squeezenet_feed,
)


def _attr(doc, nid, name):
    return next((a for a in doc.node(nid).attribute if a.name == name), None)


def test_attribute_dialog_edits_as_one_step(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    pool = first_node(doc, "MaxPool")
    select_node(tab, pool)
    seen = []

    def fill(dialog):
        seen.append(dialog)
        rows = dialog.rows
        # typed editors: auto_pad is a combo of the schema's choices, strides a line edit
        assert isinstance(rows["auto_pad"].editor, QComboBox)
        assert rows["auto_pad"].editor.findText("SAME_UPPER") >= 0
        assert isinstance(rows["strides"].editor, QLineEdit)
        assert rows["storage_order"].default_label.text() == "0"  # schema default beside it
        assert rows["strides"].name_label.toolTip()  # the schema's documentation
        rows["strides"].editor.setText("1, 1")
        rows["strides"].set_box.setChecked(True)
        rows["storage_order"].editor.setText("0")
        rows["storage_order"].set_box.setChecked(True)
        assert dialog.apply()
        return True

    editing.run_dialog = fill
    window.registry.action("node.attributes").trigger()
    assert seen
    assert list(_attr(doc, pool, "strides").ints) == [1, 1]
    assert _attr(doc, pool, "storage_order").i == 0
    assert doc.stack.undo_label.startswith("Edit 2 attributes")
    check_saved(doc, tmp_path / "attrs.onnx", squeezenet_feed())
    doc.undo()
    assert doc.serialize() == original


def test_attribute_dialog_refusals_change_nothing(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    conv = first_node(doc, "Conv")
    results = []

    def bad_text(dialog):
        dialog.rows["group"].editor.setText("two")
        dialog.rows["group"].set_box.setChecked(True)
        results.append(dialog.apply())
        results.append(dialog.error_label.text())
        return False

    editing.run_dialog = bad_text
    editing.edit_attributes(conv)
    assert results[0] is False and "not a valid int" in results[1]
    assert doc.serialize() == original

    def unknown_attribute(dialog):
        dialog.new_name.setText("bogus")
        dialog._add_custom()
        dialog.rows["bogus"].editor.setText("3")
        results.append(dialog.apply())
        results.append(dialog.error_label.text())
        return False

    editing.run_dialog = unknown_attribute
    editing.edit_attributes(conv)
    assert results[2] is False and "no attribute 'bogus'" in results[3]
    assert doc.serialize() == original

    def remove_pads(dialog):
        dialog.rows["pads"].set_box.setChecked(False)
        return dialog.apply()

    editing.run_dialog = remove_pads
    editing.edit_attributes(conv)
    assert _attr(doc, conv, "pads") is None
    doc.undo()
    assert doc.serialize() == original


def test_subgraph_attribute_opens_the_body(qtbot, window, tmp_path):
    from tests.widgets.test_edit_support import SILERO

    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SILERO, tmp_path)
    nid = first_node(tab.doc, "If")

    def open_body(dialog):
        dialog.rows["then_branch"].editor.click()
        return True

    editing.run_dialog = open_body
    editing.edit_attributes(nid)
    assert tab.scope_id in tab.doc.index.children[nid]


def test_graph_input_rename_retype_and_output(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, PPOCR, tmp_path)
    select_value(tab, "x")

    def edit(dialog):
        dialog.name_edit.setText("image")
        dialog.shape_edit.setText("1, 3, 48, 192")
        return dialog.apply()

    editing.run_dialog = edit
    window.registry.action("graph.edit_value").trigger()
    assert doc.scope(doc.index.main).input_names()[0] == "image"
    outs = check_saved(doc, tmp_path / "renamed.onnx", ppocr_feed("image"))
    assert outs[0].shape[0] == 1
    # make an inner value a graph output from the canvas context menu path
    conv = first_node(doc, "Conv")
    value = doc.node(conv).output[0]
    assert editing.make_output((doc.index.main, value))
    import onnxruntime as ort

    doc.save(tmp_path / "extra_out.onnx")
    sess = ort.InferenceSession(str(tmp_path / "extra_out.onnx"), providers=["CPUExecutionProvider"])
    assert value in [o.name for o in sess.get_outputs()]
    assert len(sess.run(None, ppocr_feed("image"))) == 2
    # a duplicate graph output is refused, nothing changes
    snapshot = doc.serialize()
    assert not editing.make_output((doc.index.main, value))
    assert doc.serialize() == snapshot
    # add and remove a graph input through the dialog
    def add(dialog):
        dialog.name_edit.setText("extra")
        dialog.shape_edit.setText("batch, 4")
        return dialog.apply()

    editing.run_dialog = add
    window.registry.action("graph.add_input").trigger()
    assert "extra" in doc.scope(doc.index.main).input_names()
    select_value(tab, "extra")
    assert editing.remove_graph_value()
    doc.undo_all()
    assert doc.serialize() == original


def test_batch_size_across_the_model_lists_hardcoded_constants(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, PPOCR, tmp_path)
    seen = {}

    def batch(dialog):
        dialog.dim_edit.setText("1")
        seen["targets"] = dialog.targets()
        assert dialog.apply()
        return True

    editing.run_dialog = batch
    window.registry.action("graph.batch").trigger()
    assert seen["targets"] == ["x"]
    dim0 = doc.value_info(doc.index.main, "x").type.tensor_type.shape.dim[0]
    assert dim0.dim_value == 1
    check_saved(doc, tmp_path / "batch1.onnx", ppocr_feed())
    # now symbolic again; the dialog lists Reshape constants holding the old size 1
    from widgets.editing.graph_io import hardcoded_dims

    listed_before = [f"[1] {line}" for line in hardcoded_dims(doc, 1)]
    assert listed_before  # ppocr reshapes to [1, ...] once the batch is 1

    def symbolic(dialog):
        seen["hardcoded"] = [dialog.hardcoded.item(i).text() for i in range(dialog.hardcoded.count())]
        dialog.dim_edit.setText("N")
        return dialog.apply()

    editing.run_dialog = symbolic
    window.registry.action("graph.batch").trigger()
    assert doc.value_info(doc.index.main, "x").type.tensor_type.shape.dim[0].dim_param == "N"
    assert seen["hardcoded"] == listed_before
    # the Reshape constants that pinned batch 1 were rewritten in the same step: batch 3 runs
    import onnxruntime as ort

    sess = ort.InferenceSession(doc.model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {k: np.concatenate([v] * 3) for k, v in ppocr_feed().items()}
    assert sess.run(None, feed)[0].shape[0] == 3
    doc.undo_all()
    assert doc.serialize() == original


def test_hardcoded_dims_finds_reshape_constants():
    from editor.document import Document
    from widgets.editing.graph_io import hardcoded_dims

    h = onnx.helper
    shape = onnx.numpy_helper.from_array(np.array([8, -1], np.int64), "shape")
    g = h.make_graph([h.make_node("Reshape", ["x", "shape"], ["y"], name="r")], "g",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [8, 4])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], [shape])
    doc = Document(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert hardcoded_dims(doc, 8) == ["Reshape r: shape 'shape' = [8, -1]"]
    assert hardcoded_dims(doc, 3) == []


def test_tensor_attribute_from_npy(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, PPOCR, tmp_path)
    const = first_node(doc, "Constant")
    old = onnx.numpy_helper.to_array(_attr(doc, const, "value").t)
    npy = tmp_path / "value.npy"
    np.save(npy, np.full(old.shape, 0.25, dtype=old.dtype))

    def load(dialog):
        from onnx import AttributeProto as AP

        row = dialog.rows["value"]
        assert row.type == AP.TENSOR
        row.set_tensor(np.load(npy))
        return dialog.apply()

    editing.run_dialog = load
    editing.edit_attributes(const)
    new = onnx.numpy_helper.to_array(_attr(doc, const, "value").t)
    assert new.shape == old.shape and (new == 0.25).all()
    doc.undo()
    assert doc.serialize() == original
