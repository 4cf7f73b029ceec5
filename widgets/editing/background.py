"""An edit computed off the GUI thread: a progress dialog with Cancel, then the result
applied only if the document did not change meanwhile.

Why one helper: long core work (shape inference for Refresh Shapes, the fp16 conversion)
reads a copy of the model on a thread while the user may go on editing; applying a result
computed from an older model would silently undo their edits, so any push, undo, redo or
merge during the work refuses the result with a one-line reason instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QProgressDialog

from editor.errors import StudioError
from widgets.editing.common import show_refusal


class BackgroundEdit(QObject):
    """Run ``work()`` on a thread; on the GUI thread call ``apply(result)`` if still fresh.

    ``thread`` is the worker (tests wait on it); ``timer`` polls it and stops when done."""

    def __init__(self, window, doc, work: Callable[[], Any], apply: Callable[[Any], None], *,
                 title: str, label: str, stale: str, name: str, poll_ms: int = 30) -> None:
        super().__init__(window)
        self.window = window
        self.doc = doc
        self._work = work
        self._apply = apply
        self._stale_message = stale
        self._box: dict[str, Any] = {}
        self._changed = False
        # any push, undo, redo or merge while the worker runs makes its result stale
        doc.stack.moved.connect(self._mark)
        doc.stack.merged.connect(self._mark)
        self.progress = QProgressDialog(label, "Cancel", 0, 0, window)
        self.progress.setWindowTitle(title)
        self.progress.setMinimumDuration(300)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._poll)
        self.timer.start(poll_ms)

    def _mark(self, *_args: object) -> None:
        self._changed = True

    def _run(self) -> None:
        try:
            self._box["result"] = self._work()
        except StudioError as exc:
            self._box["error"] = exc.message
        except Exception as exc:  # noqa: BLE001 - shown as a refusal, not a crash
            self._box["error"] = f"{type(exc).__name__}: {exc}"

    def _poll(self) -> None:
        if self.thread.is_alive():
            return
        self.timer.stop()
        self.doc.stack.moved.disconnect(self._mark)
        self.doc.stack.merged.disconnect(self._mark)
        cancelled = self.progress.wasCanceled()  # read first: closing the dialog counts as cancel
        self.progress.hide()
        self.progress.deleteLater()
        if cancelled:
            return
        if "error" in self._box:
            show_refusal(self.window, self._box["error"])
        elif self._changed:
            show_refusal(self.window, self._stale_message)
        else:
            self._apply(self._box["result"])
