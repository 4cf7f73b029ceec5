"""Every action of the window comes from the registry: menus, context menus, keys.

The promise: a user can find every action in one list (the palette, the shortcut editor),
no key is bound to two actions, and window-wide keys reach their action whatever widget
has focus (a key that silently does nothing lets the next keys act on the canvas)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication, QMenu

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model
from widgets.actions.context import context_menu

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def walk(menu: QMenu, path: str = ""):
    """(path, action) of every entry of ``menu`` and its submenus (separators left out)."""
    menu.aboutToShow.emit()  # menus that fill themselves when opened (Open Recent)
    for act in menu.actions():
        if act.isSeparator():
            continue
        here = f"{path}/{act.text().replace('&', '')}"
        if act.menu() is not None:
            yield from walk(act.menu(), here)
        else:
            yield here, act


def menu_bar_entries(window):
    for top in window.menuBar().actions():
        yield from walk(top.menu(), top.text().replace("&", ""))


def context_entries(window, tab):
    view = tab.canvas.view
    scene = tab.canvas.scene
    doc = tab.doc
    keys = [None]
    conv = next(i for i in doc.main.node_ids if doc.node(i).op_type == "Conv")
    keys.append(f"n:{conv}")
    keys += [k for k in scene.node_items() if k.startswith(("in:", "out:"))][:2]
    for key in keys:
        if key is None:
            pos = QPoint(1, 1)
        else:
            view.center_on(key)
            pos = view.mapFromScene(scene.item_for(key).scene_rect().center())
        menu = context_menu(window, tab, pos, view.mapToGlobal(pos), exec_menu=False)
        yield from walk(menu, f"context[{key}]")
    # an edge: the middle of the longest segment of the first route that is hit there
    for edge, route, _ in scene.edge_geometry().routed:
        a, b = max(zip(route, route[1:]), key=lambda s: abs(s[0][0] - s[1][0]) + abs(s[0][1] - s[1][1]))
        mid = QPointF((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        view.centerOn(mid)
        pos = view.mapFromScene(mid)
        if view.key_at(pos) is None and view.edge_at(pos) is not None:
            menu = context_menu(window, tab, pos, view.mapToGlobal(pos), exec_menu=False)
            yield from walk(menu, "context[edge]")
            break


def test_every_menu_and_context_menu_entry_is_a_registry_action(qtbot, window, settings_dir):
    window.settings.add_recent(str(SQUEEZENET))
    tab = open_model(qtbot, window, SQUEEZENET)
    entries = list(menu_bar_entries(window)) + list(context_entries(window, tab))
    strays = [path for path, act in entries if not window.registry.owns(act)]
    assert strays == []
    # the context menus were really walked: a node offers its edits and its weights
    paths = [p for p, _ in entries]
    assert any(p.startswith("context[n:") and p.endswith("Rename Node") for p in paths)
    assert any(p.startswith("context[n:") and "/Weights/" in p for p in paths)
    assert any(p.startswith("context[in:") and p.endswith("Set Batch Size…") for p in paths)
    assert any(p.startswith("context[edge]") and p.endswith("Rename Value…") for p in paths)
    assert any(p.startswith("File/Open Recent/") and "squeezenet" in p for p in paths)
    # every registered action with a menu place is in a menu
    placed = {act.data() for _, act in entries}
    unplaced = [s.id for s in window.registry.specs() if s.menu and s.id not in placed]
    assert unplaced == []


def test_no_key_is_bound_twice(window):
    assert window.registry.conflicts() == {}
    keys = [a for a in window.actions() if not a.shortcut().isEmpty()]
    assert all(window.registry.owns(a) for a in keys), [a.text() for a in keys if not window.registry.owns(a)]


def press(qtbot, keys: str) -> None:
    """Type ``keys`` to whatever widget has focus, as a user would."""
    from PySide6.QtGui import QKeySequence

    combo = QKeySequence(keys)[0]
    target = QApplication.focusWidget()
    assert target is not None
    qtbot.keyClick(target, combo.key(), combo.keyboardModifiers())


def test_window_keys_reach_their_actions_whatever_has_focus(qtbot, window, monkeypatch):
    calls = []
    monkeypatch.setattr(window.compare_dock, "compare_dialog", lambda: calls.append("compare"))
    reg = window.registry
    spec = reg.spec("tools.compare")
    # re-point the action at the patched method (the registry connected the original)
    act = reg.action("tools.compare")
    act.triggered.disconnect()
    act.triggered.connect(lambda: window.compare_dock.compare_dialog())
    save_as = reg.action("file.save_as")
    save_as.triggered.disconnect()
    save_as.triggered.connect(lambda: calls.append("save_as"))
    assert spec.shortcut == "Ctrl+Shift+D"
    tab = open_model(qtbot, window, SQUEEZENET)
    window.activateWindow()
    # from a freshly opened tab: focus on its canvas
    tab.canvas.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    press(qtbot, "Ctrl+Shift+S")
    press(qtbot, "Ctrl+Shift+D")
    assert calls == ["save_as", "compare"]
    # after using the Diff dock: focus inside it
    window.compare_dock.show()
    window.compare_dock.panel.setFocus()
    focus = window.compare_dock.panel.focusWidget() or window.compare_dock.panel
    focus.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    press(qtbot, "Ctrl+Shift+S")
    press(qtbot, "Ctrl+Shift+D")
    assert calls == ["save_as", "compare"] * 2
    # and from a text field (the Find panel's query)
    window.show_find()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.find_panel.query)
    press(qtbot, "Ctrl+Shift+D")
    assert calls[-1] == "compare" and len(calls) == 5


def test_a_big_keyboard_delete_says_how_many_with_undo(qtbot, window):
    from PySide6.QtWidgets import QPushButton

    tab = open_model(qtbot, window, SQUEEZENET)
    before = len(tab.doc.main.node_ids)
    tab.canvas.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    press(qtbot, "Ctrl+A")
    selected = len([t for t in tab.selection.targets if t.kind == "node"])
    assert selected > 5
    press(qtbot, "Del")
    assert len(tab.doc.main.node_ids) == before - selected
    assert f"Deleted {selected:,} nodes" in window.statusBar().currentMessage()
    button = window.statusBar().findChild(QPushButton, "announce_undo")
    assert button is not None and button.isVisible()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(tab.doc.main.node_ids) == before
