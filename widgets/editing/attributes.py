"""The attribute editor of a node: one typed editor per attribute of the op's schema.

Each row shows the attribute's name, an editor chosen by the schema's declared type (a
line edit that parses ints, floats, comma-separated lists; a combo box when the schema's
documentation names the allowed strings; a ``.npy`` picker for tensors; "Open" for
subgraphs), the schema default and the documentation as a tool tip. The "set" box says
whether the node carries the attribute: unticking it removes the attribute. Extra rows add
attributes the schema does not declare (custom domains). Accepting pushes ONE command
(a CompositeCommand of SetAttribute / RemoveAttribute) so a whole dialog is one undo step.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
from onnx import AttributeProto as AP

from editor.types import dtype_name
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from editor.commands import CompositeCommand, RemoveAttribute, SetAttribute
from editor.schema import attribute_specs, get_schema
from widgets.editing.common import run_command

TYPE_NAMES = {AP.INT: "int", AP.FLOAT: "float", AP.STRING: "string", AP.INTS: "ints", AP.FLOATS: "floats",
              AP.STRINGS: "strings", AP.TENSOR: "tensor", AP.GRAPH: "graph", AP.GRAPHS: "graphs"}
EDITABLE_TYPES = (AP.INT, AP.FLOAT, AP.STRING, AP.INTS, AP.FLOATS, AP.STRINGS)


def enum_choices(doc: str) -> list[str]:
    """Allowed string values named by a schema's attribute documentation.

    The specs name them as quoted/back-ticked words (``'constant'``, `` `reflect` ``) or as
    capitalised tokens (``NOTSET, SAME_UPPER, SAME_LOWER or VALID``); anything fewer than
    two candidates is not an enumeration."""
    quoted = re.findall(r"[`'\"]([A-Za-z_][A-Za-z0-9_]*)[`'\"]", doc)
    caps = re.findall(r"\b([A-Z][A-Z0-9]*_?[A-Z0-9_]*)\b", doc)
    caps = [c for c in caps if len(c) >= 3 and c not in ("ONNX", "NCHW", "NHWC", "API", "RNN", "LSTM", "GRU")]
    out = list(dict.fromkeys(quoted if len(set(quoted)) >= 2 else caps))
    return out if len(out) >= 2 else []


def attribute_text(attr: onnx.AttributeProto) -> str:
    """The editable text of an attribute's value."""
    v = onnx.helper.get_attribute_value(attr)
    if attr.type == AP.STRING:
        return v.decode("utf-8", "replace")
    if attr.type == AP.STRINGS:
        return ", ".join(s.decode("utf-8", "replace") for s in v)
    if attr.type in (AP.INTS, AP.FLOATS):
        return ", ".join(repr(x) for x in v)
    if attr.type in (AP.INT, AP.FLOAT):
        return repr(v)
    if attr.type == AP.TENSOR:
        return f"tensor {list(v.dims)} {dtype_name(v.data_type)}"
    if attr.type == AP.GRAPH:
        return f"graph {v.name!r} ({len(v.node)} nodes)"
    return str(v)[:80]


def parse_value(attr_type: int, text: str):
    """Text -> Python value for SetAttribute; raises ValueError with a readable message."""
    t = text.strip()
    try:
        if attr_type == AP.INT:
            return int(t)
        if attr_type == AP.FLOAT:
            return float(t)
        if attr_type == AP.STRING:
            return text
        parts = [p.strip() for p in t.strip("[]").split(",") if p.strip()]
        if attr_type == AP.INTS:
            return [int(p) for p in parts]
        if attr_type == AP.FLOATS:
            return [float(p) for p in parts]
        if attr_type == AP.STRINGS:
            return parts
    except ValueError:
        raise ValueError(f"{text!r} is not a valid {TYPE_NAMES.get(attr_type, 'value')}") from None
    raise ValueError(f"attributes of type {TYPE_NAMES.get(attr_type, attr_type)} are not edited as text")


class AttributeRow:
    """Widgets of one attribute row."""

    def __init__(self, dialog: AttributeDialog, name: str, attr_type: int, current, spec) -> None:
        self.name, self.type, self.current, self.spec = name, attr_type, current, spec
        self.tensor: np.ndarray | None = None
        self.set_box = QCheckBox(dialog)
        self.set_box.setChecked(current is not None)
        self.set_box.setToolTip("the node carries this attribute (untick to remove it)")
        choices = enum_choices(spec.doc) if spec is not None and attr_type == AP.STRING else []
        self.editor: QWidget
        if choices:
            combo = QComboBox(dialog)
            combo.setEditable(True)
            combo.addItems(choices)
            combo.setCurrentText(attribute_text(current) if current is not None else
                                 (attribute_text(spec.default) if spec is not None and spec.default else choices[0]))
            combo.currentTextChanged.connect(lambda _t: self.set_box.setChecked(True))
            self.editor = combo
        elif attr_type in EDITABLE_TYPES or attr_type == AP.UNDEFINED:
            edit = QLineEdit(dialog)
            if current is not None:
                edit.setText(attribute_text(current))
            elif spec is not None and spec.default is not None:
                edit.setPlaceholderText(attribute_text(spec.default))
            edit.textEdited.connect(lambda _t: self.set_box.setChecked(True))
            self.editor = edit
        elif attr_type == AP.TENSOR:
            button = QPushButton(attribute_text(current) if current is not None else "From .npy…", dialog)
            button.clicked.connect(lambda: self._pick_tensor(dialog))
            self.editor = button
        elif attr_type in (AP.GRAPH, AP.GRAPHS):
            button = QPushButton("Open subgraph", dialog)
            button.setEnabled(current is not None)
            button.clicked.connect(lambda: dialog.open_subgraph(name))
            self.editor = button
            self.set_box.setEnabled(False)
        else:
            self.editor = QLabel(attribute_text(current) if current is not None else "", dialog)
            self.set_box.setEnabled(False)
        default = attribute_text(spec.default) if spec is not None and spec.default is not None else (
            "required" if spec is not None and spec.required else "")
        self.default_label = QLabel(default, dialog)
        self.default_label.setStyleSheet("color: gray")
        title = f"{name}  ({TYPE_NAMES.get(attr_type, '?')})"
        self.name_label = QLabel(f"<b>{title}</b>" if current is not None else title, dialog)
        if spec is not None and spec.doc:
            for w in (self.name_label, self.editor, self.default_label):
                w.setToolTip(spec.doc)

    def _pick_tensor(self, dialog: QDialog) -> None:
        path, _ = QFileDialog.getOpenFileName(dialog, "Tensor from .npy", "", "NumPy arrays (*.npy)")
        if path:
            self.set_tensor(np.load(path, allow_pickle=False))

    def set_tensor(self, array: np.ndarray) -> None:
        self.tensor = np.asarray(array)
        self.editor.setText(f"tensor {list(self.tensor.shape)} {self.tensor.dtype}")
        self.set_box.setChecked(True)

    def text(self) -> str:
        if isinstance(self.editor, QComboBox):
            return self.editor.currentText()
        if isinstance(self.editor, QLineEdit):
            return self.editor.text()
        return ""

    def command(self, nid: int):
        """The command this row asks for, or None when unchanged."""
        if not self.set_box.isEnabled():
            return None
        if not self.set_box.isChecked():
            return RemoveAttribute(nid, self.name) if self.current is not None else None
        if self.type == AP.TENSOR:
            if self.tensor is None:
                return None
            return SetAttribute(nid, self.name, onnx.numpy_helper.from_array(self.tensor), AP.TENSOR)
        text = self.text()
        if self.current is not None and text == attribute_text(self.current):
            return None
        attr_type = self.type
        if attr_type == AP.UNDEFINED:
            return SetAttribute(nid, self.name, _guess(text))
        return SetAttribute(nid, self.name, parse_value(attr_type, text), attr_type)


def _guess(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class AttributeDialog(QDialog):
    """Edit every attribute of one node; Apply pushes one command."""

    def __init__(self, doc, nid: int, parent: QWidget | None = None, *, open_scope=None) -> None:
        super().__init__(parent)
        self.doc, self.nid = doc, nid
        self._open_scope = open_scope
        node = doc.node(nid)
        self.setWindowTitle(f"Attributes of {node.name or node.op_type} ({node.op_type})")
        schema = get_schema(node.op_type, node.domain, doc.opset(node.domain))
        specs = attribute_specs(schema) if schema is not None else {}
        present = {a.name: a for a in node.attribute}
        self.rows: dict[str, AttributeRow] = {}
        grid_host = QWidget(self)
        self.grid = QGridLayout(grid_host)
        for col, head in enumerate(("set", "attribute", "value", "default")):
            self.grid.addWidget(QLabel(f"<i>{head}</i>", grid_host), 0, col)
        names = list(specs) + [n for n in present if n not in specs]
        for name in names:
            spec = specs.get(name)
            attr_type = spec.type if spec is not None else present[name].type
            self._add_row(AttributeRow(self, name, attr_type, present.get(name), spec))
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(grid_host)
        # a row to add an attribute the schema does not declare (custom ops)
        add_bar = QHBoxLayout()
        self.new_name = QLineEdit(self)
        self.new_name.setPlaceholderText("new attribute name")
        self.new_type = QComboBox(self)
        for t in EDITABLE_TYPES:
            self.new_type.addItem(TYPE_NAMES[t], t)
        add_button = QPushButton("Add attribute", self)
        add_button.clicked.connect(self._add_custom)
        add_bar.addWidget(self.new_name)
        add_bar.addWidget(self.new_type)
        add_bar.addWidget(add_button)
        self.doc_label = QLabel(f"{node.domain or 'ai.onnx'} · {node.op_type} · opset {doc.opset(node.domain)}"
                                + ("" if schema is not None else " · no schema: types follow the values"), self)
        # the documentation of the attribute being edited, beside the table
        self.help_label = QLabel("Select a value to see the attribute's documentation.", self)
        self.help_label.setWordWrap(True)
        self.help_label.setStyleSheet("color: gray")
        self.help_label.setMinimumHeight(48)
        QApplication.instance().focusChanged.connect(self._on_focus)
        self.error_label = QLabel("", self)
        self.error_label.setStyleSheet("color: #c03030")
        self.error_label.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.doc_label)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.help_label)
        layout.addLayout(add_bar)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.resize(620, min(640, 140 + 34 * max(3, len(self.rows))))

    def _on_focus(self, _old, new) -> None:
        for row in self.rows.values():
            if new is row.editor or (new is not None and row.editor.isAncestorOf(new)):
                doc = row.spec.doc.strip() if row.spec is not None and row.spec.doc else "(no documentation)"
                self.show_help(row.name, doc)
                return

    def show_help(self, name: str, doc: str) -> None:
        self.help_label.setText(f"<b>{name}</b>: {doc}")

    def done(self, result: int) -> None:  # noqa: D102 - stop following focus once closed
        try:
            QApplication.instance().focusChanged.disconnect(self._on_focus)
        except (RuntimeError, TypeError):
            pass
        super().done(result)

    def _add_row(self, row: AttributeRow) -> None:
        r = self.grid.rowCount()
        self.grid.addWidget(row.set_box, r, 0)
        self.grid.addWidget(row.name_label, r, 1)
        self.grid.addWidget(row.editor, r, 2)
        self.grid.addWidget(row.default_label, r, 3)
        self.rows[row.name] = row

    def _add_custom(self) -> None:
        name = self.new_name.text().strip()
        if not name or name in self.rows:
            self.error_label.setText(f"attribute name {name!r} is empty or already listed")
            return
        row = AttributeRow(self, name, self.new_type.currentData(), None, None)
        row.set_box.setChecked(True)
        self._add_row(row)
        self.new_name.clear()

    def open_subgraph(self, name: str) -> None:
        for sid in self.doc.index.children.get(self.nid, ()):
            if self.doc.scope(sid).attr == name:
                if self._open_scope is not None:
                    self._open_scope(sid)
                self.accept()
                return

    def command(self):
        """The one command for the edits in the dialog (None when nothing changed);
        raises ValueError for text that does not parse."""
        parts = [c for c in (row.command(self.nid) for row in self.rows.values()) if c is not None]
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        node = self.doc.node(self.nid)
        return CompositeCommand(f"Edit {len(parts)} attributes of {node.name or node.op_type!r}", parts)

    def apply(self) -> bool:
        try:
            cmd = self.command()
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return False
        if cmd is None:
            self.accept()
            return True
        if run_command(self.parentWidget(), self.doc, cmd):
            self.accept()
            return True
        from widgets.editing.common import last_refusal

        self.error_label.setText(last_refusal[0])
        return False
