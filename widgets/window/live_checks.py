"""A tab's whole-model live check, run off the GUI thread behind the edits.

The validator checks what an edit touched inside the edit (milliseconds); the comparison of
declared shapes with what the model computes must infer the whole model, so the window
defers it (:meth:`Validator.defer_declared`) to an
:class:`~editor.validation.deferred.DeferredDeclared` worker: started 150 ms after the last
edit that may change it (a burst of edits is one run), its findings merged on the GUI thread
when no edit since has made them stale.

A big model's tab opens before its first full pass (``widgets.window.loader``):
:meth:`LiveChecks.start_first_pass` runs it in steps of a few milliseconds, one per
event-loop turn, once the model is on screen; its problems arrive when it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from editor.validation.deferred import DeferredDeclared
from widgets.common.channel import Channel

#: quiet time after an edit before the comparison starts (coalesces typing and scripts)
DELAY_MS = 150
#: GUI-thread time the stepped first pass takes per event-loop turn (a step is a few ms)
FIRST_PASS_SLICE_S = 0.012


class LiveChecks(QObject):
    """The deferred declared-shape comparison and the stepped first pass of one tab's
    validator."""

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
        self._steps: Iterator[None] | None = None
        self._closed = False
        self._step_timer = QTimer(self)
        self._step_timer.setInterval(0)
        self._step_timer.timeout.connect(self._step)

    def start_first_pass(self) -> None:
        """Run the validator's first full pass, if it has not run, in steps on this thread
        (see the module docstring); nothing when it is done."""
        if self.validator.ready or self._steps is not None or self._closed:
            return
        self._steps = self.validator.first_pass_steps()
        self._step_timer.start()

    def _step(self) -> None:
        steps = self._steps
        if steps is None:
            self._step_timer.stop()
            return
        deadline = time.perf_counter() + FIRST_PASS_SLICE_S
        for _ in steps:
            if time.perf_counter() >= deadline:
                return  # the rest at the next turn
        self._steps = None
        self._step_timer.stop()

    @property
    def busy(self) -> bool:
        """The first pass or a comparison is due or running (tests and benchmarks wait on
        this)."""
        return self._steps is not None or self._timer.isActive() or self.deferred.busy

    def _due(self) -> None:
        self._timer.start()

    def _run(self, fn: Callable[[], None]) -> None:
        fn()

    def close(self) -> None:
        self._closed = True
        self._channel.close()
        self._timer.stop()
        self._step_timer.stop()
        if self._steps is not None:
            self._steps.close()
            self._steps = None
        try:
            self.validator.declared_due.disconnect(self._due)
        except (TypeError, ValueError, RuntimeError):
            pass
        self.deferred.close()
