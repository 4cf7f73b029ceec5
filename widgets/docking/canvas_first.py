"""Canvas first (Netron's lesson): the graph gets the window; panels earn their room.

- :func:`first_start_layout`: with no saved layout, one column of panels on the right
  (Properties, Summary, Cost and History in one tab group, the operator's documentation
  under them) and nothing else: Outline and Find open on Ctrl+F or from View ▸ Panels
  (their column :data:`LEFT_WIDTH` wide the first time), the docks under the canvas when
  they are used (F5, Problems). The canvas gets over 70% of a 1,600 x 1,000 window (it
  had 45%).
- Badges: an empty panel says nothing and takes no room; Problems' tab says how many
  ("Problems (2)"), and the status bar's problems button opens it. History's tab has no
  count: a dock title that changes relayouts the whole main window (every dock, an
  animation each, a repaint): a third of an edit's frame budget, on every edit.
- Focus mode (View ▸ Focus on Canvas, F11): every dock hidden, the canvas alone; the same
  key brings back the docks that were open.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar, QToolButton

from widgets.actions.registry import ActionSpec

#: the first-start width of the panel column on the right, and the operator doc's share of it
RIGHT_WIDTH = 340
#: the first-start width of the column on the left (Outline, Find) when first opened: Qt
#: gave it the width of the docks' first layout, 137 pixels, and the Outline's section names
#: were cut to "Ou…ts"
LEFT_WIDTH = 280
OPERATOR_SHARE = 0.38


def hide_idle_docks(window: QMainWindow) -> None:
    """Outline, Find and the docks under the canvas closed: they wait until used.

    NOTE: runs before the first show too; hidden only from the event loop, they were drawn
    in the first frames (a "Problems | Run" tab bar under the canvas, "Outline | Find" on
    the left), for seconds on a busy machine."""
    for dock in (window.outline_dock, window.find_dock):
        dock.hide()
    for dock in window.findChildren(QDockWidget):
        if window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea:
            dock.hide()
    hide_stray_tab_bars(window)


def hide_stray_tab_bars(window: QMainWindow) -> None:
    """Hide the window's dock tab bars that name only hidden docks.

    NOTE: Qt (6.11) makes two tab bars for the first two docks tabbed together and then
    keeps one of them up to date; the other stays shown where the first layout put it,
    with the old tab names ("Problems | Run" under the canvas). A tab bar Qt uses again is
    shown again by Qt, so hiding is safe."""
    hidden = {d.windowTitle() for d in window.findChildren(QDockWidget) if d.isHidden()}
    for bar in window.findChildren(QTabBar):
        if bar.parent() is window and bar.count() and \
                all(bar.tabText(i) in hidden for i in range(bar.count())):
            bar.hide()


def first_start_layout(window: QMainWindow) -> None:
    """See the module docstring. Runs from the event loop after the first show (a saved
    window state replaces it): resizeDocks needs the window's real size."""
    hide_idle_docks(window)
    window.properties_dock.raise_()
    window.resizeDocks([window.properties_dock], [RIGHT_WIDTH], Qt.Orientation.Horizontal)
    column = max(window.properties_dock.height() + window.op_docs_dock.height(), 1)
    window.resizeDocks([window.properties_dock, window.op_docs_dock],
                       [int(column * (1 - OPERATOR_SHARE)), int(column * OPERATOR_SHARE)], Qt.Orientation.Vertical)
    widen_left_column_when_opened(window)


def widen_left_column_when_opened(window: QMainWindow) -> None:
    """The first time Outline or Find is shown, their column gets :data:`LEFT_WIDTH` (a
    first start only: a saved layout keeps the width the user gave it)."""
    docks = (window.outline_dock, window.find_dock)

    def shown(visible: bool) -> None:
        if not visible:
            return
        for dock in docks:
            dock.visibilityChanged.disconnect(shown)
        # (from the event loop: the dock's area has its first size then)
        QTimer.singleShot(0, window, lambda: window.resizeDocks(
            [d for d in docks if d.isVisible()][:1], [LEFT_WIDTH], Qt.Orientation.Horizontal))

    for dock in docks:
        dock.visibilityChanged.connect(shown)


def group_history(window: QMainWindow) -> None:
    """History joins the Properties tab group (beside it, it stood open while empty)."""
    history = getattr(getattr(window, "editing", None), "history_dock", None)
    if history is not None:
        window.tabifyDockWidget(window.properties_dock, history)
        window.properties_dock.raise_()


class ProblemsButton(QToolButton):
    """The status bar's "⚠ 3 problems": there only while there are problems; opens the
    Problems panel."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.setAutoRaise(True)
        self.setToolTip("Show the Problems panel")
        self.clicked.connect(self.open_problems)
        self.hide()

    def set_counts(self, errors: int, total: int) -> None:
        if not total:
            self.hide()
            return
        what = f"{errors:,} error{'s' if errors != 1 else ''}" if errors else f"{total:,} warning{'s' if total != 1 else ''}"
        self.setText(("⛔ " if errors else "⚠ ") + what)
        self.show()

    def open_problems(self) -> None:
        from widgets.docking.frame import ensure_room

        dock = self.window_.problems_dock
        dock.show()
        dock.raise_()
        ensure_room(self.window_, dock, later=True)


class FocusMode(QObject):
    """View ▸ Focus on Canvas: hides every dock, and brings the layout back as it was."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.hidden: list[QDockWidget] = []
        #: the window's dock layout before focus mode (which dock in front, the splits)
        self._state = None
        #: True while focus mode hides or shows docks (their overlays stay: nothing closed)
        self.switching = False
        self.action = window.registry.add(ActionSpec(
            "view.focus_canvas", "&Focus on Canvas", self.toggle, "F11", "View", "5_panels", checkable=True,
            tip="Hide every panel: the canvas alone (the same key brings them back)", keywords="zen full canvas"))

    @property
    def on(self) -> bool:
        return bool(self.hidden)

    def toggle(self, on: bool | None = None) -> None:
        on = not self.on if on is None or not isinstance(on, bool) else on
        self.switching = True
        try:
            if on and not self.on:
                self._state = self.window_.saveState()
                self.hidden = [d for d in self.window_.findChildren(QDockWidget) if d.isVisible()]
                for dock in self.hidden:
                    dock.hide()
            elif not on and self.on:
                # NOTE: the saved state, not show() of each hidden dock: a dock shown again
                # joined its tab group behind the one Qt put in front meanwhile (Summary
                # over Properties) and the column's split moved
                opened = [d for d in self.window_.findChildren(QDockWidget) if d.isVisible()]
                if self._state is None or not self.window_.restoreState(self._state):
                    for dock in self.hidden:
                        dock.show()
                for dock in opened:  # opened during focus mode (Ctrl+F): still open
                    dock.show()
                self.hidden, self._state = [], None
        finally:
            self.switching = False
        if self.action.isChecked() != self.on:
            self.action.setChecked(self.on)


def install_canvas_first(window: QMainWindow) -> None:
    """Badges, the problems button and focus mode on ``window`` (after its docks exist)."""
    group_history(window)
    button = ProblemsButton(window)
    window.statusBar().addPermanentWidget(button)
    window.problems_button = button
    window.problems.countChanged.connect(button.set_counts)  # (its dock title counts them: layout.py)
    window.focus_mode = FocusMode(window)

