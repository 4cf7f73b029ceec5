"""Groups of nodes from their name scopes, and recognition of repeated identical blocks.

A node named ``/model/layers.3/self_attn/q_proj/MatMul`` lies in the groups ``/model``,
``/model/layers.3``, ``/model/layers.3/self_attn`` and ``/model/layers.3/self_attn/q_proj``.

# NOTE: three clean-ups keep the hierarchy useful rather than literal:
# * a scope holding a single node is not a group (a box in a box says nothing);
# * a scope holding exactly what its parent holds is skipped (``/model`` around everything
#   would make the first collapsed view a single box);
# * a group with more than ``MAX_CHILDREN`` direct children (a flat 11k-node export has no
#   scopes at all) is split into artificial parts of consecutive children in graph order, so
#   every level of the hierarchy stays small enough to lay out instantly. Parts are named
#   ``<parent>/#<k>``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import onnx

MAX_CHILDREN = 500
PART_SIZE = 250


def scopes_of(name: str) -> list[str]:
    """Group paths a node name lies in, outermost first (its own last segment excluded)."""
    if "/" not in name:
        return []
    parts = [p for p in name.split("/") if p]
    out = []
    path = ""
    for p in parts[:-1]:
        path = f"{path}/{p}"
        out.append(path)
    return out


@dataclass
class GroupTree:
    """The kept groups of one graph scope. Paths are strings; ``""`` is the graph itself."""

    parent: dict[str, str] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)          # nodes inside (all depths)
    labels: dict[str, str] = field(default_factory=dict)
    node_group: dict[int, str] = field(default_factory=dict)    # node index -> innermost group
    members: dict[str, list[int]] = field(default_factory=dict)  # group -> node indices (all depths)
    _chains: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def chain(self, node_index: int) -> tuple[str, ...]:
        """Groups containing the node, outermost first."""
        g = self.node_group.get(node_index, "")
        c = self._chains.get(g)
        if c is None:
            path = []
            p = g
            while p:
                path.append(p)
                p = self.parent[p]
            c = tuple(reversed(path))
            self._chains[g] = c
        return c

    def label(self, path: str) -> str:
        return self.labels.get(path) or path.rsplit("/", 1)[-1]

    def children(self, path: str) -> list[str]:
        return [g for g, p in self.parent.items() if p == path]

    def __contains__(self, path: object) -> bool:
        return path in self.parent


def build_group_tree(names: Sequence[str], indices: Sequence[int]) -> GroupTree:
    """Group tree for nodes ``indices`` (graph order) with the given ``names``."""
    raw: dict[int, list[str]] = {}
    count: dict[str, int] = {}
    for i, name in zip(indices, names):
        sc = scopes_of(name)
        if sc:
            raw[i] = sc
            for p in sc:
                count[p] = count.get(p, 0) + 1
    total = len(indices)
    tree = GroupTree()
    # Keep a scope when it holds more than one node and less than its nearest kept ancestor.
    kept_parent: dict[str, str] = {}
    decided: dict[str, str | None] = {}
    for i, sc in raw.items():
        anc = ""
        anc_size = total
        inner = ""
        for p in sc:
            d = decided.get(p, "?")
            if d == "?":
                c = count[p]
                if c > 1 and c < anc_size:
                    kept_parent[p] = anc
                    decided[p] = p
                else:
                    decided[p] = None
                d = decided[p]
            if d is not None:
                anc = p
                anc_size = count[p]
                inner = p
        tree.node_group[i] = inner
    tree.parent = kept_parent
    # Split over-full groups into parts of consecutive children (graph order).
    direct: dict[str, list[tuple[int, str, object]]] = {}
    first: dict[str, int] = {}
    for i in indices:
        g = tree.node_group.get(i, "")
        direct.setdefault(g, []).append((i, "n", i))
        p = g
        while p and p not in first:
            first[p] = i
            p = kept_parent[p]
    for g, par in kept_parent.items():
        direct.setdefault(par, []).append((first[g], "g", g))
    for g in list(direct):
        items = direct[g]
        if len(items) > MAX_CHILDREN:
            items.sort(key=lambda t: t[0])
            _split(tree, g, items)
    # Sizes and members.
    members: dict[str, list[int]] = {}
    for i in indices:
        for p in tree.chain(i):
            members.setdefault(p, []).append(i)
    tree.members = members
    tree.size = {p: len(m) for p, m in members.items()}
    return tree


def _split(tree: GroupTree, parent: str, items: list[tuple[int, str, object]]) -> None:
    n = len(items)
    size = PART_SIZE if n <= PART_SIZE * MAX_CHILDREN else -(-n // MAX_CHILDREN)
    nparts = -(-n // size)
    for k in range(nparts):
        chunk = items[k * size:(k + 1) * size]
        part = f"{parent}/#{k}"
        tree.parent[part] = parent
        lo, hi = chunk[0][0], chunk[-1][0]
        tree.labels[part] = f"part {k + 1}/{nparts}"
        for _, kind, ref in chunk:
            if kind == "n":
                tree.node_group[ref] = part  # type: ignore[index]
            else:
                tree.parent[ref] = part  # type: ignore[index]
        if len(chunk) > MAX_CHILDREN:
            _split(tree, part, chunk)
        del lo, hi
    tree._chains.clear()


def group_signature(graph: onnx.GraphProto, members: Sequence[int],
                    producer: Mapping[str, tuple[int, int]]) -> str:
    """A digest of a group's structure: op types in order and its internal wiring.

    Two groups with the same digest are the same block repeated (the 32 decoder layers of
    an LLM): same operators in the same order, connected the same way, with the same number
    of inputs from outside. Names, weights and attribute values do not count.
    """
    local = {idx: k for k, idx in enumerate(members)}
    h = hashlib.blake2b(digest_size=16)
    for k, idx in enumerate(members):
        node = graph.node[idx]
        parts = [node.domain, node.op_type]
        for v in node.input:
            p = producer.get(v)
            if p is not None and p[0] in local:
                parts.append(f"{local[p[0]] - k}:{p[1]}")
            else:
                parts.append("x" if v else "-")
        h.update(("|".join(parts) + ";").encode())
    return h.hexdigest()


def repeat_signature(graph: onnx.GraphProto, tree: GroupTree, paths: Sequence[str],
                     producer: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """Class ids of the ``paths`` that are structurally identical to another of ``paths``.

    Returns ``{path: class_id}`` only for groups whose class has two or more members; class
    ids are numbered in order of first appearance, so the result is deterministic.
    """
    classes: dict[str, list[str]] = {}
    for p in paths:
        m = tree.members.get(p)
        if not m or len(m) < 2:
            continue
        classes.setdefault(group_signature(graph, m, producer), []).append(p)
    out: dict[str, int] = {}
    cid = 0
    for sig, ps in classes.items():
        if len(ps) > 1:
            for p in ps:
                out[p] = cid
            cid += 1
    return out
