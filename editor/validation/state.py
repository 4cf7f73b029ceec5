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

LIST_FIELDS = ("input", "output", "value_info", "initializer", "sparse_initializer")


@dataclass
class NodeShadow:
    sid: ScopeId
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    kids: tuple[ScopeId, ...]  # subgraph scopes held by the node's attributes


class ListShadow:
    """One graph list (inputs, outputs, value_info, initializers) as ``(name, payload)``
    pairs parallel to the protobuf's list, and the positions of each name.

    The payload is what checks read: the serialized declared type (None when untyped) or,
    for initializers, ``(data_type, dims)``, so weights are never touched.
    """

    __slots__ = ("entries", "pos")

    def __init__(self) -> None:
        self.entries: list[tuple[str, object]] = []
        self.pos: dict[str, list[int]] = {}

    def load(self, entries: list[tuple[str, object]]) -> None:
        self.entries = entries
        pos: dict[str, list[int]] = {}
        for k, (name, _) in enumerate(entries):
            pos.setdefault(name, []).append(k)
        self.pos = pos

    def set(self, k: int, entry: tuple[str, object]) -> None:
        old = self.entries[k][0]
        self.entries[k] = entry
        if old != entry[0]:
            ks = self.pos[old]
            ks.remove(k)
            if not ks:
                del self.pos[old]
            ks = self.pos.setdefault(entry[0], [])
            ks.append(k)
            ks.sort()

    def first(self, name: str) -> object | None:
        """The first non-empty payload listed for ``name``."""
        ks = self.pos.get(name)
        if ks:
            for k in ks:
                payload = self.entries[k][1]
                if payload:
                    return payload
        return None

    def by_name(self) -> dict[str, tuple[object, ...]]:
        return {name: tuple(self.entries[k][1] for k in ks) for name, ks in self.pos.items()}

    def names(self) -> list[str]:
        return [n for n, _ in self.entries]


@dataclass
class ScopeShadow:
    sid: ScopeId
    kind: str  # "main" | "subgraph" | "function"
    parent: ScopeId | None
    owner: NodeId | None
    root: ScopeId  # the main graph or the function this scope belongs to
    lists: dict[str, ListShadow] = field(default_factory=lambda: {f: ListShadow() for f in LIST_FIELDS})
    #: value name -> every node of this scope that lists it as an output
    producers: dict[str, set[NodeId]] = field(default_factory=dict)
    #: nodes of this scope that hold subgraphs
    owners: set[NodeId] = field(default_factory=set)

    @property
    def input_set(self) -> dict[str, list[int]]:
        """Graph inputs by name (a dict: ``in`` is all the checks need)."""
        return self.lists["input"].pos

    def is_initializer(self, name: str) -> bool:
        return name in self.lists["initializer"].pos or name in self.lists["sparse_initializer"].pos

    @property
    def inputs(self) -> list[str]:
        return self.lists["input"].names()

    @property
    def outputs(self) -> list[str]:
        return self.lists["output"].names()

    @property
    def inits(self) -> list[str]:
        return self.lists["initializer"].names() + self.lists["sparse_initializer"].names()

    def declared(self, name: str) -> bytes | None:
        lists = self.lists
        return lists["input"].first(name) or lists["output"].first(name) or lists["value_info"].first(name)

    def init_type(self, name: str) -> tuple[int, tuple[int, ...]] | None:
        return self.lists["initializer"].first(name) or self.lists["sparse_initializer"].first(name)


def _vi_entry(vi: onnx.ValueInfoProto) -> tuple[str, object]:
    return vi.name, (vi.type.SerializeToString() if vi.HasField("type") else None)


def read_entry(g: onnx.GraphProto | onnx.FunctionProto, field_name: str, k: int) -> tuple[str, object]:
    """Element ``k`` of one graph list as ``(name, payload)``."""
    item = getattr(g, field_name)[k]
    if isinstance(item, str):
        return item, None
    if field_name == "initializer":
        return item.name, (item.data_type, tuple(item.dims))
    if field_name == "sparse_initializer":
        return item.values.name, (item.values.data_type, tuple(item.dims))
    return _vi_entry(item)


def read_list(g: onnx.GraphProto | onnx.FunctionProto, field_name: str) -> list[tuple[str, object]]:
    """A whole graph list as ``(name, payload)`` pairs."""
    if isinstance(g, onnx.FunctionProto):
        if field_name in ("input", "output"):
            return [(n, None) for n in getattr(g, field_name)]
        if field_name == "value_info":
            return [_vi_entry(vi) for vi in getattr(g, "value_info", ())]
        return []
    if field_name == "initializer":
        return [(t.name, (t.data_type, tuple(t.dims))) for t in g.initializer]
    if field_name == "sparse_initializer":
        return [(s.values.name, (s.values.data_type, tuple(s.dims))) for s in g.sparse_initializer]
    return [_vi_entry(vi) for vi in getattr(g, field_name)]


def build_scope(doc: Document, sid: ScopeId) -> ScopeShadow:
    scope = doc.index.scopes[sid]
    root = sid
    cur = scope
    while cur.parent is not None:
        cur = doc.index.scopes[cur.parent]
        root = cur.id
    shadow = ScopeShadow(sid, scope.kind, scope.parent, scope.owner, root)
    for f in LIST_FIELDS:
        shadow.lists[f].load(read_list(scope.graph, f))
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
