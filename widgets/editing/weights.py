"""Weight edits: a grid editor for small tensors, replace from ``.npy``, cast, Constant <->
initializer, rename, and delete the unused ones.

:class:`TensorTableModel` is an editable ``QAbstractTableModel`` over a *copy* of the
tensor (2-D view: rows are the leading dims flattened, columns the last dim); nothing
reaches the document until the dialog commits, and then as ONE command
(``ReplaceInitializer`` or ``SetConstantValue``).
"""

from __future__ import annotations

import numpy as np
import onnx
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTableView, QVBoxLayout, QWidget

from editor.commands import (
    CastInitializer,
    CompositeCommand,
    ConstantToInitializer,
    InitializerToConstant,
    RemoveGraphValue,
    RemoveInitializer,
    RenameValue,
    ReplaceInitializer,
    SetConstantValue,
)
from editor.weights import list_weights, weight_array
from widgets.editing.common import run_command

#: tensors with more elements than this are not offered in the grid editor
GRID_LIMIT = 10_000


def find_weight(doc, sid: int, name: str, node: int | None = None):
    for w in list_weights(doc):
        if w.scope == sid and w.name == name and (node is None or w.node == node):
            return w
    return None


class TensorTableModel(QAbstractTableModel):
    """Editable 2-D view over a copy of an array."""

    def __init__(self, array: np.ndarray, parent=None) -> None:
        super().__init__(parent)
        self.shape = array.shape
        a = np.array(array, copy=True)
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, -1)
        else:
            a = a.reshape(-1, a.shape[-1])
        self.grid = a
        self.edited = False

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self.grid.shape[0]

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self.grid.shape[1]

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            v = self.grid[index.row(), index.column()]
            v = v.item() if hasattr(v, "item") else v
            if role == Qt.ItemDataRole.DisplayRole and isinstance(v, float):
                return f"{v:.6g}"  # the editor gets the exact repr
            return repr(v) if isinstance(v, float) else str(v)
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsEditable

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        try:
            kind = self.grid.dtype.kind
            if kind == "b":
                parsed = str(value).strip().lower() in ("1", "true", "yes")
            elif kind in "iu":
                parsed = int(str(value).strip())
            elif kind in "fc":
                parsed = float(str(value).strip())
            else:
                parsed = str(value)
            self.grid[index.row(), index.column()] = parsed
        except (ValueError, OverflowError):
            return False
        self.edited = True
        self.dataChanged.emit(index, index, [role])
        return True

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole:
            return str(section)
        return None

    def array(self) -> np.ndarray:
        return self.grid.reshape(self.shape)


def replace_command(doc, w, array: np.ndarray):
    """ReplaceInitializer or SetConstantValue for weight ``w``."""
    if w.source == "constant" and w.node is not None:
        return SetConstantValue(w.node, array)
    return ReplaceInitializer(w.scope, w.name, array)


class TensorGridDialog(QDialog):
    """Edit a small tensor cell by cell; OK commits one command."""

    def __init__(self, doc, w, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc, self.w = doc, w
        self.setWindowTitle(f"Edit {w.name} ({w.dtype} {list(w.shape)})")
        self.model = TensorTableModel(weight_array(doc, w), self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        note = "rows: leading dimensions flattened; columns: last dimension" if len(w.shape) > 2 else ""
        if note:
            layout.addWidget(QLabel(note, self))
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(560, 400)

    def apply(self) -> bool:
        if not self.model.edited:
            self.accept()
            return True
        if run_command(self.parentWidget(), self.doc, replace_command(self.doc, self.w, self.model.array())):
            self.accept()
            return True
        return False


def cast_command(doc, w, elem_type: int):
    if w.source == "constant" and w.node is not None:
        arr = weight_array(doc, w)
        np_type = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
        return SetConstantValue(w.node, arr.astype(np_type), elem_type)
    return CastInitializer(w.scope, w.name, elem_type)


def convert_command(doc, w):
    """Constant -> initializer, or initializer -> Constant."""
    if w.source == "constant" and w.node is not None:
        return ConstantToInitializer(w.node)
    if w.name in doc.scope(w.scope).input_names():
        # IR < 4 style: the initializer is also a graph input (its default value). A
        # Constant cannot be overridden by a feed, so the input goes in the same step.
        return CompositeCommand(f"Convert initializer {w.name!r} to Constant",
                                [RemoveGraphValue(w.scope, "input", w.name), InitializerToConstant(w.scope, w.name)])
    return InitializerToConstant(w.scope, w.name)


def rename_command(doc, w, new: str):
    return RenameValue(w.scope, w.name, new)


def unused_initializers(doc) -> list[tuple[int, str]]:
    out = []
    for sid, scope in doc.index.scopes.items():
        if scope.kind == "function":
            continue
        outs = set(scope.output_names())
        for name in scope.initializer_names():
            if not doc.consumers(sid, name, nested=True) and name not in outs:
                out.append((sid, name))
    return out


def delete_unused_command(doc):
    unused = unused_initializers(doc)
    if not unused:
        return None
    return CompositeCommand(f"Delete {len(unused)} unused initializer{'s' if len(unused) != 1 else ''}",
                            [RemoveInitializer(sid, name) for sid, name in unused])
