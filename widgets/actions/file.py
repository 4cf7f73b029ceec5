"""File menu: new, open, recent, save, close, quit.

Registered by :func:`register`; saving and opening themselves live here too, so the window
only wires them (``MainWindow.save`` and ``save_as`` call :func:`save` and :func:`save_as`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.editing.save import confirm_invalid_save
from widgets.common.formatting import shown
from widgets.window.loader import show_error

MODEL_FILTER = "ONNX models (*.onnx *.onnxtxt *.txt);;All files (*)"
K = QKeySequence.StandardKey


def register(window) -> None:
    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    window.registry.add_all([
        ActionSpec("file.new", "&New Model", lambda: window.editing.new_model(), K.New, "File", "1_open"),
        ActionSpec("file.open", "&Open…", window.open_dialog, K.Open, "File", "1_open"),
        ActionSpec("file.open_recent", "Open &Recent", window.open_path, menu="File", section="1_open",
                   choices=lambda _t: [(shown(Path(p).name), p) for p in window.settings.recent_files()],
                   keywords="recent files"),
        ActionSpec("file.clear_recent", "Clear Recent", lambda: clear_recent(window), menu="File/Open Recent",
                   section="9", enabled_when=lambda: bool(window.settings.recent_files())),
        ActionSpec("file.save", "&Save", lambda: save(window), K.Save, "File", "2_save", enabled_when=has_tab),
        ActionSpec("file.save_as", "Save &As…", lambda: save_as(window), K.SaveAs, "File", "2_save",
                   enabled_when=has_tab),
        ActionSpec("file.save_with_options", "Save As with &Options…",
                   lambda: window.editing.save_as_with_options(), menu="File", section="2_save",
                   enabled_when=has_tab, tip="Save a copy choosing where the weights go"),
        ActionSpec("file.close", "&Close", lambda: window.close_tab(window.tabs.currentIndex()), K.Close, "File",
                   "2_save", enabled_when=has_tab),
        ActionSpec("file.quit", "&Quit", window.close, K.Quit, "File", "9_quit"),
    ])
    window.recent_menu = window.registry.menu("File/Open Recent")


def refresh_recent(window) -> None:
    """The recent-files menu and start page show the settings' list."""
    window.registry.refill("file.open_recent")
    window.registry.refresh("file.clear_recent")
    window.start_page.set_recent(window.settings.recent_files())


def clear_recent(window) -> None:
    window.settings.clear_recent()
    refresh_recent(window)


def open_dialog(window) -> None:
    paths, _ = QFileDialog.getOpenFileNames(window, "Open Model", window.settings.last_dir(), MODEL_FILTER)
    for path in paths:
        window.open_path(path)


def save(window) -> bool:
    tab = window.current_tab()
    if tab is None:
        return False
    if tab.doc.path is None:
        return save_as(window)
    if not confirm_invalid_save(window, tab):
        return False
    if not window.file_watch.confirm_overwrite(tab):
        return False
    try:
        tab.doc.save()
    except StudioError as exc:
        show_error(window, "Cannot save model", exc)
        return False
    window.statusBar().showMessage(f"Saved {shown(tab.doc.path.name)}", 3000)
    return True


def save_as(window) -> bool:
    tab = window.current_tab()
    if tab is None:
        return False
    start = str(tab.doc.path or Path(window.settings.last_dir()) / "model.onnx")
    path, _ = QFileDialog.getSaveFileName(window, "Save Model As", start, MODEL_FILTER)
    if not path or not confirm_invalid_save(window, tab):
        return False
    if not window.file_watch.confirm_overwrite(tab, Path(path)):
        return False
    try:
        tab.doc.save(path)
    except StudioError as exc:
        show_error(window, "Cannot save model", exc)
        return False
    window.settings.add_recent(path)
    refresh_recent(window)
    return True
