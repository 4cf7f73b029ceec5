"""The objects a newly opened model leaves alive stay out of the collector's full passes.

The window freezes the heap (:func:`editor.runtime.memory.freeze_heap`) when a model's first
picture is on screen. What the opening does after that picture — the validator's first pass
and its shadows, the shape table, the relabelled view, the Cost table — was still under the
collector: on the 11.8k-node export a full collection then took 90-150 ms of CPU every few
seconds while editing, and one inside a sequence of renames was the window's longest stall.
:func:`freeze_when_settled` freezes again once that work is done.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer

#: how often the tab's background work is looked at, and for how long at most
POLL_MS = 250
GIVE_UP_MS = 120_000


def opening_settled(window, tab) -> bool:
    """No work of the tab's opening is due or running: the first validation, the deferred
    checks, the shape table, a view rebuild or layout, the Cost panel's computation."""
    if tab.validator is not None and not tab.validator.ready:
        return False
    if tab.live_checks is not None and tab.live_checks.busy:
        return False
    if tab.shape_labels.pending is not None:
        return False
    if tab.canvas.controller.runner.is_running() or tab.rebuild_pending():
        return False
    cost = getattr(window, "cost", None)
    return not (cost is not None and cost.computing())


def freeze_when_settled(window, tab) -> QTimer:
    """Freeze the heap once :func:`opening_settled` holds for ``tab`` (looked at every
    POLL_MS; given up after GIVE_UP_MS, and with the tab). Returns the polling timer."""
    from editor.runtime.memory import freeze_heap

    timer = QTimer(tab)
    timer.setInterval(POLL_MS)
    waited = [0]

    def poll() -> None:
        waited[0] += POLL_MS
        if opening_settled(window, tab):
            freeze_heap()
        elif waited[0] < GIVE_UP_MS:
            return
        timer.stop()
        timer.deleteLater()

    timer.timeout.connect(poll)
    timer.start()
    return timer
