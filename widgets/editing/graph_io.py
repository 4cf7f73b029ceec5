"""Graph inputs and outputs: add, remove, rename, change element type and shape, and
dimension edits for one value or across the model (batch size).

Changing a fixed size (say batch 1 -> N) rarely stops at the graph inputs: exporters bake
the old value into ``Reshape``/``Expand`` shape constants. :func:`hardcoded_dims` lists
those (initializers and Constant nodes feeding the shape input that contain the old
value), and the dimension dialogs show the list so the user knows what else to edit.
"""

from __future__ import annotations

import numpy as np
import onnx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from editor.commands import AddGraphValue, CompositeCommand, RenameValue, SetDimension, SetValueType
from editor.commands.values import value_type as declared_type
from editor.dim_targets import plan_dim_changes, preview_lines, shape_text, value_dims
from editor.errors import CommandError
from widgets.editing.common import elem_type_combo, format_shape, parse_shape, run_command


def parse_dim(text: str) -> int | str | None:
    t = text.strip()
    if not t or t == "?":
        return None
    return int(t) if t.lstrip("-").isdigit() else t


def graph_inputs(doc, sid: int) -> list[str]:
    """Graph inputs that are not initializers (the model's real inputs)."""
    scope = doc.scope(sid)
    inits = scope.initializer_names()
    return [n for n in scope.input_names() if n not in inits]


def hardcoded_dims(doc, old: int) -> list[str]:
    """Reshape/Expand shape inputs (initializers or Constant outputs) holding ``old``."""
    found = []
    for scope, nid, node in doc.index.iter_nodes():
        sid = scope.id
        if node.op_type not in ("Reshape", "Expand") or node.domain not in ("", "ai.onnx") or len(node.input) < 2:
            continue
        name = node.input[1]
        array = None
        init = doc.initializer(sid, name)
        if init is not None:
            array = onnx.numpy_helper.to_array(init[1]) if not _external(init[1]) else None
        else:
            producer = doc.producer(sid, name)
            if producer is not None:
                p = doc.node(producer)
                if p.op_type == "Constant":
                    for a in p.attribute:
                        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                            array = onnx.numpy_helper.to_array(a.t)
        if array is not None and array.dtype.kind in "iu" and np.any(array == old):
            found.append(f"{node.op_type} {node.name or nid!s}: shape {name!r} = {array.tolist()}")
    return found


def _external(t: onnx.TensorProto) -> bool:
    return t.data_location == onnx.TensorProto.EXTERNAL


class GraphValueDialog(QDialog):
    """Add a graph input/output, or edit one (rename, element type, shape)."""

    def __init__(self, doc, sid: int, kind: str, name: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc, self.sid, self.kind, self.old = doc, sid, kind, name
        self.setWindowTitle(f"{'Edit' if name else 'Add'} graph {kind}")
        elem, shape = format_shape(doc.value_info(sid, name) if name else None)
        self.name_edit = QLineEdit(name or "", self)
        self.type_box = elem_type_combo(self, elem or onnx.TensorProto.FLOAT)
        self.shape_edit = QLineEdit(shape, self)
        self.shape_edit.setPlaceholderText("e.g. N, 3, 224, 224  (? = unknown, empty = any rank)")
        form = QFormLayout(self)
        form.addRow("Name", self.name_edit)
        form.addRow("Element type", self.type_box)
        form.addRow("Shape", self.shape_edit)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.apply)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def command(self):
        name = self.name_edit.text().strip()
        elem = int(self.type_box.currentData())
        shape = parse_shape(self.shape_edit.text())
        if self.old is None:
            return AddGraphValue(self.sid, self.kind, name, elem, shape)
        parts = []
        if name != self.old:
            parts.append(RenameValue(self.sid, self.old, name))
        e0, s0 = format_shape(self.doc.value_info(self.sid, self.old))
        if elem != e0 or self.shape_edit.text().strip() != s0:
            parts.append(SetValueType(self.sid, name, elem, shape))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else CompositeCommand(f"Edit graph {self.kind} {self.old!r}", parts)

    def _following_command(self, names: list[str], axis: int, dim) -> object | None:
        """When a fixed dim of main-graph values becomes symbolic and Reshape/Expand
        constants pinned the old size, one command that also rewrites those constants
        (:func:`editor.passes.dims.plan_set_dims`); None when there is nothing to rewrite."""
        if not isinstance(dim, str) or self.sid != self.doc.index.main:
            return None
        from editor.passes.dims import DimSpec, plan_set_dims

        try:
            plan = plan_set_dims(self.doc, [DimSpec(n, axis, dim) for n in names], force=True)
        except Exception:  # noqa: BLE001 - e.g. a value_info target: plain SetDimension then
            return None
        if plan.command is None or not any(c.startswith(("Reshape", "Expand")) for c in plan.changes):
            return None
        return plan.command

    def apply(self) -> bool:
        cmd = self.command()
        if cmd is None or run_command(self.parentWidget(), self.doc, cmd):
            self.accept()
            return True
        return False


class DimensionDialog(QDialog):
    """Set one dimension (fixed or symbolic) of the graph inputs the user ticks, with a
    preview of every shape it changes, and list the Reshape/Expand constants that hard-code
    the old size. A name given across inputs lands on the axes that carry the same symbol
    (``editor.dim_targets``): ``state [2, batch, 128]`` becomes ``[2, N, 128]``, never
    ``[N, batch, 128]``."""

    def __init__(self, doc, sid: int, name: str | None, axis: int = 0, parent: QWidget | None = None,
                 *, across: bool = False, type_of=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.doc, self.sid, self.name = doc, sid, name
        self.setWindowTitle("Batch size" if across else "Set Dimension")
        self.setMinimumWidth(460)
        self.axis = QSpinBox(self)
        self.axis.setRange(0, 64)
        self.axis.setValue(axis)
        self.dim_edit = QLineEdit(self)
        self.dim_edit.setPlaceholderText("a size (8) or a symbol (batch)")
        # the inputs to edit: ticked by the user (all for "batch size", else the one clicked)
        self.inputs = QListWidget(self)
        self.inputs.setMaximumHeight(120)
        names = graph_inputs(doc, sid)
        if name is not None and name not in names:
            names.insert(0, name)  # a graph output or a body value edited by itself
        for n in names:
            text = f"{n}  {_dims_text(doc, sid, n, type_of)}"
            item = QListWidgetItem(text, self.inputs)
            item.setData(Qt.ItemDataRole.UserRole, n)
            item.setToolTip(text)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if (across or name is None or n == name)
                               else Qt.CheckState.Unchecked)
        self.preview = QListWidget(self)
        self.preview.setMaximumHeight(100)
        self.hardcoded = QListWidget(self)
        self.hardcoded.setMaximumHeight(140)
        for lst in (self.inputs, self.preview, self.hardcoded):
            # long names are elided in the middle (the whole line on hover), never cut off
            lst.setTextElideMode(Qt.TextElideMode.ElideMiddle)
            lst.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Axis", self.axis)
        form.addRow("New dimension", self.dim_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Inputs to change (a symbol is renamed wherever it appears in them):", self))
        layout.addWidget(self.inputs)
        layout.addWidget(QLabel("Preview:", self))
        layout.addWidget(self.preview)
        layout.addWidget(QLabel("Reshape/Expand constants that hard-code the old size:", self))
        layout.addWidget(self.hardcoded)
        layout.addWidget(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.axis.valueChanged.connect(lambda _v: self.refresh())
        self.dim_edit.textChanged.connect(lambda _t: self.refresh_preview())
        self.inputs.itemChanged.connect(lambda _i: self.refresh())
        self.refresh()

    def targets(self) -> list[str]:
        """The ticked inputs, in the model's order."""
        return [self.inputs.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.inputs.count())
                if self.inputs.item(i).checkState() == Qt.CheckState.Checked]

    def set_targets(self, names) -> None:
        wanted = set(names)
        for i in range(self.inputs.count()):
            item = self.inputs.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.data(Qt.ItemDataRole.UserRole) in wanted
                               else Qt.CheckState.Unchecked)

    def changes(self) -> list:
        """What the edit will rewrite (:func:`editor.dim_targets.plan_dim_changes`)."""
        return plan_dim_changes(self.doc, self.sid, self.targets(), self.axis.value(), parse_dim(self.dim_edit.text()))

    def refresh(self) -> None:
        self.refresh_hardcoded()
        self.refresh_preview()

    def refresh_preview(self) -> None:
        self.preview.clear()
        if not self.dim_edit.text().strip():
            self.preview.addItem("(type the new dimension)")
            return
        lines = preview_lines(self.doc, self.sid, self.changes())
        for line in lines or ["nothing changes"]:
            self.preview.addItem(line)
            self.preview.item(self.preview.count() - 1).setToolTip(line)

    def old_values(self) -> set[int]:
        axis = self.axis.value()
        out = set()
        for n in self.targets():
            vi = self.doc.value_info(self.sid, n)
            if vi is None or not vi.type.tensor_type.HasField("shape"):
                continue
            dims = vi.type.tensor_type.shape.dim
            if axis < len(dims) and dims[axis].HasField("dim_value"):
                out.add(dims[axis].dim_value)
        return out

    def refresh_hardcoded(self) -> None:
        self.hardcoded.clear()
        for old in sorted(self.old_values()):
            if old > 1 or old == 1:
                for line in hardcoded_dims(self.doc, old):
                    self.hardcoded.addItem(f"[{old}] {line}")
                    self.hardcoded.item(self.hardcoded.count() - 1).setToolTip(f"[{old}] {line}")
        self.note.setText("" if self.hardcoded.count() else "none found")

    def command(self):
        dim = parse_dim(self.dim_edit.text())
        changes = self.changes()
        parts = [SetDimension(self.sid, c.name, c.axis, dim) for c in changes]
        if not parts:
            return None
        following = self._following_command([(c.name, c.axis) for c in changes], dim)
        if following is not None:
            return following
        if len(parts) == 1:
            return parts[0]
        values = len({c.name for c in changes})
        return CompositeCommand(f"Set {len(parts)} dims of {values} graph input{'s' if values != 1 else ''} "
                                f"to {dim if dim is not None else '?'}", parts)

    def _following_command(self, axes: list[tuple[str, int]], dim) -> object | None:
        """When a fixed dim of main-graph values becomes symbolic and Reshape/Expand
        constants pinned the old size, one command that also rewrites those constants
        (:func:`editor.passes.dims.plan_set_dims`); None when there is nothing to rewrite."""
        if not isinstance(dim, str) or self.sid != self.doc.index.main:
            return None
        from editor.passes.dims import DimSpec, plan_set_dims

        try:
            plan = plan_set_dims(self.doc, [DimSpec(n, axis, dim) for n, axis in axes], force=True)
        except Exception:  # noqa: BLE001 - e.g. a value_info target: plain SetDimension then
            return None
        if plan.command is None or not any(c.startswith(("Reshape", "Expand")) for c in plan.changes):
            return None
        return plan.command

    def apply(self) -> bool:
        cmd = self.command()
        if cmd is None:
            from widgets.editing.common import show_refusal

            show_refusal(self.parentWidget(), f"no value with a known dimension {self.axis.value()}")
            return False
        if run_command(self.parentWidget(), self.doc, cmd):
            self.accept()
            return True
        return False


def _dims_text(doc, sid: int, name: str, type_of=None) -> str:  # noqa: ANN001
    """A listed value's dims: declared, else the shape engine's marked "(inferred)"
    (``type_of(sid, name) -> (TypeProto, inferred)``, the tab's :func:`shown_type`)."""
    dims = value_dims(doc, sid, name)
    if dims is not None or type_of is None:
        return shape_text(dims)
    tp, inferred = type_of(sid, name)
    if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
        return shape_text(dims)
    shown = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tp.tensor_type.shape.dim]
    return f"{shape_text(shown)} (inferred)" if inferred else shape_text(shown)


def value_type(doc, sid: int, name: str, _depth: int = 0) -> onnx.TypeProto | None:
    """The declared type of a value (:func:`editor.commands.values.value_type`: its value
    info, else its initializer's), or one inferred from its producer's schema (following
    producers whose inputs are untyped, a few levels deep). None when unknown."""
    try:
        declared = declared_type(doc, sid, name)
    except CommandError:  # an initializer of no known element type: unknown
        return None
    if declared is not None:
        return declared
    producer = doc.producer(sid, name)
    if producer is None or _depth > 32:
        return None
    node = doc.node(producer)
    from editor.schema import get_schema

    schema = get_schema(node.op_type, node.domain, doc.opset(node.domain))
    if schema is None:
        return None
    types = {}
    for i in node.input:
        if not i:
            continue
        tp = value_type(doc, sid, i, _depth + 1)
        if tp is None:
            return None
        types[i] = tp
    try:
        inferred = onnx.shape_inference.infer_node_outputs(schema, node, types)
    except Exception:  # noqa: BLE001 - inference refusing is "unknown", validation reports why
        return None
    return inferred.get(name)
