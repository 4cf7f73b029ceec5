"""The comparison as a sortable table: one row per tensor of A with its errors.

Sorting goes through a ``QSortFilterProxyModel`` on :data:`SORT_ROLE`, which gives numbers
for the numeric columns (not comparable rows sort last), so "worst first" is one click.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from editor.debug import Comparison, TensorResult

__all__ = ["COLUMNS", "SORT_ROLE", "ErrorTableModel"]

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ROLE = Qt.ItemDataRole.UserRole + 2
COLUMNS = ("", "tensor", "node", "op", "max abs", "max rel", "mean abs", "cosine", "NaN/Inf", "B tensor")
_Index = QModelIndex | QPersistentModelIndex


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    return f"{x:.3g}"


class ErrorTableModel(QAbstractTableModel):
    """Rows of a :class:`Comparison` (see module docstring)."""

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self._rows: list[TensorResult] = []
        self._first: str | None = None
        self._outputs: set[str] = set()

    def set_comparison(self, comparison: Comparison | None) -> None:
        self.beginResetModel()
        self._rows = list(comparison.tensors) if comparison is not None else []
        fd = comparison.first_divergence if comparison is not None else None
        self._first = fd.a if fd is not None else None
        self._outputs = set(comparison.outputs) if comparison is not None else set()
        self.endResetModel()

    def row(self, r: int) -> TensorResult:
        return self._rows[r]

    def row_of(self, tensor: str) -> int:
        return next((k for k, t in enumerate(self._rows) if t.a == tensor), -1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        t = self._rows[index.row()]
        col = index.column()
        e = t.error
        if role == ROW_ROLE:
            return index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                # NaN / Inf are findings, in words, never a plain "ok"
                mark = {"ok": "ok", "differ": "differs", "nan": "NaN", "inf": "Inf", "not compared": "—"}[t.status]
                return ("▶ " if t.a == self._first else "") + mark
            if col == 1:
                return t.a + ("  [output]" if t.a in self._outputs else "")
            if col == 2:
                return t.node or ("(input)" if t.node is None else "")
            if col == 3:
                return t.op_type or ""
            if col in (4, 5, 6, 7):
                if e is None:
                    return "—"
                return _num((e.max_abs, e.max_rel, e.mean_abs, e.cosine)[col - 4])
            if col == 8:
                return "—" if e is None else (t.finding or "finite")
            if col == 9:
                return t.b or "(no counterpart)"
        if role == SORT_ROLE:
            if col == 0:
                return {False: 0, None: 2, True: 1}[t.ok]
            if col in (4, 5, 6, 7):
                v = None if e is None else (e.max_abs, e.max_rel, e.mean_abs, e.cosine)[col - 4]
                if v is None or not math.isfinite(v):
                    return -math.inf if col != 7 else math.inf
                return v
            if col == 8:
                return 0 if e is None else e.nan_a + e.nan_b + e.inf_a + e.inf_b
            return index.row() if col == 1 else str(self.data(index, Qt.ItemDataRole.DisplayRole))
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            if t.ok is False or t.finding:
                return QBrush(QColor(200, 40, 30))
            if t.ok:
                return QBrush(QColor(30, 130, 60))
        if role == Qt.ItemDataRole.ToolTipRole:
            bits = [t.a]
            if t.note:
                bits.append(t.note)
            if e is not None and e.note:
                bits.append(e.note)
            return "\n".join(bits)
        return None
