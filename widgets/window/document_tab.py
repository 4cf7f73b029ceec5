"""``DocumentTab``: one open model — its Document, its canvas, and its view state.

The view state is what the user sees and the file does not hold: which graph scope the
canvas shows (main graph, an If/Loop body, a function), which name-scope groups are open,
and the :class:`~widgets.common.selection.SelectionModel` that the canvas and the panels share.

Selection flows both ways here: canvas box keys -> targets (``_on_canvas_selection``) and
targets -> canvas keys (``_on_selection``), switching the shown scope and opening the
groups a target lies in first when needed (the selection is applied once that layout is
done).

Control-flow bodies expand in place: double-clicking an If/Loop/Scan box toggles its
bodies inside a frame (the controller gets ``bodies=`` from the Document), and the context
menu keeps "Open body as its own view" (``open_body``). A body node selected on the canvas
is a target of its own body scope; revealing a target that lies in a body already open in
the view selects it there (opening name groups inside the body as needed); a target in a
closed body switches the view to that body's graph, as before.
"""

from __future__ import annotations

from pathlib import Path

import onnx
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from editor.document import Document
from editor.viewmodel import body_key, default_expanded, document_bodies, group_tree
from widgets.canvas import CanvasWidget
from widgets.view.display_options import DisplayOptions, apply_options
from widgets.common.formatting import shown
from widgets.common.next_pass import pass_timer
from widgets.common.selection import SelectionModel, Target
from widgets.view.shape_labels import ShapeLabels
from widgets.window.live_checks import LiveChecks

SOURCE = "canvas"
#: node fields an edit may change and the picture stays (relabelled in place): the box shows
#: the name; the doc string is not drawn
RELABEL_FIELDS = ("name", "doc_string")
#: a first view fitted below this zoom is unreadable: show the top at READABLE_ZOOM instead
READABLE_ZOOM = 0.55
#: nodes linked per pass of the event loop after the first picture (about 15 ms)
LINK_STEP = 2000


def display_graph_of(scope) -> onnx.GraphProto:
    """The GraphProto the canvas draws for a scope.

    Functions have bare input/output names, no types: a read-only GraphProto wrapper is made
    for display (the document is untouched)."""
    g = scope.graph
    if isinstance(g, onnx.GraphProto):
        return g
    wrapper = onnx.GraphProto(name=scope.title)
    wrapper.node.extend(g.node)
    for name in g.input:
        wrapper.input.add().name = name
    for name in g.output:
        wrapper.output.add().name = name
    wrapper.value_info.extend(getattr(g, "value_info", ()))
    return wrapper


class DocumentTab(QWidget):
    """One model in the window's tab widget."""

    #: the first layout of the model is on screen
    ready = Signal()
    busyChanged = Signal(bool)
    progress = Signal(float)
    layoutFailed = Signal(str)
    scopeChanged = Signal(int)

    def __init__(self, doc: Document, parent: QWidget | None = None, *, dark: bool = False,
                 show_names: bool = False, validator=None, options: DisplayOptions | None = None,
                 groups=None) -> None:
        """``groups``: the main graph's group tree, made with the document off the GUI
        thread (:func:`editor.viewmodel.group_tree`); else the tab makes it."""
        super().__init__(parent)
        self.doc = doc
        #: live editor.validation.Validator of this document (None without the module)
        self.validator = validator
        #: its whole-model check, run off the GUI thread behind the edits
        self.live_checks = LiveChecks(validator, self) if validator is not None else None
        self.selection = SelectionModel(self)
        self.canvas = CanvasWidget(self, dark=dark)
        self.canvas.scene.set_show_names(show_names)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.canvas)
        self._scope_id = doc.index.main
        self._graph: onnx.GraphProto | None = None
        self._trees: dict[int, object] = {}
        #: group trees made before the tab (the loader's), used once by the first view
        self._made_trees: dict[int, object] = {doc.index.main: groups} if groups is not None else {}
        self._pending: list[str] | None = None
        self._first_view = True
        self._ready = False
        self._link_timer = pass_timer(self, self._link_in_steps)
        #: node ids added or changed since the last layout, and whether an edit caused it
        self._touched: set[int] = set()
        self._after_edit = False
        self._syncing = False
        controller = self.canvas.controller
        self._options = options or DisplayOptions()
        # View > Boxes Show: the controller filters every display model it builds
        controller.set_display_filter(lambda graph: apply_options(graph, self._options))
        # If/Loop/Scan bodies expand in place (read from the live document at each build)
        controller.set_bodies(document_bodies(doc))
        controller.laidOut.connect(self._on_laid_out)
        controller.busy.connect(self.busyChanged)
        controller.progress.connect(self.progress)
        controller.failed.connect(self.layoutFailed)
        if self.live_checks is not None:
            # a big model is checked once on screen (_on_laid_out), or once its layout failed
            self.layoutFailed.connect(lambda _message: self.live_checks.start_first_pass())
        self.canvas.selectionChangedKeys.connect(self._on_canvas_selection)
        self.canvas.activated.connect(self._on_activated)
        self.canvas.openBody.connect(self._on_open_body)
        self.canvas.valueClicked.connect(self._on_value_clicked)
        self.selection.changed.connect(self._on_selection)
        # edge labels from the shape engine, kept current off the GUI thread for big models
        self.shape_labels = ShapeLabels(self)
        self.shape_labels.ready.connect(lambda: self._rebuild_timer.start())
        self.canvas.scene.value_notes = self._value_notes
        # psygnal -> Qt: document events may come from commands run on this thread only
        self._rebuild_timer = QTimer(self)
        self._rebuild_timer.setSingleShot(True)
        self._rebuild_timer.setInterval(40)
        self._rebuild_timer.timeout.connect(self._rebuild_display)
        doc.changed.connect(self._on_doc_changed)
        self.show_scope(self._scope_id)

    # -- identity -------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        return self.doc.path

    def title(self) -> str:
        name = shown(self.doc.path.name) if self.doc.path else "Untitled"
        return f"{name}*" if self.doc.is_modified else name

    @property
    def is_ready(self) -> bool:
        return self._ready

    @property
    def scope_id(self) -> int:
        return self._scope_id

    # -- scopes ---------------------------------------------------------------------------
    def show_scope(self, sid: int) -> None:
        """Draw graph scope ``sid`` (main graph, a subgraph body, a function)."""
        scope = self.doc.scope(sid)
        self._scope_id = sid
        self._graph = display_graph_of(scope)
        value_info = self._edge_shapes(scope)
        self._trees.pop(sid, None)
        self._first_view = True
        # the view model's first-view policy, on the group tree we also use to reveal nodes
        expanded = default_expanded(self._graph, groups=self._tree())
        self.canvas.set_source(self._graph, list(scope.node_ids), opsets=self.doc.opsets(), value_info=value_info,
                               expanded=expanded, groups=self._tree())
        if scope.kind != "main":
            # the breadcrumb says where this body lives: main/If_3.then_branch
            self.canvas.breadcrumb.set_root_label(self.doc.index.path(sid))
        self.scopeChanged.emit(sid)

    def _edge_shapes(self, scope) -> dict:
        """What the edges are labelled with: the declared types, and for the main graph the
        shape engine's shapes where the file declares none (:class:`ShapeLabels`: kept
        current after each edit, computed off the GUI thread for big models), or the last
        run's sizes when View ▸ Shapes of the Last Run is on."""
        value_info = {vi.name: vi for vi in list(self._graph.value_info) + list(self._graph.input)
                      + list(self._graph.output) if vi.HasField("type")}
        if scope.kind == "main":
            value_info.update(self.shape_labels.value_info(self._graph))
        return value_info

    def _value_notes(self, name: str) -> str:
        """Where a hovered edge's shape comes from (main graph; bodies say nothing more)."""
        if self.doc.scope(self._scope_id).kind != "main":
            return ""
        return self.shape_labels.notes(name)

    def _tree(self):
        tree = self._trees.get(self._scope_id)
        if tree is None:
            # the same grouping the view model draws (scoped names, weight Constants left out)
            tree = self._made_trees.pop(self._scope_id, None) or group_tree(self._graph)
            self._trees[self._scope_id] = tree
        return tree

    def _on_laid_out(self) -> None:
        if self._first_view:
            self._first_view = False
            self._readable_first_view()
        elif self._after_edit:
            self._keep_view_on_edit()
        self._touched, self._after_edit = set(), False
        if self._pending is not None:
            keys, self._pending = self._pending, None
            self._select_keys(keys)
        if not self._ready:
            self._ready = True
            if self.live_checks is not None:
                # a big model is checked once it is on screen (its steps start at the next
                # event-loop turn, after the window has painted the picture)
                self.live_checks.start_first_pass()
            self._link_timer.start()
            self.ready.emit()

    def _link_in_steps(self) -> None:
        """Link the nodes the open left unlinked (who makes and who uses each value:
        ``ModelIndex.link_some``), a few thousand per pass of the event loop, so the first
        edit does not pay for all of them (0.1 s in one piece on the 11.8k-node export)."""
        if self.doc.index.link_some(LINK_STEP):
            self._link_timer.start()

    def _readable_first_view(self) -> None:
        """Netron-like first view: a graph that cannot be read whole opens at its inputs, at a
        readable zoom (the minimap and the outline give the overview)."""
        view = self.canvas.view
        rect = self.canvas.scene.graph_rect()
        if rect.isEmpty() or view.zoom() >= READABLE_ZOOM:
            return
        view.land_on(rect.adjusted(-20, -20, 20, 20), top=view.inputs_rect(), min_zoom=READABLE_ZOOM)

    def _keep_view_on_edit(self) -> None:
        """After an edit, an undo or a redo, the view shows what changed: it stays put while
        any changed box is on screen, else goes to the changed boxes; when nothing remains
        to show there (a deletion) and the view sits on empty space, it fits the graph."""
        scene, view = self.canvas.scene, self.canvas.view
        keys = [k for k in (f"n:{nid}" for nid in self._touched) if scene.item_for(k) is not None]
        visible = view.visible_scene_rect()
        if keys:
            rect = scene.keys_rect(keys)
            if not rect.intersects(visible):
                view.land_on(rect.adjusted(-60, -60, 60, 60), max_scale=max(view.zoom(), READABLE_ZOOM))
            return
        if not scene.keys_in_rect(visible):
            view.zoom_to_readable()

    def _on_doc_changed(self, changes) -> None:
        if changes.only_node_fields(RELABEL_FIELDS) and self._rename_in_place(changes.nodes_changed):
            return
        # the boxes an edit (or its undo/redo) brought back or changed: see _keep_view_on_edit
        self._touched |= set(changes.nodes_added) | set(changes.nodes_changed)
        self._after_edit = True
        self._made_trees.clear()
        # NOTE: rebuilding the display model of a 10k-node graph takes a few hundred ms.
        # Coalesce: quick successive edits (typing, scripts) rebuild once, and the cheap views
        # (problem badges, the problems panel) update first, within the edit's own signal.
        self._trees.clear()
        self._rebuild_timer.start()

    def _rename_in_place(self, node_ids) -> bool:
        """Renamed nodes of the shown graph relabel their boxes; nothing moves, no layout.

        NOTE: a rename used to rebuild the display model and re-lay out the graph (19 ms on
        102 nodes, 76 ms on 480, then the scene rebuilt from the new layout). A renamed node
        whose name-scope group stays the same keeps its box, its place and its edges: only
        its text changes. False (the caller rebuilds) when a rebuild is pending anyway, the
        node is drawn in another scope's frame, or the new name moves it to another group."""
        if self._rebuild_timer.isActive() or not self._ready:
            return False
        if self._graph is not self.doc.scope(self._scope_id).graph:
            return False  # a function's display copy: it is made again from the document
        index = self.doc.index
        if any(index.node_scope.get(nid) != self._scope_id for nid in node_ids):
            return False
        area = self.canvas.controller.rename_nodes({nid: index.nodes[nid] for nid in node_ids})
        if area is None:
            return False
        view = self.canvas.view
        if not area.isEmpty():  # the boxes' region only (an item update repaints it all)
            view.viewport().update(view.mapFromScene(area).boundingRect().adjusted(-2, -2, 2, 2))
        self._touched = set(node_ids)
        self._keep_view_on_edit()
        self._touched = set()
        return True

    def rebuild_pending(self) -> bool:
        """An edit's (or a shape table's) view rebuild is due."""
        return self._rebuild_timer.isActive()

    def _rebuild_display(self) -> None:
        # (the group trees stand: an edit cleared them; new shapes or a run's sizes change
        # the edges' labels only, and the export's tree took 0.25 s to make again)
        if self._scope_id not in self.doc.index.scopes:
            self._scope_id = self.doc.index.main
        scope = self.doc.scope(self._scope_id)
        self._graph = display_graph_of(scope)
        expanded = self.canvas.controller.expanded()
        value_info = self._edge_shapes(scope)
        self.canvas.controller.set_source(self._graph, list(scope.node_ids), opsets=self.doc.opsets(),
                                          value_info=value_info, expanded=expanded, groups=self._tree())

    # -- selection: canvas -> targets ---------------------------------------------------------
    def _on_canvas_selection(self, keys: list) -> None:
        if self._syncing:
            return
        if self.canvas.scene.relaying:
            # NOTE: a new layout re-announces the boxes that survived; rebuilding the
            # targets from them dropped every target not drawn as a box (Find's matches in
            # closed groups, a value) and made a group box the current target. A relayout
            # only drops the targets that are gone (an undone add, an opened group).
            self._drop_gone_targets()
            return
        sid = self._scope_id
        targets = []
        for key in keys:
            kind, _, rest = key.partition(":")
            if kind == "n" and rest.isdigit() and self.doc.has_node(int(rest)):
                # a node drawn inside an expanded body belongs to the body's scope
                targets.append(Target.of_node(self.doc.index.node_scope[int(rest)], int(rest)))
            elif kind in ("in", "out"):
                target = self.value_of_box(key)
                if target is not None:
                    targets.append(target)
            elif kind == "g":
                targets.append(Target("group", sid, None, rest))
        current = self.selection.current if self.selection.current in targets else None
        self.selection.select(targets, SOURCE, current=current)

    def _drop_gone_targets(self) -> None:
        doc, scene = self.doc, self.canvas.scene

        def alive(t: Target) -> bool:
            if t.kind == "node":
                return t.node is not None and doc.has_node(t.node)
            if t.kind in ("value", "tensor", "scope", "group") and t.scope not in doc.index.scopes:
                return False
            if t.kind in ("value", "tensor"):
                return doc.scope(t.scope).uses_name(t.name)
            if t.kind == "group":
                return scene.item_for(f"g:{t.name}") is not None
            return True

        targets = self.selection.targets
        kept = [t for t in targets if alive(t)]
        if len(kept) != len(targets):
            current = self.selection.current if self.selection.current in kept else None
            self.selection.select(kept, SOURCE, current=current)

    def _on_value_clicked(self, name: str) -> None:
        """A click on an edge selects the value it carries (properties and Run dock follow)."""
        if not self._syncing:
            self.selection.select([Target.of_value(self.value_scope(name), name)], SOURCE)

    def value_of_box(self, key: str) -> Target | None:
        """The value a graph input/output box stands for (``"in:x"``; a body's own box is
        ``"in:@<owner>/<attr>:<name>"``), None for other boxes."""
        kind, _, rest = key.partition(":")
        if kind not in ("in", "out"):
            return None
        if rest.startswith("@"):
            frame, _, name = rest.partition(":")
            body = self._body_scope(frame)
            return Target.of_value(body, name) if body is not None else None
        return Target.of_value(self._scope_id, rest)

    def value_scope(self, name: str) -> int:
        """The graph scope of value ``name`` as this view draws it: an edge inside a body
        open in place carries a value of that body (its producer's scope), not of the
        scope the view shows."""
        for edge in self.canvas.scene.edges_of_value(name):
            kind, _, rest = edge.src.partition(":")
            if kind == "n" and rest.isdigit() and self.doc.has_node(int(rest)):
                return self.doc.index.node_scope[int(rest)]
            if kind in ("in", "g") and rest.startswith("@"):
                # a body's input box "in:@<owner>/<attr>:<name>", a group in a body "g:@<owner>/<attr>/..."
                frame = rest.partition(":")[0] if kind == "in" else "/".join(rest.split("/")[:2])
                body = self._body_scope(frame)
                if body is not None:
                    return body
        return self._scope_id

    def _body_scope(self, frame: str) -> int | None:
        """Scope id of the body drawn in sub-frame ``"@<owner>/<attr>"``."""
        owner, _, attr = frame[1:].partition("/")
        if not owner.isdigit():
            return None
        for sid in self.doc.index.children.get(int(owner), ()):
            if self.doc.scope(sid).attr == attr:
                return sid
        return None

    def _on_activated(self, key: str) -> None:
        """Double-click on a node that holds subgraphs (If/Loop/Scan) expands or collapses
        its bodies in place."""
        kind, _, rest = key.partition(":")
        if kind == "n" and rest.isdigit() and self.doc.index.children.get(int(rest)):
            self.canvas.toggle_body(int(rest))

    def _on_open_body(self, key: str) -> None:
        kind, _, rest = key.partition(":")
        if kind == "n" and rest.isdigit():
            self.open_body(int(rest))

    def open_body(self, nid: int) -> None:
        """Show the first body of control-flow node ``nid`` as its own view."""
        children = self.doc.index.children.get(nid, ())
        if children:
            self.show_scope(children[0])
            self.selection.select([Target("scope", children[0])], "canvas-open")

    # -- selection: targets -> canvas ---------------------------------------------------------
    def _on_selection(self, source: str) -> None:
        if source == SOURCE:
            return
        self.reveal(self.selection.targets, current=self.selection.current)

    def scope_for(self, target: Target) -> int | None:
        if target.kind == "node" and target.node is not None and self.doc.has_node(target.node):
            return self.doc.index.node_scope[target.node]
        if target.kind in ("value", "tensor", "group", "scope") and target.scope in self.doc.index.scopes:
            return target.scope
        return None

    def keys_for(self, target: Target) -> list[str]:
        """Canvas keys that stand for ``target`` in its scope (a value is drawn as its
        producer or graph input box, an initializer as the boxes that use it)."""
        doc = self.doc
        if target.kind == "node" and target.node is not None:
            keys = [f"n:{target.node}"]
            node = doc.node(target.node) if doc.has_node(target.node) else None
            if node is not None and node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                # a Constant used as a weight is drawn inside the boxes that use it
                sid = doc.index.node_scope[target.node]
                for out in node.output:
                    keys += [f"n:{nid}" for nid, _ in doc.consumers(sid, out)]
            return keys
        if target.kind == "group":
            return [f"g:{target.name}"]
        if target.kind == "tensor" and target.node is not None:
            return [f"n:{target.node}"] + [f"n:{nid}" for nid, _ in doc.consumers(target.scope, target.name)]
        if target.kind in ("value", "tensor"):
            scope = doc.scope(target.scope)
            keys = []
            if target.name in scope.input_names() and target.name not in scope.initializer_names():
                keys.append(f"in:{target.name}")
            producer = doc.producer(target.scope, target.name)
            if producer is not None:
                keys.append(f"n:{producer}")
            if target.name in scope.output_names():
                keys.append(f"out:{target.name}")
            if not keys or target.kind == "tensor":
                keys += [f"n:{nid}" for nid, _ in doc.consumers(target.scope, target.name)]
            return keys
        return []

    def reveal(self, targets, *, current: Target | None = None) -> None:
        """Select ``targets`` on the canvas and centre them, switching scope and opening
        groups as needed."""
        targets = list(targets)
        if not targets:
            self._select_keys([])
            return
        focus = current or targets[0]
        sid = self.scope_for(focus)
        if sid is None:
            return
        keys = []
        for t in targets:
            if self.scope_for(t) == sid:
                keys += self.keys_for(t)
        keys = list(dict.fromkeys(keys))
        if sid != self._scope_id:
            paths = self._body_paths(focus.node) if focus.kind == "node" and focus.node is not None else None
            expanded = self.canvas.controller.expanded()
            if paths is None or expanded is None or any(p.startswith("@") and "/" not in p and p not in expanded
                                                        for p in paths):
                # not in a body open in this view: show its own graph, as before
                self._pending = keys
                self.show_scope(sid)
                return
            # a node in a body open in this view: open the name groups around it in place
            if self.canvas.controller.expand_paths(paths):
                self._pending = keys
                return
            self._select_keys(keys)
            return
        # NOTE: only the current target's groups open (and only its folded weights unfold).
        # Opening every match's groups made a one-letter Find open dozens of them (and
        # re-lay out the graph) while typing; the other matches in closed groups are marked
        # by their group's box (_select_keys), and each opens when the user goes to it
        # (Enter, F3, a click on its row).
        missing = self._groups_to_open(self.keys_for(focus))
        # a node asked for by itself (not a tensor's users) that is folded into its
        # consumer's weight rows is drawn as a box again: the current one only, as above
        unfolded = self.canvas.controller.unfold_for(
            [f"n:{focus.node}"] if focus.kind == "node" and focus.node is not None else [])
        if missing or unfolded:
            self._pending = keys
            for path in missing:
                self.canvas.controller.expand(path)
            if not missing:
                self.canvas.controller.relayout()
            return
        self._select_keys(keys)

    def _body_paths(self, nid: int) -> list[str] | None:
        """Expanded paths that show body node ``nid`` in the current view (its owners'
        ``@<id>`` keys and the name groups around it and them), or None when ``nid`` does
        not lie in a body of the shown scope."""
        index = self.doc.index
        paths: list[str] = []
        sid = index.node_scope.get(nid)
        node = nid
        while sid is not None and sid != self._scope_id:
            scope = self.doc.scope(sid)
            if scope.kind != "subgraph" or scope.owner is None:
                return None
            tree = group_tree(scope.graph)
            pre = f"{body_key(scope.owner)}/{scope.attr}"
            paths += [pre + g for g in tree.chain(scope.position(node))]
            paths.append(body_key(scope.owner))
            node = scope.owner
            sid = index.node_scope.get(node)
        if sid is None:
            return None
        scope = self.doc.scope(sid)
        paths += list(self._tree().chain(scope.position(node)))
        return paths

    def _groups_to_open(self, keys: list[str]) -> list[str]:
        expanded = self.canvas.controller.expanded()
        if expanded is None:
            return []
        scope = self.doc.scope(self._scope_id)
        tree = self._tree()
        wanted: list[str] = []
        for key in keys:
            if not key.startswith("n:"):
                continue
            nid = int(key[2:])
            if self.canvas.scene.item_for(key) is not None or nid not in scope.node_ids:
                continue
            for path in tree.chain(scope.position(nid)):
                if path not in expanded and path not in wanted:
                    wanted.append(path)
        return wanted

    def _closed_group_keys(self, keys: list[str]) -> list[str]:
        """The drawn box of each closed group that hides one of ``keys`` (node boxes of
        this scope): the outermost group of its chain that is not open."""
        expanded = self.canvas.controller.expanded()
        if expanded is None:
            return []
        scope = self.doc.scope(self._scope_id)
        scene = self.canvas.scene
        out: list[str] = []
        for key in keys:
            if not key.startswith("n:") or scene.item_for(key) is not None:
                continue
            nid = int(key[2:])
            if self.doc.index.node_scope.get(nid) != self._scope_id:
                continue
            for path in self._tree().chain(scope.position(nid)):
                if path not in expanded:
                    if scene.item_for(f"g:{path}") is not None and f"g:{path}" not in out:
                        out.append(f"g:{path}")
                    break
        return out

    def _select_keys(self, keys: list[str]) -> None:
        """Select ``keys`` on the canvas; centre the current target's boxes (at a readable
        zoom) or, without one, bring the whole selection into view."""
        scene, view = self.canvas.scene, self.canvas.view
        present = [k for k in keys if scene.item_for(k) is not None]
        current = self.selection.current
        focus = [k for k in self.keys_for(current) if k in present] if current is not None and present else []
        # a target inside a closed group is marked by the group's box (it opens when the
        # user goes to that target)
        present += [k for k in self._closed_group_keys(keys) if k not in present]
        self._syncing = True
        try:
            view.select_keys(present, center=bool(present) and not focus)
        finally:
            self._syncing = False
        if focus:
            self._centre(focus)
            # the breadcrumb names where the current target lies (F3 moves it without
            # changing the selection, which the breadcrumb otherwise follows)
            self.canvas.follow(focus[0])

    def _centre(self, keys: list[str]) -> None:
        view = self.canvas.view
        rect = self.canvas.scene.keys_rect(keys)
        if rect.isEmpty():
            return
        visible = view.visible_scene_rect()
        if rect.width() > visible.width() or rect.height() > visible.height():
            view.fit_rect(rect.adjusted(-60, -60, 60, 60), max_scale=max(view.zoom(), READABLE_ZOOM))
            return
        if view.zoom() < READABLE_ZOOM:
            view.set_zoom(READABLE_ZOOM)
        view.centerOn(rect.center())

    # -- view options -----------------------------------------------------------------------
    def set_show_names(self, on: bool) -> None:
        self.canvas.scene.set_show_names(on)

    @property
    def options(self) -> DisplayOptions:
        return self._options

    def set_options(self, options: DisplayOptions) -> None:
        """Change what boxes show; re-lays out keeping the boxes the user knows in place."""
        if options != self._options:
            self._options = options
            self.canvas.controller.relayout(keep_positions=True)

    def set_dark(self, dark: bool) -> None:
        self.canvas.scene.set_dark(dark)

    def close_document(self, *, release_store: bool = True) -> None:
        """Stop background work and release the model's files (``release_store=False``: the
        external data store is borrowed, as by a diff pane showing a snapshot of a tab)."""
        self.canvas.controller.runner.shutdown()
        self._rebuild_timer.stop()
        self.doc.changed.disconnect(self._on_doc_changed)
        if self.live_checks is not None:
            self.live_checks.close()
        if self.validator is not None:
            self.validator.close()
        store = getattr(self.doc, "store", None)
        if store is not None and release_store:
            QTimer.singleShot(0, store.close)
