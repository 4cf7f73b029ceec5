"""Work continued at a later pass of the event loop, taking its turn with the timers.

NOTE: not ``QTimer.singleShot(0, ...)``. Qt makes a zero single shot a posted call, and with
Qt's glib event dispatcher (Linux) timers that have fired wait for a moment with no posted
event before they fire again. Work chained through posted calls (each step posting the
next) therefore held every timer of the window: the late docks, the value links and the
calls after the start-up, each a chain of posted calls, left no timer firing for 0.3-0.4 s
at a time after the 11.8k-node export's first picture. A zero-interval QTimer is a timer:
it takes its turn with the others.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def pass_timer(parent: QObject, slot: Callable[[], None]) -> QTimer:
    """A single-shot zero-interval timer owned by ``parent`` calling ``slot``: ``start()``
    it for each step that should run at a later pass of the event loop."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(0)
    timer.timeout.connect(slot)
    return timer
