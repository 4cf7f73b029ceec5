"""The editing session around the edits: undo/redo labels and the modified mark, the
history panel (click to go back, export as script and replay it headless), the Python
console, live validation (badges, problems panel, within a budget), the context menu,
crash recovery, Save As with external-data options and the close prompt."""

from __future__ import annotations

import time

import onnx
from PySide6.QtCore import QPoint, Qt

from tests.widgets.test_edit_support import (
    PPOCR,
    SQUEEZENET,
    check_saved,
    edit_copy,
    first_node,
    install,
    open_copy,
    squeezenet_feed,
)


def test_history_panel_click_and_export_script(qtbot, window, tmp_path):
    from editor.document import Document
    from editor.scripting import run_script_file

    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    conv = first_node(doc, "Conv")
    relu = first_node(doc, "Relu")
    assert editing.rename_node(conv, "stem")
    assert editing.rename_node(relu, "stem_act")
    history = editing.history
    history.show()
    assert history.model.rowCount() == 3
    qtbot.waitUntil(lambda: history.list.currentIndex().row() == 2)
    assert window.registry.action("edit.undo").text() == f"&Undo {doc.stack.undo_label}"
    # click the first row: back to the original model
    rect = history.list.visualRect(history.model.index(0))
    qtbot.mouseClick(history.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert doc.stack.index == 0 and doc.serialize() == original
    assert not window.isWindowModified()
    history.go_to(2)
    assert doc.node(relu).name == "stem_act" and window.isWindowModified()
    # export and replay headless on a fresh copy of the file: same model
    script = history.export(tmp_path / "edits.py")
    fresh = Document(onnx.load(str(tmp_path / SQUEEZENET.name)))
    run_script_file(script, fresh)
    assert fresh.serialize() == doc.serialize()
    assert "doc.execute(commands.SetNodeField(" in script.read_text()


def test_console_edits_land_on_the_stack(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    doc = tab.doc
    console = editing.console
    assert console.doc is doc
    console.input.setPlainText("n = len(doc.nodes(op_type='Conv'))")
    console.run_input()
    assert console.namespace()["n"] == sum(n.op_type == "Conv" for n in doc.model.graph.node)
    console.input.setPlainText("n")
    console.run_input()
    assert console.output.toPlainText().splitlines()[-1] == str(console.namespace()["n"])
    conv = first_node(doc, "Conv")
    assert console.run_source(f"doc.rename_node({conv}, 'from_console')")
    assert doc.node(conv).name == "from_console" and doc.stack.undo_label.startswith("Rename node")
    depth = doc.stack.index
    # a failing snippet is rolled back as a whole and printed, never raised
    assert not console.run_source(f"doc.rename_node({conv}, 'a')\nraise RuntimeError('boom')")
    assert doc.stack.index == depth and doc.node(conv).name == "from_console"
    assert "boom" in console.output.toPlainText()
    assert not console.run_source("doc.set_attribute(%d, 'group', 'x')" % conv)
    assert doc.stack.index == depth


def test_live_validation_badges_and_problems_panel(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    doc = tab.doc
    hooks = editing.hooks_for(tab)
    assert hooks.badges.marks == []
    softmax = first_node(doc, "Softmax")
    start = time.perf_counter()
    assert editing.disconnect_input(softmax, 0)  # Softmax needs its input: an error
    # the validator runs on the change; the badges follow synchronously: set inside the
    # edit's own change signal, before the edit returns (tests/benchmarks/bench_edit_latency.py
    # times it on 10k nodes; no wall-clock bound here, on a shared machine)
    assert any(p.node_id == softmax for p in tab.validator.errors), "no live error for the Softmax"
    assert hooks.badges.marks, "no badge after the edit"
    assert hooks.badges_at > start, "the badges were not set by this edit"
    problems = window.problems
    qtbot.waitUntil(lambda: problems.tree.topLevelItemCount() > 0)
    # click the problem: the node is selected
    problems._on_clicked(problems.tree.topLevelItem(0))
    assert tab.selection.current is not None and tab.selection.current.node == softmax
    # undo: the badge goes
    doc.undo()
    assert hooks.badges.marks == []
    # a refused edit (a wrong attribute type) changes nothing and says why
    snapshot = doc.serialize()
    from editor.commands import SetAttribute
    from widgets.editing.common import run_command

    assert not run_command(window, doc, SetAttribute(softmax, "axis", "one"))
    assert doc.serialize() == snapshot and "Refused" in window.statusBar().currentMessage()


def test_context_menu_offers_the_edits(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    conv = first_node(tab.doc, "Conv")
    view = tab.canvas.view
    view.center_on(f"n:{conv}")
    pos = view.mapFromScene(tab.canvas.scene.item_for(f"n:{conv}").scene_rect().center())
    menu = editing.context_menu(tab, pos, view.mapToGlobal(pos), exec_menu=False)
    texts = [a.text() for a in menu.actions()]
    for wanted in ("Re&name Node", "Edit A&ttributes…", "&Delete", "Disconnect Input", "Make Graph Output",
                   "Weights"):
        assert wanted in texts, (wanted, texts)
    empty = editing.context_menu(tab, QPoint(2, 2), QPoint(2, 2), exec_menu=False)
    assert "Add Node Here…" in [a.text() for a in empty.actions()]


def test_recovery_write_discard_and_restore(qtbot, window, tmp_path):
    from widgets.editing.recovery import RecoveryWriter

    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    doc = tab.doc
    writer = editing.hooks_for(tab).recovery
    assert isinstance(writer, RecoveryWriter) and writer.timer.interval() == 2000
    conv = first_node(doc, "Conv")
    editing.rename_node(conv, "recover_me")
    assert writer.timer.isActive()
    writer.timer.setInterval(10)
    writer.timer.start()
    import threading

    threads = []
    write_snapshot = editing.recovery_store.write_snapshot

    def recording(snap):
        threads.append(threading.current_thread())
        return write_snapshot(snap)

    editing.recovery_store.write_snapshot = recording
    qtbot.waitUntil(lambda: writer.writes == 1, timeout=3000)
    del editing.recovery_store.write_snapshot
    assert threads and threads[0] is not threading.main_thread(), \
        f"the timed recovery write ran on {threads}: the file write must leave the GUI thread"
    entries = editing.recovery_store.entries()
    assert len(entries) == 1 and entries[0].original == doc.path.resolve()
    # saving discards the copy
    assert editing.save_doc(doc)
    assert editing.recovery_store.entries() == []
    # a "crash": an entry left behind is offered at start-up and restored as modified
    editing.rename_node(conv, "after_save")
    writer.flush()
    assert len(editing.recovery_store.entries()) == 1
    tab.doc.stack.set_clean()  # (the crashed session's tab is gone; keep the file's copy)
    store_copy = editing.recovery_store
    seen = []

    def keep_all(dialog):  # the start-up prompt, answered "restore all"
        seen.append(dialog.list.count())
        return True

    editing.run_dialog = keep_all
    restored = editing.offer_recovery()
    assert seen == [1]
    assert len(restored) == 1 and store_copy.entries() == []
    rdoc = restored[0].doc
    assert rdoc.is_modified and rdoc.node(first_node(rdoc, "Conv")).name == "after_save"


def test_recovery_copy_is_taken_between_events_and_an_edit_starts_it_over(qtbot, window, tmp_path, monkeypatch):
    """The copy is serialized a piece per event-loop turn (no long stall on a big model);
    an edit in the middle drops the pieces taken, and the copy written holds the edit."""
    import widgets.editing.recovery as recovery

    monkeypatch.setattr(recovery, "SLICE_S", 0.0)  # one piece per turn
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    writer = editing.hooks_for(tab).recovery
    conv = first_node(tab.doc, "Conv")
    editing.rename_node(conv, "first_edit")
    slices, dropped = [], []

    def edit_mid_copy():  # runs after each slice, between events, as a user's edit would
        slices.append(writer._pieces is not None)
        if len(slices) == 3:
            assert writer._pieces is not None, "the copy ended within three slices: nothing is sliced"
            editing.rename_node(conv, "second_edit")
            dropped.append(writer._pieces is None)

    # (connected after the writer's own slot: it sees the state each slice leaves behind;
    # polling from the test instead could miss the middle of a fast copy)
    writer._slice_timer.timeout.connect(edit_mid_copy)
    writer.timer.setInterval(10)
    writer.timer.start()
    qtbot.waitUntil(lambda: writer.writes == 1, timeout=5000)
    assert dropped == [True], "an edit must drop the pieces of the model before it"
    (entry,) = editing.recovery_store.entries()
    names = [n.name for n in entry.open().model.graph.node]
    assert "second_edit" in names and "first_edit" not in names, names[:5]


def test_save_as_options_inline_and_single_file(qtbot, window, tmp_path):
    from widgets.editing.save import SaveAsDialog

    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    dialog = SaveAsDialog(tab.doc, window)
    qtbot.addWidget(dialog)
    dialog.path_edit.setText(str(tmp_path / "out" / "split.onnx"))
    (tmp_path / "out").mkdir()
    dialog.external.setCurrentIndex(dialog.external.findData("single-file"))
    dialog.threshold.setValue(64)
    assert dialog.location.isEnabled()
    editing.run_dialog = lambda d: True
    assert editing.save_as_with_options(dialog)
    assert (tmp_path / "out" / "split.onnx.data").exists() or any((tmp_path / "out").glob("*.data"))
    onnx.checker.check_model(str(tmp_path / "out" / "split.onnx"))
    assert tab.doc.path == (tmp_path / "out" / "split.onnx").resolve() or tab.doc.path.name == "split.onnx"
    assert "split.onnx" in window.windowTitle()
    import onnxruntime as ort

    sess = ort.InferenceSession(str(tmp_path / "out" / "split.onnx"), providers=["CPUExecutionProvider"])
    assert sess.run(None, squeezenet_feed())[0].shape == (1, 1000, 1, 1)


def test_close_prompt_save_discard_cancel(qtbot, window, tmp_path):
    from widgets.editing.save import CANCEL, DISCARD, SAVE

    editing = install(window, tmp_path)
    a = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    b = open_copy(qtbot, window, PPOCR, tmp_path)
    editing.rename_node(first_node(b.doc, "Conv"), "b_edit")
    window.tabs.setCurrentWidget(a)
    editing.rename_node(first_node(a.doc, "Conv"), "a_edit")
    asked = []
    # Cancel: nothing is saved or discarded (one question names both documents)
    assert not editing.confirm_close(ask=lambda _p, names: (asked.append(names), CANCEL)[1])
    assert a.doc.is_modified and b.doc.is_modified
    assert asked == [[a.title().rstrip("*"), b.title().rstrip("*")]], asked
    assert onnx.load(str(a.doc.path)).graph.node[first_node(a.doc, "Conv")].name != "a_edit"
    # Save the first, discard the second
    assert editing.confirm_close(ask=lambda _p, _names: [SAVE, DISCARD])
    saved = onnx.load(str(a.doc.path))
    assert any(n.name == "a_edit" for n in saved.graph.node)
    assert not a.doc.is_modified and not b.doc.is_modified
    assert not any(n.name == "b_edit" for n in onnx.load(str(b.doc.path)).graph.node)
    check_saved(a.doc, a.doc.path, squeezenet_feed())


def test_window_wiring_properties_and_tab_close(qtbot, window, tmp_path, monkeypatch):
    """The window has editing built in: the properties panel's double-click opens the
    attribute editor, closing a modified tab asks Save / Discard / Cancel."""
    from widgets.editing.save import CANCEL, DISCARD

    editing = install(window, tmp_path)
    assert window.editing is editing
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    conv = first_node(tab.doc, "Conv")
    from widgets.common.selection import Target

    tab.selection.select([Target.of_node(0, conv)], "test")
    props = window.properties
    opened = []
    editing.run_dialog = lambda dialog: opened.append(dialog) or False
    attrs = next(props.tree.topLevelItem(i) for i in range(props.tree.topLevelItemCount())
                 if props.tree.topLevelItem(i).text(0).startswith("Attributes"))
    props.tree.itemDoubleClicked.emit(attrs.child(0), 0)
    assert opened and opened[0].nid == conv
    # closing a modified tab: Cancel keeps it, Discard closes it
    editing.rename_node(conv, "edited")
    answers = iter([CANCEL, [DISCARD]])
    monkeypatch.setattr(editing, "ask_unsaved", lambda _p, _names: next(answers))
    index = window.tabs.indexOf(tab)
    window.close_tab(index)
    assert window.tabs.indexOf(tab) == index and tab.doc.is_modified
    window.close_tab(index)
    assert window.tabs.indexOf(tab) == -1
