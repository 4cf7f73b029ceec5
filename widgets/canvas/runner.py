"""``LayoutRunner``: runs ``editor.layout.layout_graph`` on a worker thread.

Each ``start()`` cancels the run before it (through its CancelToken) and gets a new
generation number; results, progress and errors of stale generations are dropped, so the
GUI only ever sees the answer to the latest question. Results cross to the GUI thread
through queued signals of a QObject that lives there.
"""

from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot


class _Relay(QObject):
    """Lives in the GUI thread; worker threads emit through it (queued connections)."""

    progress = Signal(int, float)
    finished = Signal(int, object, object)
    failed = Signal(int, str)
    cancelled = Signal(int)


class _Job(QRunnable):
    def __init__(self, generation: int, graph, previous, token, relay: _Relay) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._generation = generation
        self._graph = graph
        self._previous = previous
        self._token = token
        self._relay = relay

    def run(self) -> None:
        from editor.layout import Cancelled, layout_graph

        gen = self._generation
        relay = self._relay
        last = [-1.0]

        def progress(fraction: float) -> None:
            # throttle: at most ~100 signals per run
            if fraction - last[0] >= 0.01 or fraction >= 1.0:
                last[0] = fraction
                relay.progress.emit(gen, float(fraction))

        try:
            result = layout_graph(self._graph, previous=self._previous, progress=progress, cancel=self._token)
        except Cancelled:
            relay.cancelled.emit(gen)
            return
        except Exception as exc:  # noqa: BLE001 - reported to the GUI as data
            relay.failed.emit(gen, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}")
            return
        if self._token.cancelled:
            relay.cancelled.emit(gen)
            return
        relay.finished.emit(gen, self._graph, result)


class LayoutRunner(QObject):
    """Lays out display graphs off the GUI thread; see module docstring.

    Signals: ``progress(float)`` in [0, 1], ``finished(graph, result)``, ``failed(str)``,
    ``cancelled()`` — only for the latest ``start()``.
    """

    progress = Signal(float)
    finished = Signal(object, object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None, *, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._relay = _Relay(self)
        self._relay.progress.connect(self._on_progress)
        self._relay.finished.connect(self._on_finished)
        self._relay.failed.connect(self._on_failed)
        self._relay.cancelled.connect(self._on_cancelled)
        self._generation = 0
        self._token = None
        self._running = False

    def is_running(self) -> bool:
        return self._running

    def generation(self) -> int:
        return self._generation

    def start(self, graph, previous=None) -> int:
        """Start laying out ``graph`` (cancelling any earlier run); returns the generation."""
        from editor.layout import CancelToken

        self.cancel()
        self._generation += 1
        self._token = CancelToken()
        self._running = True
        self._pool.start(_Job(self._generation, graph, previous, self._token, self._relay))
        return self._generation

    def cancel(self) -> None:
        """Cancel the running layout, if any (its result will never be delivered)."""
        if self._token is not None:
            self._token.cancel()
        self._running = False

    def wait(self, msecs: int = -1) -> bool:
        """Block until the pool's jobs are done (for tests and the CLI)."""
        return self._pool.waitForDone(msecs)

    @Slot(int, float)
    def _on_progress(self, gen: int, fraction: float) -> None:
        if gen == self._generation and self._running:
            self.progress.emit(fraction)

    @Slot(int, object, object)
    def _on_finished(self, gen: int, graph, result) -> None:
        if gen == self._generation and self._running:
            self._running = False
            self.finished.emit(graph, result)

    @Slot(int, str)
    def _on_failed(self, gen: int, message: str) -> None:
        if gen == self._generation and self._running:
            self._running = False
            self.failed.emit(message)

    @Slot(int)
    def _on_cancelled(self, gen: int) -> None:
        if gen == self._generation:
            self._running = False
            self.cancelled.emit()
