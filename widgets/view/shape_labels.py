"""The shapes a tab's edges are labelled with, kept current without blocking the window.

One :class:`ShapeLabels` per document tab holds the shape engine's table of the main graph
(:class:`editor.shapes.incremental.LiveShapes`):

* the first table of a model up to :data:`SYNC_MAX_NODES` nodes is computed on the spot
  (tens of milliseconds); a larger model's is computed off the GUI thread on a structure
  snapshot, started once the tab's first picture is on screen; the edges are labelled with
  the file's declarations meanwhile, and ``ready`` asks the tab to relabel when the table
  arrives;
* after an edit only the changed node's downstream is re-inferred (``LiveShapes.update``,
  milliseconds on a 12k-node graph); an edit that takes a whole pass (new graph inputs,
  initializers, opsets) takes it off the GUI thread when the model is large;
* after a run, "Shapes of the Last Run" (:func:`install_shape_labels`) labels the edges
  with the sizes the run produced instead of the symbolic dims;
* a hovered edge says where its shape comes from: declared in the file, inferred, seen in
  the last run, and whether the declaration contradicts the inference
  (:func:`editor.shapes.facts.value_fact`).

The level of detail is the canvas's own: labels vanish when too small to read.
"""

from __future__ import annotations

import threading
from html import escape

from PySide6.QtCore import QObject, QTimer, Signal

from widgets.actions.registry import ActionSpec

#: models up to this many nodes get their first table on the GUI thread
SYNC_MAX_NODES = 5000


class ShapeLabels(QObject):
    """The shape table behind one tab's edge labels (see the module docstring)."""

    #: a table computed off the GUI thread arrived, or the observed shapes changed
    ready = Signal()

    def __init__(self, tab) -> None:
        super().__init__(tab)
        self.tab = tab
        self.doc = tab.doc
        self.live = None  # LiveShapes, once a table exists
        #: value name -> (dtype, shape) of the last run, while "Shapes of the Last Run" is on
        self.observed: dict[str, tuple] | None = None
        #: the thread computing a whole table, if one is running (tests wait on it)
        self.pending: threading.Thread | None = None
        self._edits = 0  # counts edits, so a table computed before the last one is not used
        self._timer: QTimer | None = None
        #: the engine's labels of the main graph, relabelled per edit where the shapes changed
        self._labels: dict | None = None
        #: a big model's first table waits for the tab's first picture (see table())
        self._after_picture = False
        self.doc.changed.connect(self._on_changed)

    # -- the table ---------------------------------------------------------------------------
    def table(self):
        """The main graph's shape table now, or None while it is being computed."""
        if self.live is None and self.pending is None:
            if len(self.doc.model.graph.node) <= SYNC_MAX_NODES:
                self._make_live(None)
            elif getattr(self.tab, "is_ready", True):
                self._start()
            elif not self._after_picture:
                # NOTE: a big model's first picture is drawn with the file's declarations:
                # the snapshot (0.2 s on the GUI thread for 11.8k nodes) and the worker (one
                # GIL with the GUI thread) cost the first picture ~0.7 s when started before
                self._after_picture = True
                self.tab.ready.connect(lambda: QTimer.singleShot(0, self, self._start_late))
                # a first layout that fails never makes the tab ready: start then all the same
                self.tab.layoutFailed.connect(lambda _message: QTimer.singleShot(0, self, self._start_late))
        return self.live.table if self.live is not None else None

    def _start_late(self) -> None:
        """The table deferred until the model's first picture (see :meth:`table`), and
        until the window has finished starting up."""
        window = self.tab.window()
        if not getattr(window, "started_up", True):  # (a tab outside a main window starts at once)
            # NOTE: the window installs its late docks after the first picture, ~100 module
            # imports in a few passes of its event loop; with this worker computing, each
            # import waits for the GIL at every file-system call (the window answered a click
            # after 1.3 s instead of 0.7 s after the export's first picture)
            window.when_started_up(self._start_late)
            return
        if self.live is None and self.pending is None:
            self._start()

    def _make_live(self, table) -> None:
        from editor.shapes.incremental import LiveShapes

        self._labels = None
        try:
            self.live = LiveShapes(self.doc, table)
        except Exception:  # noqa: BLE001 - labels are a help: a model the engine cannot read keeps its own
            self.live = None

    def _start(self) -> None:
        """Compute a whole table off the GUI thread on a snapshot of the document."""
        from editor.shapes import infer_model
        from editor.shapes.declare import label_value_info
        from editor.shapes.engine import structure_snapshot

        snapshot = structure_snapshot(self.doc.model)
        edits = self._edits
        box: dict = {}

        def work() -> None:
            try:
                box["table"] = infer_model(snapshot)
            except Exception:  # noqa: BLE001 - no table: the file's own labels stay
                box["table"] = None
                return
            try:
                # the edges' labels too: the snapshot has the graph's values and declarations,
                # and on the GUI thread they held the window 0.3 s on the 11.8k-node export
                box["labels"] = label_value_info(snapshot.graph, box["table"])
            except Exception:  # noqa: BLE001 - made (or given up) on the GUI thread when asked
                box["labels"] = None

        def poll() -> None:
            if self.pending is not None and self.pending.is_alive():
                return
            timer.stop()
            self.pending = None
            if edits != self._edits:
                self._start()  # the document moved on meanwhile: that table is stale
                return
            if box.get("table") is not None:
                self._make_live(box["table"])
                if self.live is not None:
                    self._labels = box.get("labels")
                self.ready.emit()

        self.pending = threading.Thread(target=work, name="shape-labels", daemon=True)
        self.pending.start()
        timer = QTimer(self)
        timer.timeout.connect(poll)
        timer.start(30)
        self._timer = timer

    def _on_changed(self, changes) -> None:
        if changes.only_node_fields(("name", "doc_string")):
            return  # shapes do not depend on node names: the table (and a running one) stands
        self._edits += 1
        if self.live is None:
            return  # the next table() (or the running worker's restart) sees the edit
        large = len(self.doc.model.graph.node) > SYNC_MAX_NODES
        if large and self.live.needs_full(changes):
            self.live = None
            self._labels = None
            if self.pending is None:
                self._start()
            return
        try:
            stats = self.live.update(changes)
        except Exception:  # noqa: BLE001 - a failed update must not leave wrong labels: start over
            self.live = None
            self._labels = None
            return
        main = self.doc.index.main
        declarations = any(sid == main and f in ("value_info", "input", "output")
                           for sid, f in list(changes.scope_fields) + list(changes.lists_reshaped)
                           + [(s, f) for s, f, _k in changes.items])
        if stats.changed is None or declarations:
            self._labels = None  # relabel everything at the next view
        elif self._labels is not None and stats.changed:
            self._relabel(stats.changed)

    def _relabel(self, names: set[str]) -> None:
        from editor.shapes.declare import label_value_info

        labels = self._labels
        for name in names:
            labels.pop(name, None)
        try:
            labels.update(label_value_info(self.doc.model.graph, self.live.table,
                                           names=[n for n in names if n in self.live.table.values]))
        except Exception:  # noqa: BLE001
            self._labels = None

    # -- labels ------------------------------------------------------------------------------
    def value_info(self, graph) -> dict:
        """Edge labels for the main ``graph`` beyond the file's own: the engine's shapes,
        then the last run's sizes when those are shown."""
        out: dict = {}
        table = self.table()
        if table is not None:
            if self._labels is None:
                from editor.shapes.declare import label_value_info

                try:
                    self._labels = label_value_info(graph, table)
                except Exception:  # noqa: BLE001 - labels are a help, never a failure
                    self._labels = {}
            out.update(self._labels)
        if self.observed:
            from editor.shapes.facts import observed_value_info

            out.update(observed_value_info(self.observed))
        return out

    def inferred_type(self, name: str):
        """The shape engine's type of main-graph value ``name`` (dims as formulas in the
        model's symbols), or None while it is unknown or still being computed."""
        table = self.table()
        if table is None or name not in table.values:
            return None
        from editor.shapes.engine import type_proto

        return type_proto(table.get(name))

    def set_observed(self, observed: dict | None) -> None:
        """Label edges with a run's shapes (``None``: the symbolic ones again)."""
        if observed == self.observed:
            return
        self.observed = observed
        self.ready.emit()

    def notes(self, name: str) -> str:
        """Tool-tip lines (rich text) about value ``name``'s shape and where it comes from."""
        from editor.shapes.facts import value_fact

        graph = self.doc.model.graph
        table = self.live.table if self.live is not None else None
        fact = value_fact(name, graph, table, self.observed)
        lines = []
        if fact.declared:
            lines.append(f"declared in the file: {escape(fact.declared)}")
        if fact.inferred:
            lines.append(f"inferred: {escape(fact.inferred)}")
        elif table is None and self.pending is not None:
            lines.append("inferring shapes…")
        if fact.observed:
            lines.append(f"seen in the last run: {escape(fact.observed)}")
        if fact.conflict:
            lines.append(f"<span style='color:#c62828'><b>conflict:</b> {escape(fact.conflict)}</span>")
        return "<br>".join(lines)


def shown_type(tab, sid: int, name: str):
    """``(TypeProto or None, inferred)`` of a value for a panel or dialog: the file's
    declaration, else (main graph) the shape engine's, which the caller marks as inferred.

    NOTE: Properties said "Type: unknown" for a value whose edge tooltip showed
    ``float32 [1, 24, 32, floor((image_width + 1)/2)]``: the panels read only the file."""
    vi = tab.doc.value_info(sid, name)
    if vi is not None and vi.HasField("type"):
        return vi.type, False
    if sid != tab.doc.index.main:
        return None, False
    tp = tab.shape_labels.inferred_type(name)
    return tp, tp is not None


def observed_shapes(result, feed_shapes=None, model=None) -> dict[str, tuple]:
    """Value name -> (dtype, shape) of a run's tensors: the values a RunResult holds, and
    the graph inputs it was fed (``feed_shapes``, typed from ``model``'s declarations)."""
    if result is None or not result.ok:
        return {}
    out: dict[str, tuple] = {}
    if feed_shapes and model is not None:
        from editor.shapes.declare import dtype_name

        types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
        for name, shape in feed_shapes.items():
            if name in types:
                out[name] = (dtype_name(types[name]), tuple(shape))
    out.update({name: (rec.dtype, rec.shape) for name, rec in result.outputs.items() if rec.shape is not None})
    return out


def install_shape_labels(window) -> None:
    """View ▸ Shapes of the Last Run: label edges with the sizes the last run produced.

    Declared as the registry action ``view.shapes_of_last_run`` (checkable); it follows
    every run of every tab while on."""
    connected: set[int] = set()

    def controller(tab):
        # (not installed yet: nothing has run; asking for it would build it before the picture)
        late = getattr(window, "late_dock", None)
        dock = late("run_dock") if late is not None else getattr(window, "run_dock", None)
        return dock.controller_for(tab) if dock is not None else None

    def apply(tab) -> None:
        c = controller(tab)
        on = window.registry.action("view.shapes_of_last_run").isChecked()
        observed = observed_shapes(c.last_result, c.last_feed_shapes, tab.doc.model) if (on and c is not None) else {}
        tab.shape_labels.set_observed(observed or None)

    def toggled(_on: bool) -> None:
        for tab in window.tab_list():
            apply(tab)

    def shown(tab) -> None:
        c = controller(tab)
        if c is None or id(c) in connected:
            return
        connected.add(id(c))

        def finished(_result, t=tab) -> None:
            apply(t)
            window.registry.refresh()

        c.finished.connect(finished)
        c.destroyed.connect(lambda *_a, k=id(c): connected.discard(k))

    def has_run() -> bool:
        tab = window.current_tab()
        c = controller(tab) if tab is not None else None
        return c is not None and c.last_result is not None and c.last_result.ok

    window.registry.add(ActionSpec(
        id="view.shapes_of_last_run", title="Shapes of the &Last Run", run=toggled, menu="View",
        section="shapes", checkable=True, enabled_when=has_run,
        tip="Label edges with the sizes the last run produced instead of the symbolic shapes",
        keywords="observed actual run shapes dims labels"))
    window.modelShown.connect(shown)
    for tab in window.tab_list():
        shown(tab)
