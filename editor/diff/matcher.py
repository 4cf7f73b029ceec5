"""How the diff pairs the nodes of two graphs and compares the pairs (see the package).

# NOTE: how nodes are matched. Anchors are values both sides agree on: graph inputs and
# initializers (by name, then renamed ones by position / by content), values captured from
# an enclosing graph, and graph outputs. From them, rounds of hashing spread matches:
#
# * forward: a node's key is a hash of its op signature and the keys of its inputs, in
#   topological order (a Merkle hash of everything upstream); matched nodes hash to their
#   pair, so matches accumulate round after round;
# * backward: the same from the graph outputs, over each output's consumers;
# * names: nodes left over whose unique names agree (same op) are paired;
# * loose rounds when strict ones stall: the op signature without attributes (attribute
#   edits), names alone (same op or not), then without the op (op type edits: same inputs
#   and same consumers, one-to-one, and names must not disagree when names are stable).
#
# Every pair must then be grounded: connected through corresponding edges to a pair that
# shares a name, reads the same anchored value or writes the same graph output. Loose
# rounds otherwise pair unrelated nodes (every Constant of one model with one of another,
# by order: "0 same, 62 changed" between two unrelated models); ungrounded pairs are
# reported as removed + added. Unmatched nodes of A and B that sit between the same matched
# neighbours are then one *rewrite* each (quantization, fusion, opset spelling), reported as
# "63 Conv quantized to int8" with the boundary values paired for numeric comparison.
#
# Equal keys on several nodes (parallel identical branches, equal constants) are paired by
# output value names first, then node names, then graph order. Every round is linear in the graph, and list order never matters, so a
# re-ordered (differently toposorted) graph diffs as identical. Intermediate value names are
# not part of any key, so a renamed value is reported as a rename, not as rewiring.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import onnx

from editor.io.tensors import uses_external_data
from editor.types import tensor_text, type_text

if TYPE_CHECKING:
    from editor.document import Document
    from editor.document.index import ModelIndex, Scope
    from editor.io.external import ExternalDataStore
from editor.diff.records import (
    ADDED,
    CHANGED,
    REMOVED,
    SAME,
    FieldChange,
    InitializerChange,
    IOChange,
    ModelDiff,
    NodeChange,
    NodeRef,
    PortChange,
    ValueRename,
)
from editor.diff.canonical import (
    canonical_regions,
    constant_values,
    pair_canonical,
    through_qdq,
    worth_a_canonical_round,
)
from editor.diff.rewrites import _classify, _rewrite_regions, _unground
from editor.diff.values import (
    _attribute_changes,
    _byte_chunks,
    _combine,
    _compare_values,
    _domain,
    _fkey,
    _fname,
    _match_names,
)


# -- entry point -----------------------------------------------------------------------
def diff_models(
    a: Document | onnx.ModelProto,
    b: Document | onnx.ModelProto,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> ModelDiff:
    """Compare ``a`` with ``b`` (documents or ModelProtos; neither is changed).

    Initializer values count as equal when ``|a - b| <= atol + rtol * |b|`` elementwise
    (exact for integers, booleans and strings). External weights are read through each
    document's store, chunk by chunk; a ModelProto with unloaded external data has its
    external tensors compared by reference (location, offset, length) only.
    """
    da, db = _as_document(a), _as_document(b)
    return _Differ(da, db, rtol, atol).run()


def _as_document(m: Document | onnx.ModelProto) -> Document:
    from editor.document import Document

    return Document(m) if isinstance(m, onnx.ModelProto) else m


# -- per-side preparation --------------------------------------------------------------
def _weight_tensor(side: _Side, name: str) -> onnx.TensorProto | None:
    """The tensor behind weight ``name``: an initializer, or a Constant node's ``value``."""
    t = side.initializer_protos.get(name)
    if t is not None:
        return t
    p = side.producer.get(name)
    if p is None:
        return None
    nd = side.nodes[p[0]]
    if nd.op_type != "Constant" or _domain(nd.domain):
        return None
    value = next((a for a in nd.attribute if a.name == "value"), None)
    return value.t if value is not None and value.HasField("t") else None



def _attr_digest(node: onnx.NodeProto) -> int:
    """Hash of the attributes except subgraph bodies (those are diffed recursively)."""
    if not node.attribute:
        return 0
    parts = []
    for attr in node.attribute:
        if attr.HasField("g") or len(attr.graphs):
            parts.append((attr.name, b"<graph>", len(attr.graphs)))
        else:
            parts.append((attr.name, attr.SerializeToString(deterministic=True), 0))
    parts.sort()
    return hash(tuple(parts))


def _captured(node: onnx.NodeProto) -> list[str]:
    if not any(attr.HasField("g") or len(attr.graphs) for attr in node.attribute):
        return []
    from editor.passes.extract import captured_names

    names: dict[str, None] = {}
    for attr in node.attribute:
        bodies = ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
        for body in bodies:
            names.update((n, None) for n in captured_names(body))
    return sorted(names)


class _Side:
    """One scope of one model, flattened into lists for the matcher."""

    def __init__(self, doc: Document, scope: Scope) -> None:
        self.doc, self.scope = doc, scope
        g = scope.graph
        self.ids: list[int] = list(scope.node_ids)
        self.nodes: list[onnx.NodeProto] = list(g.node)
        n = len(self.nodes)
        self.names = [nd.name for nd in self.nodes]
        self.sig_strict = [0] * n
        self.sig_op = [0] * n
        self.inputs: list[list[str]] = []  # regular inputs, then captured names
        self.producer: dict[str, tuple[int, int]] = {}
        for i, nd in enumerate(self.nodes):
            op = (nd.domain if nd.domain != "ai.onnx" else "", nd.op_type)
            self.sig_op[i] = hash(op)
            self.sig_strict[i] = hash((op, _attr_digest(nd), len(nd.output)))
            self.inputs.append(list(nd.input) + _captured(nd))
            for k, o in enumerate(nd.output):
                if o:
                    self.producer.setdefault(o, (i, k))
        self.consumers: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, ins in enumerate(self.inputs):
            for k, name in enumerate(ins):
                if name:
                    self.consumers[name].append((i, k))
        self.initializers = scope.initializer_names()
        self.initializer_protos: dict[str, onnx.TensorProto] = (
            {} if scope.is_function else {t.name: t for t in g.initializer})
        # IR < 4 lists initializers among the inputs too: they are weights, not inputs
        weights = set(self.initializers)
        self.graph_inputs = [n for n in scope.input_names() if n not in weights]
        self.graph_outputs = scope.output_names()
        self.order = self._toposort()
        self.matched: list[int] = [-1] * n  # index of the partner on the other side
        self.constants: set[str] | None = None  # values made of weights alone (editor.diff.canonical)
        self.folded: set[int] = set()  # nodes the other side computes inside the op before them

    def _toposort(self) -> list[int]:
        n = len(self.nodes)
        indeg = [0] * n
        succ: list[list[int]] = [[] for _ in range(n)]
        for i, ins in enumerate(self.inputs):
            for name in ins:
                p = self.producer.get(name)
                if p is not None and p[0] != i:
                    indeg[i] += 1
                    succ[p[0]].append(i)
        ready = [i for i in range(n) if indeg[i] == 0]
        ready.reverse()
        order = []
        while ready:
            i = ready.pop()
            order.append(i)
            for j in succ[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    ready.append(j)
        if len(order) < n:  # a cycle (invalid model): the rest in list order
            seen = set(order)
            order += [i for i in range(n) if i not in seen]
        return order

    def ref(self, i: int) -> NodeRef:
        nd = self.nodes[i]
        return NodeRef(self.ids[i], nd.name, nd.op_type, nd.domain, self.doc.index.path(self.scope.id))


# -- the matcher and comparer ----------------------------------------------------------
class _ScopeMatch:
    """Pairs the nodes of two sides of one scope, round after round (see the NOTE at the
    top): strict hashing rounds forward and backward from the anchors, unique names, then
    looser rounds when the strict ones stall. Fills ``A.matched`` / ``B.matched``."""

    def __init__(self, A: _Side, B: _Side, anchor: dict[str, str], outer: dict[str, str],
                 out_map: dict[str, str]) -> None:
        self.A, self.B, self.anchor, self.outer = A, B, anchor, outer
        self.out_anchor_a = {name: k for k, name in enumerate(A.graph_outputs)}
        self.out_anchor_b = {name: self.out_anchor_a.get(out_map.get(name, ""), -1 - k)
                             for k, name in enumerate(B.graph_outputs)}
        self.b_local = set(B.graph_inputs) | set(B.initializers)

    def match(self) -> None:
        self.strict_rounds()
        self.loose_rounds()
        #: A indices of the pairs the canonical round made (grounded by construction)
        self.canonical: set[int] = set()
        if worth_a_canonical_round(self.A, self.B):
            self.canonical = pair_canonical(self.A, self.B, lambda n: self.vkey_a(n, []),
                                            lambda n: self.vkey_b(n, []), self.out_anchor_a, self.out_anchor_b)
            if self.canonical:
                self.strict_rounds()

    def loose_rounds(self) -> None:
        A, B = self.A, self.B
        loose = [
            lambda: self.pair(self.forward(A, A.sig_op, self.vkey_a), self.forward(B, B.sig_op, self.vkey_b)),
            lambda: self.pair(self.backward(A, A.sig_op, self.out_anchor_a),
                              self.backward(B, B.sig_op, self.out_anchor_b)),
            lambda: self.by_name(same_op=False),
            # op type edits: same inputs and same consumers, whatever the op
            lambda: self.pair(_combine(self.forward(A, None, self.vkey_a), self.backward(A, None, self.out_anchor_a)),
                              _combine(self.forward(B, None, self.vkey_b), self.backward(B, None, self.out_anchor_b)),
                              unique_only=True),
        ]
        for _ in range(20):
            if self.all_matched():
                break
            progressed = False
            for step in loose:
                if step():
                    progressed = True
                    self.strict_rounds()
                    break
            if not progressed:
                break

    def vkey_a(self, name: str, keys: list[int]) -> Any:
        p = self.A.producer.get(name)
        if p is not None:
            return (keys[p[0]], p[1])
        return name  # inputs, initializers, outer values: A's names are canonical

    def vkey_b(self, name: str, keys: list[int]) -> Any:
        p = self.B.producer.get(name)
        if p is not None:
            return (keys[p[0]], p[1])
        if not name:
            return ""
        if name in self.b_local:
            return self.anchor.get(name, ("b", name))
        return self.outer.get(name, name)  # captured from an enclosing graph

    def forward(self, side: _Side, sig: list[int] | None, vkey) -> list[int]:  # noqa: ANN001
        keys = [0] * len(side.nodes)
        for i in side.order:
            m = side.matched[i]
            if m >= 0:  # matched: hashes to its pair (the A index on both sides)
                keys[i] = hash(("m", i if side is self.A else m))
                continue
            base = sig[i] if sig is not None else 1
            keys[i] = hash((base, tuple(vkey(name, keys) for name in side.inputs[i])))
        return keys

    def backward(self, side: _Side, sig: list[int] | None, out_anchor: dict[str, int]) -> list[int]:
        keys = [0] * len(side.nodes)
        for i in reversed(side.order):
            m = side.matched[i]
            if m >= 0:
                keys[i] = hash(("m", i if side is self.A else m))
                continue
            per_out = []
            for o in side.nodes[i].output:
                if not o:
                    per_out.append(None)
                    continue
                uses = sorted((keys[c], k) for c, k in side.consumers.get(o, ()))
                per_out.append((tuple(uses), out_anchor.get(o)))
            base = sig[i] if sig is not None else 1
            keys[i] = hash((base, tuple(per_out)))
        return keys

    def pair(self, ka: list[int], kb: list[int], unique_only: bool = False) -> int:
        """Match unmatched nodes with equal keys; ``unique_only``: only one-to-one keys,
        and, where names are stable between the models, not two nodes whose names differ
        (a deleted node and an added one in its place stay removed + added)."""
        buckets: dict[int, list[int]] = defaultdict(list)
        for j in self.B.order:
            if self.B.matched[j] < 0:
                buckets[kb[j]].append(j)
        if unique_only:
            count_a: dict[int, int] = defaultdict(int)
            for i in self.A.order:
                if self.A.matched[i] < 0:
                    count_a[ka[i]] += 1
        veto = unique_only and self.names_trusted()
        made = 0
        for i in self.A.order:
            if self.A.matched[i] >= 0:
                continue
            cands = buckets.get(ka[i])
            if not cands:
                continue
            if unique_only and (len(cands) != 1 or count_a[ka[i]] != 1
                                or (veto and self.A.names[i] and self.B.names[cands[0]] and self.A.names[i] != self.B.names[cands[0]])):
                continue
            pick = 0
            if len(cands) > 1:  # a tie (identical structure): same value names, then same node name
                outs = self.A.nodes[i].output
                pick = next((k for k, j in enumerate(cands) if self.B.nodes[j].output == outs),
                            next((k for k, j in enumerate(cands) if self.B.names[j] == self.A.names[i]), 0))
            j = cands.pop(pick)
            self.A.matched[i], self.B.matched[j] = j, i
            made += 1
        return made

    def names_trusted(self) -> bool:
        """Most matched pairs with names kept them: a name change then means something."""
        named = same = 0
        for i, j in enumerate(self.A.matched):
            if j >= 0 and self.A.names[i] and self.B.names[j]:
                named += 1
                same += self.A.names[i] == self.B.names[j]
        return named > 0 and same * 2 > named

    def by_name(self, same_op: bool) -> int:
        count_a: dict[str, int] = defaultdict(int)
        count_b: dict[str, int] = defaultdict(int)
        for n in self.A.names:
            count_a[n] += 1
        for n in self.B.names:
            count_b[n] += 1
        free_b = {self.B.names[j]: j for j in range(len(self.B.nodes)) if self.B.matched[j] < 0 and self.B.names[j]
                  and count_b[self.B.names[j]] == 1}
        made = 0
        for i in range(len(self.A.nodes)):
            nm = self.A.names[i]
            if self.A.matched[i] >= 0 or not nm or count_a[nm] != 1 or nm not in free_b:
                continue
            j = free_b[nm]
            if same_op and self.A.sig_op[i] != self.B.sig_op[j]:
                continue
            self.A.matched[i], self.B.matched[j] = j, i
            made += 1
        return made

    def all_matched(self) -> bool:
        return all(m >= 0 for m in self.A.matched) or all(m >= 0 for m in self.B.matched)

    def strict_rounds(self) -> None:
        A, B = self.A, self.B
        for _ in range(50):
            made = self.pair(self.forward(A, A.sig_strict, self.vkey_a), self.forward(B, B.sig_strict, self.vkey_b))
            if self.all_matched():
                return
            made += self.pair(self.backward(A, A.sig_strict, self.out_anchor_a),
                              self.backward(B, B.sig_strict, self.out_anchor_b))
            if self.all_matched():
                return
            made += self.by_name(same_op=True)
            if not made:
                return


class _Differ:
    def __init__(self, da: Document, db: Document, rtol: float, atol: float) -> None:
        self.da, self.db, self.rtol, self.atol = da, db, rtol, atol
        self.result = ModelDiff()
        self._default_cache: dict[tuple[str, str], dict[str, onnx.AttributeProto]] = {}
        self._held_a = 0  # A's weight nodes held another way by B: "same" but not pairs

    def run(self) -> ModelDiff:
        self._model_fields()
        ia, ib = self.da.index, self.db.index
        self._scope(ia.scopes[ia.main], ib.scopes[ib.main], {})
        fa = {_fkey(ia.scopes[s].graph): s for s in ia.function_scopes}
        fb = {_fkey(ib.scopes[s].graph): s for s in ib.function_scopes}
        for key, sa in fa.items():
            if key in fb:
                self._scope(ia.scopes[sa], ib.scopes[fb[key]], {})
            else:
                self.result.model_changes.append(FieldChange(f"function:{_fname(key)}", "present", None))
                self._mark_all(ia, sa, self.result.status_a, REMOVED)
        for key, sb in fb.items():
            if key not in fa:
                self.result.model_changes.append(FieldChange(f"function:{_fname(key)}", None, "present"))
                self._mark_all(ib, sb, self.result.status_b, ADDED)
        for key in fa.keys() & fb.keys():
            ga, gb = ia.scopes[fa[key]].graph, ib.scopes[fb[key]].graph
            sig_a = (list(ga.input), list(ga.output), list(ga.attribute), [a.SerializeToString() for a in ga.attribute_proto],
                     [o.SerializeToString() for o in ga.opset_import])
            sig_b = (list(gb.input), list(gb.output), list(gb.attribute), [a.SerializeToString() for a in gb.attribute_proto],
                     [o.SerializeToString() for o in gb.opset_import])
            if sig_a != sig_b:
                self.result.model_changes.append(FieldChange(f"function:{_fname(key)}", "signature", "changed"))
        r = self.result
        r.nodes_same = sum(1 for s in r.status_a.values() if s == SAME) - self._held_a
        return r

    # -- model fields --------------------------------------------------------------------
    def _model_fields(self) -> None:
        ma, mb = self.da.model, self.db.model
        out = self.result.model_changes
        for f in ("ir_version", "producer_name", "producer_version", "domain", "model_version", "doc_string"):
            if getattr(ma, f) != getattr(mb, f):
                out.append(FieldChange(f, getattr(ma, f), getattr(mb, f)))
        if ma.graph.name != mb.graph.name:
            out.append(FieldChange("graph_name", ma.graph.name, mb.graph.name))
        oa, ob = self.da.opsets(), self.db.opsets()
        for d in sorted(oa.keys() | ob.keys()):
            if oa.get(d) != ob.get(d):
                out.append(FieldChange(f"opset:{d or 'ai.onnx'}", oa.get(d), ob.get(d)))
        pa = {p.key: p.value for p in ma.metadata_props}
        pb = {p.key: p.value for p in mb.metadata_props}
        for k in sorted(pa.keys() | pb.keys()):
            if pa.get(k) != pb.get(k):
                out.append(FieldChange(f"metadata:{k}", pa.get(k), pb.get(k)))

    @staticmethod
    def _mark_all(index: ModelIndex, sid: int, status: dict[int, str], value: str) -> None:
        todo = [sid]
        while todo:
            s = index.scopes[todo.pop()]
            for nid in s.node_ids:
                status[nid] = value
                todo.extend(index.children.get(nid, ()))

    # -- one pair of scopes --------------------------------------------------------------
    def _scope(self, sa: Scope, sb: Scope, outer: dict[str, str]) -> bool:
        """Match and compare two scopes; ``outer`` maps B names of enclosing values to A
        names. Returns True when anything differs.

        Phases: an untouched scope is paired as it is; otherwise anchors (inputs,
        initializers, outer values), matching rounds (:class:`_ScopeMatch`), grounding and
        rewrite regions (:mod:`editor.diff.rewrites`), then the report."""
        if sa.graph.SerializeToString() == sb.graph.SerializeToString() and not any(
            b != a for b, a in outer.items()
        ):
            return self._identical_scope(sa, sb)
        A, B = _Side(self.da, sa), _Side(self.db, sb)
        in_map, init_map, out_map, anchor = self._anchors(A, B, sa, sb, outer)
        matching = _ScopeMatch(A, B, anchor, outer, out_map)
        matching.match()
        _unground(A, B, anchor, out_map, trusted=matching.canonical)
        regions = canonical_regions(A, B, matching.canonical, anchor)
        canonical = list(regions)
        regions += _rewrite_regions(A, B, anchor, out_map, skip_a={i for ra, _rb, _v in regions for i in ra},
                                    skip_b={j for _ra, rb, _v in regions for j in rb})
        for ra, rb, _values in canonical:  # the others were found between them; now rewrites
            A.matched[ra[0]] = B.matched[rb[0]] = -1
        return self._report_scope(A, B, sa, sb, regions, in_map, init_map, out_map, anchor)

    def _identical_scope(self, sa: Scope, sb: Scope) -> bool:
        self._pair_identical(sa, sb)  # the common case in a diff: an untouched graph
        if not sa.is_function and any(uses_external_data(t) for t in sa.graph.initializer):
            # the same references may still point at different bytes (another folder)
            before = len(self.result.initializers_changed)
            self._match_initializers(sa, sb)
            return len(self.result.initializers_changed) > before
        return False

    def _anchors(self, A: _Side, B: _Side, sa: Scope, sb: Scope, outer: dict[str, str]):
        """(inputs, initializers, outputs) name maps B -> A, and the anchors: B name -> A
        name for inputs, initializers and captured outer values."""
        anchor = dict(outer)
        in_map = _match_names(A.graph_inputs, B.graph_inputs, by_position=True)
        init_map = self._match_initializers(sa, sb)
        for bn, an in list(in_map.items()) + list(init_map.items()):
            anchor[bn] = an
        out_map = _match_names(A.graph_outputs, B.graph_outputs, by_position=True)
        return in_map, init_map, out_map, anchor

    @staticmethod
    def _held_weights(side: _Side, skip: set[int]) -> set[int]:
        """Unmatched weight nodes (every output a constant value) whose readers are all
        paired, in a region or such weight nodes themselves: the other side holds those
        weights another way (see ModelDiff.weight_nodes)."""
        constants = constant_values(side)
        held: set[int] = set()
        for i in reversed(side.order):
            if side.matched[i] >= 0 or i in skip:
                continue
            outs = [o for o in side.nodes[i].output if o]
            if not outs or not all(o in constants for o in outs) or any(o in side.graph_outputs for o in outs):
                continue
            users = [c for o in outs for c, _k in side.consumers.get(o, ())]
            if users and all(side.matched[c] >= 0 or c in skip or c in held for c in users):
                held.add(i)
        return held

    def _report_scope(self, A: _Side, B: _Side, sa: Scope, sb: Scope, regions, in_map: dict[str, str],
                      init_map: dict[str, str], out_map: dict[str, str], anchor: dict[str, str]) -> bool:
        """Write the scope's rewrites, renames, removed / changed / added nodes and graph
        I/O changes into the result; True when anything differs."""
        path = self.da.index.path(sa.id)
        changed = False
        r = self.result
        in_region_a = {i for reg in regions for i in reg[0]}
        in_region_b = {j for reg in regions for j in reg[1]}
        for ra, rb, values in regions:
            rw = _classify(A, B, ra, rb, values)
            r.rewrites.append(rw)
            for i in ra:
                r.status_a[A.ids[i]] = CHANGED
            for j in rb:
                r.status_b[B.ids[j]] = CHANGED
            changed = True
        renames: dict[str, str] = {}
        for i, j in enumerate(A.matched):
            if j < 0:
                continue
            for oa, ob in zip(A.nodes[i].output, B.nodes[j].output):
                if oa and ob and oa != ob:
                    renames[oa] = ob
        for bn, an in list(in_map.items()) + list(init_map.items()):
            if an != bn:
                renames[an] = bn
        for an, bn in renames.items():
            r.values_renamed.append(ValueRename(path, an, bn))
        changed |= bool(renames)
        b_to_a_names = {bn: an for an, bn in renames.items()}
        b_to_a_names.update(anchor)
        for _ra, _rb, values in regions:  # a rewrite's outputs: a consumer reading one is not rewired
            for an, bn in values:
                b_to_a_names.setdefault(bn, an)
        held_a, held_b = self._held_weights(A, in_region_a), self._held_weights(B, in_region_b)
        for i in sorted(held_a, key=A.order.index):
            r.weight_nodes.append(A.ref(i))
            r.status_a[A.ids[i]] = SAME
        for j in sorted(held_b, key=B.order.index):
            r.weight_nodes.append(B.ref(j))
            r.status_b[B.ids[j]] = SAME
        changed |= bool(held_a or held_b)
        self._held_a += len(held_a)
        for i in range(len(A.nodes)):
            j = A.matched[i]
            if j < 0 and (i in in_region_a or i in held_a):
                continue
            if j < 0:
                r.nodes_removed.append(A.ref(i))
                self._mark_all_node(self.da.index, A.ids[i], r.status_a, REMOVED)
                changed = True
                continue
            r.pairs[A.ids[i]] = B.ids[j]
            ch = self._compare_nodes(A, B, i, j, b_to_a_names)
            if ch is not None:
                r.nodes_changed.append(ch)
                r.status_a[A.ids[i]] = r.status_b[B.ids[j]] = CHANGED
                changed = True
            else:
                r.status_a[A.ids[i]] = r.status_b[B.ids[j]] = SAME
        for j in range(len(B.nodes)):
            if B.matched[j] < 0 and j not in in_region_b and j not in held_b:
                r.nodes_added.append(B.ref(j))
                self._mark_all_node(self.db.index, B.ids[j], r.status_b, ADDED)
                changed = True
        changed |= self._graph_io(sa, sb, path, in_map, out_map, renames)
        return changed


    def _pair_identical(self, sa: Scope, sb: Scope) -> None:
        ia, ib, r = self.da.index, self.db.index, self.result
        todo = [(sa, sb)]
        while todo:
            x, y = todo.pop()
            for na, nb in zip(x.node_ids, y.node_ids):
                r.pairs[na] = nb
                r.status_a[na] = r.status_b[nb] = SAME
                cb = {(ib.scopes[s].attr, ib.scopes[s].attr_index): s for s in ib.children.get(nb, ())}
                for s in ia.children.get(na, ()):
                    key = (ia.scopes[s].attr, ia.scopes[s].attr_index)
                    if key in cb:
                        todo.append((ia.scopes[s], ib.scopes[cb[key]]))

    @staticmethod
    def _mark_all_node(index: ModelIndex, nid: int, status: dict[int, str], value: str) -> None:
        status[nid] = value
        todo = list(index.children.get(nid, ()))
        while todo:
            s = index.scopes[todo.pop()]
            for inner in s.node_ids:
                status[inner] = value
                todo.extend(index.children.get(inner, ()))

    # -- node pairs ----------------------------------------------------------------------
    def _compare_nodes(self, A: _Side, B: _Side, i: int, j: int, b_to_a: dict[str, str]) -> NodeChange | None:
        na, nb = A.nodes[i], B.nodes[j]
        if na == nb and not self.da.index.children.get(A.ids[i]) and all(
            self._same_value(A, B, x, x, b_to_a) for x in na.input
        ):
            return None  # the common case, decided by protobuf's own comparison
        kinds: list[str] = []
        if na.name != nb.name:
            kinds.append("renamed")
        if na.op_type != nb.op_type:
            kinds.append("op_type")
        if _domain(na.domain) != _domain(nb.domain):
            kinds.append("domain")
        if na.doc_string != nb.doc_string:
            kinds.append("doc_string")
        attrs = _attribute_changes(na, nb, self._defaults)
        if attrs:
            kinds.append("attributes")
        inputs, quantized, weights = [], [], []
        for k in range(max(len(na.input), len(nb.input))):
            xa = na.input[k] if k < len(na.input) else None
            xb = nb.input[k] if k < len(nb.input) else None
            if self._same_value(A, B, xa, xb, b_to_a):
                continue
            if self._same_when_dequantized(A, B, xa, xb, b_to_a):
                quantized.append(PortChange(k, xa, xb))
            elif xa and xb and xa in constant_values(A) and xb in constant_values(B):
                if not self._same_weights(A, B, xa, xb):
                    weights.append(PortChange(k, xa, xb))
            else:
                inputs.append(PortChange(k, xa, xb))
        if inputs:
            kinds.append("inputs")
        if quantized:
            kinds.append("quantized")
        if weights:
            kinds.append("weights")
        outputs = []
        for k in range(max(len(na.output), len(nb.output))):
            xa = na.output[k] if k < len(na.output) else None
            xb = nb.output[k] if k < len(nb.output) else None
            if (xa is None) != (xb is None) or (xa == "") != (xb == ""):
                outputs.append(PortChange(k, xa, xb))
        if outputs:
            kinds.append("outputs")
        subgraphs = self._compare_bodies(A.ids[i], B.ids[j], b_to_a)
        if subgraphs:
            kinds.append("subgraph")
        if not kinds:
            return None
        return NodeChange(A.ref(i), B.ref(j), kinds, attrs, inputs, outputs, subgraphs, quantized, weights)

    def _same_weights(self, A: _Side, B: _Side, xa: str, xb: str) -> bool:
        """Weights held two ways (a Constant node's value, an initializer) with equal values;
        False when either is computed (a chain) or cannot be read."""
        ta, tb = _weight_tensor(A, xa), _weight_tensor(B, xb)
        if ta is None or tb is None or ta.data_type != tb.data_type or list(ta.dims) != list(tb.dims):
            return False
        try:
            return _compare_values(ta, self.da.store, tb, self.db.store, self.rtol, self.atol)[0]
        except Exception:  # noqa: BLE001 - unreadable weights are not "equal"
            return False

    def _same_when_dequantized(self, A: _Side, B: _Side, xa: str | None, xb: str | None,
                               b_to_a: dict[str, str]) -> bool:
        """The two inputs carry the same quantity, one of them through an inserted
        QuantizeLinear -> DequantizeLinear (an activation, QDQ format) or both weights, one
        of them a DequantizeLinear of its quantized values."""
        if not xa or not xb:
            return False
        qa, qb = through_qdq(A, xa), through_qdq(B, xb)
        if (qa, qb) == (xa, xb):
            return False
        if self._same_value(A, B, qa, qb, b_to_a):
            return True
        return constant_values(A).__contains__(qa) and constant_values(B).__contains__(qb)

    def _defaults(self, node: onnx.NodeProto) -> dict[str, onnx.AttributeProto]:
        """The schema's default attribute values of ``node``'s op at A's opset."""
        key = (node.op_type, _domain(node.domain))
        found = self._default_cache.get(key)
        if found is None:
            from editor.schema import attribute_specs, get_schema

            schema = get_schema(node.op_type, key[1], self.da.opsets().get(key[1]))
            found = {} if schema is None else {
                name: spec.default for name, spec in attribute_specs(schema).items() if spec.default is not None}
            self._default_cache[key] = found
        return found

    @staticmethod
    def _same_value(A: _Side, B: _Side, xa: str | None, xb: str | None, b_to_a: dict[str, str]) -> bool:
        if xa is None or xb is None:
            return xa is xb
        if xa == "" or xb == "":
            return xa == xb
        pa, pb = A.producer.get(xa), B.producer.get(xb)
        if pa is not None and pb is not None and A.matched[pa[0]] >= 0:
            return A.matched[pa[0]] == pb[0] and pa[1] == pb[1]
        # a producer that was removed or added is reported as such; the wiring is the same
        # when the name is (through renames)
        return b_to_a.get(xb, xb) == xa

    def _compare_bodies(self, nid_a: int, nid_b: int, b_to_a: dict[str, str]) -> list[str]:
        ia, ib = self.da.index, self.db.index
        ca = {(ia.scopes[s].attr, ia.scopes[s].attr_index): s for s in ia.children.get(nid_a, ())}
        cb = {(ib.scopes[s].attr, ib.scopes[s].attr_index): s for s in ib.children.get(nid_b, ())}
        if not ca and not cb:
            return []
        differing: list[str] = []
        for key in sorted(ca.keys() | cb.keys()):
            label = key[0] if key[1] < 0 else f"{key[0]}[{key[1]}]"
            if key not in ca:
                differing.append(label)
                self._mark_all(ib, cb[key], self.result.status_b, ADDED)
            elif key not in cb:
                differing.append(label)
                self._mark_all(ia, ca[key], self.result.status_a, REMOVED)
            elif self._scope(ia.scopes[ca[key]], ib.scopes[cb[key]], dict(b_to_a)):
                differing.append(label)
        return differing

    # -- graph inputs / outputs, initializers --------------------------------------------
    def _graph_io(self, sa: Scope, sb: Scope, path: str, in_map: dict[str, str], out_map: dict[str, str],
                  renames: dict[str, str]) -> bool:
        if sa.is_function or sb.is_function:
            return False
        r = self.result
        changed = False
        for kind, ga, gb, mapping in (("input", sa.graph.input, sb.graph.input, in_map),
                                      ("output", sa.graph.output, sb.graph.output, out_map)):
            va = {v.name: v for v in ga}
            vb = {v.name: v for v in gb}
            inits_a, inits_b = set(sa.initializer_names()), set(sb.initializer_names())
            a_to_b = {an: bn for bn, an in mapping.items()}
            a_to_b.update({an: bn for an, bn in renames.items() if bn in vb})
            seen_b = set()
            for name, v in va.items():
                bn = a_to_b.get(name, name) if a_to_b.get(name, name) in vb else None
                if bn is None:
                    if kind == "input" and name in inits_a:
                        continue  # IR < 4 initializer-inputs: reported with the initializers
                    r.io_changes.append(IOChange(path, kind, name, type_text(v.type), None))
                    changed = True
                    continue
                seen_b.add(bn)
                ta, tb = type_text(v.type), type_text(vb[bn].type)
                if ta != tb:
                    r.io_changes.append(IOChange(path, kind, name, ta, tb))
                    changed = True
            for name, v in vb.items():
                if name not in seen_b and not (kind == "input" and name in inits_b):
                    r.io_changes.append(IOChange(path, kind, name, None, type_text(v.type)))
                    changed = True
        return changed

    def _match_initializers(self, sa: Scope, sb: Scope) -> dict[str, str]:
        """B name -> A name for initializers (same name, or the same content renamed);
        reports added / removed / changed ones."""
        if sa.is_function or sb.is_function:
            return {}
        r = self.result
        path = self.da.index.path(sa.id)
        ta = {t.name: t for t in sa.graph.initializer}
        tb = {t.name: t for t in sb.graph.initializer}
        mapping = {n: n for n in ta.keys() & tb.keys()}
        left_a = [n for n in ta if n not in tb]
        left_b = [n for n in tb if n not in ta]
        if left_a and left_b:
            by_content: dict[tuple, list[str]] = defaultdict(list)
            for n in left_a:
                by_content[self._content_key(ta[n], self.da.store)].append(n)
            for n in left_b:
                cands = by_content.get(self._content_key(tb[n], self.db.store))
                if cands:
                    mapping[n] = cands.pop(0)
        matched_a = set(mapping.values())
        for n in ta:
            if n not in matched_a:
                r.initializers_removed.append(f"{n!r} {tensor_text(ta[n])}" + ("" if path == "main" else f" in {path}"))
        for n in tb:
            if n not in mapping:
                r.initializers_added.append(f"{n!r} {tensor_text(tb[n])}" + ("" if path == "main" else f" in {path}"))
        for bn, an in mapping.items():
            change = self._compare_tensors(path, an, ta[an], tb[bn])
            if change is not None:
                r.initializers_changed.append(change)
        # sparse initializers: by name, serialized
        sa_sp = {s.values.name: s for s in sa.graph.sparse_initializer}
        sb_sp = {s.values.name: s for s in sb.graph.sparse_initializer}
        for n in sa_sp.keys() | sb_sp.keys():
            if n not in sb_sp:
                r.initializers_removed.append(f"{n!r} (sparse)")
            elif n not in sa_sp:
                r.initializers_added.append(f"{n!r} (sparse)")
            else:
                mapping[n] = n
                if sa_sp[n].SerializeToString() != sb_sp[n].SerializeToString():
                    r.initializers_changed.append(InitializerChange(path, n, ["values"], "sparse", "sparse"))
        return mapping

    def _content_key(self, t: onnx.TensorProto, store: ExternalDataStore | None) -> tuple:
        h = hashlib.blake2b(digest_size=16)
        for chunk in _byte_chunks(t, store):
            h.update(chunk)
        return (t.data_type, tuple(t.dims), h.digest())

    def _compare_tensors(self, path: str, name: str, ta: onnx.TensorProto, tb: onnx.TensorProto) -> InitializerChange | None:
        kinds = []
        if ta.data_type != tb.data_type:
            kinds.append("dtype")
        if list(ta.dims) != list(tb.dims):
            kinds.append("shape")
        old, new = tensor_text(ta), tensor_text(tb)
        if kinds:
            return InitializerChange(path, name, kinds, old, new)
        try:
            equal, max_diff, differing = _compare_values(ta, self.da.store, tb, self.db.store, self.rtol, self.atol)
        except Exception as exc:  # noqa: BLE001 - unreadable values are reported, not fatal
            same_ref = (uses_external_data(ta) and uses_external_data(tb)
                        and list(ta.external_data) == list(tb.external_data))
            if same_ref:
                return None
            return InitializerChange(path, name, ["values"], old, new, note=f"values not compared: {exc}")
        if equal:
            return None
        return InitializerChange(path, name, ["values"], old, new, max_diff, differing)
