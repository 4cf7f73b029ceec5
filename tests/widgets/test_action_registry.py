"""The action registry: one QAction per declared spec, placed in its menus, keys window-wide."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow

from widgets.actions.registry import ActionRegistry, ActionSpec


@pytest.fixture
def window(qtbot):
    win = QMainWindow()
    qtbot.addWidget(win)
    return win


def test_spec_becomes_one_action_in_its_menu(window):
    reg = ActionRegistry(window)
    calls = []
    act = reg.add(ActionSpec("demo.hello", "&Hello…", lambda: calls.append(1), shortcut="Ctrl+Alt+H",
                             menu="Tools/Demo", tip="Say hello"))
    act.trigger()
    assert calls == [1]
    tools = reg.menu("Tools")
    demo = reg.menu("Tools/Demo")
    assert [a.menu() for a in tools.actions()] == [demo]
    assert demo.actions() == [act]
    assert act.shortcutContext() == Qt.ShortcutContext.WindowShortcut
    assert act in window.actions()  # its key works with no menu open
    assert reg.owns(act) and reg.spec("demo.hello").plain_title == "Hello"


def test_duplicate_id_refused_and_conflicts_listed(window):
    reg = ActionRegistry(window)
    reg.add(ActionSpec("a.one", "One", lambda: None, shortcut="Ctrl+J"))
    with pytest.raises(ValueError):
        reg.add(ActionSpec("a.one", "Again", lambda: None))
    reg.add(ActionSpec("a.two", "Two", lambda: None, shortcut="Ctrl+J"))
    assert reg.conflicts() == {"Ctrl+J": ["a.one", "a.two"]}
    reg.set_shortcut("a.two", "Ctrl+K")
    assert reg.conflicts() == {}
    reg.set_shortcut("a.two", None)  # back to its default
    assert "Ctrl+J" in reg.conflicts()


def test_sections_get_separators_and_enablement_refreshes(window):
    reg = ActionRegistry(window)
    state = {"on": False}
    a = reg.add(ActionSpec("m.a", "A", lambda: None, menu="Menu", section="1"))
    reg.add(ActionSpec("m.b", "B", lambda: None, menu="Menu", section="2",
                       enabled_when=lambda: state["on"], contexts=("node",)))
    kinds = ["sep" if x.isSeparator() else x.text() for x in reg.menu("Menu").actions()]
    assert kinds == ["A", "sep", "B"]
    reg.refresh()
    assert not reg.action("m.b").isEnabled() and a.isEnabled()
    state["on"] = True
    assert [x.text() for x in reg.for_context("node")] == ["B"]
    assert reg.action("m.b").isEnabled()


def test_checkable_action_passes_its_state(window):
    reg = ActionRegistry(window)
    seen = []
    act = reg.add(ActionSpec("v.flag", "Flag", seen.append, checkable=True, checked=False))
    act.setChecked(True)
    assert seen == [True]


def test_main_window_has_a_registry(qtbot):
    from widgets.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    assert isinstance(win.registry, ActionRegistry)
