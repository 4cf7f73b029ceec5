"""Work around a PySide6 6.12 / CPython 3.11 reference-count bug that crashes the process.

Measured on this project's environment (PySide6 6.12.0, shiboken6 6.12.0, CPython 3.11.7):
every call of a Qt method that returns ``void`` (``QPainter.setPen``, ``drawRect``,
``QObject.setObjectName`` ...) hands back ``None`` *without* a new reference, so each call
costs ``None`` one reference. CPython 3.12+ makes ``None`` immortal and never notices; on 3.11
the count reaches zero after a few thousand calls (one render of a 100-node graph) and the
interpreter aborts with ``Fatal Python error: none_dealloc``.

# NOTE: the fix gives ``None`` (and ``True``/``False``) an extra 2**40 references once, at import, which is what
# 3.12's immortality amounts to; at a million Qt calls per second that lasts 12 days of
# painting. It touches only CPython < 3.12 (ob_refcnt is the first field of every object
# in CPython's non-debug ABI). The application should import this before any Qt code runs:
# ``widgets.canvas`` does so itself, the lead may move it to ``widgets/__init__.py``.
"""

from __future__ import annotations

import ctypes
import platform
import sys

_BUMP = 1 << 40
_installed = False


def install() -> bool:
    """Apply the guard once; returns True when it changed anything."""
    global _installed
    if _installed or sys.version_info >= (3, 12) or platform.python_implementation() != "CPython":
        return False
    # True/False are hit the same way (seen at interpreter exit after a test session)
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _BUMP
    _installed = True
    return True


install()
