"""The sensitivity ranking as a sortable, checkable table: one row per quantized node, the
error it adds first; a ticked row is a node to keep in float at the next re-quantize.

Sorting goes through a ``QSortFilterProxyModel`` on :data:`SORT_ROLE` (numbers for the
numeric columns), so "most added error", "most MACs" or "lowest cosine" is one click.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from editor.quantize.sensitivity import NodeSensitivity, Sensitivity

__all__ = ["COLUMNS", "NODE_ROLE", "SORT_ROLE", "SensitivityModel"]

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
NODE_ROLE = Qt.ItemDataRole.UserRole + 2
COLUMNS = ("keep float", "node", "op", "kind", "adds", "output error", "cosine", "MACs")
_Index = QModelIndex | QPersistentModelIndex


def _num(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "—"
    if not math.isfinite(x):
        return "NaN/Inf"
    return f"{x:.{digits}g}"


class SensitivityModel(QAbstractTableModel):
    """Rows of a :class:`Sensitivity` (module docstring); ``keep`` holds the ticked nodes."""

    keepChanged = Signal()

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self._rows: list[NodeSensitivity] = []
        self.keep: set[str] = set()

    def set_sensitivity(self, sensitivity: Sensitivity | None) -> None:
        self.beginResetModel()
        self._rows = list(sensitivity.rows) if sensitivity is not None else []
        self.keep = set()
        self.endResetModel()
        self.keepChanged.emit()

    def set_keep(self, nodes: set[str]) -> None:
        self.keep = {n for n in nodes if any(r.node == n for r in self._rows)}
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0))
        self.keepChanged.emit()

    def row(self, r: int) -> NodeSensitivity:
        return self._rows[r]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return {4: "The relative RMS error this node adds: its output's minus the worst of its inputs'",
                    5: "Relative RMS error of the node's output vs fp32 (from the cosine)",
                    7: "Multiply-accumulates of the node (cost model, at the inputs' sizes)"}.get(section)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsUserCheckable if index.column() == 0 else base

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        col = index.column()
        if role == NODE_ROLE:
            return r.node
        if role == Qt.ItemDataRole.CheckStateRole and col == 0:
            return Qt.CheckState.Checked if r.node in self.keep else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            values = ("", r.node, r.op_type, r.kind, _num(r.added), _num(r.error), _num(r.cosine, 6),
                      "—" if r.macs is None else f"{r.macs / 1e6:.2f}M")
            return values[col]
        if role == SORT_ROLE:
            numeric = {0: 1.0 if r.node in self.keep else 0.0, 4: r.added, 5: r.error,
                       6: r.cosine if r.cosine is not None else math.inf, 7: float(r.macs or 0)}
            if col in numeric:
                v = numeric[col]
                return v if math.isfinite(v) else (math.inf if col != 6 else -math.inf)
            return str(self.data(index, Qt.ItemDataRole.DisplayRole))
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{r.node} ({r.op_type}, {r.kind}): output {r.tensor!r}"
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != 0 or role != Qt.ItemDataRole.CheckStateRole:
            return False
        node = self._rows[index.row()].node
        checked = Qt.CheckState(value) == Qt.CheckState.Checked if not isinstance(value, bool) else value
        (self.keep.add if checked else self.keep.discard)(node)
        self.dataChanged.emit(index, index)
        self.keepChanged.emit()
        return True
