"""The cyclic garbage collector held off while a big picture is computed.

Building the display model and laying it out make hundreds of thousands of small objects
(boxes, edge records, route points as tuples) that are all alive until the result is
returned. CPython's collector counts allocations, not garbage: every 700 new objects it
walks the young ones, and now and then the whole heap, and finds nothing to free. On the
11.8k-node export that was a fifth of the layout's CPU and a third of the view model's
(three full walks each; issue 30). :func:`paused` turns automatic collection off for the
duration and back on after (the few cycles the work leaves behind are collected then).

Reentrant and thread-safe: the window lays out on a worker thread while the GUI thread
may build a view model, and a compound layout lays out its levels with nested calls. The
collector is switched back on when the last paused section ends, and only if it was on
when the first began (a caller that turned it off itself keeps it off).
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["pause", "paused", "without_collection"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def paused() -> Iterator[None]:
    """No automatic cyclic collection inside the ``with`` block (see the module docstring)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()


def pause() -> Callable[[], None]:
    """:func:`paused` for a span no ``with`` block can hold: the application's start-up,
    from its first import to the first picture of the model on screen (about 350 young
    and some full walks of a growing heap that find almost nothing: 0.15 s of CPU on the
    11.8k-node export). Returns the function that ends the span; calling it again does
    nothing."""
    section = paused()
    section.__enter__()
    ended = threading.Event()

    def resume() -> None:
        with _lock:
            if ended.is_set():
                return
            ended.set()
        section.__exit__(None, None, None)

    return resume


def without_collection(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside :func:`paused`."""
    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused():
            return fn(*args, **kwargs)
    return run
