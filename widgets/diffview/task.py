"""Opening and diffing the two sides off the GUI thread, with progress and Cancel.

A Python thread runs :func:`editor.diff.side_by_side.side_by_side` (open both models,
diff, display data); its progress and result come back to the GUI thread through the
relay's queued signals. Cancel sets a flag the phases check between them; a result that
arrives after a cancel is released, never shown.
"""

from __future__ import annotations

import threading
import traceback

import shiboken6
from PySide6.QtCore import QObject, Signal

from editor.diff.side_by_side import Cancelled, Side, side_by_side
from editor.errors import LoadError, StudioError

__all__ = ["DiffViewTask", "TaskRelay"]


class TaskRelay(QObject):
    """Lives on the GUI thread; the task's thread emits through it (queued)."""

    progress = Signal(str, float)
    done = Signal(object)  # SideBySide
    failed = Signal(object)  # StudioError


class DiffViewTask:
    """One diff of two sides (see module docstring)."""

    def __init__(self, a: Side, b: Side, relay: TaskRelay) -> None:
        self.a, self.b, self.relay = a, b, relay
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._main, name="diff-view", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _emit(self, signal, *payload) -> bool:  # noqa: ANN001
        # the view (and the relay with it) may have closed while we worked
        if not shiboken6.isValid(self.relay):
            return False
        try:
            signal.emit(*payload)
        except RuntimeError:
            return False
        return True

    def _main(self) -> None:
        try:
            result = side_by_side(self.a, self.b, progress=lambda what, f: self._emit(self.relay.progress, what, f),
                                  cancelled=self._cancelled.is_set)
        except Cancelled:
            return
        except StudioError as exc:
            self._emit(self.relay.failed, exc)
            return
        except BaseException as exc:  # noqa: BLE001 - a worker must never take the app down
            self._emit(self.relay.failed, LoadError(f"cannot compare: {type(exc).__name__}: {exc}",
                                                    details=traceback.format_exc()))
            return
        if self._cancelled.is_set() or not self._emit(self.relay.done, result):
            result.close()  # nobody will show it: release the files it opened
