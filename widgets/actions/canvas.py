"""The canvas's own entries of the context menus: expand and collapse groups and
control-flow bodies, open a body as its own view, show or fold weight preparation.

They act on the box under the cursor (a :class:`~widgets.actions.context.ContextTarget`),
through the view's signals, as the canvas's own menu does."""

from __future__ import annotations

from widgets.actions.registry import ActionSpec

CONTEXTS = ("node", "value", "canvas")


def register(window) -> None:
    window.registry.add_all([
        ActionSpec("canvas.expand_group", "Expand group", lambda t: t.tab.canvas.view.groupToggled.emit(t.key),
                   contexts=CONTEXTS, section="7_canvas", takes_target=True,
                   visible_when=lambda t: t.item is not None and t.item.box.kind == "group"),
        ActionSpec("canvas.bodies", "Expand bodies in place", _emit, contexts=("node",), section="7_canvas",
                   inline=True, choices=_body_choices),
        ActionSpec("canvas.weight_preparation", "Weight preparation", _emit, contexts=("node",),
                   section="7_canvas", inline=True, choices=_weight_choices),
        ActionSpec("canvas.collapse", "Collapse group", _emit, contexts=CONTEXTS, section="7_canvas",
                   inline=True, choices=_collapse_choices),
    ])


def _emit(entry) -> None:
    """``entry``: (signal, argument) of the view to emit."""
    signal, argument = entry
    signal.emit(argument)


def _body_choices(t) -> list:
    item = t.item
    if item is None or item.box.kind == "group" or not item.box.subgraphs or item.box.node_id is None:
        return []
    view = t.tab.canvas.view
    path = f"@{item.box.node_id}"
    is_open = path in (getattr(t.tab.canvas.scene.graph, "group_parents", None) or {})
    return [("Collapse bodies" if is_open else "Expand bodies in place", (view.groupToggled, f"g:{path}")),
            ("Open body as its own view", (view.openBody, t.key))]


def _weight_choices(t) -> list:
    item = t.item
    if item is None or item.box.kind == "group":
        return []
    view = t.tab.canvas.view
    folded = (getattr(t.tab.canvas.scene.graph, "folded", None) or {}).get(item.key, ())
    if folded:
        return [(f"Show weight preparation ({len(folded)} nodes)", (view.weightsToggled, item.key))]
    if view.weights_unfolded is not None and view.weights_unfolded(item.key):
        return [("Fold weight preparation", (view.weightsToggled, item.key))]
    return []


def _collapse_choices(t) -> list:
    item = t.item
    if item is None or item.box.kind == "group":
        return []
    view = t.tab.canvas.view
    return [(f"Collapse {text}", (view.groupToggled, f"g:{path}")) for path, text in view.open_groups_of(t.key)]
