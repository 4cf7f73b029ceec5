"""``DiffPanel``: the contents of the Diff dock — summary, options, and the list of changes.

The tree groups changes by kind (changed / removed / added nodes, renamed values,
initializers, graph inputs and outputs, model fields). Its three columns put the two
sides next to each other: what the change is, the value in this model (A) and in the
other one (B). A changed node's row opens onto one row per difference (its name, op
type, each attribute, each rewired input or output, each changed body).

Rows that stand for a node carry a :class:`ChangeRef` (``Qt.UserRole``); activating one
emits ``changeActivated(ref)`` and the dock selects the node on the canvases.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.common.status_line import MessageLabel
from widgets.compare.overlay import ADDED, CHANGED, REMOVED, status_colour

ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class ChangeRef:
    """A node change a row stands for: ids on A and/or B (None where absent)."""

    status: str
    a: int | None
    b: int | None


def _dot(colour: QColor) -> QIcon:
    pm = QPixmap(12, 12)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    p.drawRoundedRect(1, 1, 10, 10, 3, 3)
    p.end()
    return QIcon(pm)


def _none(text) -> str:
    return "—" if text is None else str(text)


class DiffPanel(QWidget):
    """See module docstring."""

    changeActivated = Signal(object)  # ChangeRef
    overlayToggled = Signal(bool)
    openOtherRequested = Signal()
    refreshRequested = Signal()
    #: open this comparison as two canvases side by side in one tab (widgets.diffview)
    sideBySideRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # MessageLabel: long names and messages wrap or are cut, never widen the window
        self.title = MessageLabel("", self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        # NOTE: no word wrap on the summary lines: wrapped labels get squeezed to one line
        # by the dock's layout when the dock is short (height-for-width is not honoured)
        self.summary = MessageLabel("", self, wrap=False)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.details = MessageLabel("", self, wrap=False)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.message = MessageLabel("", self)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.overlay_check = QCheckBox("Colour canvas", self)
        self.overlay_check.setChecked(True)
        self.overlay_check.setToolTip("Colour boxes by status: green added, red removed, amber changed")
        self.overlay_check.toggled.connect(self.overlayToggled)
        self.side_button = QPushButton("Side by Side", self)
        self.side_button.setToolTip("Both models in one tab, side by side, coloured by the diff and moving "
                                    "together (Tools ▸ Compare Side by Side With…)")
        self.side_button.clicked.connect(self.sideBySideRequested)
        self.open_button = QPushButton("Open Other in a Tab", self)
        self.open_button.setToolTip("Open the other model in the next tab, coloured the same way")
        self.open_button.clicked.connect(self.openOtherRequested)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setToolTip("Compare again (this model changed since the diff)")
        self.refresh_button.clicked.connect(self.refreshRequested)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Change", "This model (A)", "Other model (B)"])
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setRootIsDecorated(True)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        # NOTE: the current row (click or arrow keys) shows its node; Enter or a double-click
        # on the current row shows it again (after the user scrolled the canvas away)
        self.tree.currentItemChanged.connect(lambda item, _prev: item is not None and self._on_item(item))
        self.tree.itemActivated.connect(self._on_item)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.overlay_check)
        row.addStretch(1)
        row.addWidget(self.refresh_button)
        row.addWidget(self.side_button)
        row.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.summary)
        layout.addWidget(self.details)
        layout.addWidget(self.busy)
        layout.addWidget(self.message)
        layout.addLayout(row)
        layout.addWidget(self.tree, 1)
        self._icons = {s: _dot(status_colour(s)) for s in (ADDED, REMOVED, CHANGED)}
        self._shown = None  # (diff, seconds) on show, for re-colouring on a theme change
        self.set_empty()

    # -- state ------------------------------------------------------------------------------
    def set_empty(self) -> None:
        self._shown = None
        self.title.setText("<b>No comparison</b>")
        self.summary.setText("Use <b>Tools ▸ Compare With…</b> (Ctrl+Shift+D) to diff the current model "
                             "against another file.")
        self.details.setText("")
        self.details.hide()
        self.tree.clear()
        self.open_button.setEnabled(False)
        self.side_button.setEnabled(False)
        self.refresh_button.hide()

    def set_busy(self, busy: bool, text: str = "") -> None:
        self.busy.setVisible(busy)
        if busy:
            self.summary.setText(escape(text or "Comparing…"))
            self.details.hide()
            self.tree.clear()

    def show_message(self, text: str, *, error: bool = True) -> None:
        colour = self._colours()["removed" if error else "warn"]
        self.message.setStyleSheet(f"color: {colour};")
        self.message.setText(text)
        self.message.show()

    def clear_message(self) -> None:
        self.message.clear()
        self.message.hide()

    def set_other_open(self, is_open: bool) -> None:
        """The button opens B's tab, or brings it to the front once it is open."""
        self.open_button.setText("Show Other Model" if is_open else "Open Other in a Tab")

    def set_stale(self, stale: bool) -> None:
        self.refresh_button.setVisible(stale)
        if stale:
            self.show_message("This model changed since the comparison: the list may be out of date.", error=False)
        else:
            self.clear_message()

    # -- content ----------------------------------------------------------------------------
    def set_diff(self, diff, name_a: str, name_b: str, seconds: float | None = None) -> None:
        """Fill the header and the tree from ``diff`` (ids already those of the open tabs)."""
        self.title.setText(f"<b>{escape(name_a)}</b> &nbsp;↔&nbsp; <b>{escape(name_b)}</b>")
        self._shown = (diff, seconds)
        nodes, details = self._summary_html(diff, seconds, self._colours())
        self.summary.setText(nodes)
        self.details.setText(details)
        self.details.setVisible(bool(details))
        self.open_button.setEnabled(True)
        self.side_button.setEnabled(True)
        tree = self.tree
        tree.setUpdatesEnabled(False)
        tree.clear()
        try:
            self._fill(diff)
        finally:
            tree.setUpdatesEnabled(True)
        # small diffs open fully (old | new visible at once); big ones show the groups
        if sum(1 for _ in self._all_items()) <= 300:
            tree.expandAll()
        else:
            tree.expandToDepth(0)
        tree.resizeColumnToContents(0)
        tree.setColumnWidth(0, min(max(tree.columnWidth(0), 220), 420))
        tree.setColumnWidth(1, 180)

    def _colours(self) -> dict[str, str]:
        """Text colours readable on the panel's background (light or dark theme)."""
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        if dark:
            return {"changed": "#ffb74d", "added": "#81c784", "removed": "#ef5350", "warn": "#ffd54f",
                    "muted": "#8a8f98"}
        return {"changed": "#b26a00", "added": "#2e7d32", "removed": "#c62828", "warn": "#8a6d00",
                "muted": "#8a8f98"}

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        shown = getattr(self, "_shown", None)
        if event.type() == QEvent.Type.PaletteChange and shown is not None and not self.busy.isVisible():
            nodes, details = self._summary_html(*self._shown, self._colours())
            self.summary.setText(nodes)
            self.details.setText(details)

    @staticmethod
    def _summary_html(diff, seconds: float | None, colours: dict[str, str]) -> tuple[str, str]:
        """The nodes line and the line with the other counts (rich text)."""
        if diff.identical:
            return f"<span style='color:{colours['added']}'><b>Identical</b></span> — {diff.nodes_same} nodes", ""

        def chip(n: int, label: str, colour: str) -> str:
            style = f"color:{colour}; font-weight:600" if n else f"color:{colours['muted']}"
            return f"<span style='{style}'>{n} {label}</span>"

        c = diff.counts()
        parts = [
            chip(c["nodes_changed"], "changed", colours["changed"]),
            chip(c["nodes_added"], "added", colours["added"]),
            chip(c["nodes_removed"], "removed", colours["removed"]),
            f"<span>{c['nodes_same']} same</span>",
        ]
        inits = (f"{c['initializers_changed']} changed, {c['initializers_added']} added, "
                 f"{c['initializers_removed']} removed")
        other = [
            f"<b>Initializers</b>: {inits}",
            f"<b>Values renamed</b>: {c['values_renamed']}",
            f"<b>Inputs/outputs</b>: {c['io_changes']}",
            f"<b>Model fields</b>: {c['model_changes']}",
        ]
        took = ""
        if seconds is not None:
            took = f" &nbsp;·&nbsp; <span style='color:{colours['muted']}'>{seconds:.2f} s</span>"
        return ("<b>Nodes</b>: " + " &nbsp;·&nbsp; ".join(parts),
                " &nbsp;·&nbsp; ".join(other) + took)

    def _group(self, title: str, count: int) -> QTreeWidgetItem | None:
        if not count:
            return None
        item = QTreeWidgetItem(self.tree, [f"{title} ({count})"])
        font = QFont(item.font(0))
        font.setBold(True)
        item.setFont(0, font)
        item.setFirstColumnSpanned(True)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled)
        return item

    def _row(self, parent, texts, *, ref: ChangeRef | None = None, status: str | None = None,
             tip: str | None = None) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [str(t) for t in texts])
        if ref is not None:
            item.setData(0, ROLE, ref)
        if status in self._icons:
            item.setIcon(0, self._icons[status])
        if tip:
            item.setToolTip(0, tip)
        for col in (1, 2):
            item.setToolTip(col, item.text(col))
        return item

    def _fill(self, diff) -> None:
        changed = self._group("Changed nodes", len(diff.nodes_changed))
        for ch in diff.nodes_changed:
            ref = ChangeRef(CHANGED, ch.a.id, ch.b.id)
            what = ", ".join(k.replace("_", " ") for k in ch.kinds)
            node = self._row(changed, [f"{ch.a.label()} — {what}", "", ""], ref=ref, status=CHANGED, tip=what)
            if "renamed" in ch.kinds:
                self._row(node, ["name", ch.a.name or "(unnamed)", ch.b.name or "(unnamed)"], ref=ref)
            if "op_type" in ch.kinds or "domain" in ch.kinds:
                self._row(node, ["op type", f"{ch.a.domain + '.' if ch.a.domain else ''}{ch.a.op_type}",
                                 f"{ch.b.domain + '.' if ch.b.domain else ''}{ch.b.op_type}"], ref=ref)
            for at in ch.attributes:
                self._row(node, [f"attribute {at.name}", _none(at.old), _none(at.new)], ref=ref)
            for p in ch.inputs:
                self._row(node, [f"input {p.index}", _none(p.old), _none(p.new)], ref=ref)
            for p in ch.outputs:
                self._row(node, [f"output {p.index}", _none(p.old), _none(p.new)], ref=ref)
            for s in ch.subgraphs:
                self._row(node, [f"body {s}", "differs", "differs"], ref=ref)
            if "doc_string" in ch.kinds:
                self._row(node, ["doc string", "differs", "differs"], ref=ref)
        rewritten = self._group("Rewritten (quantized, fused ...)", len(diff.rewrites))
        for rw in diff.rewrites:
            first_a, first_b = (rw.a[0] if rw.a else None), (rw.b[0] if rw.b else None)
            self._row(rewritten, [rw.summary, ", ".join(r.op_type for r in rw.a), ", ".join(r.op_type for r in rw.b)],
                      ref=ChangeRef(CHANGED, first_a.id if first_a else None, first_b.id if first_b else None),
                      status=CHANGED)
        removed = self._group("Removed nodes (only in A)", len(diff.nodes_removed))
        for r in diff.nodes_removed:
            self._row(removed, [r.label(), r.op_type, "—"], ref=ChangeRef(REMOVED, r.id, None), status=REMOVED)
        added = self._group("Added nodes (only in B)", len(diff.nodes_added))
        for r in diff.nodes_added:
            self._row(added, [r.label(), "—", r.op_type], ref=ChangeRef(ADDED, None, r.id), status=ADDED)
        renamed = self._group("Renamed values", len(diff.values_renamed))
        for v in diff.values_renamed:
            self._row(renamed, [v.scope, v.old, v.new], status=CHANGED)
        n_init = len(diff.initializers_changed) + len(diff.initializers_added) + len(diff.initializers_removed)
        inits = self._group("Initializers", n_init)
        for ic in diff.initializers_changed:
            old, new = ic.old, ic.new
            if ic.kinds == ["values"]:
                new = f"{ic.differing} values differ"
                if ic.max_abs_diff is not None:
                    new += f", max |Δ| {ic.max_abs_diff:.4g}"
            self._row(inits, [ic.name, old, new], status=CHANGED, tip=ic.note or None)
        for text in diff.initializers_removed:
            self._row(inits, [text, "present", "—"], status=REMOVED)
        for text in diff.initializers_added:
            self._row(inits, [text, "—", "present"], status=ADDED)
        io = self._group("Graph inputs and outputs", len(diff.io_changes))
        for c in diff.io_changes:
            status = ADDED if c.old is None else REMOVED if c.new is None else CHANGED
            where = "" if c.scope == "main" else f" ({c.scope})"
            self._row(io, [f"{c.kind} {c.name}{where}", _none(c.old), _none(c.new)], status=status)
        model = self._group("Model", len(diff.model_changes))
        for f in diff.model_changes:
            status = ADDED if f.old is None else REMOVED if f.new is None else CHANGED
            self._row(model, [f.field, _none(f.old), _none(f.new)], status=status)
        if diff.identical:
            item = QTreeWidgetItem(self.tree, ["The models are identical."])
            item.setFirstColumnSpanned(True)
            item.setForeground(0, QBrush(QColor(46, 125, 50)))

    # -- queries (tests, dock) ------------------------------------------------------------------
    def _all_items(self):
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            yield item
            stack.extend(item.child(i) for i in range(item.childCount()))

    def node_rows(self) -> list[QTreeWidgetItem]:
        """Top-level rows for nodes (children of the node groups), in tree order."""
        rows = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            for j in range(group.childCount()):
                child = group.child(j)
                if child.data(0, ROLE) is not None:
                    rows.append(child)
        return rows

    def _on_item(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        ref = item.data(0, ROLE)
        if ref is not None:
            self.changeActivated.emit(ref)
