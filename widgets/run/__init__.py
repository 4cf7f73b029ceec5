"""Running the open model from the editor: inputs, backends, results, intermediate values and
profiles (the GUI of :mod:`editor.runtime`).

Public API:
- :func:`install_run_dock` adds the "Run" dock and the "Run" menu (F5 run, Shift+F5 cancel,
  Ctrl+F5 profile) to the main window and returns the :class:`RunDock`.
- :class:`RunController` (one per document tab): ``run(settings)``, ``cancel()``,
  ``last_result``, ``value(name)`` (a value from the last run, for the canvas),
  ``profile_by_node_id()`` (``{node id: microseconds}``).
- Building blocks: :class:`InputPanel`, :class:`RunOptionsPanel`, :class:`RunPanel`,
  :class:`ResultsModel`, :class:`ProfileModel`, :class:`ValueDetail`, :class:`HeatMapOverlay`.
"""

from __future__ import annotations

from widgets.run.controller import RunController, RunService, RunSettings, describe_failure
from widgets.run.dock import RunDock
from widgets.overlays.heatmap import HeatMap, HeatMapOverlay
from widgets.run.inputs_panel import DimsMemory, InputEditor, InputPanel
from widgets.run.models import ArraySliceModel, ProfileModel, ResultsModel
from widgets.run.options import RunOptionsPanel
from widgets.run.panel import RunPanel
from widgets.run.views import ValueDetail

__all__ = [
    "ArraySliceModel",
    "DimsMemory",
    "HeatMap",
    "HeatMapOverlay",
    "InputEditor",
    "InputPanel",
    "ProfileModel",
    "ResultsModel",
    "RunController",
    "RunDock",
    "RunOptionsPanel",
    "RunPanel",
    "RunService",
    "RunSettings",
    "ValueDetail",
    "describe_failure",
    "install_run_dock",
]


def install_run_dock(main_window) -> RunDock:
    """Add the Run dock (bottom area, tabbed with the Problems dock when there is one) and
    the Run menu to ``main_window``; returns the dock."""
    from PySide6.QtCore import Qt

    dock = RunDock(main_window)
    main_window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    problems = getattr(main_window, "problems_dock", None)
    if problems is not None:
        main_window.tabifyDockWidget(problems, dock)
    docks = getattr(main_window, "docks", None)
    if isinstance(docks, list):
        docks.append(dock)
    main_window.run_dock = dock
    return dock
