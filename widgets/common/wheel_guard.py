"""Spin boxes and combo boxes in a scrolled form take the wheel only when they have focus.

Qt gives the wheel to whatever control is under the mouse: scrolling the Run dock's input
form with the wheel changed the dims and ranges it passed over. :func:`guard_wheel` makes a
control take focus only by click or Tab and pass the wheel on to the scrolled form while it
is not focused (the way browsers treat number fields).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QWidget


class _WheelGuard(QObject):
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Wheel and isinstance(obj, QWidget) and not obj.hasFocus():
            # the control does not see it; its parents do (up to the scroll area behind)
            parent = obj.parentWidget()
            if parent is not None:
                QCoreApplication.sendEvent(parent, event)
            return True
        return False


_GUARD: _WheelGuard | None = None


def guard_wheel(widget: QWidget) -> QWidget:
    """See the module docstring; returns ``widget``."""
    global _GUARD
    if _GUARD is None:
        _GUARD = _WheelGuard()
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    widget.installEventFilter(_GUARD)
    return widget
