"""The command palette and the shortcut editor: both read the registry, so every action
is reachable by name, and a rebound key is stored, survives a restart and is checked."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model
from widgets.actions.palette import entries, fuzzy_score, ranked

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def test_fuzzy_match_needs_the_letters_in_order_and_prefers_word_starts():
    assert fuzzy_score("sva", "Save As") is not None
    assert fuzzy_score("zz", "Save As") is None
    assert fuzzy_score("sa", "Save As") > fuzzy_score("sa", "Disassemble")
    assert fuzzy_score("zf", "Zoom to Fit") > fuzzy_score("zf", "Zoom Off")


def test_palette_lists_every_action_enabled_first(window):
    items = entries(window.registry)
    listed = {e.spec.id for e in items}
    plain = {s.id for s in window.registry.specs() if not s.bound}
    assert plain <= listed  # every plain action is in the palette
    order = ranked("", items)
    enabled = [e.enabled for e in order]
    assert enabled == sorted(enabled, reverse=True)  # no disabled entry before an enabled one
    save = next(e for e in items if e.spec.id == "file.save")
    assert save.keys == window.registry.shortcut("file.save") and save.keys


def test_palette_runs_what_enter_picks(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    names = window.registry.action("view.names")
    was = names.isChecked()
    window.activateWindow()
    qtbot.keyClick(tab.canvas.view, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    palette = window.palette
    assert palette.isVisible()
    qtbot.keyClicks(palette.query, "node names")
    assert palette.current().spec.id == "view.names"
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert names.isChecked() != was and not palette.isVisible()


def test_rebound_key_is_stored_flagged_when_taken_and_reloaded(qtbot, window):
    from widgets.actions.tools import show_settings
    from widgets.window.main_window import MainWindow
    from widgets.settings.store import Settings

    dialog = show_settings(window)
    page = dialog.shortcuts
    reg = window.registry
    # a key another action has: both rows are flagged
    page.set_keys("node.op_type", "Ctrl+E")
    assert reg.conflicts() == {"Ctrl+E": ["node.attributes", "node.op_type"]}
    assert "Ctrl+E" in page.note.text()
    row = page.ids.index("node.op_type")
    assert "also bound to" in page.table.item(row, 2).toolTip()
    page.set_keys("node.op_type", "Ctrl+Alt+T")
    assert reg.conflicts() == {} and page.note.text() == ""
    page.set_keys("edit.find", "")  # no key at all
    dialog.close()
    again = MainWindow(settings=Settings())
    qtbot.addWidget(again)
    assert again.registry.shortcut("node.op_type") == "Ctrl+Alt+T"
    assert again.registry.shortcut("edit.find") == ""
    # back to the default
    page.set_keys("node.op_type", None)
    assert Settings().shortcuts().get("node.op_type") is None
