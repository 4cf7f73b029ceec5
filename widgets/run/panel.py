"""``RunPanel``: the contents of the Run dock.

A toolbar (Run, Profile, Cancel, what to capture, a busy bar and a status line), then the
inputs and options on the left and the results on the right: the values table with the
histogram / image / grid of the chosen value and export buttons, the profile table, and a
line that says which backend ran and why others were passed over. Failures (a crash of the
worker, a time limit, a refused model) show in a banner, never in a modal dialog: the run
happened in another process and the editor is fine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from editor.errors import StudioError
from widgets.common.status_line import MessageBanner, Part, StatusLine
from widgets.run.controller import RunController, describe_failure
from widgets.overlays.heatmap import fmt_us
from widgets.run.models import NAME_ROLE, SORT_ROLE, ProfileModel, ResultsModel
from widgets.run.options import RunOptionsPanel
from widgets.run.views import ValueDetail

BACKEND_NAMES = {"ort": "onnxruntime", "reference": "reference evaluator"}
BANNER_ERROR = ("QLabel { background: rgba(214, 69, 65, 0.12); border: 1px solid rgba(214, 69, 65, 0.55);"
                " border-radius: 4px; padding: 6px; }")
BANNER_INFO = ("QLabel { background: rgba(70, 130, 220, 0.10); border: 1px solid rgba(70, 130, 220, 0.45);"
               " border-radius: 4px; padding: 6px; }")


def _sortable(model, parent) -> QSortFilterProxyModel:
    proxy = QSortFilterProxyModel(parent)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    return proxy


def _table(parent) -> QTableView:
    view = QTableView(parent)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setSortingEnabled(True)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(22)
    view.horizontalHeader().setHighlightSections(False)
    view.horizontalHeader().setStretchLastSection(True)
    return view


class RunPanel(QWidget):
    """See module docstring. ``controller`` is the current tab's :class:`RunController`."""

    runRequested = Signal(bool)  # profile?
    cancelRequested = Signal()
    captureRequested = Signal()
    heatMapToggled = Signal(bool)
    profileNodeActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller: RunController | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 4, 6, 6)
        outer.setSpacing(4)
        outer.addLayout(self._build_toolbar())
        outer.addWidget(self.status)
        # plain text: a message quotes names and errors as they are (an HTML-escaped
        # message once showed `&#x27;` literally); wrapped, never wider than the dock
        self.banner = MessageBanner(self, title="Run")
        self.banner.hide()
        outer.addWidget(self.banner)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setChildrenCollapsible(False)
        left = QTabWidget(split)
        left.setDocumentMode(True)
        left.setMinimumWidth(200)
        self.inputs_stack = QStackedWidget(left)
        self.no_model = QLabel("Open a model to run it.", self.inputs_stack)
        self.no_model.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.inputs_stack.addWidget(self.no_model)
        left.addTab(self.inputs_stack, "Inputs")
        self.options = RunOptionsPanel(left)
        options_scroll = QScrollArea(left)
        options_scroll.setWidgetResizable(True)
        options_scroll.setFrameShape(QFrame.Shape.NoFrame)
        options_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        options_scroll.setWidget(self.options)
        left.addTab(options_scroll, "Options")
        self.options_page = options_scroll
        self.left_tabs = left
        self.capture_box.addWidget(self.options.capture)
        split.addWidget(left)
        split.addWidget(self._build_results(split))
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([320, 900])
        self._outer_split = split
        self._sized = False
        outer.addWidget(split, 1)
        self.set_busy(False)
        self.set_controller(None)

    # -- construction -------------------------------------------------------------------------
    def _build_toolbar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.run_button = QPushButton("▶  Run", self)
        self.run_button.setToolTip("Run the model with these inputs (F5)")
        self.run_button.setDefault(True)
        self.profile_button = QPushButton("Profile", self)
        self.profile_button.setToolTip("Run with onnxruntime profiling: per-node times (Ctrl+F5)")
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop the run (Shift+F5)")
        self.run_button.clicked.connect(lambda: self.runRequested.emit(False))
        self.profile_button.clicked.connect(lambda: self.runRequested.emit(True))
        self.cancel_button.clicked.connect(self.cancelRequested)
        for b in (self.run_button, self.profile_button, self.cancel_button):
            bar.addWidget(b)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Capture", self))
        self.capture_box = QHBoxLayout()
        bar.addLayout(self.capture_box)
        bar.addSpacing(12)
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setFixedWidth(110)
        self.busy.setMaximumHeight(12)
        bar.addWidget(self.busy)
        bar.addStretch(1)
        # the status has a row of its own: beside the buttons it had 120 pixels at 1,280
        self.status = StatusLine(self, title="Run status")
        return bar

    def _build_results(self, parent) -> QWidget:
        tabs = QTabWidget(parent)
        tabs.setDocumentMode(True)
        self.results_tabs = tabs
        # values
        values = QWidget(tabs)
        vbox = QVBoxLayout(values)
        vbox.setContentsMargins(0, 4, 0, 0)
        self.results_model = ResultsModel(self)
        self.results_proxy = _sortable(self.results_model, self)
        self.results_view = _table(values)
        self.results_view.setModel(self.results_proxy)
        # NOTE: columns are fitted once per result (show_result), not in ResizeToContents
        # mode: that mode measures again on every layout change, thousands of data() calls
        # for an "every value" result whenever the busy bar appears
        header = self.results_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setResizeContentsPrecision(100)
        header.setStretchLastSection(False)
        self.results_view.selectionModel().currentRowChanged.connect(self._on_result_row)
        split = QSplitter(Qt.Orientation.Horizontal, values)
        split.setChildrenCollapsible(False)
        left = QWidget(split)
        lbox = QVBoxLayout(left)
        lbox.setContentsMargins(0, 0, 0, 0)
        lbox.addWidget(self.results_view, 1)
        row = QHBoxLayout()
        # short texts (the whole on hover): the row must fit a dock at 1,280 x 800
        self.export_npy_button = QPushButton(".npy…", left)
        self.export_npy_button.setToolTip("Export the selected value as a .npy file")
        self.export_npz_button = QPushButton("All .npz…", left)
        self.export_npz_button.setToolTip("Export every captured value into one .npz file")
        self.export_npy_button.clicked.connect(self._export_npy_dialog)
        self.export_npz_button.clicked.connect(self._export_npz_dialog)
        self.capture_button = QPushButton("Capture && Run", left)
        self.capture_button.setToolTip("Run again with the values selected on the canvas captured")
        self.capture_button.clicked.connect(self.captureRequested)
        self.capture_button.hide()
        row.addWidget(self.export_npy_button)
        row.addWidget(self.export_npz_button)
        row.addStretch(1)
        row.addWidget(self.capture_button)
        lbox.addLayout(row)
        self.detail = ValueDetail(split)
        # explicit minimums override the children's size hints: the table gets the room
        self.detail.setMinimumWidth(150)
        left.setMinimumWidth(190)
        split.addWidget(left)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self._values_split = split
        vbox.addWidget(split, 1)
        tabs.addTab(values, "Values")
        # profile
        prof = QWidget(tabs)
        pbox = QVBoxLayout(prof)
        pbox.setContentsMargins(0, 4, 0, 0)
        prow = QHBoxLayout()
        self.heatmap_check = QCheckBox("Heat map on the canvas", prof)
        self.heatmap_check.setChecked(True)
        self.heatmap_check.toggled.connect(self.heatMapToggled)
        self.profile_summary = QLabel(prof)
        self.profile_summary.setStyleSheet("color: palette(placeholder-text);")
        prow.addWidget(self.heatmap_check)
        prow.addStretch(1)
        prow.addWidget(self.profile_summary)
        pbox.addLayout(prow)
        self.profile_model = ProfileModel(self)
        self.profile_proxy = _sortable(self.profile_model, self)
        self.profile_view = _table(prof)
        self.profile_view.setModel(self.profile_proxy)
        ph = self.profile_view.horizontalHeader()
        ph.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        ph.setResizeContentsPrecision(100)
        ph.setStretchLastSection(False)
        self.profile_view.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.profile_view.doubleClicked.connect(
            lambda index: self.profileNodeActivated.emit(str(index.data(NAME_ROLE))))
        pbox.addWidget(self.profile_view, 1)
        tabs.addTab(prof, "Profile")
        return tabs

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._sized and self.width() > 200:
            # first real size: inputs ~30 %, table ~40 %, value views ~30 %
            self._sized = True
            w = self._outer_split.width()
            left = max(300, int(w * 0.3))
            self._outer_split.setSizes([left, w - left])
            rest = w - left
            self._values_split.setSizes([int(rest * 0.62), rest - int(rest * 0.62)])

    # -- state ---------------------------------------------------------------------------------
    def set_controller(self, controller: RunController | None) -> None:
        self.controller = controller
        if controller is None:
            self.inputs_stack.setCurrentWidget(self.no_model)
        else:
            panel = controller.input_panel
            if self.inputs_stack.indexOf(panel) < 0:
                self.inputs_stack.addWidget(panel)
            self.inputs_stack.setCurrentWidget(panel)
        self.show_result()
        self._update_buttons()

    def forget(self, controller: RunController) -> None:
        """A tab closed: drop its input panel from the stack."""
        panel = controller.input_panel
        if self.inputs_stack.indexOf(panel) >= 0:
            self.inputs_stack.removeWidget(panel)
            panel.setParent(None)
            panel.deleteLater()
        if self.controller is controller:
            self.set_controller(None)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.busy.setVisible(busy)
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.controller is not None
        busy = getattr(self, "_busy", False)
        self.run_button.setEnabled(has and not busy)
        self.profile_button.setEnabled(has and not busy)
        running_here = busy and has and self.controller.running
        self.cancel_button.setEnabled(running_here)

    def show_message(self, text: str, *, error: bool = True) -> None:
        """A banner over the results, plain text (never read as HTML)."""
        self.banner.setStyleSheet(BANNER_ERROR if error else BANNER_INFO)
        self.banner.setText(text)
        self.banner.setVisible(bool(text))

    def clear_message(self) -> None:
        self.banner.hide()
        self.banner.setText("")

    def set_status(self, parts) -> None:  # noqa: ANN001
        """The status line: a string, or parts with tones (see :class:`StatusLine`)."""
        self.status.set_parts(parts)

    # -- results ---------------------------------------------------------------------------------
    def show_result(self) -> None:
        """Show the current controller's last result (or nothing)."""
        c = self.controller
        result = c.last_result if c is not None else None
        ok = result is not None and result.ok
        self.results_model.set_records(result.outputs.values() if ok else [])
        self.profile_model.set_times(result.profile if ok else None)
        self.set_status(self.summary_parts() if c is not None else "")
        self.export_npy_button.setEnabled(ok)
        self.export_npz_button.setEnabled(ok)
        if ok and result.profile:
            total = sum(t.microseconds for t in result.profile.values())
            mapped = len(c.profile_by_node_id())
            self.profile_summary.setText(f"{len(result.profile)} kernels · {fmt_us(total)} in kernels · "
                                         f"{mapped} on the canvas")
        else:
            self.profile_summary.setText("Press Profile to time every node." if c is not None else "")
        self._fit_columns(self.results_view, first=200)
        self._fit_columns(self.profile_view, first=320)
        if self.results_model.rowCount():
            self.results_view.selectRow(0)
        else:
            self.detail.set_value(None, None)

    @staticmethod
    def _fit_columns(view: QTableView, *, first: int) -> None:
        """Fit the columns to the (first rows of the) data once; the name column is capped."""
        model = view.model()
        if model is None or not model.rowCount():
            return
        view.resizeColumnsToContents()
        header = view.horizontalHeader()
        header.resizeSection(0, min(max(header.sectionSize(0), 120), first))

    def summary_parts(self) -> list[Part]:
        """Which backend ran, how long it took, and why other backends were passed over."""
        c = self.controller
        result = c.last_result if c is not None else None
        if result is None:
            return [Part("No run yet", "muted")]
        if not result.ok:
            return [Part(result.status, "error")]
        name = BACKEND_NAMES.get(result.backend or "", result.backend or "?")
        parts = [Part(f"Ran on {name}", "strong")]
        if result.backend == "ort" and result.detail:
            parts.append(Part(result.detail.replace("ExecutionProvider", "")))
        if result.run_seconds is not None:
            parts.append(Part(f"{result.run_seconds * 1000:.1f} ms"))
        if result.profile:
            parts.append(Part("profiled"))
        failure = getattr(c, "last_failure", None)
        if failure is not None:
            parts.insert(0, Part(f"last run {failure.status}; values of the run before:", "error"))
        skipped = [a for a in result.attempts if a.status != "ran"]
        if skipped:
            parts.append(Part("; ".join(f"{BACKEND_NAMES.get(a.backend, a.backend)} {a.status}: {a.reason}"
                                        for a in skipped), "warning"))
        if result.missing:
            parts.append(Part(f"{len(result.missing)} value(s) not produced"))
        parts += [Part(line, "warning") for line in self.truth_lines()]
        if c.stale:
            parts.append(Part("model edited since", "note"))
        return parts

    def truth_lines(self) -> list[str]:
        """What the last result contradicts: output shapes against the declared ones, and
        onnxruntime's own warnings (shown beside the result, never swallowed)."""
        from editor.validation.declared import run_shape_notes

        c = self.controller
        result = c.last_result if c is not None else None
        if result is None or not result.ok:
            return []
        shapes = {n: tuple(r.value.shape) for n, r in result.outputs.items() if hasattr(r.value, "shape")}
        notes = run_shape_notes(c.doc.model, c.last_feed_shapes, shapes)
        return [f"{name}: shape contradicts the model: {note}" for name, note in notes.items()] + [
            f"onnxruntime warning: {w}" for w in result.warnings]

    def _on_result_row(self, current, _previous) -> None:
        if not current.isValid():
            self.detail.set_value(None, None)
            return
        name = current.data(NAME_ROLE)
        row = self.results_model.row_of(name)
        record = self.results_model.record(row) if row >= 0 else None
        self.detail.set_value(name, record.value if record is not None else None)

    def select_value(self, name: str) -> bool:
        """Select the row of ``name``; False if the last run did not capture it."""
        row = self.results_model.row_of(name)
        if row < 0:
            return False
        proxy_index = self.results_proxy.mapFromSource(self.results_model.index(row, 0))
        self.results_view.selectRow(proxy_index.row())
        self.results_view.scrollTo(proxy_index)
        return True

    def current_value_name(self) -> str | None:
        index = self.results_view.currentIndex()
        return index.data(NAME_ROLE) if index.isValid() else None

    # -- export -----------------------------------------------------------------------------------
    def export_npy(self, name: str, path: str | Path) -> Path:
        record = self.controller.record(name) if self.controller is not None else None
        if record is None or not isinstance(record.value, np.ndarray):
            raise StudioError(f"no tensor named {name!r} in the last run")
        path = Path(path)
        np.save(path, record.value, allow_pickle=record.value.dtype.kind == "O")
        return path

    def export_npz(self, path: str | Path) -> Path:
        c = self.controller
        if c is None or c.last_result is None or not c.last_result.ok:
            raise StudioError("no run results to export")
        arrays = {n: r.value for n, r in c.last_result.outputs.items() if isinstance(r.value, np.ndarray)}
        path = Path(path)
        np.savez(path, **arrays)
        return path

    def _export_npy_dialog(self) -> None:
        name = self.current_value_name()
        if name is None:
            return
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip("_") or "value"
        path, _ = QFileDialog.getSaveFileName(self, f"Export {name}", f"{safe}.npy", "NumPy array (*.npy)")
        if path:
            try:
                self.export_npy(name, path)
            except (StudioError, OSError) as exc:
                self.show_message(f"Cannot export {name!r}: {exc}")

    def _export_npz_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export all values", "outputs.npz", "NumPy archive (*.npz)")
        if path:
            try:
                self.export_npz(path)
            except (StudioError, OSError) as exc:
                self.show_message(f"Cannot export: {exc}")

    # -- failures -----------------------------------------------------------------------------------
    def show_failure(self, result) -> None:
        self.show_message(describe_failure(result), error=result.status != "cancelled")


