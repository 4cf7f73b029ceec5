"""Clean-up passes: remove unused nodes and initializers, remove Identity nodes, sort.

They work on one graph (the main graph by default) and leave subgraphs alone except that
values captured by subgraph bodies count as used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from editor.commands import DeleteNodes, RemoveInitializer
from editor.document import Document, ScopeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, scope_target
from editor.passes.base import PassPlan, plan_from

if TYPE_CHECKING:
    import networkx as nx

# NOTE: networkx is imported inside the functions that use it, never at module level: this
# module is on the window's import path (editor.passes -> the Graph menu), and networkx costs
# about 0.5 s of start-up CPU that the first painted model does not need
# (tests/widgets/test_startup_imports.py holds the promise).


def _label(doc: Document, nid: int) -> str:
    n = doc.node(nid)
    return f"{n.op_type} {n.name!r}" if n.name else n.op_type


def live_nodes(doc: Document, sid: ScopeId) -> set[int]:
    """Nodes that contribute to a graph output (or have side effects we cannot see)."""
    s = doc.scope(sid)
    live: set[int] = set()
    stack = [s.producers[o] for o in s.output_names() if o in s.producers]
    # nodes of unknown custom domains may have effects: keep nodes without outputs
    stack += [nid for nid in s.node_ids if not any(doc.node(nid).output)]
    while stack:
        nid = stack.pop()
        if nid in live:
            continue
        live.add(nid)
        node = doc.node(nid)
        names = list(node.input)
        for sub in doc.index.children.get(nid, ()):  # values a body captures from outside
            names += list(_captured(doc, sub))
        for name in names:
            p = s.producers.get(name)
            if p is not None and p not in live:
                stack.append(p)
    return live


def _captured(doc: Document, sid: ScopeId) -> set[str]:
    s = doc.scope(sid)
    inner = s.defined_names()
    used = set()
    for nid in s.node_ids:
        used |= {i for i in doc.node(nid).input if i}
        for sub in doc.index.children.get(nid, ()):
            used |= _captured(doc, sub)
    used |= set(s.output_names())
    return used - inner


def plan_remove_unused(doc: Document, scope: ScopeId | None = None) -> PassPlan:
    """Remove nodes that feed no graph output, then initializers nothing uses."""
    sid = doc.index.main if scope is None else scope
    s = doc.scope(sid)
    live = live_nodes(doc, sid)
    dead = [nid for nid in s.node_ids if nid not in live]
    used = set(s.output_names())
    for nid in live:
        used |= set(doc.node(nid).input)
        for sub in doc.index.children.get(nid, ()):
            used |= _captured(doc, sub)
    inits = [n for n in s.initializer_names() if n not in used and n not in s.input_names()]
    changes = [f"remove node {_label(doc, nid)}" for nid in dead]
    changes += [f"remove initializer {n!r}" for n in inits]

    def apply(d: Document, tx: Transaction) -> None:
        if dead:
            DeleteNodes(dead).run(d, tx)
        for name in inits:
            if d.initializer(sid, name) is not None:
                RemoveInitializer(sid, name, force=True).run(d, tx)

    return plan_from("Remove unused nodes and initializers", changes, apply)


def plan_remove_identity(doc: Document, scope: ScopeId | None = None) -> PassPlan:
    """Remove Identity nodes, wiring their consumers to the Identity's input."""
    sid = doc.index.main if scope is None else scope
    s = doc.scope(sid)
    outs = set(s.output_names())
    ins = set(s.input_names())
    todo, skipped = [], []
    for nid in s.node_ids:
        n = doc.node(nid)
        if n.op_type != "Identity" or n.domain not in ("", "ai.onnx") or len(n.input) != 1 or not n.input[0]:
            continue
        # an output that is a graph output cannot be redirected onto a graph input or
        # another graph output without changing the graph's interface
        if n.output[0] in outs and (n.input[0] in ins or n.input[0] in outs):
            skipped.append(f"kept {_label(doc, nid)}: it connects graph input/output {n.input[0]!r} to {n.output[0]!r}")
            continue
        todo.append(nid)
    changes = [f"remove {_label(doc, nid)}: {doc.node(nid).input[0]!r} -> {doc.node(nid).output[0]!r}" for nid in todo]

    def apply(d: Document, tx: Transaction) -> None:
        for nid in todo:
            DeleteNodes([nid], reconnect=True).run(d, tx)

    return plan_from("Remove Identity nodes", changes, apply, skipped)


def dependency_graph(doc: Document, sid: ScopeId) -> nx.DiGraph:
    """The scope's nodes, with an edge producer -> consumer for every value one uses of
    the other (a node's subgraphs count as its own uses: what their bodies capture)."""
    import networkx as nx  # deferred: see the NOTE at the top

    s = doc.scope(sid)
    g = nx.DiGraph()
    g.add_nodes_from(s.node_ids)
    for nid in s.node_ids:
        names = list(doc.node(nid).input)
        for sub in doc.index.children.get(nid, ()):
            names += list(_captured(doc, sub))
        for name in names:
            p = s.producers.get(name)
            if p is not None and p != nid:
                g.add_edge(p, nid)
    return g


def topological_order(doc: Document, sid: ScopeId) -> list[int] | None:
    """A stable topological order of the scope's nodes (original order where possible);
    None when the graph has a cycle."""
    import networkx as nx  # deferred: see the NOTE at the top

    pos = {nid: i for i, nid in enumerate(doc.scope(sid).node_ids)}
    try:
        # NOTE: the lexicographic sort takes, of the ready nodes, the one earliest in the
        # file, so an already sorted graph comes back unchanged and a sort moves the fewest
        return list(nx.lexicographical_topological_sort(dependency_graph(doc, sid), key=pos.__getitem__))
    except nx.NetworkXUnfeasible:
        return None


def node_cycle(doc: Document, sid: ScopeId) -> list[int]:
    """The nodes of one dependency cycle of the scope, in order (empty when there is none)."""
    import networkx as nx  # deferred: see the NOTE at the top

    try:
        return [u for u, _v in nx.find_cycle(dependency_graph(doc, sid))]
    except nx.NetworkXNoCycle:
        return []


def plan_toposort(doc: Document, scope: ScopeId | None = None) -> PassPlan:
    """Reorder nodes so every value is produced before it is used (ids are kept)."""
    sid = doc.index.main if scope is None else scope
    order = topological_order(doc, sid)
    if order is None:
        names = [doc.node(nid).name or doc.node(nid).op_type for nid in node_cycle(doc, sid)]
        loop = " -> ".join(names[:8] + (["…"] if len(names) > 8 else []) + names[:1])
        return PassPlan("Topological sort", [], None, [f"the graph has a cycle ({loop}): it cannot be sorted"])
    current = list(doc.scope(sid).node_ids)
    if order == current:
        return PassPlan("Topological sort", [], None, [])
    moved = sum(1 for a, b in zip(order, current) if a != b)
    changes = [f"reorder {moved} node(s) so that producers come before consumers"]

    def apply(d: Document, tx: Transaction) -> None:
        # move each node into place with remove + insert (ids travel with the id tree)
        for target_pos, nid in enumerate(order):
            cur = d.scope(sid).position(nid)
            if cur == target_pos:
                continue
            inv = tx.apply(RemoveItem(scope_target(sid), "node", cur))
            assert isinstance(inv, InsertItem)
            tx.apply(InsertItem(scope_target(sid), "node", target_pos, inv.value, inv.ids))

    return plan_from("Topological sort", changes, apply)
