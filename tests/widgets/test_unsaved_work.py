"""Nothing unsaved is dropped (issue 29): a model made in the window and never saved (an
extracted selection, a reduced subgraph) is unsaved work from its first moment. Quit,
window close and tab close ask about it with the modified files, in one question (Save
All / Discard / Cancel), and crash recovery keeps a copy of it without waiting for an edit.
"""

from __future__ import annotations

import pytest

from tests.widgets.conftest import LOAD_TIMEOUT_MS
from tests.widgets.test_edit_support import SQUEEZENET, first_node, install, open_copy


def _extract(qtbot, window, tab):
    from widgets.common.selection import Target

    tab.selection.select([Target.of_node(0, i) for i in (42, 43, 44)], "test")  # Conv -> Relu -> Conv
    with qtbot.waitSignal(window.modelShown, timeout=LOAD_TIMEOUT_MS) as blocker:
        window.compare_dock.extract()
    return blocker.args[0]


@pytest.fixture
def session(qtbot, window, tmp_path):
    """squeezenet open (a copy, edited) and an Untitled extract of three of its nodes."""
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    untitled = _extract(qtbot, window, tab)
    editing.sync()
    return editing, tab, untitled


def test_an_untitled_model_with_content_is_unsaved_work(qtbot, window, session):
    from editor.document import Document

    editing, tab, untitled = session
    assert untitled.doc.path is None and untitled.doc.is_modified, "an extract must start as unsaved work"
    assert untitled.title() == "Untitled*", untitled.title()
    assert not tab.doc.is_modified, "extracting leaves the source as it was"
    # an empty new model has nothing to lose: it closes without a question
    empty = window.add_document(Document.new())
    assert not empty.doc.is_modified and empty.title() == "Untitled"


def test_quit_asks_once_about_every_unsaved_document(qtbot, window, session):
    from widgets.editing.save import CANCEL, DISCARD

    editing, tab, untitled = session
    window.tabs.setCurrentWidget(tab)
    editing.rename_node(first_node(tab.doc, "Conv"), "edited")
    assert tab.doc.is_modified
    asked: list[list[str]] = []

    def cancel(_parent, names):
        asked.append(names)
        return CANCEL

    editing.ask_unsaved = cancel
    assert not window.close(), "Cancel must keep the window open"
    assert asked == [["light_squeezenet.onnx", "Untitled"]], asked
    assert window.isVisible() and untitled.doc.is_modified and tab.doc.is_modified
    # closing the Untitled tab alone asks about it alone
    asked.clear()
    window.close_tab(window.tabs.indexOf(untitled))
    assert asked == [["Untitled"]] and window.tabs.indexOf(untitled) >= 0, asked
    # Discard All: the window closes, nothing is asked twice
    editing.ask_unsaved = lambda _p, names: (asked.append(names), [DISCARD] * len(names))[1]
    asked.clear()
    assert window.close()
    assert asked == [["light_squeezenet.onnx", "Untitled"]], asked


def test_save_all_saves_the_ticked_ones_and_an_untitled_one_goes_through_save_as(
        qtbot, window, session, tmp_path):
    from widgets.editing.save import DISCARD, SAVE

    editing, tab, untitled = session
    window.tabs.setCurrentWidget(tab)
    editing.rename_node(first_node(tab.doc, "Conv"), "edited")
    assert tab.doc.is_modified
    target = tmp_path / "extract.onnx"
    dialogs = []

    def save_as(dialog):  # Save As for the Untitled one: the user picks a file
        dialogs.append(dialog)
        dialog.path_edit.setText(str(target))
        return True

    editing.run_dialog = save_as
    editing.ask_unsaved = lambda _p, names: [DISCARD, SAVE]  # untick the file, keep the extract
    assert window.close()
    assert len(dialogs) == 1 and target.is_file(), "the Untitled model must go through Save As"
    import onnx

    assert [n.op_type for n in onnx.load(str(target)).graph.node] == ["Conv", "Relu", "Conv"]


def test_the_dialog_lists_every_document_with_a_tick(qtbot):
    from PySide6.QtCore import Qt

    from widgets.editing.save import UnsavedDialog

    dialog = UnsavedDialog(["a.onnx", "Untitled"])
    qtbot.addWidget(dialog)
    assert dialog.ticked() == [True, True] and dialog.save_button.text() == "Save All"
    dialog.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert dialog.ticked() == [False, True] and dialog.save_button.text() == "Save 1 Ticked"


def test_recovery_keeps_an_untitled_model_without_waiting_for_an_edit(qtbot, window, session):
    editing, _tab, untitled = session
    writer = editing.hooks_for(untitled).recovery
    assert writer.timer.isActive(), "an unsaved-from-birth document must get its first copy unprompted"
    writer.flush()
    entries = editing.recovery_store.entries()
    assert [e.original for e in entries] == [None], entries
    restored = entries[0].open()
    assert [n.op_type for n in restored.model.graph.node] == ["Conv", "Relu", "Conv"]
    # Discard on close drops the copy: nothing is offered after a clean quit
    from widgets.editing.save import DISCARD

    editing.ask_unsaved = lambda _p, names: [DISCARD] * len(names)
    window.close_tab(window.tabs.indexOf(untitled))
    assert editing.recovery_store.entries() == []
