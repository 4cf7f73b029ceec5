"""Item models of the run results: the values table, the profile table, a 2-D slice grid.

All three are read-only adapters over runtime records (``OutputRecord``, ``NodeTime``) or a
numpy array; sorting goes through a ``QSortFilterProxyModel`` with ``SORT_ROLE`` holding the
raw number, so "1.2e+03" sorts after "999".
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
#: the value name of a results row
NAME_ROLE = Qt.ItemDataRole.UserRole + 2

_Index = QModelIndex | QPersistentModelIndex


def fmt_number(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}" if abs(int(x)) >= 10_000 else str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.5g}"
    return str(x)


class _RecordTable(QAbstractTableModel):
    """A read-only table of records, one a row, under the fixed headers ``COLUMNS``."""

    COLUMNS: tuple[str, ...] = ()

    def _records_shown(self) -> list:
        raise NotImplementedError

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._records_shown())

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self.COLUMNS):
            return self.COLUMNS[section]
        return None


class ResultsModel(_RecordTable):
    """One row per produced value: name, role, shape, dtype, min, max, mean, std, NaN, Inf."""

    COLUMNS = ("Name", "Role", "Shape", "Dtype", "Min", "Max", "Mean", "Std", "NaN", "Inf")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._records: list = []
        self._rows: dict[int, tuple[list, list]] = {}

    def set_records(self, records) -> None:
        self.beginResetModel()
        self._records = list(records)
        self._rows: dict[int, tuple[list, list]] = {}
        self.endResetModel()

    def _row(self, row: int) -> tuple[list, list]:
        """(raw cells, display texts) of a row, made once: views ask for them often."""
        cached = self._rows.get(row)
        if cached is None:
            cells = self._cells(self._records[row])
            cached = self._rows[row] = (cells, [c if isinstance(c, str) else fmt_number(c) for c in cells])
        return cached

    def records(self) -> list:
        return list(self._records)

    def record(self, row: int):
        return self._records[row]

    def _records_shown(self) -> list:
        return self._records

    def row_of(self, name: str) -> int:
        for i, r in enumerate(self._records):
            if r.name == name:
                return i
        return -1

    def _cells(self, r) -> list[Any]:
        s = r.stats
        if s is None:
            return [r.name, r.role, r.summary, r.kind, None, None, None, None, None, None]
        return [r.name, r.role, "[" + ", ".join(str(d) for d in s.shape) + "]", r.dtype, s.min, s.max, s.mean,
                s.std, s.nan_count, s.inf_count]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not (0 <= index.row() < len(self._records)):
            return None
        r = self._records[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._row(index.row())[1][col]
        if role == SORT_ROLE:
            value = self._row(index.row())[0][col]
            if col == 2 and r.stats is not None:
                return float(r.stats.size)
            if isinstance(value, (bool, np.bool_)):
                return float(value)
            if isinstance(value, (int, float, np.integer, np.floating)):
                return float(value)
            return "" if value is None else str(value)
        if role == NAME_ROLE:
            return r.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{r.name}\n{r.summary}"
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and col in (8, 9) and r.stats is not None:
            if (r.stats.nan_count if col == 8 else r.stats.inf_count):
                return QColor(200, 40, 40)
        return None


class ProfileModel(_RecordTable):
    """Per-node times of a profiled run: node, op type, µs, share of the total, calls, provider."""

    COLUMNS = ("Node", "Op", "Time (µs)", "Share", "Calls", "Provider")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list = []
        self._total = 0.0

    def set_times(self, times: dict | None) -> None:
        self.beginResetModel()
        self._rows = sorted((times or {}).values(), key=lambda t: -t.microseconds)
        self._total = sum(t.microseconds for t in self._rows) or 1.0
        self.endResetModel()

    def node_at(self, row: int) -> str:
        return self._rows[row].node

    def _records_shown(self) -> list:
        return self._rows

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        t = self._rows[index.row()]
        col = index.column()
        share = t.microseconds / self._total
        raw = [t.node, t.op_type, t.microseconds, share, t.calls, t.provider.replace("ExecutionProvider", "")]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 2:
                return f"{t.microseconds:,.0f}"
            if col == 3:
                return f"{share * 100:.1f} %"
            return str(raw[col])
        if role == SORT_ROLE:
            value = raw[col]
            return float(value) if isinstance(value, (int, float)) else str(value)
        if role == NAME_ROLE:
            return t.node
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (2, 3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class ArraySliceModel(QAbstractTableModel):
    """A 2-D view of an array: ``rows``/``cols`` axes, the other axes fixed at ``index``.

    Rank 0 shows one cell, rank 1 one column. Cells are formatted on demand, so a
    1000 x 1000 slice costs nothing until it is scrolled into view.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._slice = np.zeros((0, 0))

    def set_slice(self, array: np.ndarray) -> None:
        a = np.asarray(array)
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a.reshape(-1, 1)
        self.beginResetModel()
        self._slice = a
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else int(self._slice.shape[0])

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else int(self._slice.shape[1])

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole:
            return str(section)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= self._slice.shape[0] or index.column() >= self._slice.shape[1]:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            v = self._slice[index.row(), index.column()]
            if self._slice.dtype.kind == "V":
                v = float(v.astype(np.float32))
            return fmt_number(v.item() if isinstance(v, np.generic) else v)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def take_slice(array: np.ndarray, row_axis: int, col_axis: int, fixed: dict[int, int]) -> np.ndarray:
    """The 2-D slice of ``array`` with ``row_axis`` x ``col_axis`` and other axes at ``fixed``."""
    a = np.asarray(array)
    if a.ndim <= 2:
        return a
    index: list[Any] = []
    for axis in range(a.ndim):
        if axis in (row_axis, col_axis):
            index.append(slice(None))
        else:
            index.append(int(fixed.get(axis, 0)))
    out = a[tuple(index)]
    return out.T if row_axis > col_axis else out
