"""A tab's whole-model live check, run off the GUI thread behind the edits.

The validator checks what an edit touched inside the edit (milliseconds); the comparison of
declared shapes with what the model computes must infer the whole model, so the window
defers it (:meth:`Validator.defer_declared`) to an
:class:`~editor.validation.deferred.DeferredDeclared` worker: started 150 ms after the last
edit that may change it (a burst of edits is one run), its findings merged on the GUI thread
when no edit since has made them stale.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from editor.validation.deferred import DeferredDeclared
from widgets.common.channel import Channel

#: quiet time after an edit before the comparison starts (coalesces typing and scripts)
DELAY_MS = 150


class LiveChecks(QObject):
    """The deferred declared-shape comparison of one tab's validator."""

    _delivered = Signal(object)

    def __init__(self, validator, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.validator = validator
        # worker -> GUI thread: a queued signal to a slot of this (GUI-thread) object,
        # through a channel closed before this object is deleted (a tab closed mid-run)
        self._delivered.connect(self._run, Qt.ConnectionType.QueuedConnection)
        channel = self._channel = Channel(self)
        self.destroyed.connect(lambda *_args: channel.close())
        self.deferred = DeferredDeclared(validator, deliver=lambda fn: channel.emit("_delivered", fn))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DELAY_MS)
        self._timer.timeout.connect(self.deferred.request)
        validator.declared_due.connect(self._due)
        validator.defer_declared()

    @property
    def busy(self) -> bool:
        """A comparison is due or running (tests and benchmarks wait on this)."""
        return self._timer.isActive() or self.deferred.busy

    def _due(self) -> None:
        self._timer.start()

    def _run(self, fn: Callable[[], None]) -> None:
        fn()

    def close(self) -> None:
        self._channel.close()
        self._timer.stop()
        try:
            self.validator.declared_due.disconnect(self._due)
        except (TypeError, ValueError, RuntimeError):
            pass
        self.deferred.close()
