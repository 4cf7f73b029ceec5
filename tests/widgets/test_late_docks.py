"""The docks the application installs after its first picture (Run, Diff, Compare Runs,
Generate, Quantization: ``MainWindow(defer_docks=True)``, issue 35's "painted <= 2 s") leave
the window exactly as one that built them at once: the same menus in the same order, the same
actions and keys, the same docks framed, placed, tabbed and hidden, a saved layout restored.
Asking for one of them before (``window.run_dock``) installs them then."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDockWidget

from tests.widgets.conftest import open_model


def _menus(menu_or_bar) -> list:
    out = []
    for action in menu_or_bar.actions():
        if action.isSeparator():
            out.append("---")
        elif action.menu() is not None:
            out.append((action.text(), _menus(action.menu())))
        else:
            out.append((action.text(), action.shortcut().toString(), action.isCheckable()))
    return out


def _docks(win) -> dict:
    from widgets.docking import DockFrame

    out = {}
    for dock in win.findChildren(QDockWidget):
        out[dock.objectName()] = (dock.windowTitle(), win.dockWidgetArea(dock), dock.isHidden(),
                                  isinstance(dock.widget(), DockFrame),
                                  sorted(d.objectName() for d in win.tabifiedDockWidgets(dock)))
    return out


def _picture(win) -> dict:
    return {"menus": _menus(win.menuBar()), "docks": _docks(win), "listed": [d.objectName() for d in win.docks],
            "actions": sorted((a, win.registry.action(a).shortcut().toString()) for a in win.registry._actions),
            "panels": [type(p).__name__ for p in win.panels]}


def _window(qtbot, qapp, defer: bool):
    from resources import sample_model_path
    from widgets.settings.store import Settings
    from widgets.settings.theme import ThemeManager
    from widgets.window.main_window import MainWindow

    win = MainWindow(settings=Settings(), theme=ThemeManager(qapp, "light"), sample=sample_model_path(),
                     defer_docks=defer)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    return win


def test_a_window_with_late_docks_ends_like_one_built_at_once(qtbot, qapp, settings_dir, dialogs):
    from resources import sample_model_path

    eager = _window(qtbot, qapp, defer=False)
    eager.show()
    late = _window(qtbot, qapp, defer=True)
    late.show()
    assert "run_dock" not in late.__dict__ and late.findChild(QDockWidget, "run") is None, (
        "the Run dock was built before any picture")
    for panel, dock in (("cost", "cost"), ("find_panel", "find")):
        assert panel not in late.__dict__ and late.findChild(QDockWidget, dock) is not None, (
            f"the {dock} panel was built before any picture, or its dock was not")
    tab = open_model(qtbot, late, sample_model_path())  # the first picture installs them, a dock per pass
    assert tab.is_ready and late.started_up and "run_dock" in late.__dict__, (
        "the late docks were not installed when the model was shown")
    open_model(qtbot, eager, sample_model_path())
    qtbot.waitUntil(lambda: late.properties_dock.isVisible() and eager.properties_dock.isVisible())
    a, b = _picture(eager), _picture(late)
    for key in a:
        assert a[key] == b[key], f"{key}: built at once {a[key]!r}\nafter the first picture {b[key]!r}"
    # and they work: the Run dock follows the current tab like the one built at once
    assert late.run_dock.controller is not None and late.run_dock.controller.tab is late.current_tab()


def test_the_start_up_ends_without_a_picture_too(qtbot, qapp, settings_dir, dialogs, tmp_path):
    """The application holds the collector off until startupDone: an opening that fails,
    one that is cancelled and a start with nothing to open end the start-up as well."""
    from resources import sample_model_path

    nothing = _window(qtbot, qapp, defer=True)
    with qtbot.waitSignal(nothing.startupDone, timeout=10_000):
        nothing.show()  # the start page: installed once the event loop runs
    failed = _window(qtbot, qapp, defer=True)
    failed.interactive_errors = False
    failed.show()
    with qtbot.waitSignal(failed.startupDone, timeout=10_000):
        failed.open_path(tmp_path / "missing.onnx")
    cancelled = _window(qtbot, qapp, defer=True)
    cancelled.show()
    with qtbot.waitSignal(cancelled.startupDone, timeout=10_000):
        cancelled.open_path(sample_model_path())
        cancelled.cancel_loading()
    assert all(w.started_up and "run_dock" in w.__dict__ for w in (nothing, failed, cancelled))


def test_asking_for_a_late_dock_installs_them(qtbot, qapp, settings_dir, dialogs):
    win = _window(qtbot, qapp, defer=True)
    assert win.quantize_dock.objectName() == "quantization", "window.quantize_dock did not install the late docks"
    assert {"run", "diff", "numeric_compare", "generate", "quantization"} <= {d.objectName() for d in
                                                                    win.findChildren(QDockWidget)}
    assert win.registry.action("run.run").shortcut().toString() == "F5"
    with pytest.raises(AttributeError):
        win.no_such_dock  # noqa: B018 - other names are still missing


def _window_with_run_dock_shown(qtbot, qapp):  # noqa: ANN001, ANN202
    """A window built at once, shown, its Run dock shown in front (a layout to save)."""
    win = _window(qtbot, qapp, defer=False)
    win.show()
    win.run_dock.show()
    win.run_dock.raise_()
    qtbot.waitUntil(win.run_dock.isVisible)
    return win


def test_late_docks_take_their_place_in_a_saved_layout(qtbot, qapp, settings_dir, dialogs):
    from widgets.settings.store import Settings

    first = _window_with_run_dock_shown(qtbot, qapp)
    first.settings.save_window_state(first.saveGeometry(), first.saveState())
    first.settings.sync()
    first.close()
    Settings().sync()
    again = _window(qtbot, qapp, defer=True)
    again.show()
    assert "run_dock" not in again.__dict__
    again.install_late_docks()  # what the first picture does
    qtbot.waitUntil(again.run_dock.isVisible, timeout=5000)
    assert again.dockWidgetArea(again.run_dock) == first.dockWidgetArea(first.run_dock)
    assert again.quantize_dock.isHidden(), "a dock hidden in the saved layout came back shown"
    assert isinstance(again.run_dock.widget(), type(first.run_dock.widget())), "the late Run dock is not framed"


def test_a_window_closed_in_its_start_up_keeps_their_places(qtbot, qapp, settings_dir, dialogs):
    first = _window_with_run_dock_shown(qtbot, qapp)
    first.close()  # saves the layout (closeEvent)
    quick = _window(qtbot, qapp, defer=True)
    quick.show()
    assert "run_dock" not in quick.__dict__
    quick.close()  # before any picture: Qt saves the places restoreState kept for docks not built yet
    last = _window(qtbot, qapp, defer=False)
    last.show()
    qtbot.waitUntil(last.run_dock.isVisible, timeout=5000)


def test_the_window_answers_between_two_late_docks(qtbot, qapp, settings_dir, dialogs):
    """After the first picture the late docks come one per pass of the event loop: a click
    or a scroll waits for one dock, not for all (all at once froze the window for 1.6 s after
    the export's first picture)."""
    from PySide6.QtCore import QTimer

    from resources import sample_model_path

    win = _window(qtbot, qapp, defer=True)
    win.show()
    passes = []
    beat = QTimer(win)
    beat.setInterval(0)
    menubars = []

    def beat_once() -> None:
        passes.append(("run_dock" in win.__dict__, win.started_up))
        menubars.append(tuple(a.text().replace("&", "") for a in win.menuBar().actions()))

    beat.timeout.connect(beat_once)
    beat.start()
    open_model(qtbot, win, sample_model_path())
    beat.stop()
    between = [p for p in passes if p == (True, False)]
    assert between, f"no pass of the event loop between the first late dock and the last: {sorted(set(passes))}"
    misplaced = {bar for bar in menubars if bar and bar[-1] != "Help"}
    assert not misplaced, f"a late menu showed after Help for a moment: {misplaced}"


def test_the_start_up_steps_let_the_windows_timers_run_between_them(qtbot, qapp, settings_dir, dialogs):
    """The late docks and the calls waiting for them (:meth:`MainWindow.when_started_up`) run
    a step per pass of the event loop, in order, and the window's timers fire between two
    steps: chained as posted calls (``QTimer.singleShot(0)``), two steps ran back to back
    ahead of every timer (the heartbeat of the export's start-up stopped for 0.3-0.4 s)."""
    import time

    from PySide6.QtCore import QTimer

    from widgets.window.main_window import MainWindow

    log: list[str] = []

    def busy(what: str) -> None:  # a step long enough for a timer to fall due meanwhile
        log.append(what)
        end = time.perf_counter() + 0.01
        while time.perf_counter() < end:
            pass

    step = MainWindow._next_late_step
    win = _window(qtbot, qapp, defer=True)
    win._next_late_step = lambda: (busy("step"), step(win))[1]
    for name in ("first", "second", "third"):
        win.when_started_up(lambda name=name: busy(name))
    beat = QTimer(win)
    beat.setInterval(2)
    beat.timeout.connect(lambda: log.append("beat") if log and log[-1] != "beat" else None)
    beat.start()
    with qtbot.waitSignal(win.startupDone, timeout=10_000):
        win.show()  # the start page: the late docks are installed once the event loop runs
    qtbot.waitUntil(lambda: "third" in log, timeout=10_000)
    beat.stop()
    steps = [e for e in log if e != "beat"]
    assert steps[-3:] == ["first", "second", "third"] and steps.count("step") >= 5, steps
    run = log[log.index("step"):]
    adjacent = [(a, b) for a, b in zip(run, run[1:]) if a != "beat" and b != "beat"]
    assert not adjacent, f"steps ran back to back with no timer between them: {adjacent}"
    win.when_started_up(lambda: log.append("now"))
    assert log[-1] == "now", "once started up, a call runs at once"
