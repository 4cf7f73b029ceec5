"""Whether a panel is on screen, and a call when it comes on screen.

A dock tabbed behind another stays visible to Qt: ``isVisible()`` is true and choosing its
tab sends its widgets no show event; only the dock's ``visibilityChanged`` says so, and the
panel's visible region is empty meanwhile. Panels that read the whole model (the Summary,
the Cost panel) use this to do that work only for what the user can see.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget


def is_seen(widget: QWidget) -> bool:
    """Shown and not hidden behind another tab (or clipped away whole)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


class SeenWatch(QObject):
    """Calls ``on_seen`` when ``widget`` comes on screen: shown, or its dock's tab chosen.
    :meth:`attach` finds the dock (a panel is put in one after it is made)."""

    def __init__(self, widget: QWidget, on_seen: Callable[[], None]) -> None:
        super().__init__(widget)
        self._widget, self._on_seen = widget, on_seen
        self._dock: QDockWidget | None = None
        widget.installEventFilter(self)

    def attach(self) -> None:
        dock = self._widget.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is not None and dock is not self._dock:
            if self._dock is not None:
                self._dock.visibilityChanged.disconnect(self._on_visibility)
            dock.visibilityChanged.connect(self._on_visibility)
            self._dock = dock

    def _on_visibility(self, visible: bool) -> None:
        if visible:
            QTimer.singleShot(0, self, self._check)  # the region is set after the tab switch

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if obj is self._widget and event.type() == QEvent.Type.Show:
            QTimer.singleShot(0, self, self._check)
        return False

    def _check(self) -> None:
        if is_seen(self._widget):
            self._on_seen()
