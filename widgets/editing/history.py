"""The history panel: the document's undo stack as a list, like QUndoView.

Row 0 is "<original model>"; row i is the i-th command. The current row is the state the
document is in; clicking a row undoes or redoes to it. "Export as script…" writes
:func:`editor.scripting.history_script` (replayable with ``onnx-studio script``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from editor.scripting import history_script

ORIGINAL = "<original model>"


class HistoryPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = None
        self.list = QListWidget(self)
        self.list.itemClicked.connect(self._on_clicked)
        self.export_button = QPushButton("Export as script…", self)
        self.export_button.clicked.connect(self.export_dialog)
        bar = QHBoxLayout()
        bar.addStretch(1)
        bar.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.list, 1)
        layout.addLayout(bar)
        self._refreshing = False
        self.set_document(None)

    def set_document(self, doc) -> None:
        if self.doc is not None:
            try:
                self.doc.history_changed.disconnect(self.refresh)
            except (TypeError, ValueError, RuntimeError):
                pass
        self.doc = doc
        if doc is not None:
            doc.history_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        self._refreshing = True
        try:
            self.list.clear()
            self.export_button.setEnabled(self.doc is not None)
            if self.doc is None:
                return
            stack = self.doc.stack
            labels = [ORIGINAL] + stack.labels()
            bold = QFont()
            bold.setBold(True)
            for i, label in enumerate(labels):
                item = QListWidgetItem(("● " if stack.clean_index == i else "   ") + label)
                item.setData(Qt.ItemDataRole.UserRole, i)
                if i > stack.index:
                    item.setForeground(Qt.GlobalColor.gray)  # undone: a redo away
                if i == stack.index:
                    item.setFont(bold)
                self.list.addItem(item)
            self.list.setCurrentRow(stack.index)
        finally:
            self._refreshing = False

    def _on_clicked(self, item: QListWidgetItem) -> None:
        self.go_to(int(item.data(Qt.ItemDataRole.UserRole)))

    def go_to(self, index: int) -> None:
        """Undo or redo until ``index`` commands are applied."""
        doc = self.doc
        if doc is None:
            return
        while doc.stack.index > index and doc.stack.can_undo:
            doc.undo()
        while doc.stack.index < index and doc.stack.can_redo:
            doc.redo()

    def export(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(history_script(self.doc), encoding="utf-8")
        return p

    def export_dialog(self) -> None:
        if self.doc is None:
            return
        start = str(self.doc.path.with_suffix(".edits.py")) if self.doc.path else "edits.py"
        path, _ = QFileDialog.getSaveFileName(self, "Export Edits as Script", start, "Python scripts (*.py)")
        if path:
            self.export(path)
