"""The canvas's context menu, built from the registry for what is under the cursor.

The box or edge under the cursor becomes a :class:`ContextTarget`; its kind names the
registry context whose actions fill the menu: ``node`` (an operator box), ``value`` (a
graph input or output box), ``edge`` (the value an edge carries), ``canvas`` (the
background, or a collapsed group). Actions that act on the selection need nothing more (a
right click selects the box, or the edge's value, first: the menu acts on what is visibly
selected); entries that depend on the box (one per input, per weight, per open group) are
spec choices over the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu


@dataclass(frozen=True)
class ContextTarget:
    """What a context menu was opened on."""

    tab: object
    #: the canvas key of the box (``"n:12"``, ``"in:x"``, ``"g:/blk"``), None on the background
    key: str | None
    #: the registry context: ``"node"``, ``"value"``, ``"edge"`` or ``"canvas"``
    kind: str
    #: the node's id for an operator box
    node_id: int | None = None
    #: ``"in"`` / ``"out"`` for a graph value box
    io: str | None = None
    #: the value of an edge or of a graph value box, and its graph scope
    value: str | None = None
    scope: int | None = None

    @property
    def item(self):
        return self.tab.canvas.scene.item_for(self.key) if self.key is not None else None


def target_at(tab, key: str | None) -> ContextTarget:
    kind, _, rest = (key or "").partition(":")
    if kind == "n" and rest.isdigit() and tab.doc.has_node(int(rest)):
        return ContextTarget(tab, key, "node", node_id=int(rest))
    if kind in ("in", "out"):
        value = tab.value_of_box(key)
        return ContextTarget(tab, key, "value", io=kind, value=value.name if value else None,
                             scope=value.scope if value else None)
    return ContextTarget(tab, key, "canvas")


def context_menu(window, tab, pos: QPoint, global_pos: QPoint, *, exec_menu: bool = True) -> QMenu:
    """Select the box (or the edge's value) under ``pos`` and show its menu; a box that is
    part of the selection keeps the selection (the menu then acts on all of it)."""
    view = tab.canvas.view
    scene = tab.canvas.scene
    key = view.key_at(pos)
    edge = None
    if key is not None and not scene.is_selected(key):
        scene.select_keys([key])
    elif key is None and scene.frame_title_at(view.mapToScene(pos)) is None:
        edge = view.edge_at(pos)
    if edge is not None:
        scene.click_value(edge.value)  # selected like a left click: what the menu acts on
        target = ContextTarget(tab, None, "edge", value=edge.value, scope=tab.value_scope(edge.value))
    else:
        target = target_at(tab, key)
    menu = window.registry.fill(QMenu(view), target.kind, target)
    if exec_menu:
        menu.exec(global_pos)
    return menu
