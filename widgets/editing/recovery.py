"""Crash recovery in the window: write a recovery copy a couple of seconds after each
edit, discard it on save and close, and offer to restore on start-up.

One single-shot QTimer per document restarts on every change (so a burst of edits writes
once); a clean document (saved, or undone back to the saved state) has its copy removed
instead. Writing is ``RecoveryStore.write`` (atomic). A document that is unsaved from
its first moment (an Untitled model made from a selection, a reduction, a merge) gets its
first copy without waiting for an edit.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from editor.recovery import RecoveryStore

#: milliseconds between the last edit and the recovery write
DELAY_MS = 2000


class RecoveryWriter(QObject):
    """Keeps the recovery copy of one document current."""

    def __init__(self, doc, store: RecoveryStore, parent: QObject | None = None, *, delay_ms: int = DELAY_MS) -> None:
        super().__init__(parent)
        self.doc, self.store = doc, store
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(delay_ms)
        self.timer.timeout.connect(self.flush)
        self.writes = 0
        doc.changed.connect(self._on_changed)
        doc.clean_changed.connect(self._on_clean)
        if doc.is_modified:
            # unsaved from the start (an Untitled extracted or reduced model, a restored
            # copy): no edit will come to trigger the first write
            self.timer.start()

    def _on_changed(self, _changes) -> None:
        self.timer.start()

    def _on_clean(self, clean: bool) -> None:
        if clean:
            self.timer.stop()
            self.store.discard(self.doc)

    def flush(self) -> None:
        self.timer.stop()
        if self.doc.is_modified:
            self.store.write(self.doc)
            self.writes += 1
        else:
            self.store.discard(self.doc)

    def close(self) -> None:
        """The document closes (saved or discarded on purpose): drop its copy."""
        self.timer.stop()
        for signal, slot in ((self.doc.changed, self._on_changed), (self.doc.clean_changed, self._on_clean)):
            try:
                signal.disconnect(slot)
            except (TypeError, ValueError, RuntimeError):
                pass
        self.store.discard(self.doc)


class RecoveryDialog(QDialog):
    """Lists recovery entries; the checked ones are restored on OK (the rest deleted)."""

    def __init__(self, entries, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import time

        self.setWindowTitle("Recover Unsaved Work")
        self.entries = list(entries)
        self.list = QListWidget(self)
        for e in self.entries:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.saved_at))
            what = e.original.name if e.original is not None else "Untitled"
            item = QListWidgetItem(f"{what} — {when}" + (f" — last edit: {e.label}" if e.label else ""))
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("ONNX Studio did not close normally. Restore these edits?", self))
        layout.addWidget(self.list)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Discard, self)
        buttons.accepted.connect(self.accept)
        buttons.button(QDialogButtonBox.StandardButton.Discard).clicked.connect(self.reject)
        layout.addWidget(buttons)

    def chosen(self):
        return [e for i, e in enumerate(self.entries) if self.list.item(i).checkState() == Qt.CheckState.Checked]
