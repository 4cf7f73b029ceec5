"""One tensor pair side by side: both values' statistics and a histogram of the difference."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from editor.debug import TensorResult
from editor.runtime.result import OutputRecord
from widgets.common.status_line import MessageLabel

__all__ = ["DiffHistogram", "PairDetail"]


class DiffHistogram(QWidget):
    """Bars of ``np.histogram(a - b)`` over the finite differences (log-scaled counts)."""

    BINS = 40

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts = np.zeros(0)
        self.edges = np.zeros(0)
        self.setMinimumHeight(70)
        self.setMaximumHeight(120)

    def set_difference(self, diff: np.ndarray | None) -> None:
        if diff is None or diff.size == 0:
            self.counts, self.edges = np.zeros(0), np.zeros(0)
        else:
            finite = diff[np.isfinite(diff)]
            if finite.size:
                self.counts, self.edges = np.histogram(finite, bins=self.BINS)
            else:
                self.counts, self.edges = np.zeros(0), np.zeros(0)
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001
        p = QPainter(self)
        r = self.rect().adjusted(4, 4, -4, -18)
        p.fillRect(self.rect(), self.palette().base())
        if not self.counts.size:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no difference to show")
            return
        heights = np.log1p(self.counts.astype(np.float64))
        peak = heights.max() or 1.0
        w = r.width() / len(heights)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(210, 90, 40))
        for k, h in enumerate(heights):
            bh = r.height() * h / peak
            p.drawRect(QRectF(r.left() + k * w, r.bottom() - bh, max(w - 1, 1), bh))
        p.setPen(self.palette().text().color())
        p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 14), Qt.AlignmentFlag.AlignLeft, f"{self.edges[0]:.3g}")
        p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 14), Qt.AlignmentFlag.AlignCenter, "A − B")
        p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 14), Qt.AlignmentFlag.AlignRight, f"{self.edges[-1]:.3g}")


class PairDetail(QWidget):
    """Statistics of A's and B's value of one tensor, and the histogram of A − B."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = MessageLabel("Click a row or a node to see both values")
        self.side_a = MessageLabel()
        self.side_b = MessageLabel()
        for lab in (self.side_a, self.side_b):
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.histogram = DiffHistogram(self)
        row = QHBoxLayout()
        row.addWidget(self.side_a, 1)
        row.addWidget(self.side_b, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addLayout(row, 1)
        layout.addWidget(self.histogram)

    def show_pair(self, row: TensorResult | None, a: Any, b: Any) -> None:
        if row is None:
            self.title.setText("Click a row or a node to see both values")
            self.side_a.clear()
            self.side_b.clear()
            self.histogram.set_difference(None)
            return
        e = row.error
        verdict = {True: "within tolerance", False: "DIFFERS", None: "not compared"}[row.ok]
        extra = f" — {row.note}" if row.note else ""
        self.title.setText(f"<b>{row.a}</b> ({row.op_type or 'input'}): {verdict}{extra}"
                           + (f"<br>max abs {e.max_abs:.4g}, cosine {e.cosine:.6f}" if e and e.max_abs is not None
                              and e.cosine is not None else ""))
        self.side_a.setText("<b>A</b><br>" + (OutputRecord(row.a, a).summary if a is not None else "(no value)"))
        self.side_b.setText(f"<b>B</b> {row.b or ''}<br>" + (OutputRecord(row.b or "", b).summary if b is not None else "(no value)"))
        diff = None
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size == b.size and a.dtype.kind in "fiub" \
                and b.dtype.kind in "fiub":
            diff = a.reshape(-1).astype(np.float64) - b.reshape(-1).astype(np.float64)
        self.histogram.set_difference(diff)
