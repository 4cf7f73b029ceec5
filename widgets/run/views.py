"""Views of one result value: histogram (QPainter), picture, and a grid of numbers.

:class:`ValueDetail` puts the three in tabs and shows the picture tab only for image-like
tensors (``N,C,H,W``, ``C,H,W``, ``H,W,3`` and ``H,W``).
"""

from __future__ import annotations

import threading

import numpy as np
import shiboken6
from PySide6.QtCore import QObject, QRectF, Qt, Signal
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

from editor.runtime.stats import tensor_histogram
from widgets.common.elided_label import ElidedLabel
from widgets.run.imaging import rgb_to_qimage, tensor_image_planes, to_display_rgb
from widgets.run.models import ArraySliceModel, fmt_number, take_slice

BINS = 48


def histogram(array: np.ndarray, bins: int = BINS) -> tuple[np.ndarray, np.ndarray] | None:
    """(counts, edges) over the finite values, or None when there is nothing to count."""
    found = tensor_histogram(array, bins)
    return None if found is None else (found[0], found[1])


#: above this many elements the histogram is counted off the GUI thread (about 10 ms of work)
ASYNC_ELEMENTS = 1 << 19


class _Counted(QObject):
    """Carries a histogram or a picture from its thread to the GUI thread (queued signal)."""

    done = Signal(int, object)


class HistogramWidget(QWidget):
    """Bars of a value's distribution, with the range and the peak count as labels.

    A big value (a 1 GB output mapped from the run worker) is counted on a thread, in
    chunks: the window keeps painting, says "counting", and shows the bars when they come;
    a value chosen meanwhile makes the late answer stale (``_generation``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hist: tuple[np.ndarray, np.ndarray] | None = None
        self._note = "no value"
        self._sampled: int | None = None  # elements counted when that is a sample
        self._generation = 0
        self._bridge = _Counted(self)
        self._bridge.done.connect(self._counted)
        self.setMinimumSize(220, 120)

    def set_array(self, array: np.ndarray | None) -> None:
        self._generation += 1
        self._hist, self._sampled = None, None
        if array is None:
            self._note = "no value"
        elif np.asarray(array).size > ASYNC_ELEMENTS:
            self._note = "counting…"
            generation, bridge, size = self._generation, self._bridge, int(np.asarray(array).size)

            def count() -> None:
                try:
                    found = tensor_histogram(array, BINS)
                except Exception:  # noqa: BLE001 - an odd dtype: no bars, never a dead thread
                    found = None
                if shiboken6.isValid(bridge):
                    bridge.done.emit(generation, (found, size))

            threading.Thread(target=count, name="onnx-studio-histogram", daemon=True).start()
        else:
            self._take(tensor_histogram(array, BINS), np.asarray(array).size)
        self.update()

    def _take(self, found: tuple[np.ndarray, np.ndarray, int] | None, size: int) -> None:
        self._note = "no numbers to count"
        if found is not None:
            self._hist = (found[0], found[1])
            self._sampled = found[2] if found[2] < size else None

    def _counted(self, generation: int, answer: tuple) -> None:
        if generation != self._generation:
            return  # another value was chosen meanwhile
        self._take(*answer)
        self.update()

    @property
    def busy(self) -> bool:
        """Whether a histogram is still being counted."""
        return self._note == "counting…"

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
                   f"{int(counts.sum()):,} values · peak {peak:,}"
                   + (" · an even sample" if self._sampled is not None else ""))
        p.end()


def _plane_size(shape: tuple[int, ...], layout: str) -> tuple[int, int]:
    """(height, width) of one picture of a tensor of this layout (see tensor_image_planes)."""
    at = {"NCHW": (2, 3), "NHWC": (1, 2), "CHW": (1, 2), "HWC": (0, 1), "HW": (0, 1)}[layout]
    return int(shape[at[0]]), int(shape[at[1]])


class ImageView(QWidget):
    """A tensor shown as a picture, with batch and channel pickers when they apply."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._array: np.ndarray | None = None
        self._layout: str | None = None
        self._pixmap = QPixmap()
        self._generation = 0
        self._bridge = _Counted(self)
        self._bridge.done.connect(self._drawn)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.batch = QSpinBox(self)
        self.batch.setPrefix("image ")
        self.channel = QComboBox(self)
        row.addWidget(self.batch)
        row.addWidget(self.channel)
        row.addStretch(1)
        self.info = ElidedLabel("", self, mode=Qt.TextElideMode.ElideRight)
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
        self._generation += 1
        if self._array is None:
            self._pixmap = QPixmap()
            self.canvas.setText("not an image-like tensor")
            self.info.setText("")
            return
        array, layout, batch, channel = self._array, self._layout, self.batch.value(), self.channel.currentData()
        if array.size <= ASYNC_ELEMENTS:
            self._show(to_display_rgb(array, layout, batch=batch, channel=channel))
            return
        # a big plane is scaled and converted on a thread; the window keeps painting
        self.info.setText("drawing…")
        generation, bridge = self._generation, self._bridge

        def draw() -> None:
            try:
                rgb = to_display_rgb(array, layout, batch=batch, channel=channel)
            except Exception:  # noqa: BLE001 - an odd tensor: no picture, never a dead thread
                rgb = None
            if shiboken6.isValid(bridge):
                bridge.done.emit(generation, rgb)

        threading.Thread(target=draw, name="onnx-studio-image", daemon=True).start()

    def _drawn(self, generation: int, rgb: object) -> None:
        if generation == self._generation and rgb is not None:
            self._show(rgb)  # type: ignore[arg-type]

    @property
    def busy(self) -> bool:
        """Whether a picture is still being drawn."""
        return self.info.text() == "drawing…"

    def _show(self, rgb: np.ndarray) -> None:
        self._pixmap = QPixmap.fromImage(rgb_to_qimage(rgb))
        text = f"{rgb.shape[1]} × {rgb.shape[0]} px, stretched min..max"
        if self._array is not None and self._layout is not None:
            h, w = _plane_size(self._array.shape, self._layout)
            if (h, w) != rgb.shape[:2]:
                text = f"{w} × {h} values shown as {rgb.shape[1]} × {rgb.shape[0]} px, stretched min..max"
        self.info.setText(text)
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


