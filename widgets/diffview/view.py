"""``DiffView``: one tab holding two models side by side (or stacked), coloured by their
diff, moving together, with the changes to walk through.

A is on the left (top when stacked), B on the right (bottom). Each pane draws its own
model with its own layout (:mod:`widgets.diffview.pane`); the colours, the pairs and the
list of changes come from :class:`editor.diff.display.DiffDisplay`, computed on the same
two documents the panes show (no id translation). Opening runs in the background
(:mod:`widgets.diffview.task`, then both layouts) with progress and Cancel.

Above the panes: previous / next change (F8 / Shift+F8, registry actions
``diff.previous_change`` / ``diff.next_change``), "3 of 17", Linked (pan and zoom follow
through matched nodes), Stacked, Errors (the compare heat map of a Compare Runs result
in both panes) and the legend. Below: the change on show, A's value beside B's.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from editor.diff.display import DiffDisplay
from editor.diff.side_by_side import Side, SideBySide
from widgets.common.elided_label import ElidedLabel
from widgets.common.status_line import MessageLabel
from widgets.diffview.details import ChangeDetails
from widgets.diffview.legend import Legend
from widgets.diffview.pane import DiffPane
from widgets.diffview.sync import PaneSync
from widgets.diffview.task import DiffViewTask, TaskRelay

__all__ = ["DiffView"]


class DiffView(QWidget):
    """See module docstring. Made by :func:`widgets.diffview.open_diff_view`."""

    #: both panes are laid out and coloured
    ready = Signal()
    #: the diff could not be made (the message)
    failed = Signal(str)
    #: the change on show changed (its index, -1 for none)
    stopChanged = Signal(int)
    #: the user asked to close (Cancel while opening)
    closeRequested = Signal()

    def __init__(self, a: Side, b: Side, *, dark: bool = False, show_names: bool = False, options=None,  # noqa: ANN001
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side_a, self.side_b = a, b
        self._dark, self._show_names, self._options = dark, show_names, options
        self.result: SideBySide | None = None
        self.display: DiffDisplay | None = None
        self.panes: dict[str, DiffPane] = {}
        self.sync: PaneSync | None = None
        self.current = -1
        self._is_ready = False
        self._closed = False
        #: where the Errors switch gets a Compare Runs result (set by the window)
        self.comparison_source = lambda: None
        self._relay = TaskRelay(self)
        self._relay.progress.connect(self._on_progress)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self.task: DiffViewTask | None = None
        self._build_busy_page()
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.busy_page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)

    # -- identity -----------------------------------------------------------------------------
    def title(self) -> str:
        return f"{self.side_a.name} ↔ {self.side_b.name}"

    @property
    def is_ready(self) -> bool:
        return self._is_ready

    # -- opening ------------------------------------------------------------------------------
    def _build_busy_page(self) -> None:
        page = QWidget(self)
        self.busy_label = MessageLabel(f"Comparing {self.side_a.name} with {self.side_b.name}…", page)
        self.progress = QProgressBar(page)
        self.progress.setRange(0, 100)
        self.cancel_button = QPushButton("Cancel", page)
        self.cancel_button.clicked.connect(self.cancel)
        box = QVBoxLayout(page)
        box.addStretch(1)
        box.addWidget(self.busy_label, 0, Qt.AlignmentFlag.AlignHCenter)
        box.addWidget(self.progress)
        box.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignHCenter)
        box.addStretch(2)
        box.setContentsMargins(80, 20, 80, 20)
        self.busy_page = page

    def start(self) -> None:
        """Open and diff both sides in the background; ``ready`` when both are drawn."""
        self.task = DiffViewTask(self.side_a, self.side_b, self._relay)
        self.task.start()

    def cancel(self) -> None:
        """Stop opening: the work is dropped and the tab asks to close."""
        if self.task is not None:
            self.task.cancel()
        self.closeRequested.emit()

    def _on_progress(self, what: str, fraction: float) -> None:
        self.busy_label.setText(what)
        self.progress.setValue(int(fraction * 60))  # the two layouts take the rest

    def _on_failed(self, error) -> None:  # noqa: ANN001
        message = getattr(error, "message", str(error)).splitlines()[0]
        self.busy_label.setText(f"Cannot compare: {message}")
        self.progress.hide()
        self.cancel_button.setText("Close")
        self.failed.emit(message)

    def _on_done(self, result: SideBySide) -> None:
        if self._closed:
            result.close()
            return
        self.result = result
        self.display = result.display
        self.busy_label.setText("Laying out both models…")
        self.panes = {
            "a": DiffPane("a", result.doc_a, self.side_a.name, dark=self._dark, show_names=self._show_names,
                          options=self._options, owns_store=result.owned[0], parent=self),
            "b": DiffPane("b", result.doc_b, self.side_b.name, dark=self._dark, show_names=self._show_names,
                          options=self._options, owns_store=result.owned[1], parent=self),
        }
        self._laid = {"a": 0.0, "b": 0.0}
        for side, pane in self.panes.items():
            pane.tab.progress.connect(lambda f, s=side: self._on_layout_progress(s, f))
            pane.tab.ready.connect(self._on_pane_ready)
            pane.tab.layoutFailed.connect(lambda msg: self._on_failed(RuntimeError(f"layout failed: {msg}")))
        self._build_content()

    def _on_layout_progress(self, side: str, fraction: float) -> None:
        self._laid[side] = fraction
        self.progress.setValue(60 + int(20 * (self._laid["a"] + self._laid["b"])))

    def _on_pane_ready(self) -> None:
        if self._is_ready or not all(p.tab.is_ready for p in self.panes.values()):
            return
        display = self.display
        for side, pane in self.panes.items():
            pane.colours.set_statuses(display.status_a if side == "a" else display.status_b,
                                      display.io_a if side == "a" else display.io_b)
            pane.colours.set_visible(True)
        self._refresh_counts()
        self.stack.setCurrentWidget(self.content)
        self._is_ready = True
        self.ready.emit()

    # -- the content --------------------------------------------------------------------------
    def _build_content(self) -> None:
        page = QWidget(self)
        self.prev_button = QToolButton(page)
        self.next_button = QToolButton(page)
        self.position = QLabel("", page)
        self.linked = QCheckBox("Linked", page)
        self.linked.setChecked(True)
        self.linked.setToolTip("Panning and zooming one side moves the other through matched nodes")
        self.linked.toggled.connect(self.set_linked)
        self.stacked = QCheckBox("Stacked", page)
        self.stacked.setToolTip("A above B instead of A left of B")
        self.stacked.toggled.connect(self.set_stacked)
        self.errors = QCheckBox("Errors", page)
        self.errors.setToolTip("Colour both sides by the error of Compare Runs (Run ▸ Compare Runs) on "
                               "matched tensors instead of by the diff")
        self.errors.toggled.connect(self.show_errors)
        self.legend = Legend(page)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 0)
        bar.addWidget(self.prev_button)
        bar.addWidget(self.next_button)
        bar.addWidget(self.position)
        bar.addSpacing(12)
        bar.addWidget(self.linked)
        bar.addWidget(self.stacked)
        bar.addWidget(self.errors)
        bar.addStretch(1)
        bar.addWidget(self.legend)
        self.summary = ElidedLabel("", page, mode=Qt.TextElideMode.ElideRight)
        self.errors_note = ElidedLabel("", page, mode=Qt.TextElideMode.ElideRight)
        self.errors_note.hide()
        self.split = QSplitter(Qt.Orientation.Horizontal, page)
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.panes["a"])
        self.split.addWidget(self.panes["b"])
        self.details = ChangeDetails(page)
        self.outer = QSplitter(Qt.Orientation.Vertical, page)
        self.outer.addWidget(self.split)
        self.outer.addWidget(self.details)
        self.outer.setStretchFactor(0, 5)
        self.outer.setStretchFactor(1, 1)
        # the panes get the room; the change's rows need a few lines (the splitter moves)
        self.outer.setSizes([max(200, self.height() - 170), 170])
        box = QVBoxLayout(page)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addLayout(bar)
        box.addWidget(self.summary)
        box.addWidget(self.errors_note)
        box.addWidget(self.outer, 1)
        self.content = page
        self.stack.addWidget(page)
        self.sync = PaneSync(self.panes["a"], self.panes["b"], self.display, self)
        self.sync.nodesSelected.connect(self._on_nodes_selected)
        self.summary.setText(self._summary_line())
        self.summary.setToolTip("\n".join(self.display.notes + self.display.summary[:60]))
        self._update_position()

    def _summary_line(self) -> str:
        """The changes in a line: how many stops of each kind, then the notes."""
        kinds: dict[str, int] = {}
        for stop in self.display.stops:
            kinds[stop.kind] = kinds.get(stop.kind, 0) + 1
        n = len(self.display.stops)
        head = f"{n} change{'s' if n != 1 else ''}" + (
            ": " + ", ".join(f"{v} {k}" for k, v in kinds.items()) if kinds else " — the models are the same")
        rewrites = self.result.diff.rewrite_counts() if self.result is not None else {}
        parts = [head] + [f"{c} × {t}" if c > 1 else t for t, c in list(rewrites.items())[:3]] + self.display.notes
        return " · ".join(parts)

    def set_actions(self, previous, following) -> None:  # noqa: ANN001
        """Buttons for the registry's previous / next change actions (one action, two places)."""
        if self.panes:
            self.prev_button.setDefaultAction(previous)
            self.next_button.setDefaultAction(following)

    def _refresh_counts(self) -> None:
        counts = self.display.counts()
        self.legend.set_counts(counts, dark=self._dark)
        for side, pane in self.panes.items():
            n = len(self.display.status_a if side == "a" else self.display.status_b)
            pane.set_heading(f"{n} nodes")

    # -- navigation -----------------------------------------------------------------------------
    @property
    def stops(self) -> list:
        return self.display.stops if self.display is not None else []

    def next_change(self) -> None:
        if self.stops:
            self.go_to((self.current + 1) % len(self.stops))

    def previous_change(self) -> None:
        if self.stops:
            self.go_to((self.current - 1) % len(self.stops) if self.current >= 0 else len(self.stops) - 1)

    def go_to(self, k: int) -> None:
        """Show change ``k``: its nodes selected and centred in both panes, its details below."""
        if not self._is_ready or not 0 <= k < len(self.stops):
            return
        self.current = k
        stop = self.stops[k]
        for side in ("a", "b"):
            ids = list(stop.a if side == "a" else stop.b)
            names = stop.io_a if side == "a" else stop.io_b
            self.sync.select(side, ids, names)
        if not stop.a and not stop.io_a and stop.b:
            self._follow_later("b")  # nothing of A: A shows where B's change sits
        elif not stop.b and not stop.io_b and stop.a:
            self._follow_later("a")
        self._show_stop()
        self.stopChanged.emit(k)

    def _follow_later(self, side: str) -> None:
        """Let the other pane follow ``side`` once its reveal (maybe a re-layout) is drawn."""
        controller = self.panes[side].tab.canvas.controller

        def once() -> None:
            controller.laidOut.disconnect(once)
            self.sync.follow(side)

        self.sync.follow(side)
        controller.laidOut.connect(once)
        QTimer.singleShot(400, lambda: _disconnect(controller.laidOut, once))

    def _on_nodes_selected(self, side: str, ids: list[int]) -> None:
        """A click in a pane: the change that node belongs to becomes the current one."""
        k = next((self.display.stop_of(side, n) for n in ids if self.display.stop_of(side, n) is not None), None)
        self.current = -1 if k is None else k
        self._show_stop()
        self.stopChanged.emit(self.current)

    def _show_stop(self) -> None:
        stop = self.stops[self.current] if 0 <= self.current < len(self.stops) else None
        position = self._update_position()
        self.details.show_stop(stop, position, self.panes["a"].doc, self.panes["b"].doc)

    def _update_position(self) -> str:
        n = len(self.stops)
        text = (f"{self.current + 1} of {n}" if self.current >= 0 else f"{n} change{'s' if n != 1 else ''}") if n \
            else "no changes"
        self.position.setText(text)
        return text if self.current >= 0 else ""

    # -- options --------------------------------------------------------------------------------
    def set_linked(self, on: bool) -> None:
        if self.sync is not None:
            self.sync.linked = bool(on)
        if self.linked.isChecked() != bool(on):
            self.linked.setChecked(bool(on))

    def set_stacked(self, on: bool) -> None:
        self.split.setOrientation(Qt.Orientation.Vertical if on else Qt.Orientation.Horizontal)
        if self.stacked.isChecked() != bool(on):
            self.stacked.setChecked(bool(on))

    def show_errors(self, on: bool) -> int:
        """Colour both panes by the latest Compare Runs result (``comparison_source()``) on
        matched tensors instead of by the diff; the number of nodes coloured (0: nothing of
        the comparison names a node of these two models, and the diff colours stay)."""
        comparison = self.comparison_source() if on else None
        cells = 0
        if comparison is not None:
            cells = sum(pane.show_errors(comparison) for pane in self.panes.values())
        if not cells:
            for pane in self.panes.values():
                pane.show_errors(None)
        if on and not cells:
            self.errors_note.setText("No Compare Runs result for these models: Run ▸ Compare Runs first"
                                     if comparison is None else "The last Compare Runs compared other models")
            self.errors_note.show()
            self.errors.blockSignals(True)
            self.errors.setChecked(False)
            self.errors.blockSignals(False)
        else:
            self.errors_note.hide()
        return cells

    def set_dark(self, dark: bool) -> None:
        self._dark = dark
        for pane in self.panes.values():
            pane.tab.set_dark(dark)
            pane.colours._rebuild()
        if self.display is not None and self.panes:
            self._refresh_counts()

    def set_show_names(self, on: bool) -> None:
        for pane in self.panes.values():
            pane.tab.set_show_names(on)

    # -- closing ----------------------------------------------------------------------------------
    def close_view(self) -> None:
        """Stop background work and release what this view opened."""
        if self._closed:
            return
        self._closed = True
        if self.task is not None:
            self.task.cancel()
        if self.sync is not None:
            self.sync.stop()
        for pane in self.panes.values():
            pane.close_pane()


def _disconnect(signal, slot) -> None:  # noqa: ANN001
    try:
        signal.disconnect(slot)
    except (RuntimeError, TypeError):
        pass
