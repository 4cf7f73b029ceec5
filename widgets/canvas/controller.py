"""``GraphController``: which groups are open, and re-layout when that changes.

It owns the *view state* of one graph scope (the set of expanded group paths) — never the
document — and turns it into a scene: build the display model (``editor.viewmodel``), lay it
out off the GUI thread (``LayoutRunner``) passing the current layout as ``previous=`` so
boxes the change did not touch stay where the user saw them, then ``scene.set_graph``.

Display filter hook: ``set_display_filter(fn)`` installs a pure function
``DisplayGraph -> DisplayGraph`` applied to every display model the controller builds,
before layout (the app's View > Boxes Show options drop attributes, shapes or weights
this way; boxes may change size, the layout follows). It runs on the GUI thread, so keep
it cheap and free of side effects; ``set_display_filter(None)`` removes it. Changing the
filter does not re-layout by itself: call ``relayout()`` when its options change.

Control-flow bodies: ``set_bodies(fn)`` gives the view model the bodies of If/Loop/Scan
nodes (``editor.viewmodel.document_bodies``); ``toggle_body(node_id)`` then opens or closes
a node's bodies in place (the ``"@<node_id>"`` path in the expanded set), re-laid out with
the current layout as ``previous=`` like any group toggle.

Whole-view changes: ``expand_all()`` shows every node (the flat view, laid out as
``onnx-studio render --expanded`` lays it out), ``collapse_all()`` closes every group,
``expand_deep(paths)`` opens groups with everything inside them. A re-layout caused by a
view change (not by a new source) can be cancelled (``cancel()``): the open groups go back
to what the picture on screen shows (``cancellable()`` says whether the running one can).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence

from PySide6.QtCore import QObject, Signal

from widgets.canvas.runner import LayoutRunner
from widgets.canvas.scene import GraphScene


#: the sub-frame of one body inside an open control-flow node: "@<node id>/<attribute>"
_BODY_FRAME = re.compile(r"@\d+/[^/]+")


class GraphController(QObject):
    """Expand/collapse state of one graph scope and the layout runs it causes."""

    busy = Signal(bool)
    progress = Signal(float)
    failed = Signal(str)
    laidOut = Signal()

    def __init__(self, scene: GraphScene, parent: QObject | None = None, *, runner: LayoutRunner | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._runner = runner or LayoutRunner(self)
        self._runner.finished.connect(self._on_finished)
        self._runner.failed.connect(self._on_failed)
        self._runner.progress.connect(self.progress)
        self._runner.cancelled.connect(self._on_cancelled)
        self._graph = None
        self._node_ids: Sequence[int] = ()
        self._opsets: Mapping[str, int] = {}
        self._value_info = None
        self._expanded: set[str] | None = set()
        self._tree = None   # the source's group tree, built once per source (see groups())
        self._scoped: dict[str, str] = {}
        self._filter: Callable | None = None
        self._bodies: Callable | None = None
        self._unfold: set[int] = set()   # consumers whose weight preparation is drawn as boxes
        self._show_plumbing = False      # shape computations as boxes (View menu)
        #: the view state (open groups, unfolded weights) of the picture on screen, and of
        #: the layout running now; a cancelled view change goes back to the first
        self._shown_state: tuple | None = None
        self._running_state: tuple | None = None
        self._cancellable = False
        self._running_boxes = 0

    def set_bodies(self, fn: Callable | None) -> None:
        """``fn(node_id) -> [(label, GraphProto, node_ids)]`` for expanding bodies in place
        (``None``: bodies cannot be expanded). Takes effect at the next layout."""
        self._bodies = fn

    def has_bodies(self) -> bool:
        return self._bodies is not None

    def set_display_filter(self, fn: Callable | None) -> None:
        """Apply ``fn(DisplayGraph) -> DisplayGraph`` to every display model built from now on
        (``None`` removes it); see module docstring. Call ``relayout()`` to apply it now."""
        if fn is not None and not callable(fn):
            raise TypeError(f"display filter must be callable, not {fn!r}")
        self._filter = fn

    def display_filter(self) -> Callable | None:
        return self._filter

    @property
    def runner(self) -> LayoutRunner:
        return self._runner

    def expanded(self) -> set[str] | None:
        """Open group paths; ``None`` means the flat (everything expanded) view."""
        return None if self._expanded is None else set(self._expanded)

    def set_source(self, graph, node_ids: Sequence[int], *, opsets: Mapping[str, int], value_info=None,
                   expanded: Collection[str] | str | None = "auto", sync: bool = False, groups=None) -> None:
        """Show ``graph`` (a GraphProto) with ``expanded`` groups open.

        ``None`` = flat (every node), ``"auto"`` = the view model's first view
        (``default_expanded``: big enough to be useful, small enough to lay out at once).
        ``groups``: the graph's ``group_tree`` when the caller has it already.
        """
        from editor.viewmodel import default_expanded, scoped_name

        self._graph = graph
        self._tree = groups
        self._node_ids = list(node_ids)
        self._opsets = dict(opsets)
        self._value_info = value_info
        if expanded == "auto":
            expanded = default_expanded(graph, groups=self.groups())
        self._expanded = None if expanded is None else set(expanded)
        # the group tree, when there is one, read them already (weight Constants aside)
        named = self.groups().names if self._tree is not None else {}
        nodes = graph.node
        self._scoped = {f"n:{nid}": named[k] if k in named else scoped_name(nodes[k])
                        for k, nid in enumerate(self._node_ids)}
        self._shown_state = None  # a new source: the picture on screen no longer matches it
        self.relayout(keep_positions=False, sync=sync)

    def rename_nodes(self, nodes: Mapping[int, object]):
        """Node ids -> renamed NodeProtos of the source graph: relabel their boxes in place
        when the picture stays the same (same name-scope group, no layout running that was
        built before the rename) and return the scene area to repaint; None when it does
        not and a re-layout is needed."""
        from editor.viewmodel import scoped_name, scopes_of

        if self._runner.is_running():
            return None
        if self._expanded and any(f"@{nid}" in self._expanded for nid in nodes):
            return None  # an open body's frame is titled by its owner's name
        scoped = {}
        for nid, node in nodes.items():
            key = f"n:{nid}"
            old = self._scoped.get(key)
            new = scoped_name(node)
            if old is None or scopes_of(old) != scopes_of(new):
                return None
            scoped[key] = new
        self._scoped.update(scoped)
        return self._scene.rename_boxes({f"n:{nid}": node.name for nid, node in nodes.items()})

    def scope_of(self, key: str) -> str:
        """Group path a box lies in ("" at the root); a group box's own path for groups."""
        if key.startswith("g:"):
            return key[2:]
        graph = self._scene.graph
        groups = getattr(graph, "box_groups", None)
        if groups:
            # the view model knows the innermost open group (artificial parts included)
            return groups.get(key, "")
        name = self._scoped.get(key, "")
        return name.rsplit("/", 1)[0] if "/" in name else ""

    def view_source(self):
        """The source and display settings of this canvas as the core's
        :class:`editor.webpage.ViewSource` (None before a source is set): the web page export
        builds its views with exactly the canvas's settings."""
        from editor.webpage.source import ViewSource

        if self._graph is None:
            return None
        return ViewSource(self._graph, list(self._node_ids), self._opsets, self._value_info, self._bodies,
                          tuple(self._unfold), self._show_plumbing, self._filter)

    def build_display_graph(self):
        """The display model of the current source and open groups, filtered by the
        display filter when one is set."""
        from editor.viewmodel import build_display_graph

        display = build_display_graph(self._graph, self._node_ids, opsets=self._opsets,
                                      value_info=self._value_info, expanded=self._expanded, bodies=self._bodies,
                                      unfold=self._unfold, show_plumbing=self._show_plumbing,
                                      groups=None if self._expanded is None else self.groups())
        return self._filter(display) if self._filter is not None else display

    def groups(self):
        """The source's group tree (``editor.viewmodel.group_tree``), built once per source:
        every view change used to group the whole graph again (0.1 s on a 3k-node model)."""
        from editor.viewmodel import group_tree

        tree = self._tree
        if tree is None or tree.table is None or tree.table.nodes is not self._graph.node \
                or len(tree.table) != len(self._graph.node):
            tree = self._tree = group_tree(self._graph)
        return tree

    def relayout(self, *, keep_positions: bool = True, sync: bool = False) -> None:
        """Rebuild the display model and lay it out (off the GUI thread unless ``sync``)."""
        if self._graph is None:
            return
        display = self.build_display_graph()
        previous = self._scene.layout_result if keep_positions else None
        state = self._state()
        if sync:
            from editor.layout import layout_graph

            self._runner.cancel()
            self._scene.set_graph(display, layout_graph(display, previous=previous, wrap=True))
            self._shown_state = state
            self.laidOut.emit()
            return
        # only a change of what is open can be taken back: the picture on screen still
        # shows the same source then
        self._cancellable = (keep_positions and self._shown_state is not None
                             and self._shown_state[2] == self._show_plumbing)
        self._running_state = state
        self._running_boxes = len(display.boxes)
        self.busy.emit(True)
        self._runner.start(display, previous)

    def _state(self) -> tuple:
        # (plumbing is in it only to refuse cancelling its toggle: the View menu's check
        # mark says what was asked, and a cancel would make the picture disagree with it)
        return (None if self._expanded is None else frozenset(self._expanded), frozenset(self._unfold),
                self._show_plumbing)

    def running_boxes(self) -> int:
        """Boxes of the layout running now (0 when none runs)."""
        return self._running_boxes if self._runner.is_running() else 0

    def cancellable(self) -> bool:
        """True while a re-layout runs that ``cancel()`` can take back (a view change)."""
        return self._runner.is_running() and self._cancellable

    def cancel(self) -> bool:
        """Stop the running view change; the open groups go back to what the picture on
        screen shows. False (nothing done) when no cancellable layout runs."""
        if not self.cancellable() or self._shown_state is None:
            return False
        self._runner.cancel()
        expanded, unfold, _plumbing = self._shown_state
        self._expanded = None if expanded is None else set(expanded)
        self._unfold = set(unfold)
        self.busy.emit(False)
        return True

    def expand_all(self, *, sync: bool = False) -> None:
        """Show every node: the flat view (no frames), laid out as ``render --expanded``
        lays it out. Open control-flow bodies stay open (then every group opens in frames)."""
        bodies = {p for p in (self._expanded or ()) if p.startswith("@")}
        self._expanded = (self._all_groups() | bodies) if bodies else None
        self.relayout(sync=sync)

    def collapse_all(self, *, sync: bool = False) -> None:
        """Close every group and body: the graph's top level as boxes."""
        self._expanded = set()
        self.relayout(sync=sync)

    def expand_deep(self, paths: Collection[str], *, sync: bool = False) -> bool:
        """Open groups ``paths`` and every group inside them (a body path ``@<id>`` opens
        that node's bodies), with one re-layout; False when nothing was closed."""
        if self._graph is None:
            return False
        parents = self.groups().parent
        wanted = set(paths)
        opened = set()
        for g in parents:
            p = g
            while p and p not in wanted:
                p = parents.get(p, "")
            if p:
                opened.add(g)
        opened |= {p for p in wanted if p.startswith("@")}
        if self._expanded is None:
            return self.expand_paths(opened, sync=sync) if any(p.startswith("@") for p in opened) else False
        return self.expand_paths(opened, sync=sync)

    def toggle_group(self, key: str, *, sync: bool = False) -> None:
        """Expand a collapsed group box ``g:<path>`` or collapse an open group ``<path>``."""
        path = key[2:] if key.startswith("g:") else key
        if _BODY_FRAME.fullmatch(path):
            # a body's sub-frame ("@12/then_branch") is not a group of its own: its title
            # closes the owner's bodies
            path = path.partition("/")[0]
        if self._expanded is None:
            # flat view: collapsing a scope means "everything open except this one"; opening
            # a body means "everything open, and this body"
            self._expanded = self._all_groups()
            if path.startswith("@"):
                self._expanded.add(path)
            else:
                self._expanded.discard(path)
        elif path in self._expanded:
            self._expanded.discard(path)
        else:
            self._expanded.add(path)
        self.relayout(sync=sync)

    def _all_groups(self) -> set[str]:
        return set(self.groups().parent)

    def set_show_plumbing(self, on: bool, *, sync: bool = False) -> None:
        """Draw shape computations as boxes (True) or as rows of their readers."""
        if on != self._show_plumbing:
            self._show_plumbing = on
            self.relayout(sync=sync)

    def toggle_weights(self, key: str, *, sync: bool = False) -> None:
        """Draw the weight-preparation nodes folded into box ``key`` (``n:<id>``) as boxes of
        their own, or fold them back (``DisplayGraph.folded``)."""
        if not key.startswith("n:"):
            return
        nid = int(key[2:])
        if nid in self._unfold:
            self._unfold.discard(nid)
        else:
            self._unfold.add(nid)
        self.relayout(sync=sync)

    def unfold_for(self, keys) -> bool:
        """Mark for unfolding the weight preparation that hides any of ``keys`` (node boxes
        folded into a consumer's weight rows); True when something changed — the caller
        re-lays out (``relayout``, or by opening groups)."""
        folded = getattr(self._scene.graph, "folded", None) or {}
        want = {k for k in keys if k.startswith("n:")}
        add = {int(consumer[2:]) for consumer, ids in folded.items()
               if consumer.startswith("n:") and any(f"n:{i}" in want for i in ids)}
        add -= self._unfold
        self._unfold |= add
        return bool(add)

    def weights_unfolded(self, key: str) -> bool:
        return key.startswith("n:") and int(key[2:]) in self._unfold

    def toggle_body(self, node_id: int, *, sync: bool = False) -> None:
        """Open or close the bodies of control-flow node ``node_id`` in place."""
        self.toggle_group(f"@{node_id}", sync=sync)

    def body_expanded(self, node_id: int) -> bool:
        return self._expanded is not None and f"@{node_id}" in self._expanded

    def expand_paths(self, paths: Collection[str], *, sync: bool = False) -> bool:
        """Open several groups/bodies with one re-layout; False when all were open already."""
        if self._expanded is None:
            if not any(p.startswith("@") for p in paths):
                return False
            self._expanded = self._all_groups()
        missing = [p for p in paths if p not in self._expanded]
        if not missing:
            return False
        self._expanded.update(missing)
        self.relayout(sync=sync)
        return True

    def expand(self, path: str, *, sync: bool = False) -> None:
        if self._expanded is not None and path not in self._expanded:
            self.toggle_group(path, sync=sync)

    def collapse(self, path: str, *, sync: bool = False) -> None:
        if self._expanded is None or path in self._expanded:
            self.toggle_group(path, sync=sync)

    def _on_finished(self, graph, result) -> None:
        self._scene.set_graph(graph, result)
        self._shown_state = self._running_state
        self.busy.emit(False)
        self.laidOut.emit()

    def _on_cancelled(self) -> None:
        self.busy.emit(False)

    def _on_failed(self, message: str) -> None:
        self.busy.emit(False)
        self.failed.emit(message)
