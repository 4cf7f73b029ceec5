"""Comparing two models and extracting a selection: the GUI of :mod:`editor.diff` and
:func:`editor.passes.extract_model`.

Public API:
- :func:`install_compare` adds the "Diff" dock, "Tools ▸ Compare With…" (Ctrl+Shift+D) and
  "Extract Selection to New Model" (Ctrl+Shift+E, in Tools, Edit and the canvas context
  menu) to the main window, and returns the :class:`CompareDock`.
- :class:`CompareDock`: ``compare_with(path_or_tab, tab=None)`` (runs in the background),
  ``diff`` (the ModelDiff in the open tabs' node ids), ``reveal(ChangeRef)``,
  ``open_other()``, ``overlay_for(tab)``, ``set_overlay_visible(on)``, ``refresh()``,
  ``extract()``, ``clear()``.
- Building blocks: :class:`DiffPanel`, :class:`DiffOverlay`, :class:`CanvasDiff`,
  :func:`extract_selection`, :func:`selected_node_ids`, :func:`open_new_document`.
"""

from __future__ import annotations

from widgets.compare.dock import CompareDock
from widgets.compare.extract import extract_selection, open_new_document, selected_node_ids
from widgets.compare.overlay import STATUS_COLOURS, CanvasDiff, DiffOverlay, status_colour
from widgets.compare.panel import ChangeRef, DiffPanel

__all__ = [
    "STATUS_COLOURS",
    "CanvasDiff",
    "ChangeRef",
    "CompareDock",
    "DiffOverlay",
    "DiffPanel",
    "extract_selection",
    "install_compare",
    "open_new_document",
    "selected_node_ids",
    "status_colour",
]


def install_compare(main_window) -> CompareDock:
    """Add the Diff dock (bottom area, tabbed with the Run / Problems docks, hidden until a
    comparison starts) and the compare / extract actions to ``main_window``; returns the dock.

    Call it after the Run dock is installed and before ``restoreState``."""
    from widgets.window.layout import add_bottom_dock

    dock = CompareDock(main_window)
    add_bottom_dock(main_window, dock, beside=main_window.run_dock)
    main_window.compare_dock = dock
    return dock
