"""The canvas's own entries of the context menus: expand and collapse groups and
control-flow bodies, open a body as its own view, show or fold weight preparation; and the
whole-view group actions of the View menu (Expand All, Collapse All, Expand Selection).

The context entries act on the box under the cursor (a
:class:`~widgets.actions.context.ContextTarget`), through the view's signals, as the
canvas's own menu does; the View entries act on the current tab's canvas and selection (a
right click selects the box first, so they work from the context menu too)."""

from __future__ import annotations

from widgets.actions.registry import ActionSpec

CONTEXTS = ("node", "value", "canvas")


def register(window) -> None:
    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    window.registry.add_all([
        ActionSpec("view.expand_all", "E&xpand All Groups", lambda: _controller(window, "expand_all"),
                   "Ctrl+Alt+]", "View", "3_groups", contexts=("node", "canvas"), context_section="8_groups",
                   enabled_when=has_tab, keywords="open every group flat all nodes",
                   tip="Show every node (the groups' frames go; the layout is the one render --expanded draws)"),
        ActionSpec("view.collapse_all", "&Collapse All Groups", lambda: _controller(window, "collapse_all"),
                   "Ctrl+Alt+[", "View", "3_groups", contexts=("node", "canvas"), context_section="8_groups",
                   enabled_when=has_tab, keywords="close every group fold",
                   tip="Close every group and body: the graph's top level"),
        ActionSpec("view.expand_selection", "Expand &Selected Groups", lambda: expand_selection(window),
                   "Ctrl+]", "View", "3_groups", contexts=("node", "canvas"), context_section="8_groups",
                   enabled_when=lambda: bool(_selected_paths(window)), keywords="open group bodies",
                   visible_when=lambda _t: bool(_selected_paths(window)),
                   tip="Open the selected groups (and every group inside them) and the bodies of selected "
                       "If/Loop/Scan nodes"),
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


def _controller(window, method: str) -> None:
    tab = window.current_tab()
    if tab is not None:
        getattr(tab.canvas.controller, method)()


def _selected_paths(window) -> list[str]:
    """Group paths of the selected group boxes, and ``@<id>`` of selected control-flow nodes."""
    tab = window.current_tab()
    if tab is None:
        return []
    scene = tab.canvas.scene
    paths = []
    for key in scene.selected_keys():
        item = scene.item_for(key)
        if item is None:
            continue
        if item.box.kind == "group" and key.startswith("g:"):
            paths.append(key[2:])
        elif item.box.subgraphs and item.box.node_id is not None:
            paths.append(f"@{item.box.node_id}")
    return paths


def expand_selection(window) -> None:
    paths = _selected_paths(window)
    if paths:
        window.current_tab().canvas.controller.expand_deep(paths)


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
