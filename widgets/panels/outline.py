"""The outline: every graph scope of the model as a tree, and its dock widget.

``OutlineModel`` is a ``QAbstractItemModel`` adapter over the Document's index (checked
with pytest-qt's ``qtmodeltester``): for each graph — the main graph, each If/Loop/Scan
body under the node that owns it, each model-local function — its inputs, outputs,
initializers, Constant-node tensors and nodes. It is rebuilt (model reset) when the document changes structure;
it holds names and ids only, never protobuf objects.

The tree reads the whole model (0.2 s for the 11,812-node export): the panel builds it only
while it is on screen. The Outline is closed on a first start, so opening a model or
editing its structure costs nothing for it until it is opened (or its tab chosen).
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from PySide6.QtCore import QAbstractItemModel, QItemSelectionModel, QModelIndex, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QTreeView, QVBoxLayout, QWidget

from editor.viewmodel import shape_text
from widgets.common.column_fit import fit_columns
from widgets.common.seen import SeenWatch, is_seen
from widgets.common.selection import Target

SOURCE = "outline"


class _Item:
    __slots__ = ("parent", "children", "row", "label", "detail", "target", "header", "tip")

    def __init__(self, parent: _Item | None, label: str, detail: str = "", target: Target | None = None,
                 header: bool = False, tip: str = "") -> None:
        self.parent = parent
        self.children: list[_Item] = []
        self.row = 0
        self.label = label
        self.detail = detail
        self.target = target
        self.header = header
        self.tip = tip
        if parent is not None:
            self.row = len(parent.children)
            parent.children.append(self)


def _target_key(t: Target) -> tuple:
    return (t.kind, t.scope, t.node, t.name)


class OutlineModel(QAbstractItemModel):
    """Tree of the document's graphs; column 0 name, column 1 op type / type and shape."""

    HEADERS = ("Name", "Type")
    rebuilt = Signal()  # after a coalesced rebuild following edits

    def __init__(self, doc=None, parent=None) -> None:
        super().__init__(parent)
        self._doc = None
        self._root = _Item(None, "")
        self._by_target: dict[tuple, _Item] = {}
        self._rebuild_timer = QTimer(self)
        self._rebuild_timer.setSingleShot(True)
        self._rebuild_timer.setInterval(250)
        self._rebuild_timer.timeout.connect(self._rebuild)
        #: whether the tree is wanted now (the panel: on screen); the tree of a document
        #: set or edited meanwhile is built by :meth:`ensure_built`
        self.wanted: Callable[[], bool] = lambda: True
        #: the tree is not the document's (built later, see ``wanted``)
        self.stale = False
        self.set_document(doc)

    # -- building ------------------------------------------------------------------------
    def set_document(self, doc) -> None:
        self.beginResetModel()
        if self._doc is not None:
            self._doc.changed.disconnect(self._on_changed)
        self._doc = doc
        self._build_or_defer()
        if doc is not None:
            doc.changed.connect(self._on_changed)
        self.endResetModel()

    def _on_changed(self, changes) -> None:
        # NOTE: a full rebuild of a 10k-node outline costs up to a second; coalesce bursts of
        # edits into one rebuild after they settle, so editing stays responsive. A rename
        # relabels its own row (the rebuild cost 250 ms a rename on a 670-node model).
        if self.stale:  # the tree is built from the document when wanted
            return
        if not self._rebuild_timer.isActive() and changes.only_node_fields(("name", "doc_string")):
            self._rename(changes.nodes_changed)
            return
        self._rebuild_timer.start()

    def _rename(self, node_ids) -> None:
        doc = self._doc
        for nid in node_ids:
            item = self._by_target.get(_target_key(Target.of_node(doc.index.node_scope[nid], nid)))
            if item is None:
                continue
            item.label, item.tip = _node_texts(doc.node(nid))
            index = self.createIndex(item.row, 0, item)
            self.dataChanged.emit(index, index)

    def _rebuild(self) -> None:
        if not self.wanted():
            self.stale = True  # built when wanted (ensure_built)
            return
        self.beginResetModel()
        self._build_or_defer()
        self.endResetModel()
        self.rebuilt.emit()

    def ensure_built(self) -> bool:
        """Build the tree now if it is behind the document; True when it was built."""
        if not self.stale:
            return False
        self._rebuild_timer.stop()
        self.beginResetModel()
        self._build()
        self.endResetModel()
        self.rebuilt.emit()
        return True

    def _build_or_defer(self) -> None:
        if self._doc is not None and not self.wanted():
            self._root, self._by_target = _Item(None, ""), {}
            self.stale = True
            return
        self._build()

    def _build(self) -> None:
        self.stale = False
        self._root = _Item(None, "")
        self._by_target = {}
        doc = self._doc
        if doc is None:
            return
        m = doc.model
        model_item = _Item(self._root, "Model", f"IR {m.ir_version}", Target.model(), header=True)
        self._remember(model_item)
        self._add_scope(self._root, doc.index.main, "Graph")
        functions = [s for s in doc.index.scopes.values() if s.kind == "function"]
        if functions:
            fitem = _Item(self._root, "Functions", str(len(functions)), header=True)
            for scope in functions:
                self._add_scope(fitem, scope.id, scope.title)

    def _remember(self, item: _Item) -> None:
        if item.target is not None:
            self._by_target.setdefault(_target_key(item.target), item)

    #: ``(sid, name) -> (TypeProto or None, inferred)``: the tab's view of a value's type
    #: (the file's, else the shape engine's); None: the file's declarations only
    type_of = None

    def _type_text(self, sid: int, name: str) -> str:
        vi = self._doc.value_info(sid, name)
        if vi is not None and vi.HasField("type"):
            return shape_text(vi)
        tp, inferred = self.type_of(sid, name) if self.type_of is not None else (None, False)
        if tp is None:
            return shape_text(vi) if vi is not None else ""
        shown = shape_text(onnx.helper.make_value_info(name, tp))
        return f"{shown} (inferred)" if inferred and shown else shown

    def _add_scope(self, parent: _Item, sid: int, label: str) -> None:
        doc = self._doc
        scope = doc.scope(sid)
        g = scope.graph
        name = getattr(g, "name", "") or ""
        item = _Item(parent, label, scope.kind if scope.kind != "main" else f"{len(scope.node_ids)} nodes",
                     Target("scope", sid), header=True, tip=f"{doc.index.path(sid)}  {name}".strip())
        self._remember(item)
        inits = scope.initializer_names()
        init_set = set(inits)
        inputs = [n for n in scope.input_names() if n not in init_set]
        sections = (("Inputs", inputs, "value"), ("Outputs", scope.output_names(), "value"),
                    ("Initializers", inits, "tensor"))
        for title, names, kind in sections:
            if not names:
                continue
            sec = _Item(item, title, str(len(names)), header=True)
            for name in names:
                if kind == "tensor":
                    found = doc.initializer(sid, name)
                    detail = ""
                    if found is not None:
                        t = found[1]
                        dims = "x".join(str(d) for d in t.dims) or "scalar"
                        detail = f"{dims} {_dtype(t.data_type)}"
                    target = Target.of_tensor(sid, name)
                else:
                    detail = self._type_text(sid, name)
                    target = Target.of_value(sid, name)
                self._remember(_Item(sec, name, detail, target))
        constants = [nid for nid in scope.node_ids
                     if doc.node(nid).op_type == "Constant" and doc.node(nid).domain in ("", "ai.onnx")
                     and len(doc.node(nid).output)]
        if constants:
            # Paddle and spox exports keep every weight in Constant nodes: list them with
            # the initializers' look, so weights are one click away either way
            sec = _Item(item, "Constants", str(len(constants)), header=True)
            for nid in constants:
                node = doc.node(nid)
                attr = node.attribute[0] if len(node.attribute) else None
                detail = ""
                if attr is not None and attr.type == attr.TENSOR:
                    dims = "x".join(str(d) for d in attr.t.dims) or "scalar"
                    detail = f"{dims} {_dtype(attr.t.data_type)}"
                elif attr is not None:
                    detail = attr.name
                self._remember(_Item(sec, node.output[0], detail, Target.of_tensor(sid, node.output[0], nid)))
        nodes = _Item(item, "Nodes", str(len(scope.node_ids)), header=True)
        for nid in scope.node_ids:
            node = doc.node(nid)
            label, tip = _node_texts(node)
            nitem = _Item(nodes, label, _op(node), Target.of_node(sid, nid), tip=tip)
            self._remember(nitem)
            for sub in doc.index.children.get(nid, ()):
                self._add_scope(nitem, sub, doc.scope(sub).title)

    # -- lookups -------------------------------------------------------------------------
    def index_for(self, target: Target) -> QModelIndex:
        item = self._by_target.get(_target_key(target))
        if item is None and target.kind == "tensor":
            item = self._by_target.get(("value", target.scope, None, target.name))
        if item is None and target.kind == "value":
            item = self._by_target.get(("tensor", target.scope, None, target.name))
        if item is None:
            return QModelIndex()
        return self.createIndex(item.row, 0, item)

    def target(self, index: QModelIndex) -> Target | None:
        if not index.isValid():
            return None
        return index.internalPointer().target

    def count(self, scope_label_path: tuple[str, ...]) -> int:
        """Rows under the item reached by following labels from the root (for tests)."""
        item = self._root
        for label in scope_label_path:
            item = next(c for c in item.children if c.label == label)
        return len(item.children)

    # -- QAbstractItemModel -----------------------------------------------------------
    def index(self, row: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        pitem = parent.internalPointer() if parent.isValid() else self._root
        return self.createIndex(row, column, pitem.children[row])

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        item = index.internalPointer().parent
        if item is None or item is self._root:
            return QModelIndex()
        return self.createIndex(item.row, 0, item)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        if parent.column() > 0:
            return 0
        item = parent.internalPointer() if parent.isValid() else self._root
        return len(item.children)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 2

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        item: _Item = index.internalPointer()
        if role == Qt.ItemDataRole.DisplayRole:
            return item.label if index.column() == 0 else item.detail
        if role == Qt.ItemDataRole.ToolTipRole:
            return item.tip or item.label
        if role == Qt.ItemDataRole.FontRole and item.header and index.column() == 0:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 1:
            return None
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 2:
            return self.HEADERS[section]
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


def _op(node) -> str:
    return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type


def _node_texts(node) -> tuple[str, str]:
    """A node row's label and tool tip."""
    op = _op(node)
    # unnamed nodes (common in Paddle and tf2onnx exports) go by their first output
    label = node.name or (f"→ {node.output[0]}" if len(node.output) and node.output[0] else f"({op})")
    return label, f"{op} {node.name}".strip()


def _dtype(elem_type: int) -> str:
    from editor.types import dtype_name

    return dtype_name(elem_type)  # "unknown type 999" for types ONNX does not define


class OutlinePanel(QWidget):
    """Filter box + tree; clicking an item selects it (and the canvas follows)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = OutlineModel(None, self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setRecursiveFilteringEnabled(True)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter outline")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._on_filter)
        self.tree = QTreeView(self)
        self.tree.setModel(self.proxy)
        self.tree.setUniformRowHeights(True)
        # scoped names: both ends matter (encoder/…/MatMul_quant), the whole name on hover
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # the name gets the room; the type column has a fixed, user-resizable width (a long
        # graph name or type must not squeeze the names away)
        fit_columns(self.tree, main=0, caps={1: 0.38})
        self.tree.selectionModel().currentChanged.connect(self._on_current)
        # an edit rebuilds the model (reset): keep what the user had opened
        self._expanded_paths: list[tuple[str, ...]] = []
        self.model.modelAboutToBeReset.connect(self._remember_expanded)
        self.model.modelReset.connect(self._restore_expanded)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree)
        self._tab = None
        self._syncing = False
        self.model.wanted = lambda: is_seen(self)
        self._seen = SeenWatch(self, self._on_seen)

    def _on_seen(self) -> None:
        if self.model.ensure_built():
            self._opened()

    def _opened(self) -> None:
        """The tree of a new document is there: its main graph open, the selection shown."""
        root = self.proxy.index(1, 0)
        self.tree.expand(root)
        self._on_selection("")

    def set_tab(self, tab) -> None:
        if self._tab is not None:
            self._tab.selection.changed.disconnect(self._on_selection)
        self._tab = tab
        if tab is not None:
            from widgets.view.shape_labels import shown_type

            self.model.type_of = lambda sid, name, t=tab: shown_type(t, sid, name)
        else:
            self.model.type_of = None
        self._seen.attach()
        self.model.set_document(tab.doc if tab is not None else None)
        if tab is not None:
            tab.selection.changed.connect(self._on_selection)
            if not self.model.stale:
                # open the main graph's sections so the tree is useful at a glance
                self._opened()

    def _label_path(self, proxy_index: QModelIndex) -> tuple[str, ...]:
        labels = []
        while proxy_index.isValid():
            labels.append(proxy_index.data())
            proxy_index = proxy_index.parent()
        return tuple(reversed(labels))

    def _remember_expanded(self) -> None:
        paths = []
        stack = [QModelIndex()]
        while stack:
            parent = stack.pop()
            for row in range(self.proxy.rowCount(parent)):
                index = self.proxy.index(row, 0, parent)
                if self.tree.isExpanded(index):
                    paths.append(self._label_path(index))
                    stack.append(index)
        self._expanded_paths = paths

    def _restore_expanded(self) -> None:
        for path in self._expanded_paths:
            parent = QModelIndex()
            for label in path:
                match = next((self.proxy.index(r, 0, parent) for r in range(self.proxy.rowCount(parent))
                              if self.proxy.index(r, 0, parent).data() == label), None)
                if match is None:
                    break
                parent = match
            else:
                self.tree.expand(parent)
        self._expanded_paths = []

    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        if text:
            self.tree.expandAll()

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing or self._tab is None:
            return
        target = self.model.target(self.proxy.mapToSource(current))
        if target is not None:
            self._tab.selection.select([target], SOURCE)

    def _on_selection(self, source: str) -> None:
        if source == SOURCE or self._tab is None:
            return
        current = self._tab.selection.current
        index = self.model.index_for(current) if current is not None else QModelIndex()
        proxy_index = self.proxy.mapFromSource(index)
        self._syncing = True
        try:
            sel = self.tree.selectionModel()
            if proxy_index.isValid():
                sel.setCurrentIndex(proxy_index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                    | QItemSelectionModel.SelectionFlag.Rows)
                self.tree.scrollTo(proxy_index)
            else:
                sel.clearSelection()
        finally:
            self._syncing = False

    def select_index(self, index: QModelIndex) -> None:
        """Select a source-model index as a click would (tests, keyboard)."""
        self.tree.setCurrentIndex(self.proxy.mapFromSource(index))
