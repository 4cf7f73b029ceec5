"""Work-arounds for defects of the installed Qt binding, applied once at start-up.

NOTE: PySide6 6.12.0 on CPython 3.11 returns ``None`` from every void method without
taking a reference to it (``Py_RETURN_NONE`` semantics assume the immortal ``None`` of
Python >= 3.12, PEP 683). Each call to ``painter.setPen(...)``, ``path.lineTo(...)``,
``widget.setText(...)`` ... therefore *drops* one reference to ``None``; after a few
thousand calls ``None``'s count reaches zero and the interpreter aborts with
"Fatal Python error: none_dealloc". Painting a 600-node graph is enough. ``True`` and
``False`` suffer the same way when a C++ ``bool`` becomes a Python one (a ``Signal(bool)``
emission drops a reference each time: "bool_dealloc").
:func:`guard_none_refcount` detects the leak with a probe and, only then, gives ``None`` a
reference count so large that no session can drain it (as it does for ``True`` and
``False``; these singletons are never freed in a running interpreter anyway, which is what Python 3.12 makes official). The proper fix is a
binding without the defect (PySide6 < 6.12 on Python 3.11, or Python >= 3.12).
"""

from __future__ import annotations

import sys

#: references added to None when the binding leaks them (2**40: ~35 years at 1 M calls/s)
_BANK = 1 << 40
_applied = False


def binding_leaks_none() -> bool:
    """Whether a void call of the binding drops a reference to None (probe of 64 calls)."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal: nothing to drain
    from PySide6.QtCore import QObject

    obj = QObject()
    before = sys.getrefcount(None)
    for _ in range(64):
        obj.setObjectName("probe")
    return sys.getrefcount(None) - before <= -32


def guard_none_refcount() -> bool:
    """Apply the work-around when needed; True if it was applied (once per process)."""
    global _applied
    if _applied:
        return True
    if not binding_leaks_none():
        return False
    import ctypes

    # ob_refcnt is the first field of every PyObject in CPython <= 3.11
    for singleton in (None, True, False):
        ctypes.c_ssize_t.from_address(id(singleton)).value += _BANK
    _applied = True
    return True
