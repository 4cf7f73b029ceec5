"""The index kept beside the ModelProto: stable ids, scopes, producers and consumers.

The ModelProto is the source of truth (it round-trips byte for byte); this index only makes
it fast to ask questions about it and gives views stable handles:

* every node of every graph (main graph, If/Loop/Scan bodies at any depth, model-local
  functions) has a :data:`NodeId` (an ``int``) that stays the same across edits, undo and redo;
* every graph is a :class:`Scope` with a :data:`ScopeId` (main graph = 0);
* per scope, the producer of each value name and the set of ``(node_id, input_index)`` uses.

NOTE: Only :mod:`editor.document.ops` mutates the protobuf, and every op tells the index what
it touched, so the index never goes stale. ``rebuild`` exists for tests and assertions
(``Document.check_invariants`` compares the kept index with a freshly built one).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

import onnx

NodeId = int
ScopeId = int
GraphLike = Union[onnx.GraphProto, onnx.FunctionProto]

#: ``IdTree`` records the ids of a node and of everything nested in its subgraphs, so that a
#: removed node re-inserted by undo gets back exactly the ids it had.
#: node tree: (node_id, ((attr_name, (scope_tree, ...)), ...))
#: scope tree: (scope_id, (node_tree, ...))
IdTree = tuple


@dataclass(eq=False)
class Scope:
    """One graph: the main graph, a subgraph body, or a model-local function."""

    id: ScopeId
    kind: str  # "main" | "subgraph" | "function"
    graph: GraphLike
    parent: ScopeId | None = None
    owner: NodeId | None = None  # subgraphs: the node whose attribute holds this body
    attr: str = ""  # subgraphs: the attribute name ("then_branch", "body", ...)
    attr_index: int = -1  # subgraphs in a GRAPHS attribute: position in the list; else -1
    node_ids: list[NodeId] = field(default_factory=list)  # parallel to graph.node
    value_ids: dict[str, int] = field(default_factory=dict)  # allocated on demand
    _producers: dict[str, NodeId] = field(default_factory=dict)
    _consumers: dict[str, set[tuple[NodeId, int]]] = field(default_factory=dict)
    _duplicates: dict[str, list[NodeId]] = field(default_factory=dict)
    #: nodes registered but not linked yet (see :meth:`defer_links`)
    _unlinked: list[tuple[NodeId, onnx.NodeProto]] | None = None
    _positions: dict[NodeId, int] | None = None
    # per list field ("input", "output", "value_info", "initializer"): name -> positions in
    # that list, ascending. Built on first use; an op that inserts or removes items drops the
    # field's table (editor.document.ops calls invalidate_lists), an in-place rename of one
    # item keeps it exact (item_renamed): renaming a value must not rebuild a 10,000-entry
    # value_info table on every edit.
    _names: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    # -- producer / consumer links -----------------------------------------------------
    @property
    def producers(self) -> dict[str, NodeId]:
        """value -> the node that produces it."""
        if self._unlinked is not None:
            self._link_deferred()
        return self._producers

    @property
    def consumers(self) -> dict[str, set[tuple[NodeId, int]]]:
        """value -> ``(node, input position)`` of every use."""
        if self._unlinked is not None:
            self._link_deferred()
        return self._consumers

    @property
    def duplicates(self) -> dict[str, list[NodeId]]:
        """Names with two or more producers (an SSA violation) -> every producing node; lets
        an unlink find the next producer without scanning the graph."""
        if self._unlinked is not None:
            self._link_deferred()
        return self._duplicates

    # NOTE: speed. An open registers every node, but nothing reads who produces and who
    # uses a value before the first picture: linking the 11.8k nodes of an export (26k uses)
    # cost 0.08 s of its start-up. A scope registered whole links its nodes when first
    # asked, or before its first change (every change goes through link / unlink).
    def defer_links(self, nodes: list[tuple[NodeId, onnx.NodeProto]]) -> None:
        """Link ``nodes`` (just registered, in order) when the links are first needed."""
        if self._unlinked is None:
            self._unlinked = nodes
        else:
            self._unlinked.extend(nodes)

    def _link_deferred(self) -> None:
        nodes, self._unlinked = self._unlinked, None
        for nid, node in nodes or ():
            self._link_now(nid, node)

    def link_some(self, count: int) -> int:
        """Link up to ``count`` of the nodes waiting (in their order); how many were."""
        nodes = self._unlinked
        if nodes is None:
            return 0
        head = nodes[:count]
        self._unlinked = nodes[count:] or None
        for nid, node in head:
            self._link_now(nid, node)
        return len(head)

    def link(self, nid: NodeId, node: onnx.NodeProto) -> None:
        if self._unlinked is not None:
            self._link_deferred()  # (in order: with two producers of a name, the first is kept)
        self._link_now(nid, node)

    def _link_now(self, nid: NodeId, node: onnx.NodeProto) -> None:
        consumers, producers = self._consumers, self._producers
        for i, name in enumerate(node.input):
            if name:
                consumers.setdefault(name, set()).add((nid, i))
        for name in node.output:
            if name:
                # NOTE: SSA violations (two producers) keep the first producer here; the
                # validator reports the duplicate by scanning outputs, not this map.
                first = producers.setdefault(name, nid)
                if first != nid:
                    others = self._duplicates.setdefault(name, [first])
                    if nid not in others:
                        others.append(nid)

    def unlink(self, nid: NodeId, node: onnx.NodeProto) -> None:
        consumers, producers, duplicates = self.consumers, self.producers, self.duplicates
        for i, name in enumerate(node.input):
            if name:
                uses = consumers.get(name)
                if uses is not None:
                    uses.discard((nid, i))
                    if not uses:
                        del consumers[name]
        for name in node.output:
            if not name:
                continue
            others = duplicates.get(name)
            if others is not None and nid in others:
                # another node also produces this name (an SSA violation): keep it findable
                others.remove(nid)
                if producers.get(name) == nid:
                    producers[name] = others[0]
                if len(others) < 2:
                    del duplicates[name]
            elif producers.get(name) == nid:
                del producers[name]

    @property
    def is_function(self) -> bool:
        return self.kind == "function"

    @property
    def title(self) -> str:
        if self.kind == "function":
            g = self.graph
            overload = f":{g.overload}" if getattr(g, "overload", "") else ""
            return f"{g.domain}.{g.name}{overload}" if g.domain else f"{g.name}{overload}"
        if self.kind == "main":
            return self.graph.name or "main"
        return f"{self.attr}[{self.attr_index}]" if self.attr_index >= 0 else self.attr

    def position(self, node_id: NodeId) -> int:
        if self._positions is None:
            self._positions = {nid: i for i, nid in enumerate(self.node_ids)}
        return self._positions[node_id]

    def invalidate_positions(self) -> None:
        self._positions = None

    def invalidate_lists(self, field: str) -> None:
        self._names.pop("initializer" if field == "sparse_initializer" else field, None)

    def name_table(self, field: str) -> dict[str, list[int]]:
        """``name -> positions`` in the graph's list ``field`` (strings in a function's
        input/output, messages with a ``name`` elsewhere); cached, see ``_names``."""
        table = self._names.get(field)
        if table is None:
            table = {}
            items = getattr(self.graph, field, ())
            for i, item in enumerate(items):
                name = item if isinstance(item, str) else item.name
                table.setdefault(name, []).append(i)
            self._names[field] = table
        return table

    def positions_of(self, field: str, name: str) -> list[int]:
        """Positions of the items named ``name`` in list ``field`` (O(1) after the first call)."""
        return self.name_table(field).get(name, [])

    def item_renamed(self, field: str, position: int, old: str, new: str) -> None:
        """Item ``position`` of list ``field`` was renamed in place: keep the table exact."""
        table = self._names.get(field)
        if table is None:
            return
        olds = table.get(old)
        if olds is not None and position in olds:
            olds.remove(position)
            if not olds:
                del table[old]
        bisect.insort(table.setdefault(new, []), position)

    def item_appended(self, field: str, position: int, name: str) -> None:
        """An item named ``name`` was appended to list ``field`` at ``position``."""
        table = self._names.get(field)
        if table is not None:
            table.setdefault(name, []).append(position)

    def item_popped(self, field: str, position: int, name: str) -> None:
        """The last item of list ``field`` (at ``position``, named ``name``) was removed."""
        table = self._names.get(field)
        if table is None:
            return
        found = table.get(name)
        if found is not None and position in found:
            found.remove(position)
            if not found:
                del table[name]
        else:
            self._names.pop(field, None)

    def initializer_position(self, name: str) -> int | None:
        g = self.graph
        if isinstance(g, onnx.FunctionProto):
            return None
        found = self.positions_of("initializer", name)
        return found[0] if found else None

    def declared(self, name: str) -> onnx.ValueInfoProto | None:
        """The first graph input, output or value_info entry naming ``name``."""
        g = self.graph
        fields = ("value_info",) if isinstance(g, onnx.FunctionProto) else ("input", "output", "value_info")
        for f in fields:
            found = self.positions_of(f, name)
            if found:
                return getattr(g, f)[found[0]]
        return None

    def defines(self, name: str) -> bool:
        """Whether ``name`` is available to nodes of this scope without looking outside (O(1))."""
        if not name:
            return False
        if name in self.producers or self.positions_of("input", name):
            return True
        return self.initializer_position(name) is not None or self._sparse_defines(name)

    def _sparse_defines(self, name: str) -> bool:
        g = self.graph
        return not isinstance(g, onnx.FunctionProto) and any(s.values.name == name for s in g.sparse_initializer)

    def uses_name(self, name: str) -> bool:
        """Whether ``name`` is defined, used, output or declared in this scope (O(1))."""
        if self.defines(name) or name in self.consumers or self.positions_of("output", name):
            return True
        return bool(getattr(self.graph, "value_info", None) is not None and self.positions_of("value_info", name))

    # -- graph-level names -------------------------------------------------------------
    def input_names(self) -> list[str]:
        g = self.graph
        if isinstance(g, onnx.FunctionProto):
            return list(g.input)
        return [v.name for v in g.input]

    def output_names(self) -> list[str]:
        g = self.graph
        if isinstance(g, onnx.FunctionProto):
            return list(g.output)
        return [v.name for v in g.output]

    def initializer_names(self) -> list[str]:
        g = self.graph
        if isinstance(g, onnx.FunctionProto):
            return []
        return [t.name for t in g.initializer] + [s.values.name for s in g.sparse_initializer]

    def defined_names(self) -> set[str]:
        """Names that are available to nodes of this scope without looking outside."""
        names = set(self.input_names()) | set(self.initializer_names()) | set(self.producers)
        names.discard("")
        return names


def iter_graph_attributes(node: onnx.NodeProto) -> Iterator[tuple[str, int, onnx.GraphProto]]:
    """Yield ``(attr_name, index, graph)`` for every subgraph held by ``node``.

    ``index`` is -1 for a GRAPH attribute and the list position for a GRAPHS attribute.
    """
    for attr in node.attribute:
        # NOTE: inside a function, a GRAPH attribute may only reference an attribute of the
        # function (ref_attr_name) and hold no body: indexing its empty default ``g`` made a
        # phantom scope that edits could write into.
        if attr.HasField("g") or (attr.type == onnx.AttributeProto.GRAPH and not attr.ref_attr_name):
            yield attr.name, -1, attr.g
        for i, g in enumerate(attr.graphs):
            yield attr.name, i, g


def tree_node_ids(tree: IdTree) -> list[NodeId]:
    """Every node id in a node's id tree: the node, then the nodes of its bodies (any depth)."""
    out = [tree[0]]
    for _attr, scope_trees in tree[1]:
        for scope_tree in scope_trees:
            for node_tree in scope_tree[1]:
                out += tree_node_ids(node_tree)
    return out


def _tensor_bytes(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n * _ITEM_BYTES.get(t.data_type, 1)


#: bytes per element by TensorProto data type (4-bit types round up: an estimate of size)
_ITEM_BYTES = {onnx.TensorProto.DOUBLE: 8, onnx.TensorProto.INT64: 8, onnx.TensorProto.UINT64: 8,
               onnx.TensorProto.COMPLEX64: 8, onnx.TensorProto.COMPLEX128: 16, onnx.TensorProto.FLOAT: 4,
               onnx.TensorProto.INT32: 4, onnx.TensorProto.UINT32: 4, onnx.TensorProto.FLOAT16: 2,
               onnx.TensorProto.BFLOAT16: 2, onnx.TensorProto.INT16: 2, onnx.TensorProto.UINT16: 2}


class ModelIndex:
    """Scopes and ids of one model. Built once at load, then kept current by the ops."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self.scopes: dict[ScopeId, Scope] = {}
        self.node_scope: dict[NodeId, ScopeId] = {}
        self.nodes: dict[NodeId, onnx.NodeProto] = {}
        self.children: dict[NodeId, list[ScopeId]] = {}  # node -> its subgraph scopes
        self.function_scopes: list[ScopeId] = []  # parallel to model.functions
        self._next_node = 0
        self._next_scope = 0
        self._next_value = 0
        self._weight_bytes: int | None = None
        self.main = self._add_scope("main", model.graph, None, None, "", -1, None)
        for fn in model.functions:
            self.function_scopes.append(self._add_scope("function", fn, None, None, "", -1, None))

    # -- id allocation -----------------------------------------------------------------
    def new_node_id(self) -> NodeId:
        nid = self._next_node
        self._next_node += 1
        return nid

    def new_scope_id(self) -> ScopeId:
        sid = self._next_scope
        self._next_scope += 1
        return sid

    def value_id(self, scope_id: ScopeId, name: str) -> int:
        scope = self.scopes[scope_id]
        vid = scope.value_ids.get(name)
        if vid is None:
            vid = scope.value_ids[name] = self._next_value
            self._next_value += 1
        return vid

    # -- sizes -------------------------------------------------------------------------
    def weight_bytes(self) -> int:
        """Bytes of every initializer and ``Constant`` tensor of the model (all scopes),
        from their dims and element types: no tensor data is read, nothing is serialized.

        NOTE: cached; an op that can change it (initializer lists, node lists, attributes)
        drops the figure (:meth:`sizes_changed`), so after a rename it costs nothing. It is
        what the live checks ask to decide whether a model is small enough to check after
        every edit: ``ModelProto.ByteSize()`` serializes the whole model to answer (143 ms
        per edit on a 54 MB model)."""
        if self._weight_bytes is None:
            total = 0
            for scope in self.scopes.values():
                g = scope.graph
                for t in getattr(g, "initializer", ()):
                    total += _tensor_bytes(t)
                for st in getattr(g, "sparse_initializer", ()):
                    total += _tensor_bytes(st.values) + _tensor_bytes(st.indices)
                for node in g.node:
                    if node.op_type == "Constant":
                        for a in node.attribute:
                            if a.type == onnx.AttributeProto.TENSOR:
                                total += _tensor_bytes(a.t)
            self._weight_bytes = total
        return self._weight_bytes

    def sizes_changed(self) -> None:
        self._weight_bytes = None

    # -- building ----------------------------------------------------------------------
    def _add_scope(
        self,
        kind: str,
        graph: GraphLike,
        parent: ScopeId | None,
        owner: NodeId | None,
        attr: str,
        attr_index: int,
        tree: IdTree | None,
    ) -> ScopeId:
        sid = tree[0] if tree is not None else self.new_scope_id()
        self._next_scope = max(self._next_scope, sid + 1)
        scope = Scope(sid, kind, graph, parent, owner, attr, attr_index)
        self.scopes[sid] = scope
        if tree is None:
            self._add_nodes(scope, graph.node)
            return sid
        node_trees = tree[1]
        for i, node in enumerate(graph.node):
            self._register_node(scope, i, node, node_trees[i] if i < len(node_trees) else None, append=True)
        return sid

    def _add_nodes(self, scope: Scope, nodes) -> None:
        """:meth:`_register_node` for every node of a new scope, with fresh ids (given in the
        same order: a node's subgraph nodes right after it), in one flat loop.

        NOTE: what an open pays per node: the 11.8k nodes of an export were indexed one
        call chain each (ids, positions, subgraph bookkeeping for nodes without attributes)
        before its first picture."""
        node_ids, index_nodes, node_scope, children = scope.node_ids, self.nodes, self.node_scope, self.children
        sid = scope.id
        added: list[tuple[NodeId, onnx.NodeProto]] = []
        for node in nodes:
            nid = self._next_node
            self._next_node = nid + 1
            node_ids.append(nid)
            index_nodes[nid] = node
            node_scope[nid] = sid
            added.append((nid, node))
            if len(node.attribute):
                self.register_subgraphs(nid)
            else:
                children[nid] = []
        scope.defer_links(added)  # (linked when first asked: see Scope.defer_links)
        scope.invalidate_positions()

    def _register_node(
        self, scope: Scope, position: int, node: onnx.NodeProto, tree: IdTree | None, *, append: bool = False
    ) -> NodeId:
        nid = tree[0] if tree is not None else self.new_node_id()
        self._next_node = max(self._next_node, nid + 1)
        if append:
            scope.node_ids.append(nid)
        else:
            scope.node_ids.insert(position, nid)
        scope.invalidate_positions()
        self.nodes[nid] = node
        self.node_scope[nid] = scope.id
        scope.link(nid, node)
        self.register_subgraphs(nid, tree[1] if tree is not None else ())
        return nid

    def register_subgraphs(self, nid: NodeId, attr_trees: tuple = ()) -> None:
        """Index every subgraph body of node ``nid`` (after it was inserted or its attributes changed)."""
        node = self.nodes[nid]
        trees = dict(attr_trees)
        made: list[ScopeId] = []
        counters: dict[str, int] = {}
        for name, idx, g in iter_graph_attributes(node):
            k = counters.get(name, 0)
            counters[name] = k + 1
            subtrees = trees.get(name, ())
            sub = subtrees[k] if k < len(subtrees) else None
            made.append(self._add_scope("subgraph", g, self.node_scope[nid], nid, name, idx, sub))
        self.children[nid] = made

    def unregister_subgraphs(self, nid: NodeId) -> tuple:
        """Drop the scopes under node ``nid``; return their id trees (for exact re-registration)."""
        out: dict[str, list] = {}
        for sid in self.children.pop(nid, []):
            scope = self.scopes[sid]
            out.setdefault(scope.attr, []).append(self._drop_scope(sid))
        return tuple((k, tuple(v)) for k, v in out.items())

    def _drop_scope(self, sid: ScopeId) -> IdTree:
        scope = self.scopes.pop(sid)
        node_trees = []
        for nid in scope.node_ids:
            attr_trees = self.unregister_subgraphs(nid)
            node_trees.append((nid, attr_trees))
            del self.nodes[nid]
            del self.node_scope[nid]
        return (sid, tuple(node_trees))

    def unregister_node(self, nid: NodeId) -> IdTree:
        scope = self.scopes[self.node_scope[nid]]
        node = self.nodes[nid]
        scope.unlink(nid, node)
        attr_trees = self.unregister_subgraphs(nid)
        scope.node_ids.remove(nid)
        scope.invalidate_positions()
        del self.nodes[nid]
        del self.node_scope[nid]
        return (nid, attr_trees)

    def insert_function_scope(self, index: int, fn: onnx.FunctionProto, tree: IdTree | None) -> ScopeId:
        sid = self._add_scope("function", fn, None, None, "", -1, tree)
        self.function_scopes.insert(index, sid)
        return sid

    def remove_function_scope(self, index: int) -> IdTree:
        sid = self.function_scopes.pop(index)
        return self._drop_scope(sid)

    def rebind_function_scopes(self) -> None:
        """Point function scopes at the live FunctionProto wrappers (after list surgery)."""
        for sid, fn in zip(self.function_scopes, self.model.functions):
            self.scopes[sid].graph = fn

    # -- producer / consumer links -----------------------------------------------------
    def link_some(self, budget: int) -> bool:
        """Link up to ``budget`` of the nodes an open left unlinked (:meth:`Scope.defer_links`);
        True while some remain. The window calls it a few thousand nodes per pass of its
        event loop after the first picture, so the first edit does not pay for them all
        (0.1 s on the 11.8k-node export)."""
        for scope in list(self.scopes.values()):
            if budget <= 0:
                break
            budget -= scope.link_some(budget)
        return any(scope._unlinked is not None for scope in self.scopes.values())

    def relink(self, nid: NodeId, update: callable) -> None:
        """Run ``update()`` (which edits the node's inputs/outputs) with links kept current."""
        scope = self.scopes[self.node_scope[nid]]
        node = self.nodes[nid]
        scope.unlink(nid, node)
        try:
            update()
        finally:
            scope.link(nid, node)

    # -- queries -------------------------------------------------------------------------
    def nested_node_ids(self, nid: NodeId) -> list[NodeId]:
        """Ids of the nodes inside node ``nid``'s bodies, at any depth (not ``nid`` itself)."""
        out: list[NodeId] = []
        for sid in self.children.get(nid, ()):
            for inner in self.scopes[sid].node_ids:
                out.append(inner)
                out += self.nested_node_ids(inner)
        return out

    def scope_of(self, nid: NodeId) -> Scope:
        return self.scopes[self.node_scope[nid]]

    def scope_chain(self, sid: ScopeId) -> list[Scope]:
        """The scope and its enclosing scopes, innermost first."""
        chain = []
        cur: ScopeId | None = sid
        while cur is not None:
            scope = self.scopes[cur]
            chain.append(scope)
            cur = scope.parent
        return chain

    def path(self, sid: ScopeId) -> str:
        """Human-readable graph path: ``main``, ``main/If_0.then_branch``, ``fn:custom.Foo``."""
        parts = []
        for scope in self.scope_chain(sid):
            if scope.kind == "subgraph":
                owner = self.nodes[scope.owner]
                parts.append(f"{owner.name or owner.op_type}.{scope.title}")
            elif scope.kind == "function":
                parts.append(f"fn:{scope.title}")
            else:
                parts.append("main")
        return "/".join(reversed(parts))

    def iter_nodes(self) -> Iterator[tuple[Scope, NodeId, onnx.NodeProto]]:
        for scope in list(self.scopes.values()):
            for nid in scope.node_ids:
                yield scope, nid, self.nodes[nid]

    def snapshot(self) -> dict:
        """A plain-data picture of the index, for invariant checks (ids included)."""
        out = {}
        for sid, s in sorted(self.scopes.items()):
            out[sid] = (
                s.kind,
                s.parent,
                s.owner,
                s.attr,
                s.attr_index,
                tuple(s.node_ids),
                {k: v for k, v in sorted(s.producers.items())},
                {k: tuple(sorted(v)) for k, v in sorted(s.consumers.items())},
            )
        return out
