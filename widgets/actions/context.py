"""The canvas's context menu, built from the registry for what is under the cursor.

The box under the cursor becomes a :class:`ContextTarget`; its kind names the registry
context whose actions fill the menu: ``node`` (an operator box), ``value`` (a graph input
or output box), ``canvas`` (the background, or a collapsed group). Actions that act on the
selection need nothing more (a right click selects the box first); entries that depend on
the box (one per input, per weight, per open group) are spec choices over the target.
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
    #: the registry context: ``"node"``, ``"value"`` or ``"canvas"``
    kind: str
    #: the node's id for an operator box
    node_id: int | None = None
    #: ``"in"`` / ``"out"`` for a graph value box
    io: str | None = None

    @property
    def item(self):
        return self.tab.canvas.scene.item_for(self.key) if self.key is not None else None


def target_at(tab, key: str | None) -> ContextTarget:
    kind, _, rest = (key or "").partition(":")
    if kind == "n" and rest.isdigit() and tab.doc.has_node(int(rest)):
        return ContextTarget(tab, key, "node", node_id=int(rest))
    if kind in ("in", "out"):
        return ContextTarget(tab, key, "value", io=kind)
    return ContextTarget(tab, key, "canvas")


def context_menu(window, tab, pos: QPoint, global_pos: QPoint, *, exec_menu: bool = True) -> QMenu:
    """Select the box under ``pos`` (unless it is selected already) and show its menu."""
    view = tab.canvas.view
    key = view.key_at(pos)
    if key is not None and not tab.canvas.scene.is_selected(key):
        tab.canvas.scene.select_keys([key])
    target = target_at(tab, key)
    menu = window.registry.fill(QMenu(view), target.kind, target)
    if exec_menu:
        menu.exec(global_pos)
    return menu
