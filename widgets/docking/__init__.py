"""How the window's docks behave: canvas first (Netron's lesson).

Public API:
- :func:`install_docking` wraps every dock's content in a :class:`DockFrame` (a dock can be
  dragged down to its title and tab bar, and no content can widen the window: what does not
  fit scrolls), tabs the bottom docks together, and is called once the window has its docks.
"""

from __future__ import annotations

from widgets.docking.frame import DockFrame, install_docking

__all__ = ["DockFrame", "install_docking"]
