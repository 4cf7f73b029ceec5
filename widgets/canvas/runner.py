"""``LayoutRunner``: runs ``editor.layout.layout_graph`` on a worker thread.

Each ``start()`` cancels the run before it (through its CancelToken) and gets a new
generation number; results, progress and errors of stale generations are dropped, so the
GUI only ever sees the answer to the latest question. Results cross to the GUI thread
through queued signals of a QObject that lives there.

# NOTE: the relay is a child of the runner, which dies with its tab while a job may still
# be running on the pool. A worker emitting through a deleted relay raises
# ``RuntimeError: Signal source has been deleted``. So workers never touch the relay
# directly: they post through a :class:`~widgets.common.channel.Channel`, a plain Python object with a lock and an
# "open" flag that the runner closes (under the same lock) from its ``destroyed`` signal
# and from ``shutdown()``. ``destroyed`` is emitted before Qt deletes the children, so an
# emit that holds the lock always finishes while the relay still exists, and none starts
# after.
"""

from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from widgets.common.channel import Channel


class _Relay(QObject):
    """Lives in the GUI thread; worker threads emit through it (queued connections)."""

    progress = Signal(int, float)
    finished = Signal(int, object, object)
    failed = Signal(int, str)
    cancelled = Signal(int)


class _Job(QRunnable):
    def __init__(self, generation: int, graph, previous, token, relay: Channel) -> None:
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
        token = self._token
        last = [-1.0]

        def progress(fraction: float) -> None:
            # throttle: at most ~100 signals per run
            if fraction - last[0] >= 0.01 or fraction >= 1.0:
                last[0] = fraction
                if not relay.emit("progress", gen, float(fraction)):
                    token.cancel()  # nobody is listening any more: stop early

        graph, previous = self._graph, self._previous
        # NOTE: the job object may outlive its run (PySide keeps the wrapper of a finished
        # QRunnable): it must not keep the display graph and the old layout alive after its
        # tab has closed
        self._graph = self._previous = None
        try:
            result = layout_graph(graph, previous=previous, progress=progress, cancel=token, wrap=True)
        except Cancelled:
            relay.emit("cancelled", gen)
            return
        except Exception as exc:  # noqa: BLE001 - reported to the GUI as data
            relay.emit("failed", gen, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}")
            return
        finally:
            previous = None
        if token.cancelled:
            relay.emit("cancelled", gen)
            return
        relay.emit("finished", gen, graph, result)


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
        self._channel = Channel(self._relay)
        # closed before Qt deletes the relay (see NOTE above); a plain function, not a
        # method of this object, so it still runs while the object is being destroyed
        # (and a closure, held strongly: a bound method may be held weakly)
        channel = self._channel
        self.destroyed.connect(lambda *_args: channel.close())
        self._generation = 0
        self._token = None
        self._running = False

    def is_running(self) -> bool:
        return self._running

    def generation(self) -> int:
        return self._generation

    def start(self, graph, previous=None) -> int:
        """Start laying out ``graph`` (cancelling any earlier run); returns the generation.
        After ``shutdown()`` nothing is started (and nothing delivered)."""
        from editor.layout import CancelToken

        self.cancel()
        self._generation += 1
        self._token = CancelToken()
        self._running = True
        if not self._channel.is_open:
            # shut down (its tab is closing): late requests, e.g. from a pending rebuild
            # timer, are dropped quietly; nothing will ever be delivered anyway
            self._running = False
            return self._generation
        self._pool.start(_Job(self._generation, graph, previous, self._token, self._channel))
        return self._generation

    def cancel(self) -> None:
        """Cancel the running layout, if any (its result will never be delivered)."""
        if self._token is not None:
            self._token.cancel()
        self._running = False

    def shutdown(self) -> None:
        """Cancel the running layout and deliver nothing more, ever (a closing tab calls it)."""
        # NOTE: later start() calls are no-ops rather than errors: a closing tab may still
        # have a queued rebuild that asks for one.
        self.cancel()
        self._channel.close()

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
