"""The problems panel: the live validator's problems of the current tab, and the full
check (``onnx.checker`` + strict shape inference) on demand, merged in when it is done.

Each :class:`~widgets.window.document_tab.DocumentTab` owns its :class:`editor.validation.Validator`
(built and run once on the loader's worker thread, then live: it re-checks what each
command touched). This panel shows the problems of the current tab; clicking one selects
its node or value everywhere. The full check runs in a child process (one shared worker
for the window) so a slow or crashing checker never blocks or kills the editor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.validation.problems import Problem, fold_notes
from widgets.common.elided_label import ElidedLabel
from widgets.common.column_fit import fit_columns
from widgets.common.selection import Target

if TYPE_CHECKING:
    from editor.document import Document

SOURCE = "problems"
TARGET_ROLE = Qt.ItemDataRole.UserRole + 1
_SEVERITY_COLOUR = {"error": QColor(210, 55, 55), "warning": QColor(214, 140, 20), "info": QColor(70, 130, 200)}


class _GuiQueue(QObject):
    """Runs callables on the GUI thread (BackgroundChecker's ``deliver``)."""

    call = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.call.connect(lambda fn: fn(), Qt.ConnectionType.QueuedConnection)


class ProblemsPanel(QWidget):
    """See module docstring. ``countChanged(errors, total)`` for the dock title."""

    countChanged = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Severity", "Problem", "Graph", "Where"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        # the problem text gets the room; a long node name in "Where" is elided in the middle
        self._columns = fit_columns(self.tree, main=1, caps={0: 0.15, 2: 0.18, 3: 0.3})
        self.tree.itemClicked.connect(self._on_clicked)
        self.tree.itemActivated.connect(self._on_clicked)
        self.summary = ElidedLabel("", self, mode=Qt.TextElideMode.ElideRight)
        self.full_button = QPushButton("Run Full Check", self)
        self.full_button.setToolTip("onnx.checker (full) and strict shape inference, in the background")
        self.full_button.clicked.connect(self.run_full_check)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.full_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.tree, 1)
        self._tab = None
        self._queue = _GuiQueue(self)
        self._executor = None
        self._checkers: dict[int, object] = {}
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        # 0 ms: refresh once per event-loop pass (an edit's several problems_changed coalesce)
        # and before the canvas's display rebuild, which waits 40 ms
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self.refresh)

    # -- tab ------------------------------------------------------------------------------
    def set_tab(self, tab) -> None:
        if self._tab is not None and getattr(self._tab, "validator", None) is not None:
            self._tab.validator.problems_changed.disconnect(self._on_problems_changed)
        self._tab = tab
        if tab is not None and getattr(tab, "validator", None) is not None:
            tab.validator.problems_changed.connect(self._on_problems_changed)
        self.full_button.setEnabled(tab is not None and getattr(tab, "validator", None) is not None)
        self.refresh()

    def _on_problems_changed(self, _added, _removed) -> None:
        self._refresh_timer.start()

    def problems(self) -> list:
        tab = self._tab
        validator = getattr(tab, "validator", None) if tab is not None else None
        return validator.problems if validator is not None else []

    def refresh(self) -> None:
        self._refresh_timer.stop()
        problems = self.problems()
        self.tree.clear()
        doc = self._tab.doc if self._tab is not None else None
        items = []
        for p, members in fold_notes(problems):  # an op no runtime knows: one row, its nodes below
            item = self._item(p, doc)
            if len(members) > 1:
                item.addChildren([self._item(m, doc) for m in members])
            items.append(item)
        self.tree.addTopLevelItems(items)
        errors = sum(1 for p in problems if p.severity == "error")
        warnings = sum(1 for p in problems if p.severity == "warning")
        if self._tab is None:
            self.summary.setText("")
        elif not problems:
            self.summary.setText("No problems found.")
        else:
            self.summary.setText(f"{errors} error{'s' if errors != 1 else ''}, "
                                 f"{warnings} warning{'s' if warnings != 1 else ''}, "
                                 f"{len(problems) - errors - warnings} other")
        self.countChanged.emit(errors, len(problems))

    def _item(self, p: Problem, doc: Document | None) -> QTreeWidgetItem:
        where = ""
        target = None
        if p.node_id is not None and doc is not None and doc.has_node(p.node_id):
            node = doc.node(p.node_id)
            where = f"{node.op_type} {node.name}".strip()
            target = Target.of_node(doc.index.node_scope[p.node_id], p.node_id)
        elif p.value and p.scope_id is not None and doc is not None and p.scope_id in doc.index.scopes:
            where = p.value
            target = Target.of_value(p.scope_id, p.value)
        item = QTreeWidgetItem([p.severity, p.message, p.graph, where])
        item.setToolTip(1, f"[{p.code}] {p.message} ({p.source} check)")
        item.setToolTip(2, p.graph)
        item.setToolTip(3, where)
        colour = _SEVERITY_COLOUR.get(p.severity)
        if colour is not None:
            item.setForeground(0, QBrush(colour))
        if target is not None:
            item.setData(0, TARGET_ROLE, target)
        return item

    def _on_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        target = item.data(0, TARGET_ROLE)
        if target is not None and self._tab is not None:
            self._tab.selection.select([target], SOURCE)

    # -- full check -----------------------------------------------------------------------
    def run_full_check(self) -> None:
        """Check the current model in full in the background; results merge when done."""
        tab = self._tab
        validator = getattr(tab, "validator", None) if tab is not None else None
        if validator is None:
            return
        from editor.validation import BackgroundChecker

        if self._executor is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        checker = self._checkers.get(id(validator))
        if checker is None or checker.validator is not validator:
            checker = BackgroundChecker(validator, executor=self._executor, deliver=self._queue.call.emit)
            checker.finished.connect(self._on_full_done)
            self._checkers[id(validator)] = checker
        self.full_button.setEnabled(False)
        self.summary.setText("Running the full check…")
        checker.submit()

    def _on_full_done(self, _problems) -> None:
        self.full_button.setEnabled(self._tab is not None)
        self.refresh()

    def shutdown(self) -> None:
        """Stop the checker process (window closing)."""
        for checker in self._checkers.values():
            checker.cancel()
        self._checkers.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
