"""Stale and misleading bits of the window (issue 29), each with the check that would have
caught it: the status bar's node count after an edit, Set Dimension's ticks, Export Image's
defaults, the History dock with no model open."""

from __future__ import annotations

import pytest
from onnx import TensorProto
from PySide6.QtCore import Qt

from tests.conftest import CORPUS
from tests.widgets.test_edit_support import edit_copy, first_node

VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def _count(window) -> str:
    return next(p for p in window.model_info.text().split(" · ") if p.endswith(("nodes", "node")))


@pytest.mark.timeout(120)
def test_the_status_bar_counts_the_nodes_after_delete_and_reconnect_and_after_fp16(qtbot, window, tmp_path):
    from widgets.common.selection import Target

    editing, tab, doc, _original = edit_copy(qtbot, window, VAD, tmp_path)
    before = len(doc.main.node_ids)
    assert _count(window) == f"{before} nodes"
    relu = first_node(doc, "Relu")
    tab.selection.select([Target.of_node(doc.index.main, relu)], "test")
    assert editing.delete_selected(reconnect=True)
    assert _count(window) == f"{before - 1} nodes", f"after a delete-and-reconnect: {window.model_info.text()!r}"
    # fp16 keeping fp32 inputs and outputs adds Cast nodes (off the GUI thread, one command)
    depth = doc.stack.index
    editing.run_dialog = lambda dialog: (dialog.keep_io.setChecked(True), True)[1]
    window.registry.action("surgery.fp16").trigger()
    qtbot.waitUntil(lambda: doc.stack.index == depth + 1, timeout=60_000)
    assert any(t.data_type == TensorProto.FLOAT16 for t in doc.model.graph.initializer)
    after = len(doc.main.node_ids)
    assert after > before - 1 and _count(window) == f"{after} nodes", (after, window.model_info.text())
    doc.undo()
    assert _count(window) == f"{before - 1} nodes"


def test_one_node_is_counted_as_one_node(qtbot, window, tmp_path):
    """An extract of a single node said "1 nodes" in the status bar."""
    from onnx import helper

    from tests.widgets.conftest import open_model

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]))
    path = tmp_path / "one.onnx"
    path.write_bytes(model.SerializeToString())
    open_model(qtbot, window, path)
    assert _count(window) == "1 node", window.model_info.text()


def test_set_dimension_ticks_no_output_of_a_selected_node(qtbot, window, tmp_path):
    from widgets.common.selection import Target

    editing, tab, doc, _original = edit_copy(qtbot, window, VAD, tmp_path)
    main = doc.index.main
    out = doc.model.graph.output[0].name
    producer = doc.producer(main, out)
    tab.selection.select([Target.of_node(main, producer)], "test")  # its output is a graph output
    seen = {}

    def look(dialog):
        seen["names"] = [dialog.inputs.item(i).data(Qt.ItemDataRole.UserRole) for i in range(dialog.inputs.count())]
        seen["ticked"] = dialog.targets()
        return False

    editing.run_dialog = look
    editing.set_dimension()
    inputs = [i.name for i in doc.model.graph.input]
    assert seen["names"] == inputs, f"only graph inputs are offered, got {seen['names']}"
    assert out not in seen["ticked"], f"the selected node's output {out!r} was ticked: {seen['ticked']}"
    # a graph output selected by itself is offered and ticked
    tab.selection.select([Target.of_value(main, out)], "test")
    editing.set_dimension()
    assert seen["ticked"] == [out], seen


@pytest.mark.parametrize("has_selection", [False, True])
def test_export_image_opens_with_a_format_a_region_and_a_theme(qtbot, has_selection):
    from widgets.export.image import ExportImageDialog

    dialog = ExportImageDialog(None, has_selection=has_selection, dark=True)
    qtbot.addWidget(dialog)
    assert dialog.png.isChecked() and not dialog.svg.isChecked(), "a format must be chosen"
    assert dialog.whole.isChecked() != dialog.selected.isChecked(), "a region must be chosen"
    assert dialog.selected.isChecked() == has_selection and dialog.dark.isChecked()
    request = dialog.request()
    assert (request.fmt, request.selection, request.dark) == ("png", has_selection, True)


def test_history_is_empty_with_no_model_open(qtbot, window):
    from resources import sample_model_path
    from tests.widgets.conftest import open_model

    history = window.editing.history
    assert history.model.rowCount() == 0, "no model open: no '<original model>' row"
    open_model(qtbot, window, sample_model_path())
    assert history.model.rowCount() == 1
    window.close_tab(0)
    assert history.model.rowCount() == 0
