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

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QProgressDialog

from editor.errors import StudioError
from widgets.editing.common import show_refusal


class JobControl:
    """What a worker shares with its progress dialog: the Cancel it polls (``cancelled``)
    and the progress it reports (``report(fraction or None, message)``, any thread)."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._latest: tuple[float | None, str] | None = None

    def report(self, fraction: float | None, message: str) -> None:
        with self._lock:
            self._latest = (fraction, message)

    def take(self) -> tuple[float | None, str] | None:
        with self._lock:
            latest, self._latest = self._latest, None
        return latest


class BackgroundEdit(QObject):
    """Run ``work()`` on a thread; on the GUI thread call ``apply(result)`` if still fresh.

    ``thread`` is the worker (tests wait on it); ``timer`` polls it and stops when done.
    ``control``: the worker reports progress through it and sees Cancel at once (without
    one, a cancelled worker runs to its end and its result is dropped). ``finished`` is
    emitted once the worker is done, whatever became of its result; ``discard(result)``
    is called for a result made but not applied (cancelled, stale), to free what it holds."""

    finished = Signal()

    def __init__(self, window, doc, work: Callable[[], Any], apply: Callable[[Any], None], *,
                 title: str, label: str, stale: str, name: str, poll_ms: int = 30,
                 control: JobControl | None = None, discard: Callable[[Any], None] | None = None) -> None:
        super().__init__(window)
        self._discard = discard
        self.window = window
        self.doc = doc
        self.control = control
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

    def _follow(self, control: JobControl) -> None:
        if self.progress.wasCanceled():
            control.cancelled.set()
            return
        latest = control.take()
        if latest is None:
            return
        fraction, message = latest
        self.progress.setLabelText(message)
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1001)  # never at the maximum: that would close the dialog
            self.progress.setValue(int(1000 * min(max(fraction, 0.0), 1.0)))

    def _run(self) -> None:
        try:
            self._box["result"] = self._work()
        except StudioError as exc:
            self._box["error"] = exc.message
        except Exception as exc:  # noqa: BLE001 - shown as a refusal, not a crash
            self._box["error"] = f"{type(exc).__name__}: {exc}"

    def _poll(self) -> None:
        if self.control is not None:
            self._follow(self.control)
        if self.thread.is_alive():
            return
        self.timer.stop()
        self.doc.stack.moved.disconnect(self._mark)
        self.doc.stack.merged.disconnect(self._mark)
        cancelled = self.progress.wasCanceled()  # read first: closing the dialog counts as cancel
        self.progress.hide()
        self.progress.deleteLater()
        try:
            if "error" in self._box:
                if not cancelled:
                    show_refusal(self.window, self._box["error"])
            elif cancelled or self._changed:
                if not cancelled:
                    show_refusal(self.window, self._stale_message)
                if self._discard is not None:
                    self._discard(self._box["result"])
            else:
                self._apply(self._box["result"])
        finally:
            self.finished.emit()
