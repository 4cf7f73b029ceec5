"""The weights view: one tensor's numbers, histogram, values and (for convolutions) filters.

A MatMulNBits weight (int4/int2 values packed into uint8 bytes, in blocks with a scale each)
is shown as what it means: the statistics, histogram and values of the dequantized matrix,
and the scale of every block.

Works alike for initializers, sparse initializers and Constant-node payloads (the
catalogue of :mod:`editor.weights`). Statistics run on a worker thread through
:func:`editor.weights.weight_stats`, which reads external data chunk by chunk from the
memory map; selecting another tensor cancels the run in flight. The value grid and the
filter images read the tensor only when it is small enough to show.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QRectF, QRunnable, QSize, Qt, QThreadPool, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.common.status_line import MessageLabel
from widgets.common.formatting import human_bytes

#: the value grid is offered up to this many elements
MAX_GRID_ELEMENTS = 1_000_000
#: filter images: at most this many output x input channel pairs
MAX_FILTERS = 256
MAX_FILTER_ELEMENTS = 4_000_000


def find_weight(doc, target):
    """The :class:`editor.weights.WeightInfo` a tensor target stands for, or None."""
    from editor.weights import list_weights

    if doc is None or target is None:
        return None
    for w in list_weights(doc):
        if target.node is not None:
            if w.node == target.node:
                return w
        elif w.scope == target.scope and w.name == target.name and w.source != "constant":
            return w
    return None


class _StatsRelay(QObject):
    done = Signal(int, object)
    failed = Signal(int, str)


class _Cancelled(Exception):
    pass


class _StatsTask(QRunnable):
    def __init__(self, gen: int, doc, weight, relay: _StatsRelay, view: WeightsView) -> None:
        super().__init__()
        self._gen, self._doc, self._w, self._relay, self._view = gen, doc, weight, relay, view

    def run(self) -> None:
        from editor.weights import weight_stats

        def progress(_fraction: float) -> None:
            if self._view._generation != self._gen:
                raise _Cancelled

        try:
            stats = weight_stats(self._doc, self._w, progress=progress)
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - shown in the view, never raised into Qt
            self._relay.failed.emit(self._gen, f"{type(exc).__name__}: {exc}")
            return
        self._relay.done.emit(self._gen, stats)


class HistogramWidget(QWidget):
    """Bars of a histogram (counts over edges), drawn with QPainter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._counts: list[int] = []
        self._edges: list[float] = []
        self.setMinimumHeight(110)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(320, 130)

    def set_histogram(self, counts, edges) -> None:
        self._counts = list(counts)
        self._edges = list(edges)
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        pal = self.palette()
        rect = QRectF(self.rect()).adjusted(8, 6, -8, -20)
        p.fillRect(self.rect(), pal.base())
        if not self._counts or rect.width() <= 0:
            p.setPen(pal.placeholderText().color())
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no histogram")
            return
        peak = max(self._counts) or 1
        n = len(self._counts)
        bar_w = rect.width() / n
        colour = pal.highlight().color()
        for i, c in enumerate(self._counts):
            if not c:
                continue
            # sqrt scale: one dominant bin (all zeros) must not flatten the rest
            h = rect.height() * math.sqrt(c / peak)
            p.fillRect(QRectF(rect.left() + i * bar_w, rect.bottom() - h, max(1.0, bar_w - 1), h), colour)
        p.setPen(QPen(pal.mid().color()))
        p.drawLine(rect.bottomLeft(), rect.bottomRight())
        p.setPen(pal.text().color())
        lo, hi = self._edges[0], self._edges[-1]
        p.drawText(QRectF(rect.left(), rect.bottom() + 2, rect.width() / 2, 16),
                   Qt.AlignmentFlag.AlignLeft, f"{lo:.4g}")
        p.drawText(QRectF(rect.center().x(), rect.bottom() + 2, rect.width() / 2, 16),
                   Qt.AlignmentFlag.AlignRight, f"{hi:.4g}")


class TensorTableModel(QAbstractTableModel):
    """A tensor as a 2-D grid: the last axis across, every other axis flattened down."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._data = np.zeros((0, 0))
        self._shape: tuple[int, ...] = ()

    def set_array(self, arr: np.ndarray | None) -> None:
        self.beginResetModel()
        if arr is None:
            self._data, self._shape = np.zeros((0, 0)), ()
        else:
            self._shape = tuple(arr.shape)
            if arr.ndim == 0:
                self._data = arr.reshape(1, 1)
            elif arr.ndim == 1:
                self._data = arr.reshape(1, -1) if arr.shape[0] <= 64 else arr.reshape(-1, 1)
            else:
                self._data = arr.reshape(-1, arr.shape[-1])
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._data.shape[0]

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._data.shape[1]

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        v = self._data[index.row(), index.column()]
        if isinstance(v, (bytes, np.bytes_)):
            return v.decode("utf-8", "replace")
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.6g}"
        return str(v.item() if hasattr(v, "item") else v)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return str(section)
        lead = self._shape[:-1]
        if len(lead) <= 1:
            return str(section)
        return ",".join(str(i) for i in np.unravel_index(section, lead))


def filter_images(arr: np.ndarray, *, max_filters: int = MAX_FILTERS) -> list[tuple[str, QImage]]:
    """Grayscale images of a 4-D (out, in, kh, kw) weight, one per (out, in) pair, normalised
    over the whole tensor so filters compare; at most ``max_filters`` of them."""
    a = np.asarray(arr, dtype=np.float64)
    if a.ndim != 4 or a.size == 0:
        return []
    finite = a[np.isfinite(a)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    scale = 255.0 / (hi - lo) if hi > lo else 0.0
    out: list[tuple[str, QImage]] = []
    for o in range(a.shape[0]):
        for i in range(a.shape[1]):
            if len(out) >= max_filters:
                return out
            k = np.nan_to_num(a[o, i], nan=lo, posinf=hi, neginf=lo)
            g = np.ascontiguousarray(((k - lo) * scale).clip(0, 255).astype(np.uint8))
            img = QImage(g.data, g.shape[1], g.shape[0], g.strides[0], QImage.Format.Format_Grayscale8).copy()
            out.append((f"{o},{i}", img))
    return out


class WeightsView(QWidget):
    """See module docstring. ``show_tensor(doc, target)`` with a tensor Target (or None)."""

    statsReady = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = None
        self._weight = None
        self._generation = 0
        self._relay = _StatsRelay(self)
        self._relay.done.connect(self._on_stats)
        self._relay.failed.connect(self._on_failed)
        self.header = MessageLabel("", self)
        self.export_button = QPushButton("Export .npy…", self)
        self.export_button.clicked.connect(self.export_dialog)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignTop)
        self.stats_form = QFormLayout()
        self.stats_form.setContentsMargins(4, 0, 4, 0)
        self.stat_labels: dict[str, QLabel] = {}
        for key in ("min", "max", "mean", "std", "NaN", "Inf", "zeros"):
            label = QLabel("…", self)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.stat_labels[key] = label
        grid = QGridLayout()
        grid.setContentsMargins(4, 0, 4, 0)
        for i, key in enumerate(self.stat_labels):
            name = QLabel(f"<b>{key}</b>", self)
            grid.addWidget(name, i // 2, (i % 2) * 2)
            grid.addWidget(self.stat_labels[key], i // 2, (i % 2) * 2 + 1)
        self.histogram = HistogramWidget(self)
        self.table_model = TensorTableModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.table_model)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.filters = QWidget(self)
        self.filters_layout = QGridLayout(self.filters)
        self.filters_layout.setSpacing(3)
        self.filters_scroll = QScrollArea(self)
        self.filters_scroll.setWidgetResizable(True)
        self.filters_scroll.setWidget(self.filters)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        hist_page = QWidget(self)
        hl = QVBoxLayout(hist_page)
        hl.setContentsMargins(0, 4, 0, 0)
        hl.addLayout(grid)
        hl.addWidget(self.histogram, 1)
        self.note = MessageLabel("", self)  # how packed values were read (int4 blocks ...)
        hl.addWidget(self.note)
        # a packed weight: the scale of each block, one row per output column
        self.blocks_model = TensorTableModel(self)
        self.blocks = QTableView(self)
        self.blocks.setModel(self.blocks_model)
        self.blocks.verticalHeader().setDefaultSectionSize(20)
        self.tabs.addTab(hist_page, "Statistics")
        self.tabs.addTab(self.table, "Values")
        self.tabs.addTab(self.filters_scroll, "Filters")
        self.tabs.addTab(self.blocks, "Block scales")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        self.stats = None

    @property
    def weight(self):
        return self._weight

    def show_tensor(self, doc, target) -> None:
        self._generation += 1
        self._doc = doc
        self._weight = w = find_weight(doc, target)
        self.stats = None
        self._clear_filters()
        self.table_model.set_array(None)
        self.blocks_model.set_array(None)
        self.histogram.set_histogram([], [])
        for label in self.stat_labels.values():
            label.setText("…" if w is not None else "")
        self.export_button.setEnabled(w is not None)
        if w is None:
            self.header.setText("")
            return
        from editor.weights import packed_weight_of

        shape = "×".join(str(d) for d in w.shape) or "scalar"
        ext = f"<br>external: {w.location}" if w.external else ""
        sparse = f", {w.nnz:,} stored" if w.nnz is not None else ""
        packed = packed_weight_of(doc, w)
        if packed is not None:  # int4/int2 in bytes: speak of the values they stand for
            rows, cols = packed.shape
            self.header.setText(f"<b>{w.name}</b><br>{packed.label} [{rows}×{cols}] · {packed.values:,} values in "
                                f"blocks of {packed.layout.block_size} · {human_bytes(w.nbytes)} packed{ext}")
        else:
            self.header.setText(f"<b>{w.name}</b><br>{w.dtype} [{shape}] · {w.elements:,} elements{sparse} · "
                                f"{human_bytes(w.nbytes)}{ext}")
        self.note.setText("")
        QThreadPool.globalInstance().start(_StatsTask(self._generation, doc, w, self._relay, self))
        small = (packed.values if packed else w.elements) <= MAX_GRID_ELEMENTS
        self.tabs.setTabEnabled(1, small)
        conv = packed is None and len(w.shape) == 4 and w.elements <= MAX_FILTER_ELEMENTS and w.dtype != "string"
        self.tabs.setTabEnabled(2, conv)
        self.tabs.setTabEnabled(3, packed is not None and small)
        if small or conv:
            from editor.weights import block_scales, dequantized_array, weight_array

            try:
                arr = dequantized_array(doc, w) if packed is not None else weight_array(doc, w)
                if packed is not None:
                    self.blocks_model.set_array(block_scales(doc, w))
            except Exception:  # noqa: BLE001 - unreadable data: stats report the error
                return
            if small:
                self.table_model.set_array(arr)
            if conv:
                self._show_filters(arr)

    def _clear_filters(self) -> None:
        while self.filters_layout.count():
            item = self.filters_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()

    def _show_filters(self, arr: np.ndarray) -> None:
        try:
            images = filter_images(np.asarray(arr, dtype=np.float64))
        except (TypeError, ValueError):
            return
        per_row = max(1, min(16, arr.shape[1] if arr.shape[1] > 1 else 8))
        size = 36
        for n, (label, img) in enumerate(images):
            tile = QLabel(self.filters)
            tile.setPixmap(QPixmap.fromImage(img).scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio,
                                                         Qt.TransformationMode.FastTransformation))
            tile.setToolTip(f"filter {label}")
            tile.setFixedSize(size, size)
            self.filters_layout.addWidget(tile, n // per_row, n % per_row)

    def filter_count(self) -> int:
        return self.filters_layout.count()

    def _on_stats(self, gen: int, stats) -> None:
        if gen != self._generation:
            return
        self.stats = stats

        def num(v) -> str:
            return "—" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))

        self.stat_labels["min"].setText(num(stats.min))
        self.stat_labels["max"].setText(num(stats.max))
        self.stat_labels["mean"].setText(num(stats.mean))
        self.stat_labels["std"].setText(num(stats.std))
        self.stat_labels["NaN"].setText(f"{stats.nan_count:,}")
        self.stat_labels["Inf"].setText(f"{stats.inf_count:,}")
        self.stat_labels["zeros"].setText(f"{stats.zero_count:,}")
        self.note.setText(stats.note)
        self.histogram.set_histogram(stats.histogram_counts, stats.histogram_edges)
        self.statsReady.emit(stats)

    def _on_failed(self, gen: int, message: str) -> None:
        if gen == self._generation:
            for label in self.stat_labels.values():
                label.setText("")
            self.stat_labels["min"].setText(f"cannot read: {message}")

    def export_dialog(self) -> None:
        if self._weight is None:
            return
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in self._weight.name) or "tensor"
        path, _ = QFileDialog.getSaveFileName(self, "Export tensor", f"{safe}.npy", "NumPy arrays (*.npy)")
        if path:
            self.export(path)

    def export(self, path: str | Path) -> Path | None:
        from editor.errors import StudioError
        from editor.weights import export_npy

        try:
            return export_npy(self._doc, self._weight, path)
        except StudioError as exc:
            from widgets.window.loader import show_error

            show_error(self, "Cannot export tensor", exc)
            return None
