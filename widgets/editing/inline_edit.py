"""A line edit over the canvas for typing a new name in place (a node's, a value's).

Enter, or focus leaving the field, commits once; Esc cancels. The editor never changes the
model itself: ``commit(text)`` pushes the command (one undo step), and only when the text
differs from what it started with.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtWidgets import QLineEdit

#: height of the field; it is at least this wide so a short box still shows a long name
HEIGHT = 24
MIN_WIDTH = 160


class _Esc(QObject):
    """Esc on the field cancels the edit (QLineEdit would otherwise ignore it)."""

    def __init__(self, editor: QLineEdit, cancel: Callable[[], None]) -> None:
        super().__init__(editor)
        self._cancel = cancel

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape:
            self._cancel()
            return True
        return False


def inline_editor(view, text: str, anchor: QRect | None, commit: Callable[[str], None]) -> QLineEdit:
    """A field over ``view``'s viewport holding ``text`` (selected), centred vertically on
    ``anchor`` (viewport coordinates; None: the top-left corner); ``commit(new)`` runs
    once when the user confirms a changed text."""
    editor = QLineEdit(text, view.viewport())
    editor.selectAll()
    if anchor is not None:
        editor.setGeometry(anchor.left(), anchor.top() + max(0, anchor.height() // 2 - HEIGHT // 2),
                           max(MIN_WIDTH, anchor.width()), HEIGHT)
    else:
        editor.setGeometry(20, 20, MIN_WIDTH * 2, HEIGHT)
    done = False

    def finish(apply: bool) -> None:
        nonlocal done
        if done:
            return
        done = True
        new = editor.text()
        editor.deleteLater()
        if apply and new != text:
            commit(new)

    editor.installEventFilter(_Esc(editor, lambda: finish(False)))
    editor.returnPressed.connect(lambda: finish(True))
    editor.editingFinished.connect(lambda: finish(True))
    editor.show()
    editor.setFocus()
    return editor
