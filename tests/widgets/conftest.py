"""Fixtures for the Qt tests: offscreen platform, throw-away settings, a main window,
a guard that fails the test if any modal dialog would have been shown, and waits that
outlast a busy machine."""

from __future__ import annotations

import functools
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from pytestqt.qtbot import QtBot  # noqa: E402

LOAD_TIMEOUT_MS = 60_000
#: how long a qtbot wait without its own timeout waits for its signal or condition
WAIT_TIMEOUT_MS = 60_000


def _wait_longer_by_default(method):  # noqa: ANN001, ANN202
    @functools.wraps(method)
    def wait(self, *args, timeout: int = WAIT_TIMEOUT_MS, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        return method(self, *args, timeout=timeout, **kwargs)

    return wait


# NOTE: pytest-qt's waits give up after 5 s unless told otherwise; a relayout that takes
# 0.3 s on a quiet machine took over 5 s at load average 15, and the test failed. A wait ends
# as soon as its signal or condition comes, so a passing test costs no more with a longer
# bound; a wait that is meant to time out passes its own timeout (every such wait does).
for _name in ("waitUntil", "waitSignal", "waitSignals", "waitCallback", "waitExposed", "waitActive"):
    setattr(QtBot, _name, _wait_longer_by_default(getattr(QtBot, _name)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):  # noqa: ANN001, ANN201
    """Free the widgets the test closed before the next test starts.

    NOTE: pytest-qt closes each registered widget and calls ``deleteLater``, but a deferred
    delete posted outside an event loop waits for some later test's nested loop, so closed
    windows piled up (2-3 main windows, ~600 widgets each, alive at once in a worker). Every
    new window's ``QApplication.setStyleSheet`` re-polishes every live widget: window set-up
    went from under a second to 5-8 s on a busy machine. Delivering the deletes here keeps
    each test's window the only one."""
    result = yield
    from PySide6.QtCore import QCoreApplication, QEvent

    app = QCoreApplication.instance()
    if app is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
    return result


@pytest.fixture
def settings_dir(tmp_path, monkeypatch):
    """QSettings write to a per-test folder (never the user's config)."""
    from PySide6.QtCore import QSettings

    folder = tmp_path / "settings"
    folder.mkdir()
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    return folder


class DialogLog:
    """Records dialogs; ``fail`` makes any dialog fail the test at once."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, str, str | None]] = []
        self.fail = True


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    """No Qt test ever blocks on a modal dialog (a modal event loop would hang the run for
    good: pytest-timeout's signal cannot fire inside it). QMessageBox / QFileDialog / any
    QDialog.exec / QMenu.exec fail the test at once, unless ``dialogs.fail = False`` (then a
    QMessageBox is recorded in ``dialogs.errors``) or the test patches them itself."""
    from PySide6.QtWidgets import QDialog, QFileDialog, QMenu, QMessageBox

    log = DialogLog()

    def exec_(box):
        log.errors.append((box.windowTitle(), box.text(), box.detailedText() or None))
        if log.fail:
            pytest.fail(f"unexpected dialog {box.windowTitle()!r}: {box.text()}")
        return int(QMessageBox.StandardButton.Ok)

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    for name in ("question", "warning", "critical", "information"):
        monkeypatch.setattr(QMessageBox, name, staticmethod(
            lambda *a, _n=name, **k: pytest.fail(f"unexpected QMessageBox.{_n}: {a[1:3]}")))
    monkeypatch.setattr(QDialog, "exec", lambda d: pytest.fail(f"unexpected modal dialog {d.windowTitle()!r}"))
    monkeypatch.setattr(QMenu, "exec", lambda m, *a, **k: pytest.fail("unexpected modal context menu"))
    for name in ("getOpenFileName", "getOpenFileNames", "getSaveFileName", "getExistingDirectory"):
        monkeypatch.setattr(QFileDialog, name, staticmethod(
            lambda *a, _n=name, **k: pytest.fail(f"unexpected QFileDialog.{_n}")))
    return log


@pytest.fixture
def window(qtbot, qapp, settings_dir, dialogs):
    from resources import sample_model_path
    from widgets.window.main_window import MainWindow
    from widgets.settings.store import Settings
    from widgets.settings.theme import ThemeManager

    theme = ThemeManager(qapp, "light")
    win = MainWindow(settings=Settings(), theme=theme, sample=sample_model_path())

    def forget_edits(w) -> None:
        for tab in w.tab_list():
            tab.doc.stack.set_clean()  # no "discard changes?" question when closing

    qtbot.addWidget(win, before_close_func=forget_edits)
    win.resize(1280, 800)
    win.show()
    yield win
    theme.setParent(None)


def open_model(qtbot, win, path, **kwargs):
    """Open ``path`` and wait until it is shown (load + first layout); returns the tab."""
    with qtbot.waitSignal(win.modelShown, timeout=LOAD_TIMEOUT_MS) as blocker:
        win.open_path(path, **kwargs)
    return blocker.args[0]


def show_panel(qtbot, panel) -> None:
    """Bring the dock holding ``panel`` to the front, as a click on its tab does (panels
    behind another tab wait until shown to fill in)."""
    from PySide6.QtWidgets import QDockWidget

    dock = panel
    while dock is not None and not isinstance(dock, QDockWidget):
        dock = dock.parentWidget()
    assert dock is not None, f"{type(panel).__name__} is in no dock"
    from widgets.common.seen import is_seen

    dock.show()
    dock.raise_()
    qtbot.waitUntil(lambda: is_seen(panel), timeout=5000)


def show_outline(qtbot, window) -> None:
    """Open the Outline (closed on a first start) and wait for its tree of the model."""
    show_panel(qtbot, window.outline)
    qtbot.waitUntil(lambda: not window.outline.model.stale, timeout=10_000)
