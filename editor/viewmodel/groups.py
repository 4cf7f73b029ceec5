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

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from editor.viewmodel.nodetable import NodeTable

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


TORCH_SCOPES_KEY = "pkg.torch.onnx.name_scopes"


def scoped_name(node: onnx.NodeProto) -> str:
    """The node's name with its scope path, from the name itself or exporter metadata.

    Names like ``/model/layers.3/attn/MatMul`` (the TorchScript exporter, tf2onnx) carry the
    scopes. The dynamo exporter names nodes ``node_add_12`` and records the module scopes in
    ``metadata_props["pkg.torch.onnx.name_scopes"]`` as a Python list of cumulative dotted
    names (``['', 'model', 'model.layers.3', 'model.layers.3.self_attn', 'add_12']``; the
    last entry is the node itself): that becomes ``/model/layers.3/self_attn/node_add_12``.
    """
    name = node.name
    if "/" in name:
        return name
    props = node.metadata_props
    count = len(props)
    if not count:
        return name
    # NOTE: an exporter writes the same keys in the same order on every node, so the entry
    # is looked for where the last node had it before the others are read: reading each
    # entry builds a wrapper and two strings, and the export's 11.8k nodes carry five each
    # (reading them all was ~40% of this function's time on the export)
    at = _SCOPES_AT[0]
    if at < count and (prop := props[at]).key == TORCH_SCOPES_KEY:
        value = prop.value
    else:
        for i, prop in enumerate(props):
            if prop.key == TORCH_SCOPES_KEY:
                _SCOPES_AT[0] = i
                value = prop.value
                break
        else:
            return name
    # the last entry is the node itself; nodes of one module share the rest
    cut = value.rfind(",")
    prefix = value[:cut] if cut > 0 else ""
    path = _SCOPE_CACHE.get(prefix)
    if path is None:
        path = _parse_scopes(prefix)
        if len(_SCOPE_CACHE) > 200_000:
            _SCOPE_CACHE.clear()
        _SCOPE_CACHE[prefix] = path
    return f"{path}/{name or 'node'}" if path else name


#: where the last node carried ``TORCH_SCOPES_KEY`` among its metadata_props (a hint only:
#: a wrong one costs a scan, never a different answer)
_SCOPES_AT = [0]

_SCOPE_CACHE: dict[str, str] = {}


def _parse_scopes(prefix: str) -> str:
    """``"['', 'model', 'model.layers.3'"`` -> ``"/model/layers.3"``."""
    items = [t.strip().strip("'\"") for t in prefix.lstrip("[").split(",")]
    parts: list[str] = []
    prev = ""
    for it in items:
        if not it:
            continue
        seg = it[len(prev) + 1:] if prev and it.startswith(prev + ".") else it
        parts.append(seg.replace("/", "_"))
        prev = it
    return "/" + "/".join(parts) if parts else ""


@dataclass
class GroupTree:
    """The kept groups of one graph scope. Paths are strings; ``""`` is the graph itself."""

    parent: dict[str, str] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)          # nodes inside (all depths)
    labels: dict[str, str] = field(default_factory=dict)
    node_group: dict[int, str] = field(default_factory=dict)    # node index -> innermost group
    _direct: dict[str, list[int]] = field(default_factory=dict)   # group -> its direct nodes
    _chains: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _kids: dict[str, list[str]] | None = None
    n_nodes: int = 0
    #: Groups that are one call of a scope used several times (see :func:`_instance_dirs`):
    #: path -> (k, n), the k-th of n calls in execution order.
    instances: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: The node table the tree was built from: a display build given this tree reads it
    #: instead of reading every node again (see ``build_display_graph``'s ``groups``).
    table: NodeTable | None = field(default=None, repr=False, compare=False)
    #: node index -> scoped name (:func:`scoped_name`) of the nodes grouped, when the tree
    #: was built from a graph (``group_tree``): the canvas keys its boxes' scopes by them
    #: instead of reading every node's metadata again (80 ms on the 11.8k-node export)
    names: dict[int, str] = field(default_factory=dict, repr=False, compare=False)

    def members(self, path: str) -> list[int]:
        """Node indices inside ``path`` at any depth, in graph order."""
        if self._kids is None:
            kids: dict[str, list[str]] = {}
            for g, p in self.parent.items():
                kids.setdefault(p, []).append(g)
            self._kids = kids
        out: list[int] = []
        stack = [path]
        while stack:
            g = stack.pop()
            out += self._direct.get(g, ())
            stack += self._kids.get(g, ())
        out.sort()
        return out

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


def build_group_tree(names: Sequence[str], indices: Sequence[int],
                     nodes: NodeTable | None = None) -> GroupTree:
    """Group tree for nodes ``indices`` (graph order) with the given ``names``.

    ``nodes`` (the graph's :class:`NodeTable`, indexed like ``indices``) gives the wiring: with it, a
    scope whose nodes interleave with others' (a module called several times) is split into
    one group per call (:func:`_instance_dirs`), and an over-full group is split where the
    graph is narrow (:func:`_split`)."""
    # Work per scope directory ("/model/layers.3/attn" of ".../attn/MatMul"): nodes of one
    # directory share everything below, and there are far fewer directories than nodes.
    node_dir: list[str] = []
    for name in names:
        d = name.rpartition("/")[0] if "/" in name else ""
        if d and not d.strip("/"):
            d = ""
        node_dir.append(d)
    preds = _predecessors(nodes, indices) if nodes is not None else None
    instances: dict[str, tuple[str, int, int]] = {}
    made: dict[str, list[str]] = {"": []}   # the scopes of each directory, made once
    if preds is not None:
        _adopt_scopeless(node_dir, preds)
        node_dir = _instance_dirs(node_dir, preds, instances, made)
    dir_count: dict[str, int] = {}
    for d in node_dir:
        dir_count[d] = dir_count.get(d, 0) + 1
    dir_scopes = _dir_scopes(dir_count, made)
    count: dict[str, int] = {}
    for d, c in dir_count.items():
        for p in dir_scopes.get(d, ()):
            count[p] = count.get(p, 0) + c
    total = len(indices)
    tree = GroupTree(table=nodes)
    tree.n_nodes = len(indices)
    # Keep a scope when it holds more than one node and less than its nearest kept ancestor.
    kept_parent: dict[str, str] = {}
    dir_inner: dict[str, str] = {"": ""}
    for d in dir_count:
        if not d:
            continue
        anc = ""
        anc_size = total
        for p in dir_scopes[d]:
            if p in kept_parent:
                anc, anc_size = p, count[p]
                continue
            c = count[p]
            if 1 < c < anc_size:
                kept_parent[p] = anc
                anc, anc_size = p, c
        dir_inner[d] = anc
    tree.parent = kept_parent
    for path, (label, k, n) in instances.items():
        if path in kept_parent:
            tree.labels[path] = f"{label} #{k}"
            tree.instances[path] = (k, n)
    node_group = tree.node_group
    for i, d in zip(indices, node_dir):
        g = dir_inner[d]
        if g:
            node_group[i] = g
    # Split over-full groups into parts of consecutive children (graph order).
    n_direct: dict[str, int] = {}
    for i in indices:
        g = node_group.get(i, "")
        n_direct[g] = n_direct.get(g, 0) + 1
    for g, par in kept_parent.items():
        n_direct[par] = n_direct.get(par, 0) + 1
    full = {g for g, c in n_direct.items() if c > MAX_CHILDREN}
    if full:
        direct: dict[str, list[tuple[int, str, object]]] = {g: [] for g in full}
        first: dict[str, int] = {}
        for i in indices:
            g = node_group.get(i, "")
            if g in direct:
                direct[g].append((i, "n", i))
            p = g
            while p and p not in first:
                first[p] = i
                p = kept_parent[p]
        for g, par in list(kept_parent.items()):
            if par in direct:
                direct[par].append((first[g], "g", g))
        wiring = _Wiring(nodes, indices, preds) if nodes is not None and preds is not None else None
        for g, items in direct.items():
            items.sort(key=lambda t: t[0])
            _split(tree, g, items, wiring)
    if preds is not None:
        _dissolve_cycles(tree, indices, preds, nodes)
    # Sizes and members.
    # Sizes: direct node counts pushed up the tree (members are gathered lazily).
    direct: dict[str, list[int]] = {}
    for i in indices:
        g = node_group.get(i, "")
        if g:
            lst = direct.get(g)
            if lst is None:
                direct[g] = [i]
            else:
                lst.append(i)
    tree._direct = direct
    size = {g: len(v) for g, v in direct.items()}
    depth: dict[str, int] = {}

    def dep(g: str) -> int:
        d = depth.get(g)
        if d is None:
            p = tree.parent[g]
            d = depth[g] = (dep(p) + 1) if p else 1
        return d

    for g in sorted(tree.parent, key=lambda g: -dep(g)):
        par = tree.parent[g]
        if par:
            size[par] = size.get(par, 0) + size.get(g, 0)
    tree.size = size
    return tree


def _dir_scopes(dirs: Iterable[str], made: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """``scopes_of(d + "/x")`` of every non-empty directory ``d``, each made from its
    parent's; ``made`` (``{"": []}`` at first) keeps them for the next call."""
    out = made if made is not None else {"": []}
    for d in dirs:
        pending = []
        while d not in out:
            pending.append(d)
            d = d.rpartition("/")[0]
        s = out[d]
        for q in reversed(pending):
            last = q.rpartition("/")[2]
            if last:   # (an empty segment, as in "/a//b", is no scope)
                s = s + [(s[-1] if s else "") + "/" + last]
            out[q] = s
    return {d: out[d] for d in dirs if d}


def _predecessors(nodes: NodeTable, indices: Sequence[int]) -> list[tuple[int, ...]]:
    """For every position k of ``indices``: the positions of the nodes whose results it reads."""
    producer: dict[str, int] = {}
    get = producer.get
    out: list[tuple[int, ...]] = []
    inputs, outputs = nodes.inputs, nodes.outputs
    for k, i in enumerate(indices):
        ins = inputs[i]
        # (as tuple(set of them) would give, without a set for one or two: most nodes read
        # one or two values, often one a weight)
        if len(ins) == 1:
            p = get(ins[0])
            out.append(() if p is None else (p,))
        elif len(ins) == 2:
            a, b = get(ins[0]), get(ins[1])
            if a is None:
                out.append(() if b is None else (b,))
            elif b is None or a == b:
                out.append((a,))
            else:
                out.append(tuple({a, b}))
        else:
            out.append(tuple({p for p in map(get, ins) if p is not None}))
        for o in outputs[i]:
            if o:
                producer[o] = k
    return out


def _dissolve_cycles(tree: GroupTree, indices: Sequence[int], preds: Sequence[tuple[int, ...]],
                     nodes: NodeTable) -> None:
    """Dissolve groups (their children join the parent) until no closed group can feed itself.

    # NOTE: a picture must not suggest a structure the model does not have. Per-call groups
    # and structural blocks are meant to keep every level's quotient graph (its children,
    # nodes and groups, joined where any member of one feeds a member of the other) acyclic,
    # but interleaved scopes can still defeat them (a scope-less node between two parts of a
    # group, blocks cut around a group that runs long). A cycle at one level would draw a
    # closed group that feeds what feeds it. The check is one pass over the edges (none of
    # the corpus's models needs a dissolve); each round dissolves the smallest group of one
    # cycle, and a level of nodes only is acyclic, so it ends."""
    extra: dict[int, set[int]] = {}   # values that bodies read are edges into their owner
    if any(nodes.body[i] for i in indices):
        producer = {o: k for k, i in enumerate(indices) for o in nodes.outputs[i] if o}
        for k, i in enumerate(indices):
            if nodes.body[i]:
                extra[k] = {producer[v] for v in nodes.body_reads(i) if v in producer} - {k}
    while True:
        cycle = _quotient_cycle(tree, indices, preds, extra)
        groups = [v for v in cycle if isinstance(v, str)]
        if not groups:
            return   # acyclic (or the model itself has a cycle)
        size: dict[str, int] = {}
        for i in indices:
            for g in tree.chain(i):
                size[g] = size.get(g, 0) + 1
        g = min(groups, key=lambda g: (size.get(g, 0), g))
        up = tree.parent.pop(g)
        for h, q in tree.parent.items():
            if q == g:
                tree.parent[h] = up
        for i, q in list(tree.node_group.items()):
            if q == g:
                if up:
                    tree.node_group[i] = up
                else:
                    del tree.node_group[i]
        tree.labels.pop(g, None)
        tree.instances.pop(g, None)
        tree._chains.clear()


def _runs_forward(chains: Sequence[tuple[str, ...]], preds: Sequence[tuple[int, ...]],
                  extra: Mapping[int, set[int]]) -> bool:
    """True when every edge of every level's quotient graph (see :func:`_quotient_cycle`)
    leaves a child whose nodes all come before every node of the child it enters: then no
    level has a cycle (along a path the first positions only grow). False says nothing.

    # NOTE: speed. This holds for an export in graph order with its groups as they should
    # be, and checking it is one look at every edge: building the quotient graphs and
    # searching them was an eighth of the group tree of the 11.8k-node export."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    inner: dict[str, tuple[str, ...]] = {}   # innermost group -> its chain
    for k, c in enumerate(chains):
        if c:
            g = c[-1]
            if g not in first:
                first[g] = k
                inner[g] = c
            last[g] = k
    for g, c in inner.items():   # a group spans what the groups inside it span
        f, la = first[g], last[g]
        for a in c[:-1]:
            if f < first.get(a, f + 1):
                first[a] = f
            if la > last.get(a, la - 1):
                last[a] = la
    for k, ps in enumerate(preds):
        b = chains[k]
        for p in (*ps, *extra[k]) if k in extra else ps:
            a = chains[p]
            if a is b:   # two nodes of one group
                if p < k:
                    continue
                return False
            j = 0
            while j < len(a) and j < len(b) and a[j] == b[j]:
                j += 1
            end = last[a[j]] if j < len(a) else p
            start = first[b[j]] if j < len(b) else k
            if end >= start:
                return False
    return True


def _quotient_cycle(tree: GroupTree, indices: Sequence[int], preds: Sequence[tuple[int, ...]],
                    extra: Mapping[int, set[int]]) -> list[int | str]:
    """The children of one level (node positions, group paths) that form a cycle of the
    quotient graph, or ``[]``."""
    chain = tree.chain
    chains = [chain(i) for i in indices]
    if _runs_forward(chains, preds, extra):
        return []
    succ: dict[int | str, set[int | str]] = {}
    for k, ps in enumerate(preds):
        b = chains[k]
        for p in (*ps, *extra[k]) if k in extra else ps:
            a = chains[p]
            if a is b:   # two nodes of one group
                u, v = p, k
            else:
                j = 0
                while j < len(a) and j < len(b) and a[j] == b[j]:
                    j += 1
                u = a[j] if j < len(a) else p
                v = b[j] if j < len(b) else k
            succ.setdefault(u, set()).add(v)
    # iterative depth-first search; a back edge closes a cycle on the stack
    state: dict[int | str, int] = {}
    for root in succ:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(succ[root]))]
        while stack:
            v, it = stack[-1]
            for w in it:
                st = state.get(w)
                if st == 1:
                    at = next(j for j, (x, _) in enumerate(stack) if x == w)
                    return [x for x, _ in stack[at:]]
                if st is None:
                    state[w] = 1
                    stack.append((w, iter(succ.get(w, ()))))
                    break
            else:
                state[v] = 2
                stack.pop()
    return []


def _adopt_scopeless(node_dir: list[str], preds: Sequence[tuple[int, ...]]) -> None:
    """Give a node without a scope the scope its producers and consumers share.

    # NOTE: exporters insert nodes without a name scope between scoped ones (tf2onnx's
    # ``Unsqueeze__115`` inside Magika's model scope, a user's inserted Relu). Left at the
    # top level, such a node sits outside the group around it, so the closed group would
    # feed it and be fed by it, and the group would be split around it. When every
    # neighbour lies in one scope, the node belongs there."""
    succs: dict[int, list[int]] = {k: [] for k, d in enumerate(node_dir) if not d}
    if not succs:
        return
    for k, ps in enumerate(preds):
        for p in ps:
            if p in succs:
                succs[p].append(k)
    for k in succs:
        if not preds[k] or not succs[k]:
            continue
        common: list[str] | None = None
        for q in (*preds[k], *succs[k]):
            parts = [x for x in node_dir[q].split("/") if x]
            if common is None:
                common = parts
            else:
                j = 0
                while j < len(common) and j < len(parts) and common[j] == parts[j]:
                    j += 1
                common = common[:j]
            if not common:
                break
        if common:
            node_dir[k] = "/" + "/".join(common)


def _instance_dirs(node_dir: list[str], preds: Sequence[tuple[int, ...]],
                   instances: dict[str, tuple[str, int, int]],
                   made: dict[str, list[str]] | None = None) -> list[str]:
    """Scope directories with every scope split into the calls it holds, in execution order.

    # NOTE: a torch module called several times (a layer reused 7 times, a shared norm)
    # exports every call under one name scope, interleaved with what runs between the calls.
    # Drawn as one group, the calls sit side by side in one box that feeds what comes after
    # it and is fed by it: a cycle the model does not have. A scope is split where one of
    # its nodes reads, through nodes outside the scope, a result of the scope's current
    # call: each call is then a group of its own (``/mol_layer``, ``/mol_layer#2`` ...)
    # that no path leaves and re-enters, so a closed call never feeds itself. Scopes are
    # split outermost first; an inner scope is split within each call of its parent.
    ``instances`` gets ``path -> (label, k, n)`` for every call of a split scope; ``made``
    is :func:`_dir_scopes`'s memory."""
    # NOTE: speed. The work is per class of nodes that share a directory and the calls
    # above it, not per node: looping over the 11.8k nodes once per scope level was most of
    # this function on a dynamo export (2.6k directories, five levels).
    by_dir: dict[str, list[int]] = {}
    for k, d in enumerate(node_dir):
        ks = by_dir.get(d)
        if ks is None:
            by_dir[d] = [k]
        else:
            ks.append(k)
    scopes = _dir_scopes(by_dir, made)
    if _uninterrupted(by_dir, scopes):
        # every call of _calls would answer "one call": each directory is its own path
        path_of = {d: s[-1] if s else "" for d, s in scopes.items()}
        path_of[""] = ""
        return [path_of[d] for d in node_dir]
    segs = {d: [p for p in d.split("/") if p] for d in by_dir}
    depth = max((len(c) for c in segs.values()), default=0)
    #: (prefix so far, directory, its positions with that prefix, ascending)
    classes: list[tuple[str, str, list[int]]] = [("", d, ks) for d, ks in by_dir.items()]
    done: list[tuple[str, str, list[int]]] = []   # classes whose directory has no more levels
    for t in range(depth):
        by_path: dict[str, list[tuple[str, str, list[int]]]] = {}   # path at this level -> its classes
        for cl in classes:
            c = segs[cl[1]]
            if len(c) > t:
                by_path.setdefault(cl[0] + "/" + c[t], []).append(cl)
            else:
                done.append(cl)
        members = {path: _merged([cl[2] for cl in cls]) for path, cls in by_path.items()}
        # paths in the order of their first node (the order a walk over the nodes meets them)
        members = dict(sorted(members.items(), key=lambda item: item[1][0]))
        merged_into: set[str] = set()
        twins_of = _numbered_twins(members)
        # the classes the nodes of each path (at this level) fall into once it is split
        split: dict[str, list[tuple[str, str, list[int]]]] = {}
        for path, ks in members.items():
            if path in merged_into:
                continue
            calls = _calls(ks, preds) if len(ks) > 1 else None
            merged = [path]
            if calls:
                # torch's TorchScript exporter names a later call's own nodes ``/mol_layer_1``
                # beside ``/mol_layer`` (the shared module's inner scopes keep the name): once
                # the scope is known to be called several times, those siblings are its calls
                twins = [q for q in twins_of.get(path, ()) if q not in merged_into]
                if twins:
                    merged_into.update(twins)
                    merged += twins
                    ks = sorted(ks + [k for q in twins for k in members[q]])
                    calls = _calls(ks, preds)
            # (a twin met before its scope was split alone: the scope decides its nodes now)
            last = calls[-1] if calls else 0
            if not last:
                for q in merged:
                    split[q] = [(path, d, dks) for _, d, dks in by_path[q]]
                continue
            source = {k: q for q in merged for k in members[q]} if len(merged) > 1 else None
            made: dict[tuple[str, str, str], list[int]] = {}
            for j, k in enumerate(ks):
                pre = path if not calls[j] else f"{path}#{calls[j] + 1}"
                made.setdefault((source[k] if source else path, pre, node_dir[k]), []).append(k)
            for q in merged:
                split[q] = []
            for (q, pre, d), dks in made.items():
                split[q].append((pre, d, dks))
            label = path.rsplit("/", 1)[-1]
            for c in range(last + 1):
                instances[path if not c else f"{path}#{c + 1}"] = (label, c + 1, last + 1)
        classes = [cl for cls in split.values() for cl in cls]
    prefix = [""] * len(node_dir)
    for pre, _, ks in done + classes:
        for k in ks:
            prefix[k] = pre
    return prefix


def _uninterrupted(by_dir: Mapping[str, list[int]], scopes: Mapping[str, list[str]]) -> bool:
    """True when the nodes of every scope, at every depth, are consecutive in graph order
    (no node of another scope runs between a scope's first and last): then no scope is
    called more than once. ``by_dir``: each directory's positions, ascending; ``scopes``:
    the scopes each directory lies in (:func:`_dir_scopes`)."""
    span: dict[str, list[int]] = {}   # scope -> [first, last, count]
    for d, ks in by_dir.items():
        for p in scopes.get(d, ()):
            s = span.get(p)
            if s is None:
                span[p] = [ks[0], ks[-1], len(ks)]
            else:
                if ks[0] < s[0]:
                    s[0] = ks[0]
                if ks[-1] > s[1]:
                    s[1] = ks[-1]
                s[2] += len(ks)
    return all(last - first + 1 == count for first, last, count in span.values())


def _merged(runs: list[list[int]]) -> list[int]:
    """The ascending positions of ``runs`` (each ascending) in one list."""
    if len(runs) == 1:
        return runs[0]
    return sorted(k for run in runs for k in run)


def _numbered_twins(paths: Iterable[str]) -> dict[str, list[str]]:
    """``{"/a/mol_layer": ["/a/mol_layer_1", "/a/mol_layer_2"]}``: paths that differ from
    another of ``paths`` by a ``_<number>`` suffix, in number order."""
    paths = set(paths)
    out: dict[str, list[tuple[int, str]]] = {}
    for q in paths:
        m = _TWIN.fullmatch(q)
        if m is not None and m.group(1) in paths:
            out.setdefault(m.group(1), []).append((int(m.group(2)), q))
    return {p: [q for _, q in sorted(v)] for p, v in out.items()}


_TWIN = re.compile(r"(.+)_(\d+)")


def _calls(ks: list[int], preds: Sequence[tuple[int, ...]]) -> list[int] | None:
    """Call number of each member position ``ks`` (sorted) of one scope; None when one call."""
    if ks[-1] - ks[0] + 1 == len(ks):
        return None   # no node outside the scope runs between its first and last: one call
    member = set(ks)
    inst: dict[int, int] = {}
    reach: dict[int, int] = {}   # outside position -> the latest call it depends on
    c = 0
    out = []
    for k in range(ks[0], ks[-1] + 1):
        ps = preds[k]
        if k in member:
            for p in ps:
                if reach.get(p, -1) == c:
                    c += 1
                    break
            inst[k] = c
            out.append(c)
        elif ps:
            r = -1
            for p in ps:
                q = inst.get(p)
                if q is None:
                    q = reach.get(p, -1)
                if q > r:
                    r = q
            if r >= 0:
                reach[k] = r
    return out if c else None


def _split(tree: GroupTree, parent: str, items: list[tuple[int, str, object]], wiring: "_Wiring | None") -> None:
    """Split the over-full group ``parent`` (``items``: its children in graph order as
    ``(first node index, "n" | "g", node index | group path)``) into blocks.

    # NOTE: a scope-less export (or one scope of 3,000 nodes) used to be cut into
    # ``part k/n`` of 250 children each: arbitrary cuts through layers, named by nothing.
    # With the wiring, the children are cut where the graph is narrowest (fewest values
    # alive across the cut: between layers, around a residual add), and when the pieces
    # repeat (a layer is two pieces: attention, then MLP), the repeating unit is one block:
    # the 24 layers of an encoder become 24 identical blocks (``DisplayGraph.repeats``),
    # named by their first and last op (``ConvInteger … LayerNormalization``). What is left
    # before and after the repeats stays as it is, or is cut at narrow places into blocks
    # when it is still too big."""
    if wiring is None:
        size = PART_SIZE if len(items) <= PART_SIZE * MAX_CHILDREN else -(-len(items) // MAX_CHILDREN)
        _make_blocks(tree, parent, [items[k:k + size] for k in range(0, len(items), size)], wiring)
        return
    width = wiring.cut_widths(tree, parent, items)
    sig = [wiring.signature(it) for it in items]
    n = len(items)
    best = None
    segs: list[tuple[int, int]] = []
    # the narrowest cuts first; wider ones until the pieces repeat over half the children
    for level in sorted(set(width[n // 10:n - n // 10] or width[1:n]))[:8]:
        bounds = [0] + [b for b in range(1, n) if width[b] <= level] + [n]
        segs = [(bounds[j], bounds[j + 1]) for j in range(len(bounds) - 1)]
        best = _repeats(segs, sig)
        if best is not None and 2 * best[0] >= n:
            break
        best = None
    groups: list[list[tuple[int, str, object]]] = []
    if best is not None:
        _, neg_p, j0, j1 = best
        period = -neg_p
        unit = segs[j0 + period - 1][1] - segs[j0][0]
        if unit < MIN_BLOCK:  # tiny units (a chain of Relus) repeat in runs of several
            period *= -(-MIN_BLOCK // max(unit, 1))
        starts = list(range(j0, j1, period))
        if j1 - starts[-1] < period:
            starts.pop()
        blocks = [items[segs[a][0]:segs[min(a + period, len(segs)) - 1][1]] for a in starts]
        head = items[:segs[j0][0]] if blocks else items
        tail = items[segs[starts[-1] + period - 1][1]:] if blocks else []
        groups = _chunks(head, width, 0) + blocks + _chunks(tail, width, n - len(tail))
    else:
        groups = _chunks(items, width, 0, force=True)
    _make_blocks(tree, parent, groups, wiring)


MIN_BLOCK = 8   # children a repeated block holds at least


def _repeats(segs: list[tuple[int, int]], sig: list[object]) -> tuple[int, int, int, int] | None:
    """The longest run of ``segs`` that repeats: (children covered, -period, first, end segment)."""
    ids: dict[tuple, int] = {}
    sid = [ids.setdefault(tuple(sig[a:b]), len(ids)) for a, b in segs]
    best = None
    for period in range(1, min(MAX_PERIOD, len(segs) // 2) + 1):
        j = 0
        while j + period < len(segs):
            if sid[j] != sid[j + period]:
                j += 1
                continue
            k = j
            while k + period < len(segs) and sid[k] == sid[k + period]:
                k += 1
            # segments j .. k + period - 1 repeat with this period
            reps = (k - j + period) // period
            if reps >= 2:
                end = j + reps * period
                cand = (segs[end - 1][1] - segs[j][0], -period, j, end)
                if best is None or cand > best:
                    best = cand
            j = k + 1
    return best


MAX_PERIOD = 48   # pieces a repeated block may be made of


def _chunks(items: list, width: list[int], offset: int, force: bool = False) -> list[list]:
    """``items`` as one list per child when they are few, else cut at their narrowest
    places into chunks of about ``PART_SIZE``."""
    if not items:
        return []
    if not force and len(items) <= MAX_CHILDREN // 4:
        return [[it] for it in items]
    out = []
    a = 0
    while a < len(items):
        if len(items) - a <= PART_SIZE:
            out.append(items[a:])
            break
        lo_b, hi_b = a + PART_SIZE // 2, min(a + PART_SIZE + PART_SIZE // 2, len(items) - 1)
        b = min(range(lo_b, hi_b + 1), key=lambda c: (width[offset + c], abs(c - a - PART_SIZE)))
        out.append(items[a:b])
        a = b
    return out


def _make_blocks(tree: GroupTree, parent: str, groups: list[list[tuple[int, str, object]]],
                 wiring: "_Wiring | None") -> None:
    """Make a group of every list in ``groups`` with two or more children (a one-child list
    leaves its child where it is); named by its first and last op."""
    k = 0
    for chunk in groups:
        if len(chunk) < 2:
            continue
        part = f"{parent}/#{k}"
        k += 1
        tree.parent[part] = parent
        first, last = chunk[0], chunk[-1]
        name = wiring.name if wiring is not None else (lambda it: str(it[2]))
        a, b = name(first), name(last)
        tree.labels[part] = a if a == b and len(chunk) == 1 else f"{a} … {b}"
        for _, kind, ref in chunk:
            if kind == "n":
                tree.node_group[ref] = part  # type: ignore[index]
            else:
                tree.parent[ref] = part  # type: ignore[index]
        if len(chunk) > MAX_CHILDREN:
            _split(tree, part, chunk, wiring)
    tree._chains.clear()


class _Wiring:
    """What :func:`_split` reads of the graph: op types and who reads whom (node indices)."""

    def __init__(self, nodes: NodeTable, indices: Sequence[int],
                 preds: Sequence[tuple[int, ...]]) -> None:
        self.nodes = nodes
        self.preds = {indices[k]: tuple(indices[p] for p in ps) for k, ps in enumerate(preds)}

    def signature(self, it: tuple[int, str, object]) -> object:
        if it[1] == "n":
            return (self.nodes.domain[it[2]], self.nodes.op[it[2]])  # type: ignore[index]
        return ("g", it[2].rsplit("/", 1)[-1].split("#")[0].rstrip("0123456789._"))  # type: ignore[union-attr]

    def name(self, it: tuple[int, str, object]) -> str:
        if it[1] == "n":
            return self.nodes.op[it[2]]  # type: ignore[index]
        return str(it[2]).rsplit("/", 1)[-1].split("#")[0]

    def cut_widths(self, tree: GroupTree, parent: str, items: list[tuple[int, str, object]]) -> list[int]:
        """``w[b]``: how many children before position ``b`` have a result read at or after ``b``."""
        pos: dict[int, int] = {}
        for q, (_, kind, ref) in enumerate(items):
            if kind == "n":
                pos[ref] = q  # type: ignore[index]
            else:
                for i in tree.members(ref):  # type: ignore[arg-type]
                    pos[i] = q
        n = len(items)
        last = list(range(n))
        readers = [0] * n
        for i, q in pos.items():
            for p in self.preds.get(i, ()):
                qp = pos.get(p)
                if qp is not None and qp < q:
                    readers[qp] += 1
                    if last[qp] < q:
                        last[qp] = q
        diff = [0] * (n + 2)
        for q in range(n):
            # a hub (a mask or a length read by every layer) is alive across every cut: it
            # says nothing about where the graph is narrow
            if last[q] > q and not (readers[q] >= 4 and last[q] - q > n // 4):
                diff[q + 1] += 1
                diff[last[q] + 1] -= 1
        w = [0] * (n + 1)
        run = 0
        for b in range(n + 1):
            run += diff[b]
            w[b] = run
        return w


def group_signature(nodes: NodeTable, members: Sequence[int],
                    producer: Mapping[str, tuple[int, int]]) -> tuple[object, ...]:
    """The structure of a group: op types in order and its internal wiring.

    Two groups with the same signature are the same block repeated (the 32 decoder layers
    of an LLM): same operators in the same order, connected the same way, with the same
    number of inputs from outside. Names, weights and attribute values do not count.
    Per member, in one flat tuple: its domain, op type and number of inputs, then two
    items per input: how many members back its producer is and which output, or ``"x"``
    (from outside the group) / ``"-"`` (omitted) and 0.

    # NOTE: a tuple, not a digest of a text made of it: hashing the text of every member
    # was a tenth of the first view of the 11.8k-node export (200 layers of 59 nodes)."""
    local = {idx: k for k, idx in enumerate(members)}
    domains, ops, inputs = nodes.domain, nodes.op, nodes.inputs
    get, member = producer.get, local.get
    out: list[object] = []
    for k, idx in enumerate(members):
        ins = inputs[idx]
        out += (domains[idx], ops[idx], len(ins))
        for v in ins:
            p = get(v)
            if p is not None:
                q = member(p[0])
                if q is not None:
                    out += (q - k, p[1])
                    continue
            out += ("x" if v else "-", 0)
    return tuple(out)


def repeat_signature(nodes: NodeTable, tree: GroupTree, paths: Sequence[str],
                     producer: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """Class ids of the ``paths`` that are structurally identical to another of ``paths``.

    Returns ``{path: class_id}`` only for groups whose class has two or more members; class
    ids are numbered in order of first appearance, so the result is deterministic.
    """
    # Only groups of equal size can be equal: hash just those.
    by_size: dict[int, list[str]] = {}
    for p in paths:
        n = tree.size.get(p, 0)
        if n >= 2:
            by_size.setdefault(n, []).append(p)
    classes: dict[tuple[object, ...], list[str]] = {}
    for p in paths:
        if len(by_size.get(tree.size.get(p, 0), ())) < 2:
            continue
        classes.setdefault(group_signature(nodes, tree.members(p), producer), []).append(p)
    out: dict[str, int] = {}
    cid = 0
    for sig, ps in classes.items():
        if len(ps) > 1:
            for p in ps:
                out[p] = cid
            cid += 1
    return out
