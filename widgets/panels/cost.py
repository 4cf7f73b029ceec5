"""The Cost panel: MACs, parameters and memory per node, a heat map of them on the canvas.

The figures are :func:`editor.cost.model_cost` (the same as ``onnx-studio info --cost``):
formulas in the model's dynamic dims, evaluated with the values typed in the dims field
(``batch=1 height=640``); a dim left out is shown as its formula in the totals and counts
as :data:`editor.cost.SAMPLE_DIM` when the table is sorted. Clicking a row selects the node;
"Heat map" colours the canvas boxes by the chosen measure (collapsed groups sum their
nodes). The cost is recomputed after edits, coalesced, only while the panel is shown, on a
worker thread over a snapshot of the model's structure (weights left out), so a 10,000-node
model never stalls the window.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QObject, QRunnable, QSortFilterProxyModel, Qt, QThreadPool,
                            QTimer, Signal)
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QSizePolicy,
                               QTableView, QVBoxLayout, QWidget)

from widgets.common.formatting import human_bytes, human_count
from widgets.run.heatmap import HeatMap, fmt_us
from widgets.common.selection import Target
from widgets.overlays.layer import untick

SOURCE = "cost"

COLUMNS = ("Node", "Op", "MACs", "Params", "Weights", "Output", "Time", "MAC/s")
#: heat-map measure -> (NodeCost field, label formatter)
MEASURES = {
    "MACs": ("macs", lambda v: human_count(int(v))),
    "Parameters": ("params", lambda v: human_count(int(v))),
    "Output memory": ("output_bytes", lambda v: human_bytes(int(v))),
}


def _text(value, values: dict[str, int], unit: str = "") -> str:
    from editor.shapes import evaluate, to_text

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
    from editor.shapes import symbolic as S

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


class CostModel(QAbstractTableModel):
    """Rows: the main graph's nodes (folded constant chains left out), or their name scopes
    summed (``depth`` > 0)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list = []
        self.dims: dict[str, int] = {}
        #: measured microseconds by node index in the main graph (a profiled run), if any
        self.times: dict[int, float] = {}
        self.depth = 0

    def set_cost(self, cost, dims: dict[str, int], times: dict[int, float] | None = None) -> None:
        self.beginResetModel()
        self.rows = [n for n in cost.nodes if not n.folded] if cost is not None else []
        if self.depth:
            self.rows = group_rows(self.rows, self.depth)
        self.dims = dims
        self.times = times or {}
        self.endResetModel()

    def _measured(self, n, col: int) -> float | None:
        """Time (µs) or achieved MACs per second of node ``n``, from the last profile."""
        from editor.cost import SAMPLE_DIM
        from editor.shapes import evaluate

        indices = n.indices if isinstance(n, GroupRow) else [n.index]
        timed = [self.times[i] for i in indices if i in self.times]
        if not timed:
            return None
        us = sum(timed)
        if col == 6:
            return us
        macs = evaluate(n.macs, self.dims, SAMPLE_DIM)
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
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        from editor.cost import SAMPLE_DIM
        from editor.shapes import evaluate

        n = self.rows[index.row()]
        col = index.column()
        if col >= 6:
            measured = self._measured(n, col)
            if role == Qt.ItemDataRole.DisplayRole:
                if measured is None:
                    return ""
                return fmt_us(measured) if col == 6 else human_count(int(measured))
            if role == Qt.ItemDataRole.UserRole:
                return -1.0 if measured is None else measured
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if role == Qt.ItemDataRole.ToolTipRole and col == 7:
                return "MACs per second this node achieved in the last profiled run: low values are nodes " \
                       "running far below the machine's arithmetic rate"
            return None
        value = (n.name, n.op_type, n.macs, n.params, n.weight_bytes, n.output_bytes)[col]
        if role == Qt.ItemDataRole.DisplayRole:
            if col < 2:
                return value
            return _text(value, self.dims, "bytes" if col >= 4 else "")
        if role == Qt.ItemDataRole.UserRole:  # sort key
            if col < 2:
                return value
            number = evaluate(value, self.dims, SAMPLE_DIM)
            return -1 if number is None else number
        if role == Qt.ItemDataRole.ToolTipRole:
            if n.unknown:
                return f"unknown: {n.unknown}"
            if col >= 2 and value is not None and not isinstance(value, int):
                from editor.shapes import to_text

                return to_text(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class CostHeatMap(HeatMap):
    """The profile heat map's overlay, fed with a cost measure instead of times."""

    def __init__(self, tab, fmt) -> None:
        self.fmt = fmt
        super().__init__(tab)


class _Signals(QObject):
    done = Signal(int, object, object, str)


class _CostJob(QRunnable):
    def __init__(self, generation: int, snapshot, dims: dict[str, int]) -> None:
        super().__init__()
        self.generation, self.snapshot, self.dims = generation, snapshot, dims
        self.signals = _Signals()

    def run(self) -> None:
        from editor.cost import model_cost

        try:
            cost, error = model_cost(self.snapshot, self.dims), ""
        except Exception as exc:  # noqa: BLE001 - a panel that cannot compute shows why, never a traceback
            cost, error = None, f"{type(exc).__name__}: {exc}"
        self.signals.done.emit(self.generation, cost, self.dims, error)


class CostPanel(QWidget):
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
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView(self)
        self.table.setModel(self.proxy)
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
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)

    # -- wiring ----------------------------------------------------------------------------
    def set_tab(self, tab) -> None:
        if self._tab is not None:
            self._tab.doc.changed.disconnect(self._on_changed)
            self._dims_by_tab[self._tab] = self.dims_edit.text()
        if self.heatmap is not None:
            self.heatmap.set_visible(False)
            self.heatmap = None
        self._tab = tab
        # the dims are the tab's own: the field kept the previous model's text
        self.dims_edit.setText(self._dims_by_tab.get(tab, "") if tab is not None else "")
        if tab is not None:
            tab.doc.changed.connect(self._on_changed)
        self._stale = True
        if self.isVisible():
            self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._stale:
            self._timer.start(0)

    def _on_changed(self, _changes) -> None:
        self._stale = True
        if self.isVisible():
            self._timer.start()

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
            self.model.set_cost(self.cost, self.model.dims, {})
            return
        ids = tab.doc.index.scopes[tab.doc.index.main].node_ids
        index_of = {nid: k for k, nid in enumerate(ids)}
        times = {index_of[nid]: us for nid, us in entry.items() if nid in index_of}
        self.model.set_cost(self.cost, self.model.dims, times)

    # -- work ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute on a worker thread over a snapshot of the document (the user may go on
        editing); a result that a newer request superseded is dropped."""
        self._timer.stop()
        self._stale = False
        self._generation += 1
        if self._tab is None:
            self.cost = None
            self.model.set_cost(None, {})
            self.totals.setText("")
            return
        from editor.shapes.engine import structure_snapshot

        job = _CostJob(self._generation, structure_snapshot(self._tab.doc.model), self.dims())
        job.signals.done.connect(self._on_done)
        self._pool.start(job)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until pending computations finish (tests, shutdown)."""
        return self._pool.waitForDone(msecs)

    def _on_done(self, generation: int, cost, dims: dict, error: str) -> None:
        if generation != self._generation or self._tab is None:
            return
        if error:
            self.cost = None
            self.model.set_cost(None, {})
            self.totals.setText(f"<b>Cost unavailable:</b> {escape(error)}")
            return
        self.cost = cost
        self.model.set_cost(self.cost, dims)
        self._apply_profile()
        self.totals.setText(self._totals_html(dims))
        self.totals.setToolTip(self.totals.text())
        self._update_heatmap()

    def _totals_html(self, dims: dict[str, int]) -> str:
        from editor.shapes import evaluate, to_text

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
        self.model.depth = depth
        self._apply_profile()

    def _select_row(self, index) -> None:
        tab = self._tab
        if tab is None or not index.isValid():
            return
        row = self.proxy.mapToSource(index).row()
        node = self.model.rows[row]
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
        from editor.cost import SAMPLE_DIM
        from editor.shapes import evaluate

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
