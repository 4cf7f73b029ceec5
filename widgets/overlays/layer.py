"""One overlay at a time per tab, with its legend: the canvas's managed overlay layer.

Five features colour a tab's boxes: the profile heat map (Run), the cost heat map (Cost),
the compare error heat map (Compare Runs), the diff colours (Diff) and node data (View ▸
Node Data Overlay). Each used to add its own scene item and forget it: the error heat map
stayed after its dock closed and mixed with the diff colours, the cost heat map and the
profile badges showed at once, and "Clear Node Data" cleared only node data.

Now every :class:`~widgets.overlays.box_overlay.BoxOverlay` goes through its tab's
:class:`OverlayLayer`: showing one hides the one shown before (its owner hears of it
through ``on_cleared``, to untick its checkbox), the layer puts the active overlay's legend
on the canvas (title, colours, a × that clears it), View ▸ Clear Overlay removes whatever is
shown, and an overlay is cleared when the dock it comes from closes
(:func:`clear_when_closed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractButton, QDockWidget, QFrame, QGridLayout, QLabel, QToolButton, QWidget

__all__ = ["OverlayLayer", "OverlayLegend", "clear_when_closed", "layer_for", "untick"]


class OverlayLegend(QFrame):
    """What the active overlay's colours mean: a title, a swatch and text per entry, and
    a × that clears the overlay."""

    def __init__(self, parent: QWidget, on_clear: Callable[[], None]) -> None:
        super().__init__(parent)
        self.setObjectName("overlayLegend")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(6, 4, 6, 4)
        self._grid.setHorizontalSpacing(6)
        self._grid.setVerticalSpacing(2)
        self.title = QLabel(self)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Clear this overlay (View ▸ Clear Overlay)")
        self.close_button.clicked.connect(on_clear)
        self.entries: list[tuple[QColor, str]] = []
        self.hide()

    def set_content(self, title: str, entries: Iterable[tuple[QColor, str]]) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget()
            if widget is not None and widget not in (self.title, self.close_button):
                widget.deleteLater()
        self.entries = list(entries)
        self.title.setText(title)
        self._grid.addWidget(self.title, 0, 0, 1, 2)
        self._grid.addWidget(self.close_button, 0, 2, Qt.AlignmentFlag.AlignRight)
        for row, (colour, text) in enumerate(self.entries, start=1):
            swatch = QLabel(self)
            swatch.setFixedSize(14, 10)
            swatch.setStyleSheet(f"background: {QColor(colour).name()}; border: 1px solid rgba(0,0,0,0.35);")
            label = QLabel(text, self)
            self._grid.addWidget(swatch, row, 0)
            self._grid.addWidget(label, row, 1, 1, 2)
            # NOTE: a child made while the legend shows starts hidden and the layout leaves
            # it out of the size: the rows were drawn squeezed into the title's height
            swatch.show()
            label.show()
        self.adjustSize()


class OverlayLayer(QObject):
    """The overlay one tab shows (at most one) and its legend on the tab's canvas."""

    def __init__(self, tab, *, with_legend: bool = True) -> None:  # noqa: ANN001
        super().__init__(tab)
        self.tab = tab
        self.active = None
        #: None where the view explains the colours itself (the diff view's panes)
        self.legend = OverlayLegend(tab.canvas, self.clear) if with_legend else None
        if self.legend is not None:
            tab.canvas.set_legend(self.legend)

    def shown(self, overlay) -> None:  # noqa: ANN001
        """``overlay`` is being shown: the one shown before goes (its owner is told)."""
        previous, self.active = self.active, overlay
        if previous is not None and previous is not overlay:
            previous.set_visible(False)
            previous.cleared()
        self.refresh_legend()

    def hidden(self, overlay) -> None:  # noqa: ANN001
        if overlay is self.active:
            self.active = None
            self.refresh_legend()

    def refresh_legend(self) -> None:
        if self.legend is None:
            return
        overlay = self.active
        if overlay is None:
            self.legend.hide()
        else:
            title, entries = overlay.legend()
            self.legend.set_content(title, entries)
            self.legend.show()
        self.tab.canvas.set_legend(self.legend)  # placed again: its size changed

    def clear(self) -> bool:
        """Hide the active overlay (View ▸ Clear Overlay, the legend's ×); False when none."""
        overlay = self.active
        if overlay is None:
            return False
        overlay.set_visible(False)
        overlay.cleared()
        return True


def layer_for(tab, *, create: bool = True, with_legend: bool = True) -> OverlayLayer | None:  # noqa: ANN001
    """The :class:`OverlayLayer` of ``tab`` (made on first use; ``with_legend`` then says
    whether it floats a legend over the canvas)."""
    layer = getattr(tab, "overlay_layer", None)
    if layer is None and create:
        layer = tab.overlay_layer = OverlayLayer(tab, with_legend=with_legend)
    return layer


def untick(box: QAbstractButton) -> None:
    """Untick ``box`` without its toggled handler: the layer already took its overlay
    away (another was shown, Clear Overlay, the source dock closed)."""
    blocked = box.blockSignals(True)
    box.setChecked(False)
    box.blockSignals(blocked)


def clear_when_closed(dock: QDockWidget, overlays: Callable[[], Iterable]) -> None:
    """Hide ``overlays()`` (each told it was cleared) when ``dock`` closes (its close
    button or View ▸ Panels; a dock tabbed behind another is not closed)."""
    import shiboken6

    def closed(on: bool) -> None:
        focus = getattr(dock.parentWidget(), "focus_mode", None)
        if on or (focus is not None and focus.switching):  # focus mode hides docks, it closes none
            return
        for overlay in list(overlays()):
            if overlay is not None and overlay.visible and shiboken6.isValid(overlay.tab):
                overlay.set_visible(False)
                overlay.cleared()

    dock.toggleViewAction().toggled.connect(closed)
