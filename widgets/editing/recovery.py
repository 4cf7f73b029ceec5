"""Crash recovery in the window: write a recovery copy a couple of seconds after each
edit, discard it on save and close, and offer to restore on start-up.

One single-shot QTimer per document restarts on every change (so a burst of edits writes
once); a clean document (saved, or undone back to the saved state) has its copy removed
instead. The model's bytes are taken on the GUI thread (the model is edited there), a
piece at a time between events (editor.io.wire_parts; one serialize of a 219 MB model held
the window 0.75 s, and an edit in between starts the copy over); the file write and its
fsync run on one background thread shared by every document, in order. A copy waits
while a mouse button is held (a drag in progress). Writing is
``RecoveryStore.write_snapshot`` (atomic). A document that is unsaved from
its first moment (an Untitled model made from a selection, a reduction, a merge) gets its
first copy without waiting for an edit.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem,
                               QVBoxLayout, QWidget)

from editor.io.wire_parts import serialized_parts
from editor.recovery import RecoveryStore
from widgets.common.next_pass import pass_timer

log = logging.getLogger(__name__)

#: one writer thread for every document: writes and their order are kept, and a copy being
#: written when the window quits is finished (the executor joins its thread at exit)
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recovery-write")

#: milliseconds between the last edit and the recovery write
DELAY_MS = 2000
#: seconds of serializing per event-loop turn. NOTE: the last piece of a turn overruns it
#: by what that piece costs (a big weight's bytes: 20-25 ms for 16 MB, mostly the page
#: faults of the fresh copy), so the longest turn is this plus the biggest weight: small
SLICE_S = 0.002


class RecoveryWriter(QObject):
    """Keeps the recovery copy of one document current."""

    def __init__(self, doc, store: RecoveryStore, parent: QObject | None = None, *, delay_ms: int = DELAY_MS) -> None:
        super().__init__(parent)
        self.doc, self.store = doc, store
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(delay_ms)
        self.timer.timeout.connect(self._due)
        # (the next slice comes from a timer, not a posted call: see widgets.common.next_pass)
        self._slice_timer = pass_timer(self, self._serialize_slice)
        self.writes = 0  # copies on disk so far (counted when the background write ends)
        self.error = ""  # the last write's failure, if any (a full disk must not raise in the GUI)
        self._pieces = None  # the model's serialization under way (an iterator), else None
        self._taken: list[bytes] = []
        doc.changed.connect(self._on_changed)
        doc.clean_changed.connect(self._on_clean)
        if doc.is_modified:
            # unsaved from the start (an Untitled extracted or reduced model, a restored
            # copy): no edit will come to trigger the first write
            self.timer.start()

    def _on_changed(self, _changes) -> None:
        self._pieces = None  # pieces taken so far describe the model before this edit
        self.timer.start()

    def _on_clean(self, clean: bool) -> None:
        if clean:
            self.timer.stop()
            self._pieces = None
            self.store.discard(self.doc)

    def _due(self) -> None:
        if QApplication.mouseButtons() != Qt.MouseButton.NoButton:
            self.timer.start()  # a drag is under way: a stall now would be felt
            return
        if not self.doc.is_modified:
            self.flush(wait=False)
            return
        self._pieces, self._taken = iter(serialized_parts(self.doc.model)), []
        self._serialize_slice()

    def _serialize_slice(self) -> None:
        pieces = self._pieces
        if pieces is None:  # an edit, a save or a close came in between: dropped
            return
        deadline = time.perf_counter() + SLICE_S
        for piece in pieces:
            if piece:
                self._taken.append(piece)
            if time.perf_counter() > deadline:
                self._slice_timer.start()
                return
        self._pieces = None
        self._submit(self.store.snapshot(self.doc, self._taken), wait=False)
        self._taken = []

    def flush(self, *, wait: bool = True) -> Future | None:
        """Write the copy now (or drop it when the document is clean). ``wait``: return once
        it is on disk; else the write runs on the background thread and its future is
        returned."""
        self.timer.stop()
        self._pieces = None
        if not self.doc.is_modified:
            self.store.discard(self.doc)
            return None
        return self._submit(self.store.snapshot(self.doc), wait=wait)

    def _submit(self, snapshot, *, wait: bool) -> Future:
        future = _WRITER.submit(self.store.write_snapshot, snapshot)
        if wait:
            # (a done-callback may run after result() returns: record the outcome here)
            concurrent.futures.wait([future])
            self._written(future)
        else:
            future.add_done_callback(self._written)
        return future

    def _written(self, future: Future) -> None:  # on the writer thread
        exc = future.exception()
        if exc is not None:
            self.error = f"recovery copy not written: {exc}"
            log.warning(self.error)
        elif future.result() is not None:
            self.writes += 1

    def close(self) -> None:
        """The document closes (saved or discarded on purpose): drop its copy."""
        self.timer.stop()
        self._pieces = None
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
