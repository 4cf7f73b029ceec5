"""A worker thread's way to a QObject of the GUI thread that may die first.

A worker emitting through a deleted QObject raises ``RuntimeError: Signal source has been
deleted`` (or worse). Workers post through a :class:`Channel` instead: a plain Python object
with a lock and an "open" flag that the owner closes, under the same lock, from its
``destroyed`` signal (emitted before Qt deletes the children) and when it shuts down. An
emit that holds the lock always finishes while the relay exists, and none starts after.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject


class Channel:
    """Thread-safe way from a worker to the relay that stops working once closed."""

    __slots__ = ("_lock", "_relay", "__weakref__")

    def __init__(self, relay: QObject) -> None:
        self._lock = threading.Lock()
        self._relay: QObject | None = relay

    def close(self, *_args) -> None:
        with self._lock:
            self._relay = None

    @property
    def is_open(self) -> bool:
        return self._relay is not None

    def emit(self, name: str, *args) -> bool:
        """Emit the relay's signal ``name``; False (and nothing emitted) once closed."""
        with self._lock:
            relay = self._relay
            if relay is None:
                return False
            try:
                getattr(relay, name).emit(*args)
            except RuntimeError:
                # deleted behind our back (no destroyed signal seen): never try again
                self._relay = None
                return False
            return True
