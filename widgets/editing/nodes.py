"""Node edits: the searchable op palette, add / insert-on-edge / delete / rename / change
op type, and the plans (lists of commands) they push.

The palette lists every op of every domain the model imports, at the model's opset
(``editor.schema.ops_in_domain``), plus the contrib ops only onnxruntime defines
(``editor.schema.runtime_ops``). Choosing an op of a domain the model does not
import adds the opset import in the same undo step.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.commands import AddNode, CompositeCommand, SetNodeField, SetNodeInput, SetOpsetImport
from editor.schema import get_schema, ops_in_domain, runtime_ops


def palette_entries(doc) -> list[tuple[str, str, int | None]]:
    """(domain, op_type, version to import or None when imported) for the palette."""
    out: list[tuple[str, str, int | None]] = []
    opsets = doc.opsets()
    for domain, version in sorted(opsets.items()):
        d = "" if domain == "ai.onnx" else domain
        for op in ops_in_domain(d, version):
            out.append((d, op, None))
    for domain, op, since in runtime_ops():
        if domain == "":
            continue  # the default domain's are in ops_in_domain above, at the model's opset
        if domain in opsets:
            out.append((domain, op, None))
        else:
            out.append((domain, op, max(1, since)))
    for f in doc.model.functions:  # model-local functions are ops too
        out.append((f.domain, f.name, None if f.domain in opsets else 1))
    return list(dict.fromkeys(out))


class NodePalette(QDialog):
    """Type to filter; Enter (or double-click) picks the op."""

    def __init__(self, doc, parent: QWidget | None = None, *, title: str = "Add Node") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.doc = doc
        self.entries = palette_entries(doc)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("search ops: Conv, relu, com.microsoft …")
        self.list = QListWidget(self)
        self.info = QLabel(self)
        self.info.setWordWrap(True)
        self.info.setMaximumHeight(90)
        for domain, op, need in self.entries:
            item = QListWidgetItem(f"{op}    [{domain or 'ai.onnx'}]" + ("  (adds import)" if need else ""))
            item.setData(Qt.ItemDataRole.UserRole, (domain, op, need))
            self.list.addItem(item)
        self.filter.textChanged.connect(self._apply_filter)
        self.list.currentItemChanged.connect(self._show_doc)
        self.list.itemActivated.connect(lambda _i: self.accept())
        self.filter.returnPressed.connect(self.accept)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.info)
        layout.addWidget(buttons)
        self.resize(460, 560)
        self._apply_filter("")

    def _apply_filter(self, text: str) -> None:
        words = text.lower().split()
        first = None
        for i in range(self.list.count()):
            item = self.list.item(i)
            hay = item.text().lower()
            hide = not all(w in hay for w in words)
            item.setHidden(hide)
            if not hide and first is None:
                first = item
        # exact op-name matches first: "Add" should not pick "AddGrad"
        exact = [self.list.item(i) for i in range(self.list.count())
                 if not self.list.item(i).isHidden()
                 and self.list.item(i).data(Qt.ItemDataRole.UserRole)[1].lower() == text.strip().lower()]
        self.list.setCurrentItem(exact[0] if exact else first)

    def _show_doc(self, item) -> None:
        if item is None:
            self.info.clear()
            return
        domain, op, _ = item.data(Qt.ItemDataRole.UserRole)
        schema = get_schema(op, domain, self.doc.opset(domain))
        doc = (schema.doc or "").strip().split("\n\n")[0] if schema is not None else ""
        self.info.setText(doc[:400])

    def choice(self) -> tuple[str, str, int | None] | None:
        item = self.list.currentItem()
        if item is None or item.isHidden():
            return None
        return item.data(Qt.ItemDataRole.UserRole)


def _taken(doc, sid: int) -> set[str]:
    s = doc.scope(sid)
    return s.defined_names() | set(s.consumers) | set(s.output_names())


def fresh(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def add_node_command(doc, sid: int, domain: str, op: str, need: int | None, *, after: int | None = None):
    """AddNode (with the opset import first when the domain is not imported)."""
    scope = doc.scope(sid)
    position = scope.position(after) + 1 if after is not None and after in scope.node_ids else None
    add = AddNode(sid, op, domain=domain, position=position)
    if need is None:
        return add
    return CompositeCommand(f"Add {op} node", [SetOpsetImport(domain, need), add])


def insert_on_edge_command(doc, sid: int, value: str, domain: str, op: str, need: int | None):
    """A node of ``op`` placed on edge ``value``: it reads ``value`` and every former
    consumer of ``value`` reads the new node's first output instead."""
    scope = doc.scope(sid)
    schema = get_schema(op, domain, doc.opset(domain) or need)
    n_in = max(1, schema.min_input) if schema is not None else 1
    out = fresh(f"{value}_{op.lower()}", _taken(doc, sid))
    producer = doc.producer(sid, value)
    after = producer if producer is not None else None
    position = scope.position(after) + 1 if after is not None else 0
    parts = []
    if need is not None:
        parts.append(SetOpsetImport(domain, need))
    parts.append(AddNode(sid, op, domain=domain, inputs=[value] + [""] * (n_in - 1), outputs=[out],
                         position=position))
    for nid, k in sorted(doc.consumers(sid, value)):
        parts.append(SetNodeInput(nid, k, out))
    return CompositeCommand(f"Insert {op} on {value!r}", parts), out


def change_op_type_command(doc, nid: int, domain: str, op: str, need: int | None):
    node = doc.node(nid)
    parts = []
    if need is not None:
        parts.append(SetOpsetImport(domain, need))
    if (node.domain or "") != domain:
        parts.append(SetNodeField(nid, "domain", domain))
    parts.append(SetNodeField(nid, "op_type", op))
    if len(parts) == 1:
        return parts[0]
    return CompositeCommand(f"Change {node.name or node.op_type!r} to {op}", parts)
