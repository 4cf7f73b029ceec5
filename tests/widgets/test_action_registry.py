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
    from widgets.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    assert isinstance(win.registry, ActionRegistry)


def test_sections_sort_by_name_whatever_the_order_features_register(window):
    reg = ActionRegistry(window)
    reg.add(ActionSpec("m.late", "Late", lambda: None, menu="Menu", section="2_b"))
    reg.add(ActionSpec("m.early", "Early", lambda: None, menu="Menu", section="1_a"))
    reg.declare_menu("Menu/Sub", "1_a")
    reg.add(ActionSpec("m.sub", "Inside", lambda: None, menu="Menu/Sub"))
    kinds = ["sep" if x.isSeparator() else x.text().replace("&", "") for x in reg.menu("Menu").actions()]
    assert kinds == ["Early", "Sub", "sep", "Late"]


def test_choices_become_bound_entries_the_registry_owns(window):
    from PySide6.QtWidgets import QMenu

    reg = ActionRegistry(window)
    ran = []
    items = ["a.onnx", "b.onnx"]
    reg.add(ActionSpec("f.recent", "Open &Recent", ran.append, menu="File", choices=lambda _t: [(i, i) for i in items]))
    reg.add(ActionSpec("f.clear", "Clear", lambda: items.clear(), menu="File/Open Recent"))
    sub = reg.menu("File/Open Recent")
    entries = [a for a in sub.actions() if not a.isSeparator()]
    assert [a.text() for a in entries] == ["a.onnx", "b.onnx", "Clear"]
    assert all(reg.owns(a) for a in entries)
    entries[1].trigger()
    assert ran == ["b.onnx"]
    items.pop()
    reg.refill("f.recent")
    assert [a.text() for a in sub.actions() if not a.isSeparator()] == ["a.onnx", "Clear"]
    # a context menu: visible_when, a bound entry per choice, a submenu context
    reg.add(ActionSpec("n.rename", "Rename", lambda: None, contexts=("node",), section="1"))
    reg.add(ActionSpec("n.only_big", "Big only", lambda: None, contexts=("node",), visible_when=lambda t: t > 10))
    reg.add(ActionSpec("n.weights", "Weights", lambda w: None, contexts=("node",), section="2",
                       choices=lambda t: [(f"w{k}", k) for k in range(t)], submenu_context="weight"))
    reg.add(ActionSpec("w.show", "Show", ran.append, contexts=("weight",), takes_target=True,
                       enabled_for=lambda w: w != 0))
    menu = reg.fill(QMenu(), "node", 2)
    texts = [a.text() if not a.isSeparator() else "sep" for a in menu.actions()]
    assert texts == ["Rename", "sep", "Weights"]
    weights = menu.actions()[-1].menu()
    w1 = weights.actions()[1].menu().actions()[0]
    assert reg.owns(w1) and w1.isEnabled() and not weights.actions()[0].menu().actions()[0].isEnabled()
    w1.trigger()
    assert ran[-1] == 1
    other = QMenu()
    assert not reg.owns(other.addAction("not declared"))


def test_user_keys_apply_to_actions_declared_later_and_adopted_actions(window):
    from PySide6.QtWidgets import QDockWidget

    reg = ActionRegistry(window)
    reg.set_shortcut("late.one", "Ctrl+Alt+L")  # settings are read before features register
    act = reg.add(ActionSpec("late.one", "Late", lambda: None, shortcut="Ctrl+L"))
    assert reg.shortcut("late.one") == "Ctrl+Alt+L" and reg.default_shortcut("late.one") == "Ctrl+L"
    assert reg.custom_shortcuts() == {"late.one": "Ctrl+Alt+L"}
    dock = QDockWidget("Panel", window)
    dock.setObjectName("panel")
    adopted = reg.add(ActionSpec("view.panel.panel", "Panel", lambda: None, menu="View/Panels"),
                      action=dock.toggleViewAction())
    assert adopted is dock.toggleViewAction() and reg.owns(adopted) and act is reg.action("late.one")
