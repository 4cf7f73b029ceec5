"""Limits of a run: memory (default half the machine's RAM), time, and the words for them.

A run that allocates without end (a Loop that doubles a tensor) must fail by itself, with
"out of memory (limit N GB)", before it takes the machine; so the worker caps its address
space (``RLIMIT_AS``) for every run, by default at half the physical memory.
``memory_limit_mb`` in :class:`~editor.runtime.backends.RunOptions`: None = that default,
0 = no limit, N = N MiB. Values from a user (``--memory-limit 8G``, ``--timeout 30``) are
checked here, once, with one-line errors.

NOTE: ``RLIMIT_AS`` counts address space, not resident memory; onnxruntime on the CPU
reserves little beyond what it touches, and a limit of half the RAM leaves that headroom.
GPU runtimes (CUDA, ROCm ...) map address ranges far beyond RAM, so the *default* cap is
not applied to sessions on a device (an explicit one still is). Windows has no
``RLIMIT_AS`` and macOS does not enforce it: there the limit is not enforced (a job object
would be needed on Windows).
"""

from __future__ import annotations

import math
import os
import re

from editor.errors import RuntimeBackendError

__all__ = [
    "default_memory_limit_mb",
    "describe_limit",
    "effective_memory_limit_mb",
    "parse_memory_limit",
    "parse_timeout",
    "physical_memory_mb",
]

_UNITS = {"": 1, "m": 1, "mb": 1, "mib": 1, "g": 1024, "gb": 1024, "gib": 1024, "t": 1 << 20, "tb": 1 << 20}


def physical_memory_mb() -> int | None:
    """The machine's RAM in MiB (None where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        return None


def default_memory_limit_mb() -> int | None:
    """Half the physical memory (None where RAM is unknown: then no limit)."""
    total = physical_memory_mb()
    return None if not total else max(256, total // 2)


def effective_memory_limit_mb(requested: int | None) -> int | None:
    """The limit a run gets: ``requested`` MiB, the default for None, no limit for 0."""
    if requested is None:
        return default_memory_limit_mb()
    return requested or None


def describe_limit(mb: int) -> str:
    """'8 GB', '1.5 GB', '512 MB' — how the limit is shown to the user."""
    if mb >= 1024:
        gb = mb / 1024
        return f"{gb:.0f} GB" if gb >= 10 or gb == int(gb) else f"{gb:.1f} GB"
    return f"{mb} MB"


def parse_memory_limit(text: str) -> int | None:
    """``--memory-limit``: '8G', '512M', '4096' (MiB), 'none' / '0' (no limit) -> MiB (0 = none)."""
    raw = text.strip().lower()
    if raw in ("none", "off", "unlimited", "0"):
        return 0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", raw)
    if m is None or m.group(2) not in _UNITS:
        raise RuntimeBackendError(f"--memory-limit {text!r}: give a size such as 8G or 512M, or 'none'")
    mb = float(m.group(1)) * _UNITS[m.group(2)]
    if not math.isfinite(mb) or mb < 64:
        raise RuntimeBackendError(f"--memory-limit {text!r} is too small (at least 64M)")
    if mb >= 1 << 40:
        raise RuntimeBackendError(f"--memory-limit {text!r} is absurdly large")
    return int(mb)


def parse_timeout(text: str) -> float | None:
    """``--timeout``: seconds > 0; 'inf' / 'none' = no limit."""
    raw = text.strip().lower()
    if raw in ("inf", "infinity", "none", "off"):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise RuntimeBackendError(f"--timeout {text!r} is not a number of seconds") from None
    if math.isnan(value) or value <= 0:
        raise RuntimeBackendError(f"--timeout {text!r}: give a number of seconds > 0 (or 'none')")
    if math.isinf(value) or value > 10**9:
        return None
    return value


def out_of_memory(limit_mb: int | None) -> str:
    """The one line a run that hit its memory limit reports."""
    return f"out of memory (limit {describe_limit(limit_mb)})" if limit_mb else "out of memory"


_OOM_WORDS = re.compile(r"bad_alloc|failed to allocate|out of memory|cannot allocate memory|MemoryError|std::bad_alloc",
                        re.IGNORECASE)


def looks_like_out_of_memory(message: str) -> bool:
    """Whether a backend's error message means an allocation failed."""
    return bool(_OOM_WORDS.search(message))
