"""The shape engine kept current after an edit, redoing only what the edit can change.

Labelling every edge of an 11,812-node model means a table of every value's shape; an edit
changes one node, and only that node's downstream can change. :class:`LiveShapes` holds the
main graph's :class:`~editor.shapes.engine.ShapeTable` and, given a document's
:class:`~editor.document.ChangeSet`, re-runs the engine's per-node step
(:class:`~editor.shapes.engine.NodeStep`) on a worklist in graph order: the changed nodes
first, then the consumers of every value whose shape came out different. A value whose
shape is unchanged stops the wave there, so renaming a node or changing an attribute that
does not touch shapes costs a handful of steps.

Edits the worklist cannot follow (graph inputs, initializers, value_info entries, opsets,
a replaced graph) are answered with a full pass, which is the engine's own
:func:`~editor.shapes.engine.infer_model`. Nodes inside bodies are followed through their
top-level owner: the owner is re-inferred, bodies included.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from editor.shapes.engine import NodeStep, ShapeTable, infer_model

__all__ = ["LiveShapes", "UpdateStats"]

#: graph fields whose change invalidates more than a node's downstream
_FULL_FIELDS = ("input", "initializer", "sparse_initializer")


@dataclass
class UpdateStats:
    """What an update did: ``full`` (a whole pass), ``steps`` (nodes re-inferred),
    ``changed`` (values whose shape is now different; None after a full pass: any)."""

    full: bool
    steps: int
    changed: set[str] | None


class LiveShapes:
    """The shape table of ``doc``'s main graph, kept current by :meth:`update`."""

    def __init__(self, doc: Any, table: ShapeTable | None = None) -> None:
        self.doc = doc
        self.table: ShapeTable = table if table is not None else infer_model(doc.model)
        self._step = self._new_step()
        self._outs = self._outputs_by_node()

    def _main(self):
        return self.doc.scope(self.doc.index.main)

    def _new_step(self) -> NodeStep:
        model = self.doc.model
        opsets = {o.domain or "": o.version for o in model.opset_import}
        return NodeStep(model.graph, self.table, opsets, model.ir_version)

    def _outputs_by_node(self) -> dict[int, tuple[str, ...]]:
        scope = self._main()
        return {nid: tuple(node.output) for nid, node in zip(scope.node_ids, scope.graph.node)}

    def full(self) -> UpdateStats:
        """Recompute everything (the engine's own whole-model pass)."""
        self.table = infer_model(self.doc.model)
        self._step = self._new_step()
        self._outs = self._outputs_by_node()
        return UpdateStats(True, len(self.doc.model.graph.node), None)

    def needs_full(self, changes: Any) -> bool:
        """Whether ``changes`` take a whole pass (see the module docstring): a caller with a
        large model runs that off the GUI thread instead of calling :meth:`update`."""
        main = self.doc.index.main
        fields = {f for sid, f in changes.scope_fields if sid == main}
        fields |= {f for sid, f, _k in changes.items if sid == main}
        reshaped = {f for sid, f in changes.lists_reshaped if sid == main}
        # NOTE: body tables are keyed by their owner's position: nodes added or removed in a
        # graph with bodies shift those keys, so such an edit takes a full pass
        moved = bool(changes.nodes_added or changes.nodes_removed) and bool(self.table.bodies)
        return bool(changes.graph_replaced or changes.structure or moved
                    or {"opset_import", "ir_version"} & changes.model_fields
                    or fields & set(_FULL_FIELDS) or reshaped & {"value_info", "output", *_FULL_FIELDS})

    def update(self, changes: Any) -> UpdateStats:
        """Bring the table in line with the document after ``changes`` (a ChangeSet)."""
        if self.needs_full(changes):
            return self.full()
        index = self.doc.index
        main = index.main
        fields = {f for sid, f in changes.scope_fields if sid == main}
        fields |= {f for sid, f, _k in changes.items if sid == main}
        scope = self._main()
        values = self.table.values
        dirty_nodes: set[int] = set()
        dirty_values: set[str] = set()
        if fields & {"value_info", "output"}:
            # declarations fill in what the engine leaves open: their producers are re-inferred
            self._step.set_declared(scope.graph)
            for sid, f, k in changes.items:
                if sid == main and f in ("value_info", "output") and k < len(getattr(scope.graph, f)):
                    nid = scope.producers.get(getattr(scope.graph, f)[k].name)
                    if nid is not None:
                        dirty_nodes.add(nid)
        for sid, old, new in changes.values_renamed:
            if sid == main:
                dirty_values.update((old, new))
                nid = scope.producers.get(new)
                if nid is not None:
                    dirty_nodes.add(nid)
        for nid in changes.nodes_removed:
            for name in self._outs.pop(nid, ()):
                if name:
                    values.pop(name, None)
                    self.table.constants.discard(name)
                    dirty_values.add(name)
        for nid in changes.nodes_added | changes.nodes_changed:
            owner = self._top_owner(nid)
            if owner is not None:
                dirty_nodes.add(owner)
        for sid in changes.scopes:  # a body's own lists changed: its owner is re-inferred
            if sid != main and sid in index.scopes:
                owner = self._top_owner_of_scope(sid)
                if owner is not None:
                    dirty_nodes.add(owner)
        return self._wave(scope, dirty_nodes, dirty_values)

    def _top_owner(self, nid: int) -> int | None:
        """``nid`` itself for a main-graph node, else the main-graph node whose body holds it."""
        index = self.doc.index
        if nid not in index.nodes:
            return None
        sid = index.node_scope[nid]
        return nid if sid == index.main else self._top_owner_of_scope(sid)

    def _top_owner_of_scope(self, sid: int) -> int | None:
        index = self.doc.index
        owner = None
        for scope in index.scope_chain(sid):
            if scope.kind == "function":
                return None
            if scope.owner is not None:
                owner = scope.owner
        return owner

    def _wave(self, scope, dirty_nodes: set[int], dirty_values: set[str]) -> UpdateStats:
        """Re-infer the dirty nodes and the consumers of dirty values, in graph order, and
        follow every value whose shape changed to its consumers."""
        graph = scope.graph
        values = self.table.values
        heap: list[int] = []
        queued: set[int] = set()

        def push(nid: int) -> None:
            if nid not in queued:
                queued.add(nid)
                heapq.heappush(heap, scope.position(nid))

        # owners of bodies: a body reads outer values by name (not in the consumer lists), so
        # a changed value re-infers every owner after its producer
        owners = [scope.position(nid) for nid, subs in self.doc.index.children.items()
                  if subs and self.doc.index.node_scope.get(nid) == scope.id] if self.table.bodies else []

        def follow(name: str, after: int) -> None:
            for consumer, _k in scope.consumers.get(name, ()):
                if self.doc.index.node_scope.get(consumer) == scope.id:
                    push(consumer)
            for pos in owners:
                if pos > after:
                    push(node_ids[pos])

        node_ids = scope.node_ids
        for nid in dirty_nodes:
            if self.doc.index.node_scope.get(nid) == scope.id:
                push(nid)
        changed: set[str] = set(dirty_values)
        for name in dirty_values:
            follow(name, -1)
        steps = 0
        while heap:
            pos = heapq.heappop(heap)
            nid = node_ids[pos]
            node = graph.node[pos]
            before = {name: values.get(name) for name in node.output if name}
            # a changed node may have lost outputs: forget those it no longer makes
            for name in self._outs.get(nid, ()):
                if name and name not in before:
                    values.pop(name, None)
                    changed.add(name)
            # drop this node's old body tables (re-made by the step when it still has bodies)
            for key in [k for k in self.table.bodies if k[0] == pos]:
                del self.table.bodies[key]
            self._step.run(pos, node)
            steps += 1
            self._outs[nid] = tuple(node.output)
            for name, old in before.items():
                if values.get(name) != old:
                    changed.add(name)
                    follow(name, pos)
        return UpdateStats(False, steps, changed)
