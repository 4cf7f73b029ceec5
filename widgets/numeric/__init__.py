"""Numeric debugging in the window: the Compare Runs dock (the GUI of :mod:`editor.debug`).

Public API:
- :func:`install_numeric_dock` adds the "Compare Runs" dock (bottom area, tabbed with the
  Diff dock) and "Tools ▸ Compare Runs…" to the main window and returns the dock.
- :class:`NumericDock`: ``run_comparison()``, ``reduce()``, ``cancel()``,
  ``show_comparison(c)``, ``select_tensor(name)``, ``comparison``, ``heatmap``.
- Building blocks: :class:`ErrorTableModel`, :class:`ErrorHeatMap`, :class:`PairDetail`,
  :class:`BackgroundTask`.
"""

from __future__ import annotations

from widgets.numeric.detail import DiffHistogram, PairDetail
from widgets.numeric.dock import NumericDock
from widgets.numeric.heatmap import ErrorHeatMap, ErrorOverlay, node_shares
from widgets.numeric.table import ErrorTableModel
from widgets.numeric.task import BackgroundTask, TaskRelay

__all__ = [
    "BackgroundTask",
    "DiffHistogram",
    "ErrorHeatMap",
    "ErrorOverlay",
    "ErrorTableModel",
    "NumericDock",
    "PairDetail",
    "TaskRelay",
    "install_numeric_dock",
    "node_shares",
]


def install_numeric_dock(main_window) -> NumericDock:  # noqa: ANN001
    """Add the Compare Runs dock and its Tools menu action; returns the dock.

    Call it after the Diff dock is installed and before ``restoreState``."""
    from widgets.window.layout import add_bottom_dock

    dock = NumericDock(main_window)
    add_bottom_dock(main_window, dock, beside=main_window.compare_dock)

    def show() -> None:
        from widgets.docking import ensure_room

        dock.refresh_sides()
        dock.show()
        dock.raise_()
        ensure_room(main_window, dock, later=True)

    from widgets.actions.registry import ActionSpec
    from widgets.actions.view import register_dock

    dock.show_action = main_window.registry.add(ActionSpec(
        "tools.compare_runs", "Compare Runs…", show, menu="Tools", section="2_compare",
        tip="Compare the values of two runs tensor by tensor", keywords="numeric error heat map"))
    register_dock(main_window, dock, "3")
    main_window.tabs.currentChanged.connect(lambda _i: dock.refresh_sides() if dock.isVisible() else None)
    main_window.numeric_dock = dock
    return dock
