"""Properties of the current selection: model metadata, a node, a value, a tensor, a graph.

A two-column tree (property, value) with sections. Rows that name another thing (a
producer, a consumer, an input's value) carry a target: clicking them selects it, so the
panel doubles as a way to walk the graph. For a tensor the weights view (when available)
sits below the tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QFont, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QHeaderView,
    QMenu,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.attr_names import enum_name
from widgets.common.status_line import MessageLabel
from widgets.common.formatting import attribute_text, human_bytes, tensor_text, type_text
from widgets.common.selection import Target

SOURCE = "properties"
TARGET_ROLE = Qt.ItemDataRole.UserRole + 1
#: the :class:`_Row` an item shows
_ROW_ROLE = Qt.ItemDataRole.UserRole + 2
#: longer values are shown cut in their cell and tool tip (Copy Value copies them whole).
#: NOTE: Qt measures a cell's whole text to elide it, on every paint: one 13 kB metadata
#: value (an OCR model's character list, 6,600 lines) made each repaint of the panel 22 ms
PREVIEW_CHARS = 200
TIP_CHARS = 2000


def _preview(text: str) -> str:
    """``text`` for a cell: one line (line breaks shown as ↵), at most PREVIEW_CHARS
    characters, and how long it is when cut."""
    if len(text) <= PREVIEW_CHARS and "\n" not in text:
        return text
    flat = text[:PREVIEW_CHARS].replace("\r\n", "\n").replace("\n", " ↵ ")
    if len(text) <= PREVIEW_CHARS and len(flat) <= PREVIEW_CHARS:
        return flat
    shown = flat[:PREVIEW_CHARS].rstrip(" ↵")
    lines = text.count("\n") + 1
    return f"{shown} … ({len(text):,} characters" + (f", {lines:,} lines)" if lines > 1 else ")")


def _tip(text: str) -> str:
    """``text`` for a tool tip: at most TIP_CHARS characters."""
    if len(text) <= TIP_CHARS:
        return text
    return f"{text[:TIP_CHARS]}\n… ({len(text):,} characters in all: right-click, Copy Value)"


@dataclass(eq=True)
class _Row:
    """One row of the tree as recorded by the content functions (a section holds rows)."""

    key: str
    text: str
    target: Target | None = None
    tip: str = ""
    section: bool = False
    #: the Name row of a value or tensor (renamed in place)
    editable: bool = False
    #: the whole value when ``text`` shows it cut (see _preview), else ""
    value: str = ""
    children: list[_Row] = field(default_factory=list, compare=False)


#: graph lists whose elements hold weight values
_TENSOR_LISTS = frozenset({"initializer", "sparse_initializer"})


def _tensor_data_may_change(changes, shown) -> bool:
    """Whether an edit can change the values of the weight ``shown`` (a Target): not a
    rename, a rewiring, or another node's attributes (the weights view is filled again only
    then: 10 ms an edit while a tensor was shown)."""
    if shown is None or shown.kind != "tensor":
        return False  # no weight shown: nothing to fill again
    if changes.graph_replaced or changes.structure or changes.model_fields:
        return True
    if any(f in _TENSOR_LISTS for _sid, f in changes.scope_fields):
        return True
    edited = {nid for nid, f in changes.node_fields if f == "attribute"}
    if not edited:
        return False
    # a Constant's value: the node that makes the tensor shown, when it is one
    return shown.node is not None and shown.node in edited


def _node_title(node) -> str:
    return f"<b>{_esc(node.op_type)}</b> &nbsp;{_esc(node.name)}"


def _shape(rows: list[_Row]) -> tuple:
    """What must match for the tree to be updated in place: sections and their row counts."""
    return tuple((row.section, len(row.children)) for row in rows)


class PropertiesPanel(QWidget):
    """See module docstring. ``weightsRequested(target)`` asks for the weights view."""

    tensorShown = Signal(object)  # Target of the tensor shown, or None
    #: double-click on an editable row: (node Target, "name" | "attributes"); the window's
    #: editing controller opens the editor (the panel itself never changes the model)
    editRequested = Signal(object, str)
    #: a value's or tensor's Name row was edited in place: (its Target, the new name); the
    #: editing controller renames it (the panel itself never changes the model)
    renameRequested = Signal(object, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = MessageLabel("", self)  # a long name must not widen the window
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setContentsMargins(6, 4, 6, 4)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Property", "Value"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.tree.setWordWrap(False)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.itemClicked.connect(self._on_clicked)
        self.tree.itemDoubleClicked.connect(self._on_double_clicked)
        # only the value Name row edits in place, and only in its value column
        self.tree.setEditTriggers(QTreeWidget.EditTrigger.NoEditTriggers)
        self.tree.itemChanged.connect(self._on_item_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        # Ctrl+C in the tree copies the current row's value, before the window's Edit > Copy
        # (which copies nodes) can take the key: see eventFilter
        self.tree.installEventFilter(self)
        self._name_item: QTreeWidgetItem | None = None
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.tree)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.splitter)
        self._tab = None
        self._weights = None
        self._shown: Target | None = None
        self._rows: list[_Row] = []
        self._shape: tuple = ()
        self._tensor_shown: Target | None = None
        self._tensor_stale = True

    def set_weights_view(self, view: QWidget) -> None:
        """Place the weights view under the tree (shown for tensors only)."""
        self._weights = view
        self.splitter.addWidget(view)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 2)
        view.hide()

    def set_tab(self, tab) -> None:
        if self._tab is not None:
            self._tab.selection.changed.disconnect(self._on_selection)
            self._tab.doc.changed.disconnect(self._on_doc_changed)
        self._tab = tab
        if tab is not None:
            tab.selection.changed.connect(self._on_selection)
            tab.doc.changed.connect(self._on_doc_changed)
        self._on_selection("")

    def _on_doc_changed(self, changes) -> None:
        renamed = changes.only_node_fields(("name", "doc_string"))
        shown = self._shown
        if renamed and (shown is None or shown.kind == "model"):
            return  # the model's rows name no node
        if renamed and shown.kind == "node" and shown.node not in changes.nodes_changed:
            return  # a node's rows name no other node (its values, not their producers)
        if shown is not None and shown.kind == "node" and changes.only_node_fields(("name",)):
            self._rename_shown_node()
            return
        self._tensor_stale = self._tensor_stale or _tensor_data_may_change(changes, self._tensor_shown)
        self.show_target(self._shown)

    def _rename_shown_node(self) -> None:
        """The shown node was renamed: its title and Name row, not every row again (the
        rows of its values and attributes cost a few ms an edit)."""
        node = self._tab.doc.node(self._shown.node)
        self._set_title(_node_title(node))
        section = self.tree.topLevelItem(0)
        item = section.child(0) if section is not None and section.childCount() else None
        if item is None or item.text(0) != "Name":  # not the layout _node builds: all again
            self.show_target(self._shown)
            return
        text = node.name or "(unnamed)"
        self._update(item, _Row("Name", text, None, text))

    def _set_title(self, text: str) -> None:
        if text != self.title.text():
            self.title.setText(text)

    def _on_selection(self, _source: str) -> None:
        if self._tab is None:
            self.show_target(None)
            return
        current = self._tab.selection.current
        self.show_target(current if current is not None else Target.model())

    # -- rows ---------------------------------------------------------------------------
    # NOTE: the content functions below record rows (:class:`_Row`) and :meth:`_apply` puts
    # them in the tree: when the tree already shows the same rows (a rename, an edit that
    # changes some values) only the texts that differ are set; building every item again
    # after each edit cost 20 ms an edit with the model shown.
    def _section(self, title: str) -> _Row:
        row = _Row(title, "", section=True)
        self._rows.append(row)
        return row

    def _row(self, parent: _Row | None, key: str, value: object, target: Target | None = None,
             tip: str | None = None) -> _Row:
        full = str(value)
        text = _preview(full)
        row = _Row(key, text, target, _tip(tip or full), value=full if text != full else "")
        (parent.children if parent is not None else self._rows).append(row)
        return row

    def _apply(self, rows: list[_Row]) -> None:
        """Show ``rows``: texts updated in place when the tree has the same shape, else
        rebuilt."""
        tree = self.tree
        top = tree.invisibleRootItem()
        self._name_item = None
        if _shape(rows) == self._shape:
            for row, item in zip(rows, (top.child(i) for i in range(top.childCount()))):
                self._update(item, row)
                for child, citem in zip(row.children, (item.child(k) for k in range(item.childCount()))):
                    self._update(citem, child)
            return
        tree.clear()
        self._shape = _shape(rows)
        for row in rows:
            item = self._make(tree, row)
            for child in row.children:
                self._make(item, child)
        tree.expandAll()

    def _make(self, parent, row: _Row) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [row.key, row.text])
        item.setData(0, _ROW_ROLE, row)
        if row.section:
            font = QFont(self.tree.font())
            font.setBold(True)
            item.setFont(0, font)
            item.setFirstColumnSpanned(True)
            return item
        item.setToolTip(1, row.tip)
        if row.editable:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self._name_item = item
        if row.target is not None:
            item.setData(0, TARGET_ROLE, row.target)
            font = QFont(self.tree.font())
            font.setUnderline(True)
            item.setFont(1, font)
            item.setForeground(1, self.palette().link())
        return item

    def _update(self, item: QTreeWidgetItem, row: _Row) -> None:
        old: _Row = item.data(0, _ROW_ROLE)
        if row.editable:
            self._name_item = item
        # an editable row's text may be what the user typed (a refused rename): compare it
        if old == row and (not row.editable or item.text(1) == row.text):
            return
        item.setData(0, _ROW_ROLE, row)
        if old.key != row.key:
            item.setText(0, row.key)
        if item.text(1) != row.text:
            item.setText(1, row.text)
        if old.tip != row.tip:
            item.setToolTip(1, row.tip)
        if old.target != row.target:
            item.setData(0, TARGET_ROLE, row.target)
        if old.editable != row.editable:
            flags = item.flags()
            item.setFlags(flags | Qt.ItemFlag.ItemIsEditable if row.editable else flags & ~Qt.ItemFlag.ItemIsEditable)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if (obj is self.tree and kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress)
                and event.matches(QKeySequence.StandardKey.Copy)
                and self.value_of(self.tree.currentItem()) is not None):
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()  # the key comes to the tree as a key press
                return False
            return self.copy_value()
        return super().eventFilter(obj, event)

    def value_of(self, item: QTreeWidgetItem | None) -> str | None:
        """The whole value a row shows (its cell may show it cut); None for a section."""
        row: _Row | None = item.data(0, _ROW_ROLE) if item is not None else None
        if row is None or row.section:
            return None
        return row.value or (item.text(1) if row.editable else row.text)

    def copy_value(self) -> bool:
        """Put the current row's whole value on the clipboard (Ctrl+C in the tree)."""
        value = self.value_of(self.tree.currentItem())
        if value is None:
            return False
        QGuiApplication.clipboard().setText(value)
        return True

    def _context_menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        if self.value_of(item) is None:
            return
        self.tree.setCurrentItem(item)
        menu = QMenu(self.tree)
        menu.addAction("Copy Value", self.copy_value)
        menu.addAction("Copy Property and Value",
                       lambda: QGuiApplication.clipboard().setText(f"{item.text(0)}: {self.value_of(item)}"))
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def _on_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        target = item.data(0, TARGET_ROLE)
        if target is not None and self._tab is not None:
            self._tab.selection.select([target], SOURCE)

    def _on_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        shown = self._shown
        if item is self._name_item:
            self.tree.editItem(item, 1)
            return
        if shown is None or shown.kind != "node":
            return
        section = item.parent().text(0) if item.parent() is not None else item.text(0)
        if section.startswith("Attributes") or section == "Default attributes":
            self.editRequested.emit(shown, "attributes")
        elif section == "Node" and item.text(0) == "Name":
            self.editRequested.emit(shown, "name")

    def _editable_name(self, parent: _Row, name: str) -> _Row:
        """The Name row of a value or tensor: double-click edits it in place (renames it)."""
        row = self._row(parent, "Name", name, tip=f"{name}\n(double-click to rename)")
        row.editable = True
        row.text, row.value = name, ""  # edited in place: the whole name, never a preview
        return row

    def edit_name(self) -> bool:
        """Start editing the shown value's Name row (False when the row is not shown)."""
        if self._name_item is None:
            return False
        self.tree.editItem(self._name_item, 1)
        return True

    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        shown = self._shown
        if item is not self._name_item or column != 1 or shown is None:
            return
        new = item.text(1).strip()
        if new and new != shown.name:
            self.renameRequested.emit(shown, new)
        else:
            self.tree.blockSignals(True)
            item.setText(1, shown.name)
            self.tree.blockSignals(False)

    def rows(self) -> dict[str, str]:
        """Flat {property: value} of what is shown, keys prefixed by section (tests)."""
        out: dict[str, str] = {}

        def walk(item: QTreeWidgetItem, prefix: str) -> None:
            for i in range(item.childCount()):
                child = item.child(i)
                key = f"{prefix}{child.text(0)}"
                if child.text(1) or not child.childCount():
                    out[key] = child.text(1)
                walk(child, key + "/")

        walk(self.tree.invisibleRootItem(), "")
        return out

    # -- content ---------------------------------------------------------------------------
    def show_target(self, target: Target | None) -> None:
        self.tree.blockSignals(True)  # building rows is not an edit
        try:
            self._show_target(target)
        finally:
            self.tree.blockSignals(False)

    def _show_target(self, target: Target | None) -> None:
        tensor_target = None
        tab = self._tab
        same = target == self._shown
        self._shown = target
        self._rows = []
        if tab is None or target is None:
            self._set_title("")
        else:
            doc = tab.doc
            try:
                kind = target.kind
                if kind == "node" and target.node is not None and doc.has_node(target.node):
                    tensor_target = self._node(doc, target)
                elif kind == "value":
                    tensor_target = self._value(doc, target)
                elif kind == "tensor":
                    tensor_target = self._tensor(doc, target)
                elif kind == "scope" and target.scope in doc.index.scopes:
                    self._scope(doc, target.scope)
                elif kind == "group":
                    self._group(doc, target)
                else:
                    self._model(doc)
            except KeyError:  # the target went away with an edit
                self._rows = []
                self._model(doc)
        self._apply(self._rows)
        if same and tensor_target == self._tensor_shown and not self._tensor_stale:
            return  # the weights view shows that tensor as it is
        self._tensor_shown, self._tensor_stale = tensor_target, False
        if self._weights is not None:
            was = self._weights.isVisible()
            self._weights.setVisible(tensor_target is not None)
            if tensor_target is not None and not was:
                total = max(2, self.splitter.height())
                self.splitter.setSizes([total * 2 // 5, total - total * 2 // 5])
        self.tensorShown.emit(tensor_target)

    def _model(self, doc) -> None:
        m = doc.model
        name = doc.path.name if doc.path else "Untitled"
        self._set_title(f"<b>Model</b> &nbsp;{_esc(name)}")
        sec = self._section("Model")
        if doc.path:
            self._row(sec, "File", str(doc.path))
        if getattr(doc, "file_size", 0):
            self._row(sec, "File size", human_bytes(doc.file_size))
        self._row(sec, "Format", getattr(doc, "format", "binary"))
        self._row(sec, "IR version", m.ir_version)
        for field in ("producer_name", "producer_version", "domain"):
            if getattr(m, field):
                self._row(sec, field.replace("_", " ").capitalize(), getattr(m, field))
        if m.model_version:
            self._row(sec, "Model version", m.model_version)
        if m.doc_string:
            self._row(sec, "Doc string", m.doc_string.strip())
        ops = self._section("Opset imports")
        for imp in m.opset_import:
            self._row(ops, imp.domain or "ai.onnx", imp.version)
        if m.metadata_props:
            meta = self._section("Metadata")
            for p in m.metadata_props:
                self._row(meta, p.key, p.value)
        main = doc.main
        graph = self._section("Main graph")
        self._row(graph, "Name", main.graph.name)
        self._row(graph, "Nodes", len(main.node_ids))
        self._row(graph, "Nodes (all graphs)", sum(len(s.node_ids) for s in doc.index.scopes.values()
                                                    if s.kind != "function"))
        self._row(graph, "Initializers", len(main.initializer_names()))
        inputs = self._section("Inputs")
        inits = set(main.initializer_names())
        for name in main.input_names():
            if name not in inits:
                self._row(inputs, name, self._type_text(main.id, name), Target.of_value(main.id, name))
        outputs = self._section("Outputs")
        for name in main.output_names():
            self._row(outputs, name, self._type_text(main.id, name), Target.of_value(main.id, name))
        if m.functions:
            fn = self._section("Functions")
            for s in doc.index.scopes.values():
                if s.kind == "function":
                    self._row(fn, s.title, f"{len(s.node_ids)} nodes", Target("scope", s.id))

    def _value_row(self, parent, doc, sid: int, label: str, name: str) -> None:
        if not name:
            self._row(parent, label, "(omitted)")
            return
        owner = doc.resolve_value(sid, name)
        typed = self._type_text(owner if owner is not None else sid, name)
        init = doc.initializer(owner, name) if owner is not None else None
        text = f"{name}  {typed or (tensor_text(init[1]) if init else '')}".rstrip()
        target = Target.of_tensor(owner, name) if init else Target.of_value(owner if owner is not None else sid, name)
        self._row(parent, label, text, target)

    def _node(self, doc, target: Target) -> Target | None:
        nid = target.node
        node = doc.node(nid)
        scope = doc.scope_of(nid)
        domain = node.domain or "ai.onnx"
        self._set_title(_node_title(node))
        sec = self._section("Node")
        self._row(sec, "Name", node.name or "(unnamed)")
        self._row(sec, "Op type", node.op_type)
        self._row(sec, "Domain", domain)
        version = doc.opset(node.domain)
        if version is not None:
            self._row(sec, "Opset", version)
        self._row(sec, "Graph", doc.index.path(scope.id), Target("scope", scope.id))
        if node.doc_string:
            self._row(sec, "Doc string", node.doc_string.strip())
        schema = _schema(node, version)
        ins = self._section(f"Inputs ({len(node.input)})")
        for i, name in enumerate(node.input):
            self._value_row(ins, doc, scope.id, _port_name(schema, "input", i), name)
        outs = self._section(f"Outputs ({len(node.output)})")
        for i, name in enumerate(node.output):
            self._value_row(outs, doc, scope.id, _port_name(schema, "output", i), name)
        attrs = self._section(f"Attributes ({len(node.attribute)})")
        for attr in node.attribute:
            self._row(attrs, attr.name, enum_name(node.op_type, node.domain, attr) or attribute_text(attr))
        if schema is not None:
            given = {a.name for a in node.attribute}
            defaults = [(n, a) for n, a in schema.attributes.items()
                        if n not in given and a.default_value.type != 0]
            if defaults:
                dsec = self._section("Default attributes")
                for n, a in defaults:
                    default = onnx.AttributeProto()
                    default.CopyFrom(a.default_value)
                    default.name = n  # schema defaults may come unnamed
                    self._row(dsec, n, enum_name(node.op_type, node.domain, default) or attribute_text(default))
        subs = doc.index.children.get(nid, ())
        if subs:
            sub_sec = self._section("Subgraphs")
            for sid in subs:
                s = doc.scope(sid)
                self._row(sub_sec, s.title, f"{len(s.node_ids)} nodes", Target("scope", sid))
        if node.metadata_props:
            meta = self._section("Metadata")
            for p in node.metadata_props:
                self._row(meta, p.key, p.value)
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            return Target.of_tensor(scope.id, node.output[0], nid)
        return None

    def _type_text(self, sid: int, name: str) -> str:
        """A value's type: the file's, else the shape engine's marked "(inferred)"."""
        from widgets.view.shape_labels import shown_type

        tp, inferred = shown_type(self._tab, sid, name)
        return _inferred(type_text(tp), inferred)

    def _value(self, doc, target: Target) -> Target | None:
        sid, name = target.scope, target.name
        if doc.initializer(sid, name) is not None:
            return self._tensor(doc, Target.of_tensor(sid, name))
        self._set_title(f"<b>Value</b> &nbsp;{_esc(name)}")
        sec = self._section("Value")
        self._editable_name(sec, name)
        self._row(sec, "Type", self._type_text(sid, name) or "unknown")
        scope = doc.scope(sid)
        role = ("graph input" if name in scope.input_names() else
                "graph output" if name in scope.output_names() else "intermediate")
        self._row(sec, "Role", role)
        self._row(sec, "Graph", doc.index.path(sid), Target("scope", sid))
        producer = doc.producer(sid, name)
        if producer is not None:
            node = doc.node(producer)
            self._row(sec, "Producer", f"{node.name or '(unnamed)'}  ({node.op_type})", Target.of_node(sid, producer))
        self._consumers(doc, sid, name)
        if producer is not None:
            pnode = doc.node(producer)
            if pnode.op_type == "Constant" and pnode.domain in ("", "ai.onnx"):
                return Target.of_tensor(sid, name, producer)
        return None

    def _consumers(self, doc, sid: int, name: str) -> None:
        """A "Consumers (n)" section: every node reading ``name``, nested bodies included."""
        consumers = doc.consumers(sid, name, nested=True)
        cons = self._section(f"Consumers ({len(consumers)})")
        for nid, idx in consumers:
            node = doc.node(nid)
            self._row(cons, node.name or "(unnamed)", f"{node.op_type} input {idx}",
                      Target.of_node(doc.index.node_scope[nid], nid))

    def _tensor(self, doc, target: Target) -> Target | None:
        sid, name = target.scope, target.name
        if target.node is not None:
            node = doc.node(target.node)
            value = next((a for a in node.attribute if a.name == "value"), None)
            tensor = value.t if value is not None and value.type == onnx.AttributeProto.TENSOR else None
            origin = f"Constant node '{node.name}'"
        else:
            found = doc.initializer(sid, name)
            tensor = found[1] if found else None
            origin = "initializer"
        self._set_title(f"<b>Tensor</b> &nbsp;{_esc(name)}")
        sec = self._section("Tensor")
        self._editable_name(sec, name)
        self._row(sec, "Stored as", origin)
        if target.node is not None:
            self._row(sec, "Node", doc.node(target.node).name or "(unnamed)", Target.of_node(sid, target.node))
        if tensor is not None:
            from editor.io import tensor_nbytes, uses_external_data

            self._row(sec, "Type", tensor_text(tensor))
            count = 1
            for d in tensor.dims:
                count *= d
            self._row(sec, "Elements", f"{count:,}")
            try:
                self._row(sec, "Size", human_bytes(tensor_nbytes(tensor)))
            except Exception:  # noqa: BLE001 - malformed dims: the row is skipped
                pass
            if uses_external_data(tensor):
                loc = {e.key: e.value for e in tensor.external_data}
                self._row(sec, "External file", loc.get("location", "?"))
                self._row(sec, "Offset", loc.get("offset", "0"))
        self._consumers(doc, sid, name)
        return target if tensor is not None else None

    def _scope(self, doc, sid: int) -> None:
        s = doc.scope(sid)
        self._set_title(f"<b>Graph</b> &nbsp;{_esc(doc.index.path(sid))}")
        sec = self._section("Graph")
        self._row(sec, "Path", doc.index.path(sid))
        self._row(sec, "Kind", s.kind)
        self._row(sec, "Name", getattr(s.graph, "name", ""))
        if s.owner is not None:
            owner = doc.node(s.owner)
            self._row(sec, "Owner", f"{owner.name or '(unnamed)'} ({owner.op_type}.{s.attr})",
                      Target.of_node(doc.index.node_scope[s.owner], s.owner))
        self._row(sec, "Nodes", len(s.node_ids))
        inits = set(s.initializer_names())
        ins = self._section("Inputs")
        for name in s.input_names():
            if name not in inits:
                self._row(ins, name, self._type_text(sid, name), Target.of_value(sid, name))
        outs = self._section("Outputs")
        for name in s.output_names():
            self._row(outs, name, self._type_text(sid, name), Target.of_value(sid, name))

    def _group(self, doc, target: Target) -> None:
        self._set_title(f"<b>Group</b> &nbsp;{_esc(target.name)}")
        sec = self._section("Group")
        self._row(sec, "Path", target.name)
        scope = doc.scope(target.scope)
        prefix = target.name.rstrip("/") + "/"
        members = [nid for nid in scope.node_ids if doc.node(nid).name.startswith(prefix)]
        self._row(sec, "Nodes", len(members))
        ops: dict[str, int] = {}
        for nid in members:
            op = doc.node(nid).op_type
            ops[op] = ops.get(op, 0) + 1
        hist = self._section("Op types")
        for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])):
            self._row(hist, op, n)


def _inferred(text: str, inferred: bool) -> str:
    return f"{text}  (inferred)" if text and inferred else text


def _schema(node, version):
    from editor.schema import get_schema

    try:
        return get_schema(node.op_type, node.domain, version)
    except Exception:  # noqa: BLE001 - unknown domain
        return None


def _port_name(schema, kind: str, index: int) -> str:
    if schema is None:
        return f"{kind} {index}"
    params = schema.inputs if kind == "input" else schema.outputs
    if not params:
        return f"{kind} {index}"
    if index < len(params):
        return params[index].name
    last = params[-1]
    return f"{last.name}[{index - len(params) + 1}]" if last.option == onnx.defs.OpSchema.FormalParameterOption.Variadic else f"{kind} {index}"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
