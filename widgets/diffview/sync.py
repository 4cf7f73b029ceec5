"""The two panes move together: selection, pan and zoom, and open groups.

* Selecting boxes in one pane selects their counterparts in the other (the diff's pairs
  and rewrite regions, :class:`editor.diff.display.DiffDisplay`), which centres them.
* With "linked" on, panning or zooming one pane moves the other through the paired node
  nearest the middle of the view: the other pane puts that node's counterpart where the
  first pane has the node, at the same zoom. Only the pane the user is working in leads
  (the last one to get a mouse press, a wheel turn or a key), so the two never chase
  each other.
* Opening or closing a group (or an If/Loop body) in one pane does the same to its
  counterpart in the other: the other side's smallest group holding most of the group's
  paired nodes (names may differ: two exporters, a quantizer's renames).
"""

from __future__ import annotations

import re
from collections import Counter

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPointF, Signal

from editor.viewmodel import group_tree
from widgets.common.selection import Target
from widgets.window.document_tab import display_graph_of

__all__ = ["PaneSync", "SYNC_SOURCE"]

#: the selection source of a selection made to follow the other pane
SYNC_SOURCE = "diff-sync"
_CANVAS = "canvas"  # DocumentTab's source for the user's own clicks
_BODY = re.compile(r"@(\d+)(/.*)?")
_DRIVING = {QEvent.Type.Wheel, QEvent.Type.MouseButtonPress, QEvent.Type.KeyPress, QEvent.Type.Gesture}


class PaneSync(QObject):
    """Keeps pane A and pane B in step (module docstring)."""

    #: the user selected nodes in one pane: ("a" | "b", node ids)
    nodesSelected = Signal(str, list)

    def __init__(self, pane_a, pane_b, display, parent: QObject | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.panes = {"a": pane_a, "b": pane_b}
        self.display = display
        self.linked = True
        self.driver: str | None = None
        self._busy = False
        self._stopped = False
        self._trees: dict[tuple[str, int], object] = {}
        for side, pane in self.panes.items():
            tab = pane.tab
            tab.selection.changed.connect(lambda source, s=side: self._on_selection(s, source))
            tab.canvas.view.viewportChanged.connect(lambda s=side: self._on_viewport(s))
            # after the canvas's own connections: the group has toggled when this runs
            tab.canvas.view.groupToggled.connect(lambda key, s=side: self._on_group(s, key))
            # a double-click on an If/Loop/Scan box opens its bodies in place (DocumentTab)
            tab.canvas.activated.connect(lambda key, s=side: self._on_activated(s, key))
            tab.canvas.view.viewport().installEventFilter(self)
            tab.canvas.view.installEventFilter(self)

    def stop(self) -> None:
        """Follow nothing any more (the view is closing: its panes go one after the other)."""
        self._stopped = True

    def _alive(self) -> bool:
        return not self._stopped and all(shiboken6.isValid(p.tab.canvas.view) for p in self.panes.values())

    @staticmethod
    def other(side: str) -> str:
        return "b" if side == "a" else "a"

    def eventFilter(self, obj, event) -> bool:  # noqa: N802, ANN001
        if event.type() in _DRIVING:
            for side, pane in self.panes.items():
                view = pane.tab.canvas.view
                if obj is view or obj is view.viewport():
                    self.driver = side
        return False

    # -- selection ---------------------------------------------------------------------------
    def _on_selection(self, side: str, source: str) -> None:
        if self._busy or source != _CANVAS or not self._alive():
            return
        tab = self.panes[side].tab
        ids = [t.node for t in tab.selection.targets if t.kind == "node" and t.node is not None]
        self.select_counterparts(side, ids)
        self.nodesSelected.emit(side, ids)

    def select_counterparts(self, side: str, ids: list[int]) -> None:
        """Select (and centre) the counterparts of ``side``'s nodes ``ids`` in the other pane."""
        partners = list(dict.fromkeys(p for n in ids for p in self.display.counterparts(side, n)))
        self.select(self.other(side), partners)

    def select(self, side: str, ids: list[int], io_names=()) -> None:  # noqa: ANN001
        """Select nodes ``ids`` (and main-graph inputs / outputs ``io_names``) of ``side``,
        centred on the first, without echoing back; nothing to select clears."""
        tab = self.panes[side].tab
        targets = [Target.of_node(tab.doc.index.node_scope[n], n) for n in ids if tab.doc.has_node(n)]
        targets += [Target.of_value(tab.doc.index.main, name) for name in io_names]
        self._busy = True
        try:
            if targets:
                tab.selection.select(targets, SYNC_SOURCE)
            else:
                tab.selection.clear(SYNC_SOURCE)
        finally:
            self._busy = False

    # -- pan and zoom ---------------------------------------------------------------------------
    def _on_viewport(self, side: str) -> None:
        if not self.linked or self._busy or self.driver != side or not self._alive():
            return
        self.follow(side)

    def follow(self, side: str) -> bool:
        """Move the other pane to match ``side``'s view through the nearest paired node."""
        src, dst = self.panes[side].tab.canvas, self.panes[self.other(side)].tab.canvas
        if src.scene.graph is None or dst.scene.graph is None:
            return False
        visible = src.view.visible_scene_rect()
        centre = visible.center()
        best = None
        for key in src.scene.keys_in_rect(visible):
            if not key.startswith("n:"):
                continue
            here = src.scene.item_for(key).scene_rect().center()
            for partner in self.display.counterparts(side, int(key[2:])):
                there = dst.scene.item_for(f"n:{partner}")
                if there is None:
                    continue
                d = (here.x() - centre.x()) ** 2 + (here.y() - centre.y()) ** 2
                if best is None or d < best[0]:
                    best = (d, here, there.scene_rect().center())
                break
        if best is None:
            return False
        _d, here, there = best
        self._busy = True
        try:
            dst.view.set_zoom(src.view.zoom())
            dst.view.centerOn(QPointF(there.x() + centre.x() - here.x(), there.y() + centre.y() - here.y()))
        finally:
            self._busy = False
        return True

    # -- groups ------------------------------------------------------------------------------------
    def _on_group(self, side: str, key: str) -> None:
        if self._busy or not self._alive():
            return
        path = key[2:] if key.startswith("g:") else key
        src, dst = self.panes[side].tab, self.panes[self.other(side)].tab
        expanded = src.canvas.controller.expanded()
        body = _BODY.fullmatch(path)
        if body is not None:
            owner = body.group(1)
            opened = expanded is None or f"@{owner}" in expanded
            targets = [f"@{p}" for p in self.display.counterparts(side, int(owner))
                       if dst.doc.has_node(p) and dst.doc.index.children.get(p)]
        else:
            opened = expanded is None or path in expanded
            found = self.counterpart_group(side, path)
            targets = [found] if found else []
        self._busy = True
        try:
            for target in targets:
                if opened:
                    dst.canvas.controller.expand(target)
                else:
                    dst.canvas.controller.collapse(target)
        finally:
            self._busy = False

    def _on_activated(self, side: str, key: str) -> None:
        kind, _, rest = key.partition(":")
        doc = self.panes[side].tab.doc
        if kind == "n" and rest.isdigit() and doc.has_node(int(rest)) and doc.index.children.get(int(rest)):
            self._on_group(side, f"@{rest}")

    def _tree(self, side: str):  # noqa: ANN202
        tab = self.panes[side].tab
        key = (side, tab.scope_id)
        tree = self._trees.get(key)
        if tree is None:
            tree = self._trees[key] = group_tree(display_graph_of(tab.doc.scope(tab.scope_id)))
        return tree

    def counterpart_group(self, side: str, path: str) -> str | None:
        """The other pane's group that matches ``side``'s group ``path``: the deepest one
        holding at least half of the counterparts of the nodes inside ``path``."""
        src, dst = self.panes[side].tab, self.panes[self.other(side)].tab
        tree_s, tree_d = self._tree(side), self._tree(self.other(side))
        if path not in tree_s:
            return None
        ids_s = src.doc.scope(src.scope_id).node_ids
        scope_d = dst.doc.scope(dst.scope_id)
        pos_d = {nid: k for k, nid in enumerate(scope_d.node_ids)}
        partners = {p for k in tree_s.members(path) for p in self.display.counterparts(side, ids_s[k])
                    if p in pos_d}
        if not partners:
            return None
        counts: Counter[str] = Counter()
        for p in partners:
            counts.update(tree_d.chain(pos_d[p]))
        held = [g for g, n in counts.items() if 2 * n >= len(partners)]
        return max(held, key=lambda g: (g.count("/"), -tree_d.size.get(g, 0)), default=None)
