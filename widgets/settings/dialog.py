"""The Settings dialog: pages of preferences kept in :class:`widgets.settings.store.Settings`.

Its first page rebinds keyboard shortcuts: every action of the registry with its key;
a key used by two actions is flagged on both rows (and said in the page's note) until
one of them changes. Changes apply at once and are stored in QSettings."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

CONFLICT = QColor(220, 60, 60)


class ShortcutsPage(QWidget):
    """Action | Menu | Key table; select a row, press the new key, or reset it."""

    def __init__(self, window, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.window_ = window
        self.registry = window.registry
        self.settings = window.settings
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter actions")
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Action", "Menu", "Key"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.editor = QKeySequenceEdit(self)
        self.editor.setClearButtonEnabled(True)
        self.assign = QPushButton("Assign", self)
        self.reset = QPushButton("Reset to Default", self)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("New key:", self))
        row.addWidget(self.editor, 1)
        row.addWidget(self.assign)
        row.addWidget(self.reset)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.note)
        self.ids = [s.id for s in self.registry.specs() if not s.bound]
        self.filter.textChanged.connect(self._apply_filter)
        self.assign.clicked.connect(lambda: self.set_keys(self.current_id(), self.editor.keySequence().toString(
            QKeySequence.SequenceFormat.PortableText)))
        self.reset.clicked.connect(lambda: self.set_keys(self.current_id(), None))
        self.table.currentCellChanged.connect(self._on_row)
        self.fill()

    def fill(self) -> None:
        conflicts = self.registry.conflicts()
        clash = {i: k for k, ids in conflicts.items() for i in ids}
        self.table.setRowCount(len(self.ids))
        for r, action_id in enumerate(self.ids):
            spec = self.registry.spec(action_id)
            keys = self.registry.shortcut(action_id)
            cells = [spec.plain_title, (spec.menu or "").replace("/", " › "), keys]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, action_id)
                if action_id in clash:
                    others = [self.registry.spec(o).plain_title for o in conflicts[clash[action_id]] if o != action_id]
                    item.setForeground(QBrush(CONFLICT))
                    item.setToolTip(f"{clash[action_id]} is also bound to: {', '.join(others)}")
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.note.setText("Conflicts: " + "; ".join(f"{k} → {', '.join(v)}" for k, v in conflicts.items())
                          if conflicts else "")
        self._apply_filter(self.filter.text())

    def _apply_filter(self, text: str) -> None:
        text = text.lower()
        for r in range(self.table.rowCount()):
            hay = " ".join(self.table.item(r, c).text().lower() for c in range(3))
            self.table.setRowHidden(r, bool(text) and text not in hay)

    def current_id(self) -> str | None:
        item = self.table.item(self.table.currentRow(), 0)
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _on_row(self, row: int, *_args) -> None:
        action_id = self.current_id()
        if action_id is not None:
            self.editor.setKeySequence(QKeySequence(self.registry.shortcut(action_id).split(", ")[0]))

    def set_keys(self, action_id: str | None, keys: str | None) -> None:
        """Bind ``action_id`` to ``keys`` (``None``: its default; ``""``: none), store it."""
        if action_id is None:
            return
        self.registry.set_shortcut(action_id, keys)
        self.settings.set_shortcut(action_id, keys)
        row = self.table.currentRow()
        self.fill()
        self.table.setCurrentCell(row, 0)


class SettingsDialog(QDialog):
    """Settings in pages (a tab each)."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.setWindowTitle("Settings")
        self.pages = QTabWidget(self)
        self.shortcuts = ShortcutsPage(window, self)
        self.pages.addTab(self.shortcuts, "Keyboard Shortcuts")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        layout.addWidget(buttons)
        self.resize(720, 560)
