"""The visual diff: two models side by side in one tab, coloured by their diff, moving
together, with the changes to walk through (see :mod:`widgets.diffview.view`).

Public API:
- :func:`install_diff_view` registers the actions (Tools ▸ Compare Side by Side With…,
  What Did I Change?, Next / Previous Change: F8 / Shift+F8) and the Diff dock's
  "Side by Side" button; :func:`open_diff_view` opens a view for two sides.
- :class:`DiffView` (the tab), :class:`DiffPane`, :class:`PaneSync`, :class:`ChangeDetails`,
  :class:`Legend`; :func:`render_diff` draws both sides headless (``diff --render``).
"""

from __future__ import annotations

from widgets.diffview.actions import install_diff_view, open_diff_view
from widgets.diffview.details import ChangeDetails
from widgets.diffview.legend import Legend
from widgets.diffview.pane import DiffPane
from widgets.diffview.sync import PaneSync
from widgets.diffview.view import DiffView

__all__ = [
    "ChangeDetails",
    "DiffPane",
    "DiffView",
    "Legend",
    "PaneSync",
    "install_diff_view",
    "open_diff_view",
]
