"""Comparisons and reductions off the GUI thread, with progress and cancel.

Each task runs :func:`editor.debug.compare_runs` or :func:`editor.debug.reduce_model` in a
Python thread with a :class:`~editor.runtime.Runner` of its own; the runs themselves happen
in that Runner's child process, so a crashing backend ends the task with a message, never
the window. Cancel kills the child process (``Runner.cancel``, safe from any thread) and sets
a flag the reduce loop checks between runs. Results come back to the GUI thread through the
relay's queued signals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from editor.errors import StudioError
from editor.runtime import Runner

__all__ = ["BackgroundTask", "TaskRelay"]


class TaskRelay(QObject):
    """Lives on the GUI thread; a task's thread emits through it (queued connections)."""

    progress = Signal(int, str)
    done = Signal(int, object)
    failed = Signal(int, str)


class BackgroundTask:
    """One comparison or reduction: ``work(runner, progress, cancelled) -> result``."""

    def __init__(self, ticket: int, relay: TaskRelay, work: Callable[[Runner, Callable[[str], None], Callable[[], bool]], Any]) -> None:
        self.ticket, self.relay, self.work = ticket, relay, work
        self.runner = Runner()
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._main, name=f"numeric-task-{ticket}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancelled.set()
        self.runner.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _progress(self, message: str) -> None:
        # the work reports progress between its steps: a cancel that came before a run
        # started (Runner.cancel only stops a run in flight) ends the work here
        if self._cancelled.is_set():
            raise StudioError("cancelled")
        self.relay.progress.emit(self.ticket, message)

    def _main(self) -> None:
        try:
            result = self.work(self.runner, self._progress, self._cancelled.is_set)
        except StudioError as exc:
            self.relay.failed.emit(self.ticket, "cancelled" if self.cancelled else exc.message)
        except Exception as exc:  # noqa: BLE001 - a bug must reach the user as a line, not kill the thread silently
            self.relay.failed.emit(self.ticket, "cancelled" if self.cancelled else f"{type(exc).__name__}: {exc}")
        else:
            if self.cancelled:
                self.relay.failed.emit(self.ticket, "cancelled")
            else:
                self.relay.done.emit(self.ticket, result)
        finally:
            self.runner.close()
