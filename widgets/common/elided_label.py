"""A label that gives up width gracefully: its text elided (in the middle by default) to the
room it gets, the whole text on hover.

Why: a plain QLabel's minimum width is its whole text, so one long name (an exporter's
``p2o.DynamicDimension.0``) widened a whole dock pane until its controls were cut off.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """Plain text, elided to its width; the full text is the tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle, min_chars: int = 6) -> None:
        super().__init__(text, parent)
        self._mode = mode
        self._min_chars = min_chars
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        if not self.toolTip() or self.toolTip() == getattr(self, "_auto_tip", None):
            self._auto_tip = text
            self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        hint = super().minimumSizeHint()
        room = self.fontMetrics().horizontalAdvance("M" * self._min_chars)
        return QSize(min(hint.width(), room), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), self._mode, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment()), text)
