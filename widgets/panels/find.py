"""Find (Ctrl+F): node names, op types, tensor names and attribute values, plain or regex,
and the query language of ``onnx-studio find`` (``op:Conv attr:group>1 shape:[*,3,*,*]``).

:func:`search` adapts :func:`editor.find.search` (the Qt-free part) to :class:`Match`
records (what matched, where, and the canvas target). ``FindPanel`` lists them; all matches are
selected (highlighted) on the canvas, the current one centred, and Enter / F3 step to the
next (Shift+Enter the previous).

A query belongs to the tab it was typed for: switching tabs shows that tab's own query
(none for a newly opened model, which therefore opens at its inputs, not at a match), and
coming back lists the old matches again without moving the view.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.find import QueryError
from widgets.common.status_line import StatusLine
from widgets.common.column_fit import fit_columns
from widgets.common.selection import Target

FIND_HELP = ("Plain text finds node names, op types, tensor names and attribute values.\n"
             "Predicates (combined with AND): op:Conv  domain:com.microsoft  attr:group>1  attr:mode=linear\n"
             "  name:TEXT  dtype:float16  shape:[*,3,*,*]  rank:4  dim:batch")

SOURCE = "find"
MAX_RESULTS = 5000


@dataclass(frozen=True)
class Match:
    what: str  # "name" | "op" | "tensor" | "attribute"
    text: str  # what matched (the name, or "attr=value")
    target: Target
    where: str  # graph path + node, for the list


def search(doc, text: str, *, regex: bool = False, case: bool = False,
           limit: int = MAX_RESULTS) -> list[Match]:
    """:func:`editor.find.search` (the query language of ``onnx-studio find``) as list rows
    with canvas targets. Raises :class:`editor.find.QueryError` for a bad query."""
    from editor.find import search as find

    out = []
    for hit in find(doc, text, regex=regex, case=case, limit=limit):
        if hit.kind == "node":
            target = Target.of_node(hit.scope, hit.node)
            what = "name" if hit.what == "query" else hit.what
        else:
            target = Target("tensor" if hit.kind == "initializer" else "value", hit.scope, None, hit.name)
            what = "tensor"
        out.append(Match(what, hit.text, target, hit.where))
    return out


_KIND_LABEL = {"name": "node", "op": "op", "tensor": "tensor", "attribute": "attr"}


class FindPanel(QWidget):
    """Query box, options, result list; see module docstring."""

    resultsChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Find: names, or op:Conv attr:group>1 dtype:float16 shape:[*,3,*,*]")
        self.query.setToolTip(FIND_HELP)
        self.query.setClearButtonEnabled(True)
        self.regex = QCheckBox("Regex", self)
        self.case = QCheckBox("Match case", self)
        self.status = StatusLine(self, title="Find")
        self.results = QTreeWidget(self)
        self.results.setColumnCount(3)
        self.results.setHeaderLabels(["Kind", "Match", "Where"])
        self.results.setRootIsDecorated(False)
        self.results.setUniformRowHeights(True)
        self.results.setAlternatingRowColors(True)
        # the match gets the room; kind and place take what they need, up to a share
        fit_columns(self.results, main=1, caps={0: 0.2, 2: 0.32})
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.regex)
        top.addWidget(self.case)
        top.addStretch(1)
        top.addWidget(self.status)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.query)
        layout.addLayout(top)
        layout.addWidget(self.results, 1)
        # NOTE: searching is fast, but each result set re-selects on the canvas, which may
        # open groups and re-layout; wait for a pause in typing.
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(180)
        self._debounce.timeout.connect(self.run)
        self.query.textChanged.connect(self._debounce.start)
        self.regex.toggled.connect(self.run)
        self.case.toggled.connect(self.run)
        self.query.returnPressed.connect(self._on_return)
        self.results.currentItemChanged.connect(
            lambda item, _prev: self._on_row(self.results.indexOfTopLevelItem(item) if item is not None else -1))
        prev = QShortcut(QKeySequence("Shift+Return"), self.query)
        prev.activated.connect(self.previous)
        self._tab = None
        self._matches: list[Match] = []
        self._row_syncing = False
        #: each tab's own query and options (weak: a closed tab's entry goes with it)
        self._queries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def set_tab(self, tab) -> None:
        if tab is self._tab:
            return
        if self._tab is not None:
            self._queries[self._tab] = (self.query.text(), self.regex.isChecked(), self.case.isChecked())
        self._tab = tab
        text, regex, case = self._queries.get(tab, ("", self.regex.isChecked(), self.case.isChecked())) \
            if tab is not None else ("", self.regex.isChecked(), self.case.isChecked())
        for widget, set_value, value in ((self.query, self.query.setText, text), (self.regex, self.regex.setChecked, regex),
                                         (self.case, self.case.setChecked, case)):
            widget.blockSignals(True)
            set_value(value)
            widget.blockSignals(False)
        # list the tab's matches again, but leave its view and selection where they are
        self.run(highlight=False)

    def focus_query(self) -> None:
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    @property
    def matches(self) -> list[Match]:
        return list(self._matches)

    def run(self, *_args, highlight: bool = True) -> None:
        """Search again with the current query and options (``highlight``: select the
        matches on the canvas and go to the first)."""
        self._debounce.stop()
        self._row_syncing = True
        self.results.clear()
        self._row_syncing = False
        self._matches = []
        tab = self._tab
        text = self.query.text()
        if tab is None or not text:
            self.status.setText("")
            self.resultsChanged.emit(0)
            return
        try:
            self._matches = search(tab.doc, text, regex=self.regex.isChecked(), case=self.case.isChecked())
        except QueryError as exc:
            self.status.setText(str(exc))
            self.resultsChanged.emit(0)
            return
        self._row_syncing = True
        items = []
        for m in self._matches:
            item = QTreeWidgetItem([_KIND_LABEL[m.what], m.text, m.where])
            item.setToolTip(1, m.text)
            item.setToolTip(2, m.where)
            items.append(item)
        self.results.addTopLevelItems(items)
        self._row_syncing = False
        n = len(self._matches)
        self.status.setText(f"{n} match{'es' if n != 1 else ''}" if n < MAX_RESULTS else f"first {n} matches")
        self.resultsChanged.emit(n)
        if highlight:
            self._highlight(None)

    def _highlight(self, current: Match | None) -> None:
        """Select every match in the scope of the current one (the canvas highlights them)."""
        if self._tab is None or not self._matches:
            return
        focus = current or self._matches[0]
        targets = [m.target for m in self._matches]
        self._tab.selection.select(targets, SOURCE, current=focus.target)

    def _on_row(self, row: int) -> None:
        if self._row_syncing or not 0 <= row < len(self._matches):
            return
        self._highlight(self._matches[row])

    def _on_return(self) -> None:
        if self._debounce.isActive():  # Enter right after typing: search first
            self._debounce.stop()
            self.run()
        self.next()

    def next(self) -> None:
        self._step(+1)

    def previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        n = len(self._matches)
        if not n:
            return
        current = self.results.currentItem()
        row = self.results.indexOfTopLevelItem(current) if current is not None else -1
        row = 0 if row < 0 and delta > 0 else (row + delta) % n
        self.results.setCurrentItem(self.results.topLevelItem(row))
