"""How the window's docks behave: canvas first (Netron's lesson).

Public API:
- :func:`install_docking` wraps every dock's content in a :class:`DockFrame` (a dock can be
  dragged down to its title and tab bar, and no content can widen the window: what does not
  fit scrolls), tabs the bottom docks together, and is called once the window has its docks.
- :func:`install_late_docks` gives the same to docks added later (after the first picture).
- :func:`set_dock_content` puts a panel built after its dock in it (framed like the others).
- :func:`ensure_room` grows a dock the user asked to see (F5 shows the Run dock) to the room
  its content needs.
- :mod:`widgets.docking.canvas_first`: the first-start layout (the canvas gets over 70% of
  the window), badges on the tabs of panels with something to say, the status bar's
  problems button, focus mode (F11: the canvas alone).
"""

from __future__ import annotations

from widgets.docking.canvas_first import (
    FocusMode,
    ProblemsButton,
    first_start_layout,
    hide_idle_docks,
    hide_stray_tab_bars,
    install_canvas_first,
)
from widgets.docking.frame import (DockFrame, dock_content, ensure_room, install_docking, install_late_docks,
                                   set_dock_content)

__all__ = ["DockFrame", "FocusMode", "ProblemsButton", "dock_content", "ensure_room", "first_start_layout", "hide_idle_docks", "hide_stray_tab_bars",
           "install_canvas_first", "install_docking", "install_late_docks", "set_dock_content"]
