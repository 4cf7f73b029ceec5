"""Views of one result value: histogram (QPainter), picture, and a grid of numbers.

:class:`ValueDetail` puts the three in tabs and shows the picture tab only for image-like
tensors (``N,C,H,W``, ``C,H,W``, ``H,W,3`` and ``H,W``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.run.imaging import rgb_to_qimage, tensor_image_planes, to_display_rgb
from widgets.run.models import ArraySliceModel, fmt_number, take_slice

BINS = 48


def histogram(array: np.ndarray, bins: int = BINS) -> tuple[np.ndarray, np.ndarray] | None:
    """(counts, edges) over the finite values, or None when there is nothing to count."""
    a = np.asarray(array)
    if a.size == 0 or a.dtype.kind in "OUS":
        return None
    if a.dtype.kind == "V":
        try:
            a = a.astype(np.float32)
        except (TypeError, ValueError):
            return None
    if a.dtype.kind == "c":
        a = np.abs(a)
    f = a.astype(np.float64).ravel()
    f = f[np.isfinite(f)]
    if f.size == 0:
        return None
    lo, hi = float(f.min()), float(f.max())
    if a.dtype.kind in "iub" and hi - lo < bins:
        edges = np.arange(lo - 0.5, hi + 1.5)  # one bar per integer
    else:
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, bins + 1)
    counts, edges = np.histogram(f, bins=edges)
    return counts, edges


class HistogramWidget(QWidget):
    """Bars of a value's distribution, with the range and the peak count as labels."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hist: tuple[np.ndarray, np.ndarray] | None = None
        self._note = "no value"
        self.setMinimumSize(220, 120)

    def set_array(self, array: np.ndarray | None) -> None:
        self._hist = histogram(array) if array is not None else None
        self._note = "no value" if array is None else "no numbers to count"
        self.update()

    @property
    def counts(self) -> np.ndarray | None:
        return None if self._hist is None else self._hist[0]

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        text = pal.color(QPalette.ColorRole.Text)
        dim = pal.color(QPalette.ColorRole.PlaceholderText)
        fm = QFontMetrics(self.font())
        if self._hist is None:
            p.setPen(dim)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self._note)
            p.end()
            return
        counts, edges = self._hist
        margin_l, margin_b, margin_t, margin_r = 8, fm.height() + 8, fm.height() + 6, 8
        area = QRectF(margin_l, margin_t, self.width() - margin_l - margin_r, self.height() - margin_t - margin_b)
        peak = max(1, int(counts.max()))
        n = len(counts)
        w = area.width() / n
        bar = pal.color(QPalette.ColorRole.Highlight)
        bar.setAlpha(210)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(bar)
        for i, c in enumerate(counts):
            if c <= 0:
                continue
            h = max(1.0, area.height() * c / peak)
            p.drawRect(QRectF(area.left() + i * w + 0.5, area.bottom() - h, max(1.0, w - 1.0), h))
        p.setPen(QPen(dim, 1))
        p.drawLine(area.bottomLeft(), area.bottomRight())
        p.setPen(text)
        lo, hi = fmt_number(float(edges[0])), fmt_number(float(edges[-1]))
        y = int(area.bottom()) + 4
        p.drawText(QRectF(area.left(), y, area.width() / 2, fm.height()), Qt.AlignmentFlag.AlignLeft, lo)
        p.drawText(QRectF(area.center().x(), y, area.width() / 2, fm.height()), Qt.AlignmentFlag.AlignRight, hi)
        p.setPen(dim)
        p.drawText(QRectF(area.left(), 2, area.width(), fm.height()), Qt.AlignmentFlag.AlignLeft,
                   f"{int(counts.sum()):,} values · peak {peak:,}")
        p.end()


class ImageView(QWidget):
    """A tensor shown as a picture, with batch and channel pickers when they apply."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._array: np.ndarray | None = None
        self._layout: str | None = None
        self._pixmap = QPixmap()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.batch = QSpinBox(self)
        self.batch.setPrefix("image ")
        self.channel = QComboBox(self)
        row.addWidget(self.batch)
        row.addWidget(self.channel)
        row.addStretch(1)
        self.info = QLabel(self)
        self.info.setStyleSheet("color: palette(placeholder-text);")
        row.addWidget(self.info)
        outer.addLayout(row)
        self.canvas = QLabel(self)
        self.canvas.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.canvas.setMinimumSize(64, 64)
        outer.addWidget(self.canvas, 1)
        self.batch.valueChanged.connect(self._render)
        self.channel.currentIndexChanged.connect(self._render)

    @staticmethod
    def supports(array) -> bool:
        a = np.asarray(array) if array is not None else None
        return a is not None and a.dtype.kind not in "OUS" and tensor_image_planes(a.shape) is not None

    def set_array(self, array: np.ndarray | None) -> None:
        self._array = None if array is None or not self.supports(array) else np.asarray(array)
        self._layout = tensor_image_planes(self._array.shape) if self._array is not None else None
        a, layout = self._array, self._layout
        self.batch.blockSignals(True)
        self.channel.blockSignals(True)
        self.channel.clear()
        if a is not None:
            batches = a.shape[0] if layout in ("NCHW", "NHWC") else 1
            self.batch.setRange(0, max(0, batches - 1))
            self.batch.setVisible(batches > 1)
            channels = {"NCHW": a.shape[1] if a.ndim == 4 else 1, "NHWC": a.shape[-1], "CHW": a.shape[0],
                        "HWC": a.shape[-1], "HW": 1}[layout]
            if channels in (3, 4):
                self.channel.addItem("RGB", None)
            for c in range(channels if channels > 1 else 0):
                self.channel.addItem(f"channel {c}", c)
            self.channel.setVisible(self.channel.count() > 1)
        self.batch.blockSignals(False)
        self.channel.blockSignals(False)
        self._render()

    def pixmap(self) -> QPixmap:
        return self._pixmap

    def _render(self) -> None:
        if self._array is None:
            self._pixmap = QPixmap()
            self.canvas.setText("not an image-like tensor")
            self.info.setText("")
            return
        rgb = to_display_rgb(self._array, self._layout, batch=self.batch.value(), channel=self.channel.currentData())
        self._pixmap = QPixmap.fromImage(rgb_to_qimage(rgb))
        self.info.setText(f"{rgb.shape[1]} × {rgb.shape[0]} px, stretched min..max")
        self._fit()

    def _fit(self) -> None:
        if self._pixmap.isNull():
            return
        size = self.canvas.size()
        small = self._pixmap.width() * 2 <= size.width() and self._pixmap.height() * 2 <= size.height()
        mode = Qt.TransformationMode.FastTransformation if small else Qt.TransformationMode.SmoothTransformation
        self.canvas.setPixmap(self._pixmap.scaled(size, Qt.AspectRatioMode.KeepAspectRatio, mode))

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()


class ValueGrid(QWidget):
    """A QTableView over a 2-D slice; for higher ranks, pick the row and column axes and the
    index of every other axis."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._array: np.ndarray | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        # rows/columns axes on one line, the index of every other axis on the next
        self.axes_row = QHBoxLayout()
        self.row_axis = QComboBox(self)
        self.col_axis = QComboBox(self)
        self.row_axis.setToolTip("axis along the rows")
        self.col_axis.setToolTip("axis along the columns")
        self.axes_row.addWidget(QLabel("rows", self))
        self.axes_row.addWidget(self.row_axis)
        self.axes_row.addWidget(QLabel("cols", self))
        self.axes_row.addWidget(self.col_axis)
        self.axes_row.addStretch(1)
        outer.addLayout(self.axes_row)
        self.fixed_box = QHBoxLayout()
        outer.addLayout(self.fixed_box)
        self.model = ArraySliceModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.horizontalHeader().setDefaultSectionSize(84)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        outer.addWidget(self.table, 1)
        self._fixed: dict[int, QSpinBox] = {}
        self.row_axis.currentIndexChanged.connect(self._axes_changed)
        self.col_axis.currentIndexChanged.connect(self._axes_changed)

    def set_array(self, array) -> None:
        a = np.asarray(array) if isinstance(array, np.ndarray) else None
        self._array = a
        for combo in (self.row_axis, self.col_axis):
            combo.blockSignals(True)
            combo.clear()
        if a is not None and a.ndim > 2:
            for axis in range(a.ndim):
                label = f"{axis} ({a.shape[axis]})"
                self.row_axis.addItem(label, axis)
                self.col_axis.addItem(label, axis)
            self.row_axis.setCurrentIndex(a.ndim - 2)
            self.col_axis.setCurrentIndex(a.ndim - 1)
        for combo in (self.row_axis, self.col_axis):
            combo.blockSignals(False)
        show = a is not None and a.ndim > 2
        for i in range(self.axes_row.count()):
            w = self.axes_row.itemAt(i).widget()
            if w is not None:
                w.setVisible(show)
        self._axes_changed()

    def _axes_changed(self) -> None:
        while self.fixed_box.count():
            item = self.fixed_box.takeAt(0)
            if item.widget() is not None:
                item.widget().setParent(None)
                item.widget().deleteLater()
        self._fixed = {}
        a = self._array
        if a is None:
            self.model.set_slice(np.zeros((0, 0)))
            return
        if a.ndim > 2:
            r, c = self.row_axis.currentData(), self.col_axis.currentData()
            if r == c:
                c = next(ax for ax in range(a.ndim) if ax != r)
            for axis in range(a.ndim):
                if axis in (r, c):
                    continue
                spin = QSpinBox(self)
                spin.setPrefix(f"[{axis}] = ")
                spin.setToolTip(f"index along axis {axis}")
                spin.setRange(0, max(0, a.shape[axis] - 1))
                spin.valueChanged.connect(self._refresh)
                self.fixed_box.addWidget(spin)
                self._fixed[axis] = spin
            self.fixed_box.addStretch(1)
        self._refresh()

    def current_slice(self) -> np.ndarray:
        a = self._array
        if a is None:
            return np.zeros((0, 0))
        if a.ndim <= 2:
            return a
        r, c = self.row_axis.currentData(), self.col_axis.currentData()
        if r == c:
            c = next(ax for ax in range(a.ndim) if ax != r)
        return take_slice(a, r, c, {ax: s.value() for ax, s in self._fixed.items()})

    def _refresh(self) -> None:
        self.model.set_slice(self.current_slice())


class ValueDetail(QTabWidget):
    """Histogram, image and grid of one value."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.histogram = HistogramWidget(self)
        self.image = ImageView(self)
        self.grid = ValueGrid(self)
        self.addTab(self.histogram, "Histogram")
        self.addTab(self.image, "Image")
        self.addTab(self.grid, "Values")
        self._name: str | None = None

    def set_value(self, name: str | None, value) -> None:
        array = value if isinstance(value, np.ndarray) else None
        self._name = name
        self.histogram.set_array(array)
        self.image.set_array(array)
        self.grid.set_array(array)
        image_ok = ImageView.supports(array)
        self.setTabVisible(1, image_ok)
        if image_ok and self.currentIndex() == 0 and array is not None and array.ndim >= 3:
            self.setCurrentIndex(1)
        elif not image_ok and self.currentIndex() == 1:
            self.setCurrentIndex(0)

    @property
    def name(self) -> str | None:
        return self._name


