"""The Cost panel: MACs, parameters and memory per node, a heat map of them on the canvas.

The figures are :func:`editor.cost.model_cost` (the same as ``onnx-studio info --cost``):
formulas in the model's dynamic dims, evaluated with the values typed in the dims field
(``batch=1 height=640``); a dim left out is shown as its formula in the totals and counts
as :data:`editor.cost.SAMPLE_DIM` when the table is sorted. Clicking a row selects the node;
"Heat map" colours the canvas boxes by the chosen measure (collapsed groups sum their
nodes). The cost is recomputed after edits, coalesced, only while the panel is on screen
(not behind another dock's tab) or its heat map is shown, on a worker thread over a
snapshot of the model's structure (weights left out), together with every row's evaluated
cells, so a 10,000-node model never stalls the window; the table then changes only the rows
whose figures changed (a node rename: its row alone, without a recomputation).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from html import escape

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QRunnable, Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QSizePolicy,
                               QTableView, QVBoxLayout, QWidget)

from editor.cost import SAMPLE_DIM
from editor.shapes import evaluate, to_text
from editor.shapes import symbolic as S
from widgets.common.formatting import human_bytes, human_count
from widgets.common.seen import SeenWatch, is_seen
from widgets.overlays.heatmap import HeatMap, fmt_us
from widgets.common.selection import Target
from widgets.overlays.layer import untick

SOURCE = "cost"
#: NOTE: imports at module level: PySide6 wraps ``__import__``, so an import statement inside
#: ``data()`` cost more than the lookup it guarded (180,000 calls per edit, measured)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

COLUMNS = ("Node", "Op", "MACs", "Params", "Weights", "Output", "Time", "MAC/s")
#: heat-map measure -> (NodeCost field, label formatter)
MEASURES = {
    "MACs": ("macs", lambda v: human_count(int(v))),
    "Parameters": ("params", lambda v: human_count(int(v))),
    "Output memory": ("output_bytes", lambda v: human_bytes(int(v))),
}


def _text(value, values: dict[str, int], unit: str = "") -> str:
    if value is None:
        return "?"
    number = evaluate(value, values)
    if number is None:
        return to_text(value)
    return human_bytes(number) if unit == "bytes" else human_count(number)


def scope_of(name: str, depth: int) -> str:
    """The first ``depth`` parts of a node's name scope (``/model/layers.3/attn/MatMul`` at
    depth 2: ``/model/layers.3/``); names without scopes are their own group."""
    parts = name.strip("/").split("/")[:-1]
    if not parts:
        return "(top level)"
    return "/" + "/".join(parts[:depth]) + "/"


@dataclass
class GroupRow:
    """The sum of a name scope's nodes, shown like a node row."""

    name: str
    op_type: str
    indices: list[int]
    macs: object = 0
    params: int = 0
    weight_bytes: int = 0
    output_bytes: object = 0
    unknown: str | None = None
    index: int = -1


def group_rows(nodes: list, depth: int) -> list[GroupRow]:
    groups: dict[str, GroupRow] = {}
    for n in nodes:
        key = scope_of(n.name, depth)
        g = groups.get(key)
        if g is None:
            g = groups[key] = GroupRow(key, "", [])
        g.indices.append(n.index)
        g.macs = None if g.macs is None or n.macs is None else S.add(g.macs, n.macs)
        g.output_bytes = None if g.output_bytes is None or n.output_bytes is None else S.add(g.output_bytes,
                                                                                             n.output_bytes)
        g.params += n.params
        g.weight_bytes += n.weight_bytes
        if n.macs is None:
            g.unknown = f"{n.name}: {n.unknown}"
    for g in groups.values():
        g.op_type = f"{len(g.indices)} nodes"
    return list(groups.values())


@dataclass(frozen=True, slots=True)
class Cells:
    """What a row shows, evaluated once for the panel's dims: the texts and sort keys of
    columns 0-5, the tool tip, and the MACs at :data:`SAMPLE_DIM` (for MAC/s)."""

    texts: tuple[str, ...]
    keys: tuple
    tips: tuple[str | None, ...]
    macs: int | None


def _signature(n) -> tuple:
    """Everything a row's cells are made of (the cells cache key, dims aside)."""
    return (n.name, n.op_type, n.macs, n.params, n.weight_bytes, n.output_bytes, n.unknown)


def row_cells(n, dims: dict[str, int]) -> Cells:
    values = (n.name, n.op_type, n.macs, n.params, n.weight_bytes, n.output_bytes)
    texts = (n.name, n.op_type) + tuple(_text(v, dims, "bytes" if col >= 4 else "")
                                        for col, v in enumerate(values[2:], start=2))
    keys: list = [n.name, n.op_type]
    for v in values[2:]:
        number = evaluate(v, dims, SAMPLE_DIM)
        keys.append(-1 if number is None else number)
    if n.unknown:
        tips = (f"unknown: {n.unknown}",) * len(values)
    else:
        tips = (None, None) + tuple(None if v is None or isinstance(v, int) else to_text(v) for v in values[2:])
    return Cells(texts, tuple(keys), tips, evaluate(n.macs, dims, SAMPLE_DIM))


@dataclass
class CostTable:
    """The rows of the table for one cost, dims and grouping, with their cells (computed
    off the GUI thread: evaluating the formulas of 10,000 rows takes seconds there)."""

    rows: list
    cells: list[Cells]
    dims: dict[str, int]
    depth: int
    #: row signature -> cells, for the next table at the same dims
    cache: dict


def cost_table(cost, dims: dict[str, int], depth: int, cache: dict | None = None) -> CostTable:
    """Rows (folded constant chains left out; name scopes summed at ``depth`` > 0) and their
    cells; ``cache`` holds cells of an earlier table at the same dims (rows that did not
    change are not evaluated again)."""
    rows = [n for n in cost.nodes if not n.folded] if cost is not None else []
    if depth:
        rows = group_rows(rows, depth)
    cache = cache or {}
    fresh: dict = {}
    cells = []
    for n in rows:
        sig = _signature(n)
        c = cache.get(sig)
        if c is None:
            c = row_cells(n, dims)
        fresh[sig] = c
        cells.append(c)
    return CostTable(rows, cells, dict(dims), depth, fresh)


def _row_key(n) -> tuple:
    """A row's identity across tables: the node (its place in the graph and its op) or the
    name scope. A rename keeps it (the row changes); a node added or removed does not."""
    return ("g", n.name) if isinstance(n, GroupRow) else (n.index, n.op_type)


class CostModel(QAbstractTableModel):
    """Rows: the main graph's nodes (folded constant chains left out), or their name scopes
    summed (``depth`` > 0), in the order the table is sorted by (the model sorts itself).

    NOTE: a new table for the same rows changes only the rows whose figures changed
    (``dataChanged``), or moves them (``layoutChanged``) when the sort order changed; only
    a different set of rows resets the model. Every cell is evaluated before it gets here
    (:class:`Cells`): ``data()`` only looks up. A reset of 15,000 rows through a sorting
    proxy used to call ``data()`` ~15,000 times per edit, each evaluating formulas."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list = []
        self.cells: list[Cells] = []
        self.dims: dict[str, int] = {}
        #: measured microseconds by node index in the main graph (a profiled run), if any
        self.times: dict[int, float] = {}
        self.depth = 0
        self._sort_column = 2
        self._sort_order = Qt.SortOrder.DescendingOrder
        #: row signature -> cells at ``dims`` (handed to the next table's computation)
        self.cache: dict = {}
        #: node index in the main graph -> row (per-node rows)
        self._row_of: dict[int, int] = {}

    # -- filling ---------------------------------------------------------------------------
    def set_table(self, table: CostTable) -> None:
        """Show a table: changed rows only when it has the rows shown now (see the class)."""
        self.depth = table.depth
        order = self._sorted(range(len(table.rows)), table.cells, table.rows)
        rows = [table.rows[k] for k in order]
        cells = [table.cells[k] for k in order]
        old_keys = [_row_key(n) for n in self.rows]
        new_keys = [_row_key(n) for n in rows]
        self.dims, self.cache = table.dims, table.cache
        if old_keys == new_keys:
            changed = [r for r in range(len(rows)) if cells[r] != self.cells[r] or rows[r] is not self.rows[r]]
            self._set_rows(rows, cells)
            self._emit_changed(changed)
        elif sorted(old_keys) == sorted(new_keys):
            self._relayout(rows, cells)
        else:
            self.beginResetModel()
            self._set_rows(rows, cells)
            self.endResetModel()

    def _set_rows(self, rows: list, cells: list[Cells]) -> None:
        self.rows, self.cells = rows, cells
        self._row_of = {n.index: r for r, n in enumerate(rows) if not isinstance(n, GroupRow)}

    def set_times(self, times: dict[int, float]) -> None:
        if times != self.times:
            self.times = times
            if self.rows:
                self.dataChanged.emit(self.index(0, 6), self.index(len(self.rows) - 1, 7))

    def rename_nodes(self, names: dict[int, str]) -> None:
        """Nodes renamed (node index in the main graph -> new name): their rows' first cell,
        nothing else (per-node rows; grouped rows need a new table)."""
        changed = []
        for index, name in names.items():
            r = self._row_of.get(index)
            n = self.rows[r] if r is not None else None
            if n is not None and name != n.name:
                self.rows[r] = n = replace(n, name=name)
                old = self.cells[r]
                cells = replace(old, texts=(name,) + old.texts[1:], keys=(name,) + old.keys[1:])
                self.cells[r] = cells
                self.cache[_signature(n)] = cells
                changed.append(r)
        self._emit_changed(sorted(changed))

    def _emit_changed(self, rows: list[int]) -> None:
        """dataChanged over each run of consecutive changed rows."""
        last = len(COLUMNS) - 1
        start = prev = None
        for r in rows + [None]:
            if r is not None and prev is not None and r == prev + 1:
                prev = r
                continue
            if start is not None:
                self.dataChanged.emit(self.index(start, 0), self.index(prev, last))
            start = prev = r

    # -- sorting ---------------------------------------------------------------------------
    def _sorted(self, positions, cells: list[Cells], rows: list) -> list[int]:
        col, reverse = self._sort_column, self._sort_order == Qt.SortOrder.DescendingOrder
        if col >= 6:
            keys = [self._measured(rows[k], cells[k], col) for k in positions]
            keys = [-1.0 if v is None else v for v in keys]
            return sorted(positions, key=lambda k: keys[k], reverse=reverse)
        return sorted(positions, key=lambda k: cells[k].keys[col], reverse=reverse)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:  # noqa: N802 - Qt API
        self._sort_column, self._sort_order = column, order
        order_ = self._sorted(range(len(self.rows)), self.cells, self.rows)
        self._relayout([self.rows[k] for k in order_], [self.cells[k] for k in order_])

    def _relayout(self, rows: list, cells: list[Cells]) -> None:
        """The same rows in another order; persistent indexes (selection, current) follow."""
        self.layoutAboutToBeChanged.emit()
        where = {_row_key(n): r for r, n in enumerate(rows)}
        old = self.persistentIndexList()
        new = [self.index(where.get(_row_key(self.rows[i.row()]), -1), i.column())
               if 0 <= i.row() < len(self.rows) else QModelIndex() for i in old]
        self._set_rows(rows, cells)
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # -- reading ---------------------------------------------------------------------------
    def _measured(self, n, cells: Cells, col: int) -> float | None:
        """Time (µs) or achieved MACs per second of node ``n``, from the last profile."""
        indices = n.indices if isinstance(n, GroupRow) else [n.index]
        timed = [self.times[i] for i in indices if i in self.times]
        if not timed:
            return None
        us = sum(timed)
        if col == 6:
            return us
        macs = cells.macs
        return None if not macs or us <= 0 else macs / (us * 1e-6)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 - Qt API
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        row = index.row()
        if not index.isValid() or row >= len(self.rows):
            return None
        cells = self.cells[row]
        col = index.column()
        if col >= 6:
            measured = self._measured(self.rows[row], cells, col)
            if role == Qt.ItemDataRole.DisplayRole:
                if measured is None:
                    return ""
                return fmt_us(measured) if col == 6 else human_count(int(measured))
            if role == Qt.ItemDataRole.UserRole:
                return -1.0 if measured is None else measured
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return _RIGHT
            if role == Qt.ItemDataRole.ToolTipRole and col == 7:
                return "MACs per second this node achieved in the last profiled run: low values are nodes " \
                       "running far below the machine's arithmetic rate"
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return cells.texts[col]
        if role == Qt.ItemDataRole.UserRole:  # sort key
            return cells.keys[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return cells.tips[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return _RIGHT
        return None


class CostHeatMap(HeatMap):
    """The profile heat map's overlay, fed with a cost measure instead of times."""

    def __init__(self, tab, fmt) -> None:
        self.fmt = fmt
        super().__init__(tab)


class _Signals(QObject):
    done = Signal(int, object, object, str)


class _CostJob(QRunnable):
    """Computes the cost of a snapshot (or takes ``cost`` as it is) and the table's cells."""

    def __init__(self, generation: int, snapshot, dims: dict[str, int], depth: int, cache: dict | None,
                 cost=None) -> None:
        super().__init__()
        self.generation, self.snapshot, self.dims, self.depth, self.cache = generation, snapshot, dims, depth, cache
        self.cost = cost
        self.signals = _Signals()

    def run(self) -> None:
        from editor.cost import model_cost

        try:
            cost = self.cost if self.cost is not None else model_cost(self.snapshot, self.dims)
            table, error = cost_table(cost, self.dims, self.depth, self.cache), ""
        except Exception as exc:  # noqa: BLE001 - a panel that cannot compute shows why, never a traceback
            cost, table, error = None, None, f"{type(exc).__name__}: {exc}"
        try:
            self.signals.done.emit(self.generation, cost, table, error)
        except RuntimeError:  # the window closed while the job ran (quitting): no one to tell
            pass


class CostPanel(QWidget):
    """See the module docstring. Whole-model work (the cost, the cells of every row) runs on
    a worker thread, coalesced behind the edits and only once the tab's first picture is on
    screen; a node rename only renames its row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tab = None
        self.cost = None
        self.heatmap: CostHeatMap | None = None
        #: each tab's dims text (tabs are weakly held: a closed tab's text goes with it)
        self._dims_by_tab: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.totals = QLabel(self)
        self.totals.setWordWrap(True)
        self.totals.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # a long symbolic formula is one unbreakable word: it must not set the dock's (and
        # the window's) minimum width; the whole text is on hover
        self.totals.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.dims_edit = QLineEdit(self)
        self.dims_edit.setPlaceholderText("dims, e.g. batch=1 height=640")
        self.dims_edit.setToolTip("Values of the model's named dims (NAME=VALUE, space or comma separated)")
        self.dims_edit.editingFinished.connect(self.refresh)
        self.heat = QCheckBox("Heat map", self)
        self.measure = QComboBox(self)
        self.measure.addItems(list(MEASURES))
        self.grouping = QComboBox(self)
        self.grouping.addItems(["Per node", "Scope depth 1", "Scope depth 2", "Scope depth 3", "Scope depth 4"])
        self.grouping.setToolTip("Sum the nodes of each name scope (/model/layers.3/...)")
        self.grouping.currentIndexChanged.connect(self._regroup)
        self.heat.toggled.connect(self._update_heatmap)
        self.measure.currentIndexChanged.connect(self._update_heatmap)
        self.model = CostModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.clicked.connect(self._select_row)
        # two rows: in one, the controls alone made the dock (and so the window) wider
        # than a 1,280-pixel screen allows
        top = QHBoxLayout()
        top.addWidget(self.grouping)
        top.addWidget(self.heat)
        top.addWidget(self.measure)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.totals)
        layout.addWidget(self.dims_edit)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self.refresh)
        self._stale = True
        self._profiles: dict[int, dict[int, float]] = {}
        self._generation = 0
        #: a result of the latest request is still to come (a rename then waits for it)
        self._computing = False
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        #: the tab whose first picture the panel waits for (whole-model work comes after it)
        self._waiting = None
        # a dock tabbed behind another stays isVisible(): the figures are made when seen
        self._seen = SeenWatch(self, self._on_seen)

    # -- wiring ----------------------------------------------------------------------------
    def set_tab(self, tab) -> None:
        if self._tab is not None:
            self._tab.doc.changed.disconnect(self._on_changed)
            self._dims_by_tab[self._tab] = self.dims_edit.text()
        if self._waiting is not None:
            self._waiting.ready.disconnect(self._on_tab_ready)
            self._waiting = None
        if self.heatmap is not None:
            self.heatmap.set_visible(False)
            self.heatmap = None
        self._tab = tab
        # the dims are the tab's own: the field kept the previous model's text
        self.dims_edit.setText(self._dims_by_tab.get(tab, "") if tab is not None else "")
        if tab is not None:
            tab.doc.changed.connect(self._on_changed)
            if not tab.is_ready:
                tab.ready.connect(self._on_tab_ready)
                self._waiting = tab
        self._seen.attach()
        self._stale = True
        if self._wanted():
            self.refresh()

    def _wanted(self) -> bool:
        """The figures are needed now: the panel is on screen, or its heat map is over the
        canvas (it follows the edits whichever tab is in front of the panel)."""
        return is_seen(self) or (self.heatmap is not None and self.heatmap.visible)

    def _on_tab_ready(self) -> None:
        if self._waiting is not None:
            self._waiting.ready.disconnect(self._on_tab_ready)
            self._waiting = None
        if self._stale and self._wanted():
            self._timer.start(0)

    def _on_seen(self) -> None:
        if self._stale:
            self._timer.start(0)

    def _on_changed(self, changes) -> None:
        if not self._stale and not self._computing and self.cost is not None and self.model.depth == 0 \
                and changes.only_node_fields(("name", "doc_string")):
            self._rename(changes.nodes_changed)
            return
        self._stale = True
        if self._wanted():
            self._timer.start()

    def _rename(self, node_ids) -> None:
        """Nodes renamed: their rows, and the names in :attr:`cost` (figures do not change)."""
        index = self._tab.doc.index
        main = index.scopes[index.main]
        names = {}
        for nid in node_ids:
            if index.node_scope.get(nid) == index.main:
                names[main.position(nid)] = index.nodes[nid].name
        if not names:
            return
        nodes = list(self.cost.nodes)  # one per main-graph node, in graph order
        for i, name in names.items():
            nodes[i] = replace(nodes[i], name=name)
        self.cost = replace(self.cost, nodes=nodes)
        self.model.rename_nodes(names)

    def dims(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for item in self.dims_edit.text().replace(",", " ").split():
            name, sep, value = item.partition("=")
            if sep and name and value.strip().lstrip("-").isdigit() and int(value) >= 0:
                out[name.strip()] = int(value)
        return out

    def set_profile(self, tab, node_times: dict[int, float]) -> None:
        """Measured times of the last profiled run of ``tab`` (node id -> µs), shown beside
        the predicted MACs (node ids are stable across edits; a node added since has none)."""
        self._profiles[id(tab)] = dict(node_times)
        if tab is self._tab:
            self._apply_profile()

    def _apply_profile(self) -> None:
        tab = self._tab
        entry = self._profiles.get(id(tab)) if tab is not None else None
        if entry is None or self.cost is None:
            self.model.set_times({})
            return
        ids = tab.doc.index.scopes[tab.doc.index.main].node_ids
        index_of = {nid: k for k, nid in enumerate(ids)}
        self.model.set_times({index_of[nid]: us for nid, us in entry.items() if nid in index_of})

    # -- work ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute on a worker thread over a snapshot of the document (the user may go on
        editing); a result that a newer request superseded is dropped. Before the tab's
        first picture is on screen the work waits for it (``ready``)."""
        self._timer.stop()
        self._generation += 1
        self._computing = False
        if self._tab is None:
            self._stale = False
            self.cost = None
            self.model.set_table(cost_table(None, {}, self.model.depth))
            self.totals.setText("")
            return
        if not self._tab.is_ready:
            self._stale = True
            return
        self._stale = False
        from editor.shapes.engine import structure_snapshot

        self._start(_CostJob(self._generation, structure_snapshot(self._tab.doc.model), self.dims(), self.model.depth,
                             self._cache_for(self.dims())))

    def _cache_for(self, dims: dict[str, int]) -> dict | None:
        return self.model.cache if dims == self.model.dims else None

    def _start(self, job: _CostJob) -> None:
        job.signals.done.connect(self._on_done)
        self._computing = True
        self._pool.start(job)

    def computing(self) -> bool:
        """A computation is due or running (its table is still to come)."""
        return self._computing or self._timer.isActive()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until pending computations finish (tests, shutdown)."""
        return self._pool.waitForDone(msecs)

    def _on_done(self, generation: int, cost, table, error: str) -> None:
        if generation != self._generation or self._tab is None:
            return
        self._computing = False
        if error:
            self.cost = None
            self.model.set_table(cost_table(None, {}, self.model.depth))
            self.totals.setText(f"<b>Cost unavailable:</b> {escape(error)}")
            return
        self.cost = cost
        self.model.set_table(table)
        self._apply_profile()
        self.totals.setText(self._totals_html(table.dims))
        self.totals.setToolTip(self.totals.text())
        self._update_heatmap()

    def _totals_html(self, dims: dict[str, int]) -> str:
        c = self.cost

        def show(value, unit: str = "") -> str:
            if value is None:
                return "unknown"
            number = evaluate(value, dims)
            if number is None:
                return to_text(value)
            return human_bytes(number) if unit == "bytes" else human_count(number)

        rows = [f"<b>MACs</b> {show(c.macs)}" + (f" ({c.unknown_nodes} unknown)" if c.unknown_nodes else ""),
                f"<b>Params</b> {human_count(c.params)}", f"<b>Weights</b> {human_bytes(c.weight_bytes)}",
                f"<b>Peak activations</b> {show(c.peak_activation_bytes, 'bytes')}"]
        free = [d for d in c.free_dims if d not in dims]
        text = " &nbsp; ".join(rows)
        if free:
            text += f"<br><i>in terms of {', '.join(free)}: give values above</i>"
        return text

    def _regroup(self, depth: int) -> None:
        """Per node or per name scope: the same cost, a new table (on the worker)."""
        self.model.depth = depth
        if self.cost is None:
            return
        self._generation += 1
        dims = self.model.dims
        self._start(_CostJob(self._generation, None, dims, depth, self._cache_for(dims), cost=self.cost))

    def _select_row(self, index) -> None:
        tab = self._tab
        if tab is None or not index.isValid():
            return
        node = self.model.rows[index.row()]
        main = tab.doc.index.main
        ids = tab.doc.index.scopes[main].node_ids
        indices = node.indices if isinstance(node, GroupRow) else [node.index]
        tab.selection.select([Target.of_node(main, ids[i]) for i in indices if i < len(ids)], SOURCE)

    def _update_heatmap(self) -> None:
        tab = self._tab
        on = self.heat.isChecked() and tab is not None and self.cost is not None
        if not on:
            if self.heatmap is not None:
                self.heatmap.set_visible(False)
            return
        field, fmt = MEASURES[self.measure.currentText()]
        if self.heatmap is None:
            self.heatmap = CostHeatMap(tab, fmt)
            self.heatmap.on_cleared = lambda: untick(self.heat)
        self.heatmap.fmt = fmt
        self.heatmap.title = f"Cost: {self.measure.currentText()}"
        main = tab.doc.index.main
        ids = tab.doc.index.scopes[main].node_ids
        dims = self.dims()
        amounts = {}
        for n in self.cost.nodes:
            value = evaluate(getattr(n, field), dims, SAMPLE_DIM)
            if value:
                amounts[ids[n.index]] = float(value)
        self.heatmap.set_visible(True)
        self.heatmap.set_node_times(amounts)
