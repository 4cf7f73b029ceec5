"""The validator's own picture of the model: what each node and graph looked like when it
was last checked.

The document's index says what the model *is*; after an edit the validator also needs what
it *was* (the outputs a deleted node produced, the declared type a value used to have) to
find everything the edit can have affected. These shadows hold exactly that, plus a
multi-producer map per graph (the index keeps one producer per name; SSA violations need
all of them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from editor.document import Document, NodeId, ScopeId
from editor.document.index import iter_graph_attributes


@dataclass
class NodeShadow:
    sid: ScopeId
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    kids: tuple[ScopeId, ...]  # subgraph scopes held by the node's attributes


@dataclass
class ScopeShadow:
    sid: ScopeId
    kind: str  # "main" | "subgraph" | "function"
    parent: ScopeId | None
    owner: NodeId | None
    root: ScopeId  # the main graph or the function this scope belongs to
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    inits: tuple[str, ...] = ()
    input_set: frozenset[str] = frozenset()
    init_set: frozenset[str] = frozenset()
    #: declared types (serialized TypeProto) from graph inputs, outputs and value_info
    decl_in: dict[str, bytes] = field(default_factory=dict)
    decl_out: dict[str, bytes] = field(default_factory=dict)
    decl_vi: dict[str, bytes] = field(default_factory=dict)
    #: initializer name -> (data_type, dims): its type, without touching the weights
    init_types: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    #: value name -> every node of this scope that lists it as an output
    producers: dict[str, set[NodeId]] = field(default_factory=dict)
    #: nodes of this scope that hold subgraphs
    owners: set[NodeId] = field(default_factory=set)

    def declared(self, name: str) -> bytes | None:
        return self.decl_in.get(name) or self.decl_out.get(name) or self.decl_vi.get(name)


def _typed(entries) -> dict[str, bytes]:  # noqa: ANN001 - repeated ValueInfoProto
    out: dict[str, bytes] = {}
    for vi in entries:
        if vi.name not in out and vi.HasField("type"):
            out[vi.name] = vi.type.SerializeToString()
    return out


def read_io(scope_graph: onnx.GraphProto | onnx.FunctionProto, shadow: ScopeShadow, field_name: str) -> None:
    """(Re)read one graph-level list of ``scope_graph`` into ``shadow``."""
    g = scope_graph
    if isinstance(g, onnx.FunctionProto):
        if field_name == "input":
            shadow.inputs = tuple(g.input)
            shadow.input_set = frozenset(shadow.inputs)
        elif field_name == "output":
            shadow.outputs = tuple(g.output)
        elif field_name == "value_info":
            shadow.decl_vi = _typed(getattr(g, "value_info", ()))
        return
    if field_name == "input":
        shadow.inputs = tuple(vi.name for vi in g.input)
        shadow.input_set = frozenset(shadow.inputs)
        shadow.decl_in = _typed(g.input)
    elif field_name == "output":
        shadow.outputs = tuple(vi.name for vi in g.output)
        shadow.decl_out = _typed(g.output)
    elif field_name == "value_info":
        shadow.decl_vi = _typed(g.value_info)
    elif field_name in ("initializer", "sparse_initializer"):
        names = [t.name for t in g.initializer] + [s.values.name for s in g.sparse_initializer]
        shadow.inits = tuple(names)
        shadow.init_set = frozenset(names)
        types = {t.name: (t.data_type, tuple(t.dims)) for t in g.initializer}
        for s in g.sparse_initializer:
            types.setdefault(s.values.name, (s.values.data_type, tuple(s.dims)))
        shadow.init_types = types


IO_FIELDS = ("input", "output", "value_info", "initializer")


def build_scope(doc: Document, sid: ScopeId) -> ScopeShadow:
    scope = doc.index.scopes[sid]
    root = sid
    cur = scope
    while cur.parent is not None:
        cur = doc.index.scopes[cur.parent]
        root = cur.id
    shadow = ScopeShadow(sid, scope.kind, scope.parent, scope.owner, root)
    for f in IO_FIELDS:
        read_io(scope.graph, shadow, f)
    return shadow


def build_node(doc: Document, nid: NodeId) -> NodeShadow:
    node = doc.index.nodes[nid]
    return NodeShadow(
        doc.index.node_scope[nid],
        tuple(node.input),
        tuple(node.output),
        tuple(doc.index.children.get(nid, ())),
    )


def descendants_in_index(doc: Document, nid: NodeId) -> tuple[list[ScopeId], list[NodeId]]:
    """Scopes and nodes nested (at any depth) under node ``nid`` in the live index."""
    scopes: list[ScopeId] = []
    nodes: list[NodeId] = []
    stack = list(doc.index.children.get(nid, ()))
    while stack:
        sid = stack.pop()
        scopes.append(sid)
        for sub in doc.index.scopes[sid].node_ids:
            nodes.append(sub)
            stack.extend(doc.index.children.get(sub, ()))
    return scopes, nodes


def has_graph_attribute(node: onnx.NodeProto) -> bool:
    return next(iter_graph_attributes(node), None) is not None
