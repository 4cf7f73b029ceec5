"""Find (Ctrl+F): node names, op types, tensor names and attribute values, plain or regex.

:func:`search` is the Qt-free part: it walks every graph scope of the document and returns
:class:`Match` records (what matched and where). ``FindPanel`` lists them; all matches are
selected (highlighted) on the canvas, the current one centred, and Enter / F3 step to the
next (Shift+Enter the previous).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QHeaderView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.formatting import attribute_search_texts
from widgets.selection import Target

SOURCE = "find"
MAX_RESULTS = 5000


@dataclass(frozen=True)
class Match:
    what: str  # "name" | "op" | "tensor" | "attribute"
    text: str  # what matched (the name, or "attr=value")
    target: Target
    where: str  # graph path + node, for the list


def compile_pattern(text: str, *, regex: bool, case: bool) -> re.Pattern | None:
    """The matcher for a query; ``None`` for an empty query. Raises re.error for bad regex."""
    if not text:
        return None
    flags = 0 if case else re.IGNORECASE
    return re.compile(text if regex else re.escape(text), flags)


def search(doc, text: str, *, regex: bool = False, case: bool = False,
           limit: int = MAX_RESULTS) -> list[Match]:
    """Every node (name, op type, attribute values) and tensor name matching ``text``."""
    pattern = compile_pattern(text, regex=regex, case=case)
    if pattern is None:
        return []
    found: list[Match] = []
    seen_values: set[tuple[int, str]] = set()

    def value(sid: int, name: str, where: str) -> None:
        if name and (sid, name) not in seen_values and pattern.search(name):
            seen_values.add((sid, name))
            kind = "tensor" if doc.initializer(sid, name) is not None else "value"
            found.append(Match("tensor", name, Target(kind, sid, None, name), where))

    for scope in list(doc.index.scopes.values()):
        path = doc.index.path(scope.id)
        for name in scope.input_names():
            value(scope.id, name, f"{path} input")
        for nid in scope.node_ids:
            if len(found) >= limit:
                return found
            node = doc.node(nid)
            label = node.name or f"({node.op_type})"
            target = Target.of_node(scope.id, nid)
            if node.name and pattern.search(node.name):
                found.append(Match("name", node.name, target, f"{path} · {node.op_type}"))
            elif pattern.search(node.op_type):
                found.append(Match("op", node.op_type, target, f"{path} · {label}"))
            else:
                for attr in node.attribute:
                    texts = attribute_search_texts(attr)
                    hit = next((t for t in texts if pattern.search(t)), None)
                    if hit is not None:
                        found.append(Match("attribute", f"{attr.name}={hit}", target, f"{path} · {label}"))
                        break
            for name in list(node.input) + list(node.output):
                value(scope.id, name, f"{path} · {label}")
        for name in scope.initializer_names():
            value(scope.id, name, f"{path} initializer")
        for name in scope.output_names():
            value(scope.id, name, f"{path} output")
    return found[:limit]


_KIND_LABEL = {"name": "node", "op": "op", "tensor": "tensor", "attribute": "attr"}


class FindPanel(QWidget):
    """Query box, options, result list; see module docstring."""

    resultsChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Find nodes, ops, tensors, attribute values")
        self.query.setClearButtonEnabled(True)
        self.regex = QCheckBox("Regex", self)
        self.case = QCheckBox("Match case", self)
        self.status = QLabel(self)
        self.results = QTreeWidget(self)
        self.results.setColumnCount(3)
        self.results.setHeaderLabels(["Kind", "Match", "Where"])
        self.results.setRootIsDecorated(False)
        self.results.setUniformRowHeights(True)
        self.results.setAlternatingRowColors(True)
        header = self.results.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.resizeSection(2, 110)
        self.results.setTextElideMode(Qt.TextElideMode.ElideLeft)
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

    def set_tab(self, tab) -> None:
        self._tab = tab
        self.run()

    def focus_query(self) -> None:
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    @property
    def matches(self) -> list[Match]:
        return list(self._matches)

    def run(self, *_args) -> None:
        """Search again with the current query and options."""
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
        except re.error as exc:
            self.status.setText(f"bad regex: {exc}")
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
