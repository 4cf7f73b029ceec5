"""``Breadcrumb``: where you are in the graph's hierarchy, as clickable segments.

``set_path("/model/layers.3/attn")`` shows ``Graph › model › layers.3 › attn``; clicking a
segment emits ``pathClicked`` with that segment's full path ("" for the root).

Paths may hold internal keys (an If body open in place is ``@12/then_branch``): a
``labeler`` (``set_labeler``) names each segment from its full path (``If_0 › then_branch``);
a segment it cannot name that is an internal key reads "body", never ``@12``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


def split_path(path: str) -> list[tuple[str, str]]:
    """``"/a/b"`` -> ``[("a", "/a"), ("b", "/a/b")]`` (segment text, full path)."""
    out: list[tuple[str, str]] = []
    prefix = ""
    for part in path.split("/"):
        if not part:
            continue
        prefix = f"{prefix}/{part}"
        out.append((part, prefix))
    return out


class Breadcrumb(QWidget):
    """Clickable scope path; the last segment is the current one (not a link)."""

    pathClicked = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, root_label: str = "Graph") -> None:
        super().__init__(parent)
        self._root_label = root_label
        self._path = ""
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(6, 2, 6, 2)
        self._layout.setSpacing(0)
        self._buttons: list[QToolButton] = []
        self._labeler = None
        self.set_path("")

    def set_labeler(self, fn) -> None:
        """``fn(full_path) -> str | None``: the text of a segment (None: its own name)."""
        self._labeler = fn

    def _label(self, text: str, full: str) -> str:
        if full and self._labeler is not None:
            named = self._labeler(full)
            if named:
                return named
        return "body" if text.startswith("@") and text[1:].isdigit() else text

    def path(self) -> str:
        return self._path

    def segments(self) -> list[str]:
        """Texts of the shown segments, root first."""
        return [b.text() for b in self._buttons]

    def set_root_label(self, text: str) -> None:
        self._root_label = text
        self.set_path(self._path)

    def set_path(self, path: str) -> None:
        self._path = path
        while self._layout.count():
            child = self._layout.takeAt(0)
            widget = child.widget()
            if widget is not None:
                widget.deleteLater()
        self._buttons = []
        parts = [(self._root_label, "")] + split_path(path)
        for i, (text, full) in enumerate(parts):
            if i:
                sep = QLabel("›")
                sep.setEnabled(False)
                sep.setContentsMargins(3, 0, 3, 0)
                self._layout.addWidget(sep)
            button = QToolButton(self)
            button.setText(self._label(text, full))
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setToolTip(full or "/")
            last = i == len(parts) - 1
            font = button.font()
            font.setBold(last)
            button.setFont(font)
            button.clicked.connect(lambda _=False, p=full: self.pathClicked.emit(p))
            self._layout.addWidget(button)
            self._buttons.append(button)
        self._layout.addStretch(1)
