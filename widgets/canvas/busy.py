"""``LayoutBusy``: progress and Cancel over the canvas for a re-layout that takes a while.

A re-layout runs off the GUI thread (``LayoutRunner``); the window stays usable, but the
picture does not change until it is done. Anything that takes more than ``SHOW_AFTER_MS``
says so: a small bar at the top of the view with the progress and, for a change of what is
open (expand, collapse), a Cancel button that puts the open groups back as the picture on
screen shows them. Quick layouts never flash it.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

#: a layout shorter than this shows nothing
SHOW_AFTER_MS = 500


class LayoutBusy(QFrame):
    """Floats at the top centre of ``view`` while ``controller`` lays out (after a delay)."""

    def __init__(self, controller, view: QWidget) -> None:
        super().__init__(view)
        self._controller = controller
        self._view = view
        self.setObjectName("layoutBusy")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.label = QLabel("Laying out…", self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(140)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop, and keep the groups open as they are on screen")
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 4, 6, 4)
        row.addWidget(self.label)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        self.hide()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SHOW_AFTER_MS)
        self._timer.timeout.connect(self._appear)
        controller.busy.connect(self._on_busy)
        controller.progress.connect(self._on_progress)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.bar.setValue(0)
            if not self.isVisible():
                self._timer.start()
            else:
                self._appear()  # a new request while shown: stays, with its own Cancel
        else:
            self._timer.stop()
            self.hide()

    def _on_progress(self, fraction: float) -> None:
        self.bar.setValue(int(round(fraction * 100)))

    def _appear(self) -> None:
        boxes = self._controller.running_boxes()
        self.label.setText(f"Laying out {boxes:,} boxes…" if boxes else "Laying out…")
        self.cancel_button.setVisible(self._controller.cancellable())
        self.adjustSize()
        self.place()
        self.show()
        self.raise_()

    def place(self) -> None:
        """Top centre of the view."""
        vp = self._view.rect()
        self.move(max(0, (vp.width() - self.width()) // 2), 8)

    def cancel(self) -> None:
        self._controller.cancel()
