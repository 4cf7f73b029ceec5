"""The Quantization dock: the proof of the last quantization, its sensitivity ranking as a
sortable table and a heat map on the canvas, and re-quantize in one step.

A quantization runs off the GUI thread (:class:`~widgets.editing.background.BackgroundEdit`
with a :class:`~widgets.editing.background.JobControl`: the progress dialog shows each
calibration set, Cancel stops the calibration at the next set) and lands as one undoable
command (:class:`~editor.passes.apply.ApplyModel`, the whole model replaced). The dock keeps
the :class:`~editor.quantize.session.QuantizeSession` (the prepared float model, the
calibration cache, the float outputs): ticking rows of the table (nodes) or naming op types
and pressing **Re-quantize** quantizes the float model again with those kept in float, one
more undo step, without calibrating again. A re-quantize is refused when the model changed
since the quantization it would replace (it would drop those edits).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import onnx
from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from editor.quantize.options import QuantizeOptions
from editor.quantize.session import Outcome, QuantizeSession
from widgets.common.selection import Target
from widgets.editing.background import BackgroundEdit, JobControl
from widgets.editing.common import run_command, show_refusal
from widgets.quantize.dialog import CalibrationChoice
from widgets.overlays.layer import clear_when_closed, untick
from widgets.quantize.heatmap import SensitivityHeatMap
from widgets.quantize.table import NODE_ROLE, SORT_ROLE, SensitivityModel

__all__ = ["QuantizeDock"]

SOURCE = "quantize"


def _alive(tab) -> bool:  # noqa: ANN001
    try:
        return tab is not None and tab.doc is not None and tab.canvas is not None
    except RuntimeError:  # the tab's C++ side is gone
        return False


class QuantizeDock(QDockWidget):
    """See module docstring. ``outcome``: the last applied result; ``pending``: the worker
    thread of a running job (tests wait on it)."""

    def __init__(self, window) -> None:  # noqa: ANN001
        super().__init__("Quantization", window)
        self.setObjectName("quantization")
        self.window_ = window
        self.session: QuantizeSession | None = None
        self.options: QuantizeOptions | None = None
        self.outcome: Outcome | None = None
        self.tab = None
        self.heatmap: SensitivityHeatMap | None = None
        self.pending = None
        self._applied = None  # the command that put the current quantized model in
        self._job: BackgroundEdit | None = None
        self._build()
        window.destroyed.connect(lambda *_a: self._close_session())
        clear_when_closed(self, lambda: [self.heatmap] if self.heatmap is not None else [])

    def _build(self) -> None:
        body = QWidget(self)
        self.summary = QLabel("Quantize a model from Surgery ▸ Quantize… to see its proof and its most "
                              "sensitive nodes here.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(110)
        self.details.hide()
        self.show_details = QPushButton("Details")
        self.show_details.setCheckable(True)
        self.show_details.toggled.connect(self.details.setVisible)
        self.model = SensitivityModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)  # compact rows
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.keep_ops = QLineEdit()
        self.keep_ops.setPlaceholderText("op types kept in float, e.g. Softmax")
        self.requantize_button = QPushButton("Re-quantize")
        self.requantize_button.setToolTip("Quantize the float model again with the ticked nodes and the named op "
                                          "types kept in float (no new calibration): one undo step")
        self.requantize_button.clicked.connect(self.requantize)
        self.show_heat = QCheckBox("Heat map")
        self.show_heat.setChecked(True)
        self.show_heat.setToolTip("Colour the canvas boxes by the error each quantized node adds")
        self.show_heat.toggled.connect(self._on_heat_toggled)
        self.compare_button = QPushButton("Compare Runs…")
        self.compare_button.setToolTip("Open the fp32 vs quantized comparison behind the ranking, tensor by tensor")
        self.compare_button.clicked.connect(self.open_comparison)
        self.model.keepChanged.connect(self._update_buttons)
        self.keep_ops.textChanged.connect(self._update_buttons)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.show_details)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Keep op types:"))
        controls.addWidget(self.keep_ops, 1)
        controls.addWidget(self.requantize_button)
        controls.addWidget(self.show_heat)
        controls.addWidget(self.compare_button)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.details)
        lay.addWidget(self.table, 1)
        lay.addLayout(controls)
        self.setWidget(body)
        self._update_buttons()

    # -- running -----------------------------------------------------------------------------
    def start(self, tab, options: QuantizeOptions, choice: CalibrationChoice, *, auto: float | None = None,  # noqa: ANN001
              metric: str = "cosine") -> None:
        """Quantize ``tab``'s model off the GUI thread and apply it as one command."""
        from editor.quantize.sources import load_calibration

        doc = tab.doc
        model = onnx.ModelProto()
        model.CopyFrom(doc.model)  # the worker reads a copy: the document may change meanwhile
        sets = [self._run_dock_inputs(tab)] if choice.kind == "run" else None
        if choice.kind == "run" and sets == [None]:
            return
        control = JobControl()
        store = doc.store

        def work() -> tuple[QuantizeSession, Outcome]:
            control.report(None, "reading the calibration data")
            data = load_calibration(model, path=choice.path if choice.kind == "folder" else None,
                                    random=choice.count if choice.kind == "random" else None, sets=sets,
                                    source="the Run dock's inputs", held_back=choice.held_back, image=choice.image)
            session = QuantizeSession(model, data, store=store, progress=control.report,
                                      cancel=control.cancelled.is_set)
            try:
                return session, session.run(options, auto=auto, metric=metric, sensitivity=True)
            except BaseException:
                session.close()
                raise

        def apply(result: tuple[QuantizeSession, Outcome]) -> None:
            session, outcome = result
            if not run_command(self.window_, doc, self._command(outcome, "Quantize")):
                session.close()
                return
            self._close_session()
            # re-quantizing starts from what --auto chose (its calibration method, the tensors it
            # put at 16 bits); the nodes it kept in float come back as ticks (_adopt)
            chosen = outcome.quantized.options
            self.session = session
            self.options = replace(chosen, exclude_nodes=options.exclude_nodes, exclude_ops=options.exclude_ops)
            self._adopt(tab, outcome)

        self._run(doc, work, apply, control, "Quantize", "Quantizing…", discard=lambda result: result[0].close())

    def requantize(self) -> None:
        """Quantize the float model again with the ticked nodes and named op types in float."""
        session, tab = self.session, self.tab
        if session is None or self.options is None or not _alive(tab):
            show_refusal(self.window_, "nothing to re-quantize: quantize a model first (Surgery ▸ Quantize…)")
            return
        doc = tab.doc
        stack = doc.stack
        if not (stack.index >= 1 and stack.commands[stack.index - 1] is self._applied):
            show_refusal(self.window_, "the model changed since it was quantized: re-quantizing would drop those "
                                       "edits (undo back to the quantization, or quantize again)")
            return
        ops = [t.strip() for t in self.keep_ops.text().split(",") if t.strip()]
        options = self.options.excluding(sorted(self.model.keep), ops)
        control = JobControl()
        session.progress, session.cancel = control.report, control.cancelled.is_set
        kept = len(set(options.exclude_nodes)) + len(options.exclude_ops)

        def work() -> Outcome:
            return session.run(options, sensitivity=True)

        def apply(outcome: Outcome) -> None:
            if run_command(self.window_, doc, self._command(outcome, f"Re-quantize ({kept} kept in float)")):
                self.options = options
                self._adopt(tab, outcome)

        self._run(doc, work, apply, control, "Re-quantize", "Quantizing again (calibration already measured)…")

    def _run(self, doc, work, apply, control: JobControl, title: str, label: str, discard=None) -> None:  # noqa: ANN001
        self._job = BackgroundEdit(self.window_, doc, work, apply, title=title, label=label, name="quantize",
                                   stale="the model changed while it was being quantized: quantize again",
                                   poll_ms=50, control=control, discard=discard)
        self._job.finished.connect(self._update_buttons)
        self.pending = self._job.thread
        self._update_buttons()

    def _command(self, outcome: Outcome, what: str):  # noqa: ANN202
        from editor.passes.apply import ApplyModel

        return ApplyModel(outcome.quantized.model, f"{what}: {outcome.quantized.options.describe()}")

    def _run_dock_inputs(self, tab) -> dict[str, Any] | None:  # noqa: ANN001
        from editor.errors import StudioError

        try:
            return self.window_.run_dock.controller_for(tab).input_panel.feeds()
        except StudioError as exc:
            show_refusal(self.window_, f"the Run dock's inputs: {exc.message}")
            return None

    # -- showing ------------------------------------------------------------------------------
    def _adopt(self, tab, outcome: Outcome) -> None:  # noqa: ANN001
        doc = tab.doc
        self._applied = doc.stack.commands[doc.stack.index - 1]
        self.outcome = outcome
        if self.heatmap is not None and self.heatmap.tab is not tab:
            self.heatmap.set_visible(False)
            self.heatmap = None
        self.tab = tab
        self.model.set_sensitivity(outcome.sensitivity)
        self.model.set_keep(set(outcome.quantized.excluded) & {r.node for r in outcome.sensitivity.rows}
                            if outcome.sensitivity else set())
        self.summary.setText(_summary(outcome))
        self.details.setPlainText("\n".join(outcome.lines(top=15)))
        if self.heatmap is None:
            self.heatmap = SensitivityHeatMap(tab)
            self.heatmap.on_cleared = lambda: untick(self.show_heat)
        self.heatmap.set_sensitivity(outcome.sensitivity)
        self.heatmap.set_visible(self.show_heat.isChecked())
        self.window_.statusBar().showMessage(_summary(outcome), 15000)
        self._update_buttons()
        self.show()
        self.raise_()

    def _on_heat_toggled(self, on: bool) -> None:
        if self.heatmap is not None and _alive(self.heatmap.tab):
            self.heatmap.set_visible(on)

    def _on_row(self, current, _previous) -> None:  # noqa: ANN001
        if not current.isValid() or not _alive(self.tab):
            return
        name = self.proxy.data(current, NODE_ROLE)
        doc = self.tab.doc
        main = doc.index.main
        ids = next((found for suffix in ("", "_quant", "_Q4") for found in [doc.find_nodes(name + suffix, main)]
                    if found), [])
        if ids:
            self.tab.selection.select([Target.of_node(main, ids[0])], SOURCE)

    def open_comparison(self) -> None:
        """The fp32 vs quantized comparison the ranking came from, in the Compare Runs dock."""
        dock = getattr(self.window_, "numeric_dock", None)
        if self.outcome is None or self.outcome.sensitivity is None or dock is None:
            return
        comparison = self.outcome.sensitivity.comparison
        if comparison is not None:
            dock.show_comparison(comparison)
            dock.show()
            dock.raise_()

    def _update_buttons(self) -> None:
        running = self.pending is not None and self.pending.is_alive()
        self.requantize_button.setEnabled(self.session is not None and not running)
        self.compare_button.setEnabled(self.outcome is not None and self.outcome.sensitivity is not None)
        kept = len(self.model.keep)
        self.requantize_button.setText(f"Re-quantize ({kept} kept)" if kept else "Re-quantize")

    def _close_session(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


def _summary(outcome: Outcome) -> str:
    """One line: what was done, the checker, the worst output, size and MACs."""
    p = outcome.proof
    worst = min(p.outputs, key=lambda o: (o.cosine if o.cosine is not None else 2.0), default=None)
    cos = f"worst cosine {worst.cosine:.5f} ({worst.name})" if worst is not None and worst.cosine is not None else ""
    share = p.macs.share("int8") if p.macs is not None else None
    macs = f"{100 * share:.0f}% of Conv/MatMul MACs in int8" if share is not None else ""
    check = "checker passes" if p.checker is None else f"CHECKER REFUSES: {p.checker}"
    random = "; RANDOM calibration: a smoke test" if outcome.calibration.random else ""
    kept = f"; {len(outcome.quantized.excluded)} node(s) in float" if outcome.quantized.excluded else ""
    parts = [outcome.quantized.options.describe() + kept, check, cos, f"{p.size_ratio:.2f}x the size", macs]
    return "; ".join(x for x in parts if x) + random
