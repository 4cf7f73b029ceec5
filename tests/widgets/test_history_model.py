"""The History panel is an item model over the undo stack: every change arrives as rows
inserted / removed / changed (checked by Qt's model tester as it happens), never as a
reset, so an edit costs the same with 10 or 10,000 commands on the stack; long jumps (undo
all, redo all) run in slices with progress and can be cancelled."""

from __future__ import annotations

import onnx
from onnx import helper as h
from PySide6.QtCore import Qt

from editor.commands import SetNodeField
from editor.document import Document


def _doc(n: int = 4) -> Document:
    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(n)]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("v0", onnx.TensorProto.FLOAT, [1])],
                         [h.make_tensor_value_info(f"v{n}", onnx.TensorProto.FLOAT, [1])])
    return Document(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))


def _rename(doc: Document, k: int, name: str) -> None:
    nid = doc.main.node_ids[k]
    doc.execute(SetNodeField(nid, "name", name))
    doc.stack.break_merge()


class _Recorder:
    def __init__(self, model) -> None:
        self.events: list[tuple] = []
        model.rowsInserted.connect(lambda _p, a, b: self.events.append(("inserted", a, b)))
        model.rowsRemoved.connect(lambda _p, a, b: self.events.append(("removed", a, b)))
        model.modelReset.connect(lambda: self.events.append(("reset",)))
        model.dataChanged.connect(lambda a, b, _r=None: self.events.append(("changed", a.row(), b.row())))


def test_history_model_follows_the_stack_without_resets(qtmodeltester, qtbot):
    from widgets.editing.history import ORIGINAL, HistoryModel

    doc = _doc()
    model = HistoryModel()
    model.set_stack(doc.stack)
    qtmodeltester.check(model, force_py=True)  # keeps checking every signal from here on
    rec = _Recorder(model)
    labels = lambda: [model.index(r).data() for r in range(model.rowCount())]  # noqa: E731
    assert labels() == ["● " + ORIGINAL]
    for k in range(3):
        _rename(doc, k, f"n{k}")
    assert model.rowCount() == 4 and [e[0] for e in rec.events].count("inserted") == 3
    assert labels()[0] == "● " + ORIGINAL and all(label.strip().startswith("Rename") for label in labels()[1:])
    assert model.index(3).data(Qt.ItemDataRole.FontRole).bold()
    doc.undo()
    doc.undo()
    assert model.rowCount() == 4 and doc.stack.index == 1
    # a push after undo drops the redo branch: rows removed, then one row inserted
    rec.events.clear()
    _rename(doc, 3, "fresh")
    kinds = [e[0] for e in rec.events]
    assert ("removed", 2, 3) in rec.events and kinds.count("inserted") == 1 and "reset" not in kinds
    assert model.rowCount() == 3 and labels()[2].strip() == doc.stack.commands[1].label
    # typing into one field merges into one step: the row changes, no row is added
    nid = doc.main.node_ids[0]
    doc.execute(SetNodeField(nid, "name", "a"))
    doc.execute(SetNodeField(nid, "name", "ab"))
    rows = model.rowCount()
    doc.execute(SetNodeField(nid, "name", "abc"))
    assert model.rowCount() == rows
    # saving moves the clean mark: the marked row changes
    doc.stack.set_clean()
    assert labels()[doc.stack.index].startswith("●") and not labels()[0].startswith("●")
    assert "reset" not in [e[0] for e in rec.events]


def test_each_change_touches_a_bounded_number_of_rows(qtbot):
    """No signal per edit spans the whole list: the work per edit is independent of depth."""
    from widgets.editing.history import HistoryModel

    doc = _doc()
    model = HistoryModel()
    model.set_stack(doc.stack)
    rec = _Recorder(model)
    for i in range(300):
        _rename(doc, i % 4, f"n{i}")
    doc.undo()
    doc.redo()
    spans = [e[2] - e[1] + 1 for e in rec.events if e[0] != "reset"]
    assert spans and max(spans) <= 2 and len(rec.events) <= 3 * 302


def test_panel_undo_all_in_slices_with_cancel(qtbot, monkeypatch):
    from widgets.editing import history as history_module
    from widgets.editing.history import HistoryPanel

    doc = _doc()
    original = doc.serialize()
    for i in range(120):
        _rename(doc, i % 4, f"n{i}")
    edited = doc.serialize()
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.set_document(doc)
    panel.show()
    qtbot.waitUntil(lambda: panel.list.currentIndex().row() == 120)
    # a slice is one step: cancel after the first slices, the document is at a whole step
    monkeypatch.setattr(history_module, "SLICE_SECONDS", 0.0)
    def stop_at_110() -> None:
        if doc.stack.index == 110:
            panel.cancel_jump()

    doc.history_changed.connect(stop_at_110)
    panel.go_to(0)
    assert panel.jumping and panel.progress.isVisibleTo(panel)
    qtbot.waitUntil(lambda: not panel.jumping)
    stopped = doc.stack.index
    assert stopped == 110 and not panel.jumping and not panel.progress.isVisibleTo(panel)
    qtbot.wait(20)
    assert doc.stack.index == stopped
    qtbot.waitUntil(lambda: panel.list.currentIndex().row() == stopped)
    doc.history_changed.disconnect(stop_at_110)
    # undo all, then redo all
    monkeypatch.setattr(history_module, "SLICE_SECONDS", 0.04)
    with qtbot.waitSignal(panel.jumpFinished, timeout=10_000) as done:
        panel.go_to(0)
    assert done.args == [True] and doc.stack.index == 0 and doc.serialize() == original
    with qtbot.waitSignal(panel.jumpFinished, timeout=10_000):
        panel.go_to(120)
    assert doc.serialize() == edited
    qtbot.waitUntil(lambda: panel.list.currentIndex().row() == 120)
    # a short jump is done at once
    panel.go_to(117)
    assert doc.stack.index == 117 and not panel.jumping
