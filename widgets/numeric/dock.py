"""The Compare dock: two runs side by side, tensor by tensor, drawn on the canvas.

Pick side A (the current tab's model, a backend, an optimization level) and side B (the
same model on another backend or level, another open tab, the model the Diff dock compares
with, or a file), press Run: :func:`editor.debug.compare_runs` runs in the background with
progress and Cancel. The result is a sortable table of tensors, an error heat map on A's
canvas with the first divergence outlined and centred, and, for the row or node clicked,
both values with a histogram of their difference. "Reduce to failing subgraph…" bisects
the model to the smallest subgraph that still shows the failure (the two sides disagree,
NaN, or a crash) and opens it in a new tab, its inputs saved beside it when asked.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import onnx
from PySide6.QtCore import QSortFilterProxyModel, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from editor.debug import (
    BackendDiffCheck,
    Comparison,
    CrashCheck,
    ModelDiffCheck,
    NanCheck,
    ReduceResult,
    RunSpec,
    Tolerance,
    compare_runs,
    reduce_model,
)
from editor.runtime import RunOptions
from widgets.numeric.detail import PairDetail
from widgets.numeric.heatmap import ErrorHeatMap, producer_of
from widgets.overlays.layer import clear_when_closed, untick
from widgets.numeric.table import ROW_ROLE, SORT_ROLE, ErrorTableModel
from widgets.numeric.task import BackgroundTask, TaskRelay
from widgets.common.elided_label import ElidedLabel
from widgets.common.selection import Target
from widgets.common.status_line import Part, StatusLine

__all__ = ["NumericDock"]

SOURCE = "numeric"
#: "auto" is the user allowing a fallback: onnxruntime, else the reference evaluator (the
#: verdict then says which ran); the named ones are pinned, a side that cannot run is no verdict
_BACKENDS = (("onnxruntime", "ort"), ("reference evaluator", "reference"), ("auto (may fall back)", None))
_LEVELS = ("all", "extended", "basic", "disable")
_SAME = "same"


def _alive(obj: Any) -> bool:
    import shiboken6

    return obj is not None and shiboken6.isValid(obj)


def _parse_dims(text: str) -> dict[str, int]:
    dims: dict[str, int] = {}
    for part in text.replace(";", ",").split(","):
        name, sep, value = part.strip().rpartition("=")
        if sep and name.strip() and value.strip().lstrip("-").isdigit():
            dims[name.strip()] = int(value)
    return dims


class NumericDock(QDockWidget):
    """See module docstring."""

    def __init__(self, window) -> None:  # noqa: ANN001
        super().__init__("Compare Runs", window)
        self.setObjectName("numeric_compare")
        self.window_ = window
        self.comparison: Comparison | None = None
        self.tab_a = None
        self.heatmap: ErrorHeatMap | None = None
        self.last_reduction: ReduceResult | None = None
        self._task: BackgroundTask | None = None
        self._tickets = itertools.count(1)
        self._b_file: str | None = None
        self.relay = TaskRelay(self)
        self.relay.progress.connect(self._on_progress)
        self.relay.done.connect(self._on_done)
        self.relay.failed.connect(self._on_failed)
        self._build()
        # the error heat map goes with its dock (it stayed, mixed with the diff colours)
        clear_when_closed(self, lambda: [self.heatmap] if self.heatmap is not None else [])

    # -- construction -------------------------------------------------------------------------
    def _side_widgets(self) -> tuple[QComboBox, QComboBox]:
        backend = QComboBox(self)
        for label, name in _BACKENDS:
            backend.addItem(label, name)
        level = QComboBox(self)
        for lv in _LEVELS:
            level.addItem(f"optimizations: {lv}", lv)
        return backend, level

    def _build(self) -> None:
        body = QWidget(self)
        self.backend_a, self.level_a = self._side_widgets()
        self.backend_b, self.level_b = self._side_widgets()
        self.backend_b.setCurrentIndex(self.backend_b.findData("reference"))  # B defaults to the reference evaluator
        self.model_b = QComboBox(self)
        self.model_b.setMinimumContentsLength(18)
        self.model_b.activated.connect(self._on_model_b_chosen)
        self._b_choice: object = _SAME
        self.model_b.currentIndexChanged.connect(self._on_model_b_changed)
        self.label_a = ElidedLabel("(no model open)")
        self.atol = QLineEdit("1e-4")
        self.rtol = QLineEdit("1e-3")
        self.dims = QLineEdit()
        self.dims.setPlaceholderText("symbolic dims, e.g. batch=1, seq_len=16")
        for edit in (self.atol, self.rtol):
            edit.setMaximumWidth(70)
        self.run_button = QPushButton("Run comparison")
        self.run_button.clicked.connect(self.run_comparison)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.check_kind = QComboBox(self)
        self.check_kind.addItem("the two sides disagree", "diff")
        self.check_kind.addItem("an output has NaN (side A)", "nan")
        self.check_kind.addItem("side A crashes or fails", "crash")
        self.reduce_button = QPushButton("Reduce to failing subgraph…")
        self.reduce_button.clicked.connect(self.reduce)
        self.show_heat = QCheckBox("Error on canvas")
        self.show_heat.setChecked(True)
        self.show_heat.toggled.connect(self._on_heat_toggled)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(120)
        self.progress.hide()
        self.status = StatusLine(self, title="Compare Runs")

        form = QFormLayout()
        row_a = QHBoxLayout()
        row_a.addWidget(self.label_a, 1)
        row_a.addWidget(self.backend_a)
        row_a.addWidget(self.level_a)
        form.addRow("A:", row_a)
        row_b = QHBoxLayout()
        row_b.addWidget(self.model_b, 1)
        row_b.addWidget(self.backend_b)
        row_b.addWidget(self.level_b)
        form.addRow("B:", row_b)
        row_t = QHBoxLayout()
        row_t.addWidget(QLabel("atol"))
        row_t.addWidget(self.atol)
        row_t.addWidget(QLabel("rtol"))
        row_t.addWidget(self.rtol)
        row_t.addWidget(self.dims, 1)
        form.addRow("", row_t)
        # two short rows, not one long one: the dock must fit a 1,280-pixel window beside
        # the side panels (one row asked for 771 pixels)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress)
        buttons.addWidget(self.show_heat)
        buttons.addStretch(1)
        reduce_row = QHBoxLayout()
        reduce_row.addWidget(QLabel("Failure:"))
        reduce_row.addWidget(self.check_kind)
        reduce_row.addWidget(self.reduce_button)
        reduce_row.addStretch(1)

        self.model = ErrorTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView(self)
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.detail = PairDetail(self)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)

        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addLayout(reduce_row)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        self.setWidget(body)
        self.refresh_sides()

    # -- sides ----------------------------------------------------------------------------------
    def _tabs(self) -> list:
        tabs = self.window_.tabs
        return [tabs.widget(i) for i in range(tabs.count()) if hasattr(tabs.widget(i), "doc")]

    def refresh_sides(self) -> None:
        """Fill B's choices: the same model, every other open tab, the Diff dock's other
        model, a file."""
        tab = self.window_.current_tab()
        self.label_a.setText(tab.title() if tab is not None else "(no model open)")
        keep = self.model_b.currentData()
        # rebuilding the list is not the user choosing another B (see _on_model_b_changed)
        blocked = self.model_b.blockSignals(True)
        self.model_b.clear()
        self.model_b.addItem("the same model", _SAME)
        for other in self._tabs():
            if other is not tab:
                self.model_b.addItem(f"tab: {other.title()}", other)
        diff_dock = getattr(self.window_, "compare_dock", None)
        path_b = getattr(diff_dock, "path_b", None)
        if isinstance(path_b, (str, Path)) and str(path_b):
            self.model_b.addItem(f"Diff dock: {Path(path_b).name}", str(path_b))
        if self._b_file:
            self.model_b.addItem(f"file: {Path(self._b_file).name}", self._b_file)
        self.model_b.addItem("Choose file…", "choose")
        index = self.model_b.findData(keep) if keep is not None else -1
        self.model_b.setCurrentIndex(max(index, 0))
        self.model_b.blockSignals(blocked)
        self._on_model_b_changed(self.model_b.currentIndex())

    def default_backend_b(self, choice) -> str | None:  # noqa: ANN001
        """Where B runs by default: the same model on the reference evaluator (another
        implementation of the same ops), another model where A runs (the models differ,
        not the runtimes: an int8 model's contrib ops have no reference implementation)."""
        if choice in (_SAME, None, "choose"):
            return "reference" if self.backend_a.currentData() != "reference" else "ort"
        return self.backend_a.currentData()

    def _on_model_b_changed(self, index: int) -> None:
        choice = self.model_b.itemData(index)
        if choice is None or choice == "choose" or choice is self._b_choice or choice == self._b_choice:
            return
        # NOTE: B's backend follows B's model. Kept as it was, switching B from "the same
        # model" to an int8 file still ran B on the reference evaluator, which failed with
        # "no reference implementation for DynamicQuantizeLSTM" until the user found the combo.
        self._b_choice = choice
        self.backend_b.setCurrentIndex(max(self.backend_b.findData(self.default_backend_b(choice)), 0))

    def _on_model_b_chosen(self, index: int) -> None:
        if self.model_b.itemData(index) != "choose":
            return
        path, _ = QFileDialog.getOpenFileName(self, "Compare with model", "", "ONNX models (*.onnx);;All files (*)")
        if path:
            self._b_file = path
        self.refresh_sides()
        if path:
            self.model_b.setCurrentIndex(self.model_b.findData(path))

    @staticmethod
    def _spec_of_tab(tab, backend: str | None, level: str) -> RunSpec:  # noqa: ANN001
        opts = RunOptions(graph_optimization_level=level)
        if tab.doc.path is not None and not tab.doc.is_modified:
            return RunSpec(str(tab.doc.path), backend, opts)
        model = onnx.ModelProto()
        model.CopyFrom(tab.doc.model)
        return RunSpec(model, backend, opts)

    def specs(self) -> tuple[RunSpec, RunSpec] | None:
        tab = self.window_.current_tab()
        if tab is None:
            return None
        a = self._spec_of_tab(tab, self.backend_a.currentData(), self.level_a.currentData())
        choice = self.model_b.currentData()
        backend_b, level_b = self.backend_b.currentData(), self.level_b.currentData()
        if choice in (_SAME, None, "choose"):
            b = RunSpec(a.model, backend_b, RunOptions(graph_optimization_level=level_b))
        elif isinstance(choice, str):
            b = RunSpec(choice, backend_b, RunOptions(graph_optimization_level=level_b))
        else:
            b = self._spec_of_tab(choice, backend_b, level_b)
        return a, b

    def _tolerance(self) -> Tolerance:
        try:
            return Tolerance(float(self.atol.text()), float(self.rtol.text()))
        except ValueError:
            return Tolerance()

    # -- running ----------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._task is not None

    def _start(self, work, what: str) -> None:  # noqa: ANN001
        if self._task is not None:
            self._task.cancel()
        self._task = BackgroundTask(next(self._tickets), self.relay, work)
        self._kind = what
        self.run_button.setEnabled(False)
        self.reduce_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.show()
        self.status.setText(f"{what}…")
        self._task.start()

    def run_comparison(self) -> None:
        """Compare side A with side B in the background (the result arrives in ``comparison``)."""
        self.refresh_sides() if self.model_b.count() == 0 else None
        specs = self.specs()
        if specs is None:
            self.status.setText("Open a model first.")
            return
        a, b = specs
        if a.model is b.model and a.backend == b.backend and a.options == b.options:
            self.status.setText("Both sides are the same run: pick another backend, optimization level or model for B.")
            return
        self.tab_a = self.window_.current_tab()
        tol, dims = self._tolerance(), _parse_dims(self.dims.text())

        def work(runner, progress, _cancelled):  # noqa: ANN001, ANN202
            return compare_runs(a, b, tolerance=tol, dims=dims, runner=runner, keep_values=True, progress=progress,
                                allow_fallback=a.backend is None or b.backend is None)

        self._start(work, "Comparing")

    def _make_check(self, a: RunSpec, b: RunSpec):  # noqa: ANN202
        kind = self.check_kind.currentData()
        if kind == "nan":
            return NanCheck(a.backend, a.options)
        if kind == "crash":
            return CrashCheck(a.backend or "ort", a.options)
        if b.model is a.model or (not isinstance(b.model, onnx.ModelProto) and not isinstance(a.model, onnx.ModelProto)
                                  and Path(str(b.model)).resolve() == Path(str(a.model)).resolve()):
            return BackendDiffCheck(a.backend or "ort", b.backend or "ort", options_a=a.options, options_b=b.options,
                                    tolerance=self._tolerance())
        return ModelDiffCheck(b.model, backend=a.backend, options=a.options, tolerance=self._tolerance())

    def reduce(self) -> None:
        """Bisect side A to the smallest subgraph that fails the chosen check; the result
        opens in a new tab."""
        specs = self.specs()
        if specs is None:
            self.status.setText("Open a model first.")
            return
        a, b = specs
        check = self._make_check(a, b)
        dims = _parse_dims(self.dims.text())
        model = a.model if isinstance(a.model, onnx.ModelProto) else a.proto()

        def work(runner, progress, cancelled):  # noqa: ANN001, ANN202
            return reduce_model(model, check, runner=runner, dims=dims, progress=progress, cancelled=cancelled)

        self._start(work, "Reducing")

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self.status.setText("Cancelling…")

    def _finish(self) -> None:
        self._task = None
        self.run_button.setEnabled(True)
        self.reduce_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.hide()

    def _on_progress(self, ticket: int, message: str) -> None:
        if self._task is not None and ticket == self._task.ticket:
            self.status.setText(message)

    def _on_failed(self, ticket: int, message: str) -> None:
        if self._task is None or ticket != self._task.ticket:
            return
        self._finish()
        self.status.set_parts([Part(f"{self._kind} stopped: {message}", "error")])

    def _on_done(self, ticket: int, result: object) -> None:
        if self._task is None or ticket != self._task.ticket:
            return
        self._finish()
        if isinstance(result, Comparison):
            self.show_comparison(result)
        elif isinstance(result, ReduceResult):
            self._open_reduction(result)

    # -- showing ----------------------------------------------------------------------------------
    def show_comparison(self, comparison: Comparison) -> None:
        """Table, heat map and first divergence of ``comparison`` (on A's tab)."""
        self.comparison = comparison
        self.model.set_comparison(comparison)
        self.table.resizeColumnsToContents()
        c = comparison.counts()
        fd = comparison.first_divergence
        # the verdict in the core's words (the CLI prints the same lines) first, its evidence
        # after: on hover and in the status line's Details window
        lines = comparison.summary()
        parts = [Part(lines[-1], "strong" if comparison.outputs_ok else "error"),
                 Part(f"{c['tensors']} tensors, {c['tensors'] - c['unmapped']} mapped, "
                      f"{c['differ']} beyond tolerance")]
        if fd is not None:
            parts.append(Part(f"first divergence: {fd.node or fd.a} ({fd.op_type or 'input'})", "warning"))
        rewrites = comparison.mapping.diff.rewrite_counts() if comparison.mapping and comparison.mapping.diff else {}
        if rewrites:
            parts.append(Part("; ".join(f"{n} × {k}" if n > 1 else k for k, n in rewrites.items())))
        self.status.set_parts(parts + [Part(line, "muted") for line in lines[:-1]])
        tab = self.tab_a if _alive(self.tab_a) else None
        if self.heatmap is not None and (tab is None or self.heatmap.tab is not tab):
            self.heatmap.set_visible(False)
            self.heatmap = None
        if tab is not None:
            if self.heatmap is None:
                self.heatmap = ErrorHeatMap(tab)
                self.heatmap.on_cleared = lambda: untick(self.show_heat)
            self.heatmap.set_comparison(comparison)
            self.heatmap.set_visible(self.show_heat.isChecked())
            tab.selection.changed.connect(self._on_canvas_selection, Qt.ConnectionType.UniqueConnection)
        if fd is not None:
            self.select_tensor(fd.a)

    def select_tensor(self, tensor: str) -> None:
        """Select ``tensor``'s row (and so its node on the canvas, centred)."""
        row = self.model.row_of(tensor)
        if row < 0:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        # once the new rows are laid out too (a fresh table has no row heights yet)
        QTimer.singleShot(0, lambda: self.table.scrollTo(self.table.currentIndex(), QAbstractItemView.ScrollHint.PositionAtCenter))

    def _on_row(self, current, _previous) -> None:  # noqa: ANN001
        if not current.isValid() or self.comparison is None:
            self.detail.show_pair(None, None, None)
            return
        row = self.model.row(int(self.proxy.data(current, ROW_ROLE)))
        c = self.comparison
        self.detail.show_pair(row, c.values_a.get(row.a), c.values_b.get(row.b) if row.b else None)
        tab = self.tab_a if _alive(self.tab_a) else None
        if tab is not None and row.node is not None:
            found = producer_of(tab.doc, row.a)  # a node inside an If body too
            if found is not None:
                self._revealing = True
                try:  # the tab reveals (selects and centres) what its selection holds
                    tab.selection.select([Target.of_node(*found)], SOURCE)
                finally:
                    self._revealing = False

    _revealing = False

    def _on_canvas_selection(self, source: str) -> None:
        tab = self.tab_a if _alive(self.tab_a) else None
        if tab is None or self.comparison is None or self._revealing or source == SOURCE:
            return
        current = tab.selection.current
        if current is None or current.kind != "node" or current.node is None or not tab.doc.has_node(current.node):
            return
        for out in tab.doc.node(current.node).output:
            if self.model.row_of(out) >= 0:
                self._revealing = True
                try:
                    self.select_tensor(out)
                finally:
                    self._revealing = False
                return

    def _on_heat_toggled(self, on: bool) -> None:
        if self.heatmap is not None and _alive(self.heatmap.tab):
            self.heatmap.set_visible(on)

    def _open_reduction(self, result: ReduceResult) -> None:
        from editor.runtime.inputs import save_inputs
        from widgets.compare.extract import open_new_document

        self.last_reduction = result
        # the inputs that reproduce the failure are kept beside a copy of the model, so the
        # new tab can be saved and attached to a bug report together with them
        folder = Path(tempfile.mkdtemp(prefix="onnx-studio-reduced-"))
        npz = save_inputs(folder / "reduced_inputs.npz", result.inputs)
        doc = open_new_document(self.window_, result.model)
        # the new tab runs on the inputs that reproduce the failure (its Run dock says so)
        tab = next((t for t in self.window_.tab_list() if t.doc is doc), None)
        if tab is not None:
            self.window_.run_dock.controller_for(tab).input_panel.use_saved(npz)
        self.status.set_parts([
            Part(f"Reduced {result.original_nodes} nodes to {len(result.nodes)}", "strong"),
            Part(f"{', '.join(result.nodes[:4])}{'…' if len(result.nodes) > 4 else ''}"),
            Part(f"{result.runs} runs"), Part(f"inputs: {npz}")])

    def showEvent(self, event) -> None:  # noqa: N802, ANN001
        # opened from View ▸ Panels too: side A names the current tab, never "(no model open)"
        self.refresh_sides()
        super().showEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802, ANN001
        if self._task is not None:
            self._task.cancel()
        super().closeEvent(event)
