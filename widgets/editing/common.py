"""Shared helpers of the editing widgets: run a command and report a refusal, parse shapes.

Every edit made from the window goes through :func:`run_command`: the command either runs
(one undo step) or is refused by the core with a :class:`~editor.errors.CommandError`,
whose one-line reason is shown in the status bar. Nothing in this package writes the
protobuf itself.
"""

from __future__ import annotations

import onnx
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QMainWindow, QPushButton, QWidget

from editor.errors import StudioError
from editor.types import dims_text, shape_dims

#: element types offered in the type pickers: every TensorProto.DataType but UNDEFINED
ELEM_TYPES: list[tuple[str, int]] = [
    (name, value) for name, value in onnx.TensorProto.DataType.items() if value != onnx.TensorProto.UNDEFINED
]


def status_target(widget: QWidget | None) -> QMainWindow | None:
    """The main window above ``widget`` (its status bar shows refusals)."""
    w = widget
    while w is not None and not isinstance(w, QMainWindow):
        w = w.parentWidget()
    return w


def run_command(widget: QWidget | None, doc, cmd) -> bool:
    """Execute ``cmd`` on ``doc``; on refusal show the reason and return False.

    # NOTE: a refused edit is not an error dialog: the status bar says why (non-modal),
    # and the document is exactly as it was (the core checks before touching anything).
    """
    try:
        doc.execute(cmd)
    except StudioError as exc:
        show_refusal(widget, exc.message)
        return False
    return True


def show_refusal(widget: QWidget | None, message: str) -> None:
    win = status_target(widget)
    if win is not None:
        win.statusBar().showMessage(f"Refused: {message}", 10000)
    last_refusal[0] = message


#: the last refusal message (tests and the console read it)
last_refusal: list[str] = [""]


def elem_type_combo(parent: QWidget | None = None, current: int | None = None) -> QComboBox:
    box = QComboBox(parent)
    for name, value in ELEM_TYPES:
        box.addItem(name, value)
    if current:
        i = box.findData(int(current))
        if i >= 0:
            box.setCurrentIndex(i)
    return box


def parse_shape(text: str) -> list[int | str | None] | None:
    """``"1, 3, N, ?"`` -> ``[1, 3, "N", None]``; empty text -> None (unknown rank);
    ``"[]"`` or ``"scalar"`` -> ``[]``."""
    t = text.strip()
    if not t:
        return None
    if t in ("[]", "()", "scalar"):
        return []
    t = t.strip("[]()")
    dims: list[int | str | None] = []
    for part in t.split(","):
        p = part.strip()
        if not p:
            continue
        if p == "?":
            dims.append(None)
        elif p.lstrip("-").isdigit():
            dims.append(int(p))
        else:
            dims.append(p)
    return dims


def format_shape(vi: onnx.ValueInfoProto | None) -> tuple[int, str]:
    """(elem_type, "1, 3, N") of a value info; (0, "") when unknown."""
    if vi is None or not vi.type.HasField("tensor_type"):
        return 0, ""
    elem = vi.type.tensor_type.elem_type
    dims = shape_dims(vi.type)
    if dims is None:
        return elem, ""
    return elem, dims_text(dims, ", ") if dims else "[]"


def announce_with_undo(window: QMainWindow, doc, message: str, timeout_ms: int = 10000) -> QPushButton:
    """Say ``message`` in the status bar with an Undo button beside it (a big edit made
    with one key must be easy to see and to take back). The button undoes the document's
    last step if that is still the announced one, and goes away with the message."""
    bar = window.statusBar()
    old = bar.findChild(QPushButton, "announce_undo")
    if old is not None:
        bar.removeWidget(old)
        old.deleteLater()
    button = QPushButton("Undo", bar)
    button.setObjectName("announce_undo")
    button.setFlat(True)
    index = doc.stack.index

    def undo() -> None:
        if doc.stack.index == index and doc.stack.can_undo:
            doc.undo()
        drop()

    def drop() -> None:
        bar.removeWidget(button)
        button.deleteLater()

    button.clicked.connect(undo)
    # permanent: a normal status-bar widget would hide while the message shows
    bar.insertPermanentWidget(0, button)
    button.show()
    bar.showMessage(message, timeout_ms)
    QTimer.singleShot(timeout_ms, button, drop)
    return button
