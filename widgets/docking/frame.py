"""Every dock's content in a frame that asks for almost no room.

A dock's minimum size is its content's: the Run dock's form made the bottom area at least
275 pixels tall (it could not be dragged smaller even when it only said "No problems
found"), and one wide row of controls in any dock set the window's minimum width (a Compare
Runs row once asked for 771 pixels, a status line for 2,510). :class:`DockFrame` puts the
content in a scroll area whose own minimum is a few pixels: the user can drag a dock down to
its title and tab bar, and what does not fit scrolls instead of pushing the window wider
than the screen. Status lines still elide (:mod:`widgets.common.status_line`), so at
ordinary sizes nothing scrolls.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea, QWidget

#: the least a dock's content asks for: room for a few characters across, nothing down
MIN_WIDTH = 80
MIN_HEIGHT = 0


class DockFrame(QScrollArea):
    """A dock's content (``content``), resized to the dock, scrolled when the dock is
    smaller than the content's own minimum.

    After :func:`ensure_room` the frame keeps fitting its content (results shown after a
    run ask for a few more pixels) until the user drags the dock smaller than that."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.viewport().setAutoFillBackground(False)
        #: (window, dock) while the frame fits its content (see the class docstring)
        self.fitting: tuple | None = None
        self.resizing = False  # ensure_room's own resize is under way
        self.set_content(content)

    def set_content(self, content: QWidget) -> None:
        """Frame ``content`` instead of the content framed until now (deleted)."""
        old = self.takeWidget()
        self.setObjectName(f"{content.objectName() or type(content).__name__}_frame")
        self.setWidget(content)
        content.setAutoFillBackground(False)
        content.installEventFilter(self)
        if old is not None:
            old.deleteLater()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802, ANN001
        if obj is self.widget() and event.type() == QEvent.Type.LayoutRequest and self.fitting is not None:
            window, dock = self.fitting
            # (the frame as context: no call once it is gone)
            QTimer.singleShot(0, self, lambda: ensure_room(window, dock) if self.fitting is not None else None)
        return False

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        if (self.fitting is not None and not self.resizing and event.size().height() < event.oldSize().height()
                and self.widget() is not None and self.viewport().height() < self.widget().minimumSizeHint().height()):
            self.fitting = None  # the user dragged it smaller than its content: it stays so

    def content(self) -> QWidget:
        return self.widget()

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(MIN_WIDTH, MIN_HEIGHT)

    def sizeHint(self) -> QSize:  # noqa: N802
        inner = self.widget().sizeHint() if self.widget() is not None else QSize()
        return inner.expandedTo(self.minimumSizeHint())


def frame_dock(dock: QDockWidget) -> DockFrame | None:
    """Put ``dock``'s content in a :class:`DockFrame` (once); returns the frame."""
    content = dock.widget()
    if content is None:
        return None
    if isinstance(content, DockFrame):
        return content
    frame = DockFrame(content, dock)
    dock.setWidget(frame)
    return frame


def set_dock_content(dock: QDockWidget, content: QWidget) -> None:
    """Put ``content`` in ``dock`` (in its frame, when it has one) instead of what it held
    (a panel built after its dock: the dock's place and tab came first)."""
    frame = dock.widget()
    if isinstance(frame, DockFrame):
        frame.set_content(content)
        return
    dock.setWidget(content)
    if frame is not None:
        frame.deleteLater()


def dock_content(dock: QDockWidget) -> QWidget | None:
    """The panel inside ``dock`` (inside its frame, when it has one)."""
    widget = dock.widget()
    return widget.widget() if isinstance(widget, DockFrame) else widget


def ensure_room(window: QMainWindow, dock: QDockWidget, *, most: float = 0.45, later: bool = False) -> None:
    """Give ``dock`` the room its content needs, when the user asked to see it (F5 shows
    the Run dock): the area grows to the content's minimum, at most ``most`` of the window.
    A dock the user drags smaller afterwards stays small. ``later``: once the event loop has
    laid out a dock that was just shown (its sizes are not known before)."""
    frame = dock.widget()
    if later:
        if isinstance(frame, DockFrame):  # (the frame as context: no call once it is gone)
            QTimer.singleShot(0, frame, lambda: ensure_room(window, dock, most=most))
        return
    if not isinstance(frame, DockFrame) or dock.isFloating() or frame.widget() is None:
        return
    area = window.dockWidgetArea(dock)
    vertical = area in (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea)
    content = frame.widget()
    need = content.minimumSizeHint()
    have = frame.viewport().height() if vertical else frame.viewport().width()
    want = need.height() if vertical else need.width()
    if vertical and content.hasHeightForWidth():
        # as QScrollArea itself decides: wrapped text asks for its height at this width
        want = max(want, content.heightForWidth(frame.viewport().width()))
    frame.fitting = (window, dock)
    if have >= want:
        return
    limit = int((window.height() if vertical else window.width()) * most)
    orientation = Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal
    # NOTE: resizeDocks' size is the area's, tab bar of a tab group included, so the first
    # request is measured and the shortfall asked for once more
    size = (dock.height() if vertical else dock.width()) + want - have
    frame.resizing = True
    try:
        for _ in range(2):
            window.resizeDocks([dock], [min(size, limit)], orientation)
            window.layout().activate()
            have = frame.viewport().height() if vertical else frame.viewport().width()
            if have >= want or size >= limit:
                return
            size += want - have
    finally:
        frame.resizing = False


def install_docking(window: QMainWindow) -> None:
    """Frame every dock of ``window``, tab the bottom docks together, and add the
    canvas-first parts (:mod:`widgets.docking.canvas_first`). Call once its docks exist,
    before restoreState."""
    from widgets.docking.canvas_first import install_canvas_first

    for dock in window.findChildren(QDockWidget):
        frame_dock(dock)
    # the docks under the canvas share one tab group: side by side, the Python Console
    # and Problems asked for more than a 1,280-pixel window's width together
    bottom = [d for d in window.findChildren(QDockWidget)
              if window.dockWidgetArea(d) == Qt.DockWidgetArea.BottomDockWidgetArea]
    anchor = getattr(window, "problems_dock", None)
    if anchor in bottom:
        for dock in bottom:
            if dock is not anchor and not window.tabifiedDockWidgets(anchor).count(dock):
                window.tabifyDockWidget(anchor, dock)
    install_canvas_first(window)


def install_late_docks(window: QMainWindow, docks: list[QDockWidget], state=None) -> None:
    """What :func:`install_docking` and the saved layout give every dock, for ``docks``
    added after them (the docks the application installs after its first picture): a
    frame, the bottom tab group, and their place and visibility in the saved layout
    ``state`` (restored again, now with them), else hidden, as on a first start."""
    from widgets.docking.canvas_first import hide_stray_tab_bars

    anchor = getattr(window, "problems_dock", None)
    for dock in docks:
        frame_dock(dock)
        if (anchor is not None and dock is not anchor
                and window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea
                and not window.tabifiedDockWidgets(anchor).count(dock)):
            window.tabifyDockWidget(anchor, dock)
    # NOTE: not restoreDockWidget: it puts a dock back in its place but leaves it hidden
    if state is None or not window.restoreState(state):
        for dock in docks:
            dock.hide()
    hide_stray_tab_bars(window)
