"""Facts about this machine's memory, and giving freed memory back to the system.

The run worker bounds its cache of parsed models and sessions by bytes as well as by
count; the default bound is a share of the machine's memory (:func:`default_cache_bytes`),
so a laptop and a workstation both keep what fits. Before it parses a model it checks that
a copy fits in what is free (:func:`available_memory`), and says so instead of pushing the
machine into swap.

:func:`trim` asks glibc to return freed heap pages to the system (``malloc_trim``): CPython
and protobuf free a big model's memory into the allocator, which keeps it mapped, so the
process still looks 1 GB large after the model is gone. It costs a few milliseconds and is a
no-op where glibc is absent (macOS, Windows, musl).

:func:`freeze_heap` and :func:`thaw_heap` keep the cyclic garbage collector off the objects of
open models: a loaded model's index, shadows and views are hundreds of thousands of
objects, and each full collection walked them all (87-126 ms on the GUI thread, every
so many edits, with a 102-node model of 54 MB open). Once a model is shown the objects
alive are frozen (``gc.freeze``: moved out of the collector's generations, no collection);
closing a model or a window thaws them all, so what it leaves behind can be collected.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys

__all__ = ["available_memory", "default_cache_bytes", "rss_bytes", "freeze_heap", "thaw_heap", "total_memory", "trim"]

#: share of the machine's memory the run worker's model cache may hold by default
CACHE_SHARE = 0.25
#: never less than this by default (small machines still keep one model warm)
CACHE_FLOOR = 512 * 1024 * 1024


def _meminfo(field: str) -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def total_memory() -> int | None:
    """Physical memory in bytes, or None when the platform does not say."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and size > 0:
            return int(pages) * int(size)
    except (AttributeError, ValueError, OSError):
        pass
    return _meminfo("MemTotal")


def available_memory() -> int | None:
    """Memory that can be allocated without swapping, in bytes (None when unknown)."""
    return _meminfo("MemAvailable")


def default_cache_bytes() -> int:
    """The run worker's default cache bound: a quarter of the machine, at least 512 MB."""
    total = total_memory()
    if total is None:
        return 2 * 1024 * 1024 * 1024
    return max(CACHE_FLOOR, int(total * CACHE_SHARE))


def rss_bytes(pid: int | None = None) -> int | None:
    """Resident set size of a process (this one by default) on Linux, else None."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


_libc: ctypes.CDLL | None | bool = None


def trim() -> bool:
    """Return freed heap memory to the system (glibc only); True when it was asked."""
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            name = ctypes.util.find_library("c")
            try:
                lib = ctypes.CDLL(name or "libc.so.6")
                lib.malloc_trim.argtypes = [ctypes.c_size_t]
                lib.malloc_trim.restype = ctypes.c_int
                _libc = lib
            except (OSError, AttributeError):
                _libc = False
    if not _libc:
        return False
    _libc.malloc_trim(0)  # type: ignore[union-attr]
    return True


def freeze_heap() -> None:
    """Leave every object alive now out of later collections (see the module docstring):
    call once a model is loaded and shown. Costs next to nothing (no collection)."""
    gc.freeze()


def thaw_heap() -> None:
    """Put the frozen objects back under the collector (a model closed: its cycles are
    garbage now); :func:`freeze_heap` freezes what is alive again when the next model shows."""
    gc.unfreeze()
