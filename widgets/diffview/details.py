"""The change on show: its title and a row per difference, A's value beside B's.

A stop's own rows (attribute before / after, op types, rewired inputs, renamed values)
come with the diff; its weights (statistics of both sides and the largest element-wise
difference, a quantized weight read back to float) are read when the stop is shown,
through :func:`editor.diff.weight_stats.weight_details`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from editor.diff.display import Stop
from editor.diff.weight_stats import weight_details
from widgets.common.elided_label import ElidedLabel

__all__ = ["ChangeDetails"]


class ChangeDetails(QWidget):
    """Title line and a three-column tree: what, A, B."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = ElidedLabel("", self, mode=Qt.TextElideMode.ElideRight)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["What", "A", "B"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setWordWrap(False)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)
        self.show_stop(None)

    def show_stop(self, stop: Stop | None, position: str = "", doc_a=None, doc_b=None) -> None:  # noqa: ANN001
        """Rows of ``stop`` (its weights read from ``doc_a`` / ``doc_b``); None: no change."""
        self.tree.clear()
        if stop is None:
            self.title.setText(position or "No change selected: F8 goes to the next one")
            return
        self.title.setText(f"{position}  {stop.title}" if position else stop.title)
        rows = list(stop.details)
        if doc_a is not None and doc_b is not None and stop.weights:
            rows += weight_details(doc_a, doc_b, stop)
        for d in rows:
            item = QTreeWidgetItem(self.tree, [d.what, d.before, d.after])
            for col in range(3):
                item.setToolTip(col, item.text(col))
        self.tree.resizeColumnToContents(0)
        self.tree.setColumnWidth(0, min(max(self.tree.columnWidth(0), 120), 320))
        self.tree.setColumnWidth(1, max(160, (self.tree.viewport().width() - self.tree.columnWidth(0)) // 2))

    def rows(self) -> list[tuple[str, str, str]]:
        """The rows on show (tests, copy)."""
        return [tuple(self.tree.topLevelItem(i).text(c) for c in range(3)) for i in range(self.tree.topLevelItemCount())]
