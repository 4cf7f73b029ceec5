"""The diff view's actions and where they start from.

Declared in the window's registry: Tools ▸ Compare Side by Side With… (the current model
against a file), Tools ▸ What Did I Change? (the file on disk against the open document,
edits included), and Next / Previous Change (F8 / Shift+F8; F7 is Run Full Check), enabled
while a diff view is the current tab. The Diff dock's "Side by Side" button opens the
dock's comparison in a view.

Side A of a view made from an open tab is a snapshot of its document taken now (the view
does not follow later edits; its external data is read through the tab's store).
"""

from __future__ import annotations

from pathlib import Path

import onnx
from PySide6.QtWidgets import QFileDialog

from editor.diff.side_by_side import Side
from widgets.actions.registry import ActionSpec
from widgets.common.formatting import shown
from widgets.diffview.view import DiffView

__all__ = ["install_diff_view", "open_diff_view", "side_of_tab"]

MODEL_FILTER = "ONNX models (*.onnx *.onnxtxt *.txt);;All files (*)"


def side_of_tab(tab) -> Side:  # noqa: ANN001
    """A snapshot of an open tab's document as one side of a diff."""
    copy = onnx.ModelProto()
    copy.CopyFrom(tab.doc.model)
    return Side(copy, tab.doc.store, shown(tab.title().rstrip("*")) + (" (edited)" if tab.doc.is_modified else ""))


def side_of_path(path: str | Path, name: str | None = None) -> Side:
    return Side(Path(path), None, name or shown(Path(path).name))


def current_view(window) -> DiffView | None:  # noqa: ANN001
    widget = window.tabs.currentWidget()
    return widget if isinstance(widget, DiffView) else None


def open_diff_view(window, a: Side, b: Side) -> DiffView:  # noqa: ANN001
    """Open a diff view of ``a`` and ``b`` in a new tab (it opens them in the background)."""
    theme = getattr(window, "theme", None)
    view = DiffView(a, b, dark=bool(theme and theme.dark), show_names=window.registry.action("view.names").isChecked(),
                    options=window.display_options(), parent=window.tabs)
    registry = window.registry
    view.ready.connect(lambda v=view: _on_ready(window, v))
    view.failed.connect(lambda msg: window.statusBar().showMessage(f"Cannot compare: {msg}", 8000))
    view.closeRequested.connect(lambda v=view: window.close_tab(window.tabs.indexOf(v)))
    view.stopChanged.connect(lambda _k: registry.refresh("diff."))
    index = window.tabs.addTab(view, view.title())
    window.tabs.setTabToolTip(index, f"A: {a.name}\nB: {b.name}")
    window.tabs.setCurrentIndex(index)
    view.start()
    return view


def _on_ready(window, view: DiffView) -> None:  # noqa: ANN001
    registry = window.registry
    view.set_actions(registry.action("diff.previous_change"), registry.action("diff.next_change"))
    view.comparison_source = lambda: getattr(getattr(window, "numeric_dock", None), "comparison", None)
    registry.refresh("diff.")
    n = len(view.stops)
    window.statusBar().showMessage(f"Diff: {n} change{'s' if n != 1 else ''} — F8 goes to the next one", 6000)


def install_diff_view(window) -> None:  # noqa: ANN001
    """Register the diff view's actions and hook the Diff dock's "Side by Side" button."""
    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    on_disk = lambda: window.current_tab() is not None and window.current_tab().path is not None  # noqa: E731
    has_stops = lambda: (v := current_view(window)) is not None and v.is_ready and bool(v.stops)  # noqa: E731

    def compare_side_by_side() -> None:
        tab = window.current_tab()
        if tab is None:
            return
        start = str(tab.path.parent) if tab.path is not None else window.settings.last_dir()
        path, _ = QFileDialog.getOpenFileName(window, "Compare Side by Side With", start, MODEL_FILTER)
        if path:
            open_diff_view(window, side_of_tab(tab), side_of_path(path))

    def what_changed() -> None:
        tab = window.current_tab()
        if tab is None or tab.path is None:
            return
        disk = side_of_path(tab.path, f"{shown(tab.path.name)} (on disk)")
        open_diff_view(window, disk, side_of_tab(tab))

    def step(forward: bool) -> None:
        view = current_view(window)
        if view is not None:
            view.next_change() if forward else view.previous_change()

    window.registry.add_all([
        ActionSpec("diff.side_by_side", "Compare Side &by Side With…", compare_side_by_side, "Ctrl+Alt+D", "Tools",
                   "2_compare", enabled_when=has_tab, keywords="diff visual two models",
                   tip="Open the current model and another file side by side, coloured by their diff"),
        ActionSpec("diff.what_changed", "&What Did I Change?", what_changed, None, "Tools", "2_compare",
                   enabled_when=on_disk, keywords="diff edits file on disk unsaved",
                   tip="The file on disk (A) side by side with the open model and its edits (B)"),
        ActionSpec("diff.next_change", "Next Chan&ge", lambda: step(True), "F8", "Tools", "2_compare",
                   enabled_when=has_stops, keywords="diff", tip="Go to the next change of the diff view"),
        ActionSpec("diff.previous_change", "Previous Chan&ge", lambda: step(False), "Shift+F8", "Tools", "2_compare",
                   enabled_when=has_stops, keywords="diff", tip="Go to the previous change of the diff view"),
    ])
    window.tabs.currentChanged.connect(lambda _i: window.registry.refresh("diff."))
    dock = getattr(window, "compare_dock", None)
    if dock is not None:
        dock.panel.sideBySideRequested.connect(lambda: _from_dock(window, dock))


def _from_dock(window, dock) -> None:  # noqa: ANN001
    """The Diff dock's comparison (A's tab against B's tab or file) in a diff view."""
    import shiboken6

    tab_a = dock.tab_a
    if tab_a is None or not shiboken6.isValid(tab_a):
        return
    tab_b = dock.tab_b if dock.tab_b is not None and shiboken6.isValid(dock.tab_b) else None
    if tab_b is not None:
        b = side_of_tab(tab_b)
    elif dock.path_b is not None:
        b = side_of_path(dock.path_b, dock.name_b or None)
    else:
        return
    open_diff_view(window, side_of_tab(tab_a), b)
