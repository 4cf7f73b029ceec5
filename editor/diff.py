"""Structural diff of two models: which nodes match, what changed, what came and went.

:func:`diff_models` pairs the nodes of two graphs without trusting list order and only
partly trusting names, then compares the pairs. The result, :class:`ModelDiff`, lists
nodes added / removed / changed (op type, attributes with old and new values, inputs
rewired, subgraph bodies), values renamed, initializers added / removed / changed (dtype,
shape, values beyond a tolerance), graph inputs and outputs changed, and model-level
changes (IR version, opsets, metadata, producer, functions). ``status_a`` / ``status_b``
map every node id of each side (all scopes) to ``"same" | "changed" | "added" |
"removed"`` for a canvas to colour; ``pairs`` maps matched A ids to B ids.

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
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import helper

from editor.io.tensors import NUMPY_DTYPES, dtype_name, tensor_to_numpy, uses_external_data
from editor.types import tensor_text, type_text

if TYPE_CHECKING:
    from editor.document import Document
    from editor.document.index import ModelIndex, Scope
    from editor.io.external import ExternalDataStore

__all__ = [
    "AttributeChange",
    "FieldChange",
    "IOChange",
    "InitializerChange",
    "ModelDiff",
    "NodeChange",
    "NodeRef",
    "PortChange",
    "Rewrite",
    "ValueRename",
    "diff_models",
]

SAME, CHANGED, ADDED, REMOVED = "same", "changed", "added", "removed"
_CHUNK = 1 << 20  # elements per chunk when comparing tensor values


# -- result records --------------------------------------------------------------------
@dataclass(frozen=True)
class NodeRef:
    id: int  # node id in its document
    name: str
    op_type: str
    domain: str
    scope: str  # graph path, e.g. "main" or "main/If_0.then_branch"

    def label(self) -> str:
        op = f"{self.domain}.{self.op_type}" if self.domain not in ("", "ai.onnx") else self.op_type
        where = "" if self.scope == "main" else f" in {self.scope}"
        return f"{self.name!r} ({op}){where}" if self.name else f"<unnamed {op} #{self.id}>{where}"


@dataclass
class AttributeChange:
    name: str
    old: str | None  # None: absent on that side
    new: str | None


@dataclass
class PortChange:
    index: int
    old: str | None  # value name on A (None: no such port)
    new: str | None


@dataclass
class NodeChange:
    a: NodeRef
    b: NodeRef
    kinds: list[str]  # "renamed", "op_type", "domain", "attributes", "inputs", "outputs", "subgraph", "doc_string"
    attributes: list[AttributeChange] = field(default_factory=list)
    inputs: list[PortChange] = field(default_factory=list)
    outputs: list[PortChange] = field(default_factory=list)
    subgraphs: list[str] = field(default_factory=list)  # attribute names whose bodies differ


@dataclass
class ValueRename:
    scope: str
    old: str
    new: str


@dataclass
class InitializerChange:
    scope: str
    name: str  # the name on A (see values_renamed when B calls it differently)
    kinds: list[str]  # "dtype", "shape", "values"
    old: str  # "float[64,3,3,3]" (ONNX element type names, lower case)
    new: str
    max_abs_diff: float | None = None  # values: largest difference (numeric tensors)
    differing: int | None = None  # values: how many elements differ beyond the tolerance
    note: str = ""


@dataclass
class IOChange:
    scope: str
    kind: str  # "input" | "output"
    name: str
    old: str | None  # type text on A (None: added)
    new: str | None  # type text on B (None: removed)


@dataclass
class FieldChange:
    field: str  # "ir_version", "opset:ai.onnx", "metadata:key", "function:domain.name", ...
    old: Any
    new: Any


@dataclass
class Rewrite:
    """Nodes of A replaced by nodes of B that compute the same quantity another way: a
    quantization (Conv -> DynamicQuantizeLinear + ConvInteger + ...), a fusion (Conv +
    BatchNormalization -> Conv) or another rewrite (an opset conversion's new spelling).
    ``values`` pairs the A values at the region's boundary with the B values that carry
    the same quantity, for a numeric comparison of the two models."""

    kind: str  # "quantized" | "fused" | "rewritten"
    summary: str  # "Conv quantized to int8 (ConvInteger)"
    a: list[NodeRef]
    b: list[NodeRef]
    values: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ModelDiff:
    nodes_added: list[NodeRef] = field(default_factory=list)
    nodes_removed: list[NodeRef] = field(default_factory=list)
    nodes_changed: list[NodeChange] = field(default_factory=list)
    nodes_same: int = 0
    values_renamed: list[ValueRename] = field(default_factory=list)
    initializers_added: list[str] = field(default_factory=list)  # "scope:name type"
    initializers_removed: list[str] = field(default_factory=list)
    initializers_changed: list[InitializerChange] = field(default_factory=list)
    io_changes: list[IOChange] = field(default_factory=list)
    model_changes: list[FieldChange] = field(default_factory=list)
    status_a: dict[int, str] = field(default_factory=dict)
    status_b: dict[int, str] = field(default_factory=dict)
    pairs: dict[int, int] = field(default_factory=dict)  # A node id -> B node id
    #: regions recognised as one rewrite each (their nodes are not in nodes_added/removed)
    rewrites: list[Rewrite] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.nodes_added or self.nodes_removed or self.nodes_changed or self.values_renamed
                    or self.rewrites
                    or self.initializers_added or self.initializers_removed or self.initializers_changed
                    or self.io_changes or self.model_changes)

    def counts(self) -> dict[str, int]:
        return {
            "nodes_same": self.nodes_same,
            "nodes_changed": len(self.nodes_changed),
            "nodes_added": len(self.nodes_added),
            "nodes_removed": len(self.nodes_removed),
            "rewrites": len(self.rewrites),
            "values_renamed": len(self.values_renamed),
            "initializers_changed": len(self.initializers_changed),
            "initializers_added": len(self.initializers_added),
            "initializers_removed": len(self.initializers_removed),
            "io_changes": len(self.io_changes),
            "model_changes": len(self.model_changes),
        }

    def rewrite_counts(self) -> dict[str, int]:
        """Rewrite summary -> how many regions had it ("Conv quantized to int8": 63)."""
        out: dict[str, int] = {}
        for rw in self.rewrites:
            out[rw.summary] = out.get(rw.summary, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (status maps keyed by node id as text)."""
        out = asdict(self)
        for key in ("status_a", "status_b", "pairs"):
            out[key] = {str(k): v for k, v in out[key].items()}
        out["identical"] = self.identical
        out["counts"] = self.counts()
        return out

    def summary_lines(self) -> list[str]:
        """A human summary, one change per line."""
        if self.identical:
            return [f"identical ({self.nodes_same} nodes)"]
        lines = [
            f"nodes: {self.nodes_same} same, {len(self.nodes_changed)} changed, "
            f"{len(self.nodes_added)} added, {len(self.nodes_removed)} removed"
            + (f", {len(self.rewrites)} rewritten" if self.rewrites else "")
        ]
        for text, count in self.rewrite_counts().items():
            lines.append(f"~ {count} {text}" if count > 1 else f"~ {text}")
        for c in self.model_changes:
            lines.append(f"~ {c.field}: {c.old!r} -> {c.new!r}")
        for io in self.io_changes:
            if io.old is None:
                lines.append(f"+ graph {io.kind} {io.name!r}: {io.new}")
            elif io.new is None:
                lines.append(f"- graph {io.kind} {io.name!r}: {io.old}")
            else:
                lines.append(f"~ graph {io.kind} {io.name!r}: {io.old} -> {io.new}")
        for r in self.nodes_removed:
            lines.append(f"- node {r.label()}")
        for r in self.nodes_added:
            lines.append(f"+ node {r.label()}")
        for ch in self.nodes_changed:
            parts = []
            if "renamed" in ch.kinds:
                parts.append(f"renamed to {ch.b.name!r}")
            if "op_type" in ch.kinds or "domain" in ch.kinds:
                parts.append(f"op {ch.a.domain + '.' if ch.a.domain else ''}{ch.a.op_type} -> "
                             f"{ch.b.domain + '.' if ch.b.domain else ''}{ch.b.op_type}")
            for at in ch.attributes:
                parts.append(f"{at.name}: {at.old if at.old is not None else '(none)'} -> "
                             f"{at.new if at.new is not None else '(none)'}")
            for p in ch.inputs:
                parts.append(f"input {p.index}: {p.old!r} -> {p.new!r}")
            for p in ch.outputs:
                parts.append(f"output {p.index}: {p.old!r} -> {p.new!r}")
            for s in ch.subgraphs:
                parts.append(f"body {s!r} changed")
            if "doc_string" in ch.kinds:
                parts.append("doc_string changed")
            lines.append(f"~ node {ch.a.label()}: " + "; ".join(parts))
        for v in self.values_renamed:
            where = "" if v.scope == "main" else f" in {v.scope}"
            lines.append(f"~ value {v.old!r} renamed to {v.new!r}{where}")
        for name in self.initializers_removed:
            lines.append(f"- initializer {name}")
        for name in self.initializers_added:
            lines.append(f"+ initializer {name}")
        for ic in self.initializers_changed:
            text = f"~ initializer {ic.name!r}: "
            if "values" in ic.kinds and len(ic.kinds) == 1:
                text += f"values differ ({ic.differing} elements"
                text += f", max |diff| {ic.max_abs_diff:.6g})" if ic.max_abs_diff is not None else ")"
            else:
                text += f"{ic.old} -> {ic.new}"
            if ic.note:
                text += f" ({ic.note})"
            lines.append(text)
        return lines


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
        # IR < 4 lists initializers among the inputs too: they are weights, not inputs
        weights = set(self.initializers)
        self.graph_inputs = [n for n in scope.input_names() if n not in weights]
        self.graph_outputs = scope.output_names()
        self.order = self._toposort()
        self.matched: list[int] = [-1] * n  # index of the partner on the other side

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
class _Differ:
    def __init__(self, da: Document, db: Document, rtol: float, atol: float) -> None:
        self.da, self.db, self.rtol, self.atol = da, db, rtol, atol
        self.result = ModelDiff()

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
        r.nodes_same = sum(1 for s in r.status_a.values() if s == SAME)
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
        names. Returns True when anything differs."""
        if sa.graph.SerializeToString() == sb.graph.SerializeToString() and not any(
            b != a for b, a in outer.items()
        ):
            self._pair_identical(sa, sb)  # the common case in a diff: an untouched graph
            if not sa.is_function and any(uses_external_data(t) for t in sa.graph.initializer):
                # the same references may still point at different bytes (another folder)
                before = len(self.result.initializers_changed)
                self._match_initializers(sa, sb)
                return len(self.result.initializers_changed) > before
            return False
        A, B = _Side(self.da, sa), _Side(self.db, sb)
        path = self.da.index.path(sa.id)
        changed = False
        # anchors: B name -> A name for inputs, initializers and captured outer values
        anchor = dict(outer)
        in_map = _match_names(A.graph_inputs, B.graph_inputs, by_position=True)
        init_map = self._match_initializers(sa, sb)
        for bn, an in list(in_map.items()) + list(init_map.items()):
            anchor[bn] = an
        out_map = _match_names(A.graph_outputs, B.graph_outputs, by_position=True)
        out_anchor_a = {name: k for k, name in enumerate(A.graph_outputs)}
        out_anchor_b = {name: out_anchor_a.get(out_map.get(name, ""), -1 - k) for k, name in enumerate(B.graph_outputs)}

        b_local = set(B.graph_inputs) | set(B.initializers)

        def vkey_a(name: str, keys: list[int]) -> Any:
            p = A.producer.get(name)
            if p is not None:
                return (keys[p[0]], p[1])
            return name  # inputs, initializers, outer values: A's names are canonical

        def vkey_b(name: str, keys: list[int]) -> Any:
            p = B.producer.get(name)
            if p is not None:
                return (keys[p[0]], p[1])
            if not name:
                return ""
            if name in b_local:
                return anchor.get(name, ("b", name))
            return outer.get(name, name)  # captured from an enclosing graph

        def forward(side: _Side, sig: list[int] | None, vkey) -> list[int]:  # noqa: ANN001
            keys = [0] * len(side.nodes)
            for i in side.order:
                m = side.matched[i]
                if m >= 0:  # matched: hashes to its pair (the A index on both sides)
                    keys[i] = hash(("m", i if side is A else m))
                    continue
                base = sig[i] if sig is not None else 1
                keys[i] = hash((base, tuple(vkey(name, keys) for name in side.inputs[i])))
            return keys

        def backward(side: _Side, sig: list[int] | None, out_anchor: dict[str, int]) -> list[int]:
            keys = [0] * len(side.nodes)
            for i in reversed(side.order):
                m = side.matched[i]
                if m >= 0:
                    keys[i] = hash(("m", i if side is A else m))
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

        def pair(ka: list[int], kb: list[int], unique_only: bool = False) -> int:
            """Match unmatched nodes with equal keys; ``unique_only``: only one-to-one keys,
            and, where names are stable between the models, not two nodes whose names differ
            (a deleted node and an added one in its place stay removed + added)."""
            buckets: dict[int, list[int]] = defaultdict(list)
            for j in B.order:
                if B.matched[j] < 0:
                    buckets[kb[j]].append(j)
            if unique_only:
                count_a: dict[int, int] = defaultdict(int)
                for i in A.order:
                    if A.matched[i] < 0:
                        count_a[ka[i]] += 1
            veto = unique_only and names_trusted()
            made = 0
            for i in A.order:
                if A.matched[i] >= 0:
                    continue
                cands = buckets.get(ka[i])
                if not cands:
                    continue
                if unique_only and (len(cands) != 1 or count_a[ka[i]] != 1
                                    or (veto and A.names[i] and B.names[cands[0]] and A.names[i] != B.names[cands[0]])):
                    continue
                pick = 0
                if len(cands) > 1:  # a tie (identical structure): same value names, then same node name
                    outs = A.nodes[i].output
                    pick = next((k for k, j in enumerate(cands) if B.nodes[j].output == outs),
                                next((k for k, j in enumerate(cands) if B.names[j] == A.names[i]), 0))
                j = cands.pop(pick)
                A.matched[i], B.matched[j] = j, i
                made += 1
            return made

        def names_trusted() -> bool:
            """Most matched pairs with names kept them: a name change then means something."""
            named = same = 0
            for i, j in enumerate(A.matched):
                if j >= 0 and A.names[i] and B.names[j]:
                    named += 1
                    same += A.names[i] == B.names[j]
            return named > 0 and same * 2 > named

        def by_name(same_op: bool) -> int:
            count_a: dict[str, int] = defaultdict(int)
            count_b: dict[str, int] = defaultdict(int)
            for n in A.names:
                count_a[n] += 1
            for n in B.names:
                count_b[n] += 1
            free_b = {B.names[j]: j for j in range(len(B.nodes)) if B.matched[j] < 0 and B.names[j]
                      and count_b[B.names[j]] == 1}
            made = 0
            for i in range(len(A.nodes)):
                nm = A.names[i]
                if A.matched[i] >= 0 or not nm or count_a[nm] != 1 or nm not in free_b:
                    continue
                j = free_b[nm]
                if same_op and A.sig_op[i] != B.sig_op[j]:
                    continue
                A.matched[i], B.matched[j] = j, i
                made += 1
            return made

        def all_matched() -> bool:
            return all(m >= 0 for m in A.matched) or all(m >= 0 for m in B.matched)

        def strict_rounds() -> None:
            for _ in range(50):
                made = pair(forward(A, A.sig_strict, vkey_a), forward(B, B.sig_strict, vkey_b))
                if all_matched():
                    return
                made += pair(backward(A, A.sig_strict, out_anchor_a), backward(B, B.sig_strict, out_anchor_b))
                if all_matched():
                    return
                made += by_name(same_op=True)
                if not made:
                    return

        strict_rounds()
        loose = [
            lambda: pair(forward(A, A.sig_op, vkey_a), forward(B, B.sig_op, vkey_b)),
            lambda: pair(backward(A, A.sig_op, out_anchor_a), backward(B, B.sig_op, out_anchor_b)),
            lambda: by_name(same_op=False),
            # op type edits: same inputs and same consumers, whatever the op
            lambda: pair(_combine(forward(A, None, vkey_a), backward(A, None, out_anchor_a)),
                         _combine(forward(B, None, vkey_b), backward(B, None, out_anchor_b)), unique_only=True),
        ]
        for _ in range(20):
            if all_matched():
                break
            progressed = False
            for step in loose:
                if step():
                    progressed = True
                    strict_rounds()
                    break
            if not progressed:
                break

        _unground(A, B, anchor, out_map)
        regions = _rewrite_regions(A, B, anchor, out_map)

        # -- report ----------------------------------------------------------------------
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
        for i in range(len(A.nodes)):
            j = A.matched[i]
            if j < 0 and i in in_region_a:
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
            if B.matched[j] < 0 and j not in in_region_b:
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
        attrs = _attribute_changes(na, nb)
        if attrs:
            kinds.append("attributes")
        inputs = []
        for k in range(max(len(na.input), len(nb.input))):
            xa = na.input[k] if k < len(na.input) else None
            xb = nb.input[k] if k < len(nb.input) else None
            if not self._same_value(A, B, xa, xb, b_to_a):
                inputs.append(PortChange(k, xa, xb))
        if inputs:
            kinds.append("inputs")
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
        return NodeChange(A.ref(i), B.ref(j), kinds, attrs, inputs, outputs, subgraphs)

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


# -- neighbourhood support -----------------------------------------------------------
def _b_value_for(A: _Side, B: _Side, name: str, anchor: dict[str, str]) -> str | None:
    """The B value that corresponds to A value ``name``: the same output of the matched
    producer, or the anchored input / initializer / outer value."""
    p = A.producer.get(name)
    if p is not None:
        j = A.matched[p[0]]
        if j < 0:
            return None
        outs = B.nodes[j].output
        return outs[p[1]] if p[1] < len(outs) and outs[p[1]] else None
    for bn, an in anchor.items():
        if an == name:
            return bn
    return None


def _unground(A: _Side, B: _Side, anchor: dict[str, str], out_map: dict[str, str]) -> None:
    """Undo matches that nothing around them supports (NOTE in the module docstring).

    A pair is grounded when the two nodes share a non-empty name, when they read the same
    anchored value (graph input, initializer, outer value) at the same port, when they
    produce corresponding graph outputs, or when a neighbour along a corresponding edge
    (producer of input k / consumer of output k at the same port) is a grounded pair.
    Loose rounds pair, say, every Constant of one model with one of the other by order;
    without a grounded neighbour such a pair is two unrelated nodes and is reported as
    removed + added.
    """
    a_anchor = {an: bn for bn, an in anchor.items()}
    b_out_for_a = {an: bn for bn, an in out_map.items()}
    grounded: set[int] = set()
    todo: list[int] = []
    for i, j in enumerate(A.matched):
        if j < 0:
            continue
        na, nb = A.nodes[i], B.nodes[j]
        seed = bool(na.name) and na.name == nb.name
        if not seed:
            for k, x in enumerate(A.inputs[i]):
                if x and x not in A.producer and k < len(B.inputs[j]) and a_anchor.get(x, x) == B.inputs[j][k]:
                    seed = True
                    break
        if not seed:
            for k, o in enumerate(na.output):
                if o in b_out_for_a and k < len(nb.output) and nb.output[k] == b_out_for_a[o]:
                    seed = True
                    break
        if seed:
            grounded.add(i)
            todo.append(i)
    while todo:
        i = todo.pop()
        j = A.matched[i]
        # upstream: producers of corresponding inputs
        for k, x in enumerate(A.inputs[i]):
            pa = A.producer.get(x)
            if pa is None or k >= len(B.inputs[j]):
                continue
            pb = B.producer.get(B.inputs[j][k])
            if pb is not None and A.matched[pa[0]] == pb[0] and pa[1] == pb[1] and pa[0] not in grounded:
                grounded.add(pa[0])
                todo.append(pa[0])
        # downstream: consumers of corresponding outputs at the same port
        for k, o in enumerate(A.nodes[i].output):
            if not o or k >= len(B.nodes[j].output):
                continue
            ob = B.nodes[j].output[k]
            b_uses = set(B.consumers.get(ob, ()))
            for c, port in A.consumers.get(o, ()):
                m = A.matched[c]
                if m >= 0 and c not in grounded and (m, port) in b_uses:
                    grounded.add(c)
                    todo.append(c)
    for i, j in enumerate(A.matched):
        if j >= 0 and i not in grounded:
            A.matched[i] = -1
            B.matched[j] = -1


# -- rewrites --------------------------------------------------------------------------
_QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger", "MatMulInteger",
              "QGemm", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QAttention", "DynamicQuantizeLSTM",
              "MatMulNBits", "QOrderedMatMul"}
_FUSED_OPS = {"Gemm", "LayerNormalization", "SkipLayerNormalization", "Gelu", "FastGelu", "BiasGelu",
              "Attention", "MultiHeadAttention", "FusedConv", "FusedMatMul", "EmbedLayerNormalization",
              "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "RotaryEmbedding",
              "GroupQueryAttention", "BiasAdd", "QuickGelu", "FusedGemm"}


_MAX_REWRITE_A = 24  # nodes of A one rewrite may replace (an unfused attention block)
_MAX_REWRITE_B = 64  # nodes of B it may become (an LSTM quantized into a chain)


def _rewrite_regions(A: _Side, B: _Side, anchor: dict[str, str],
                     out_map: dict[str, str]) -> list[tuple[list[int], list[int], list[tuple[str, str]]]]:
    """Connected regions of unmatched nodes on both sides that sit between the same matched
    neighbours: (A indices, B indices, boundary value pairs A -> B). Regions with nodes on
    one side only are plain additions or removals and are not returned."""
    ua = [i for i, m in enumerate(A.matched) if m < 0]
    ub = [j for j, m in enumerate(B.matched) if m < 0]
    if not ub:
        return []
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(x: tuple[str, int], y: tuple[str, int]) -> None:
        parent[find(x)] = find(y)

    for side, tag, free in ((A, "a", ua), (B, "b", ub)):
        for i in free:
            find((tag, i))
            for x in side.inputs[i]:
                p = side.producer.get(x)
                if p is not None and side.matched[p[0]] < 0:
                    union((tag, i), (tag, p[0]))
    values: list[tuple[str, str]] = []
    b_names = {o: j for j in ub for o in B.nodes[j].output if o}
    b_out_for_a = {an: bn for bn, an in out_map.items()}
    for i in ua:
        for k, o in enumerate(A.nodes[i].output):
            if not o:
                continue
            partners: set[str] = set()
            for c, port in A.consumers.get(o, ()):  # output side: what the matched consumer reads in B
                m = A.matched[c]
                if m >= 0 and port < len(B.inputs[m]):
                    partners.add(B.inputs[m][port])
            if o in b_out_for_a:
                partners.add(b_out_for_a[o])
            if o in b_names and A.nodes[i].op_type != "Constant" and B.nodes[b_names[o]].op_type != "Constant":
                partners.add(o)  # the rewrite kept the value's name (constants' names are too generic)
            for bv in partners:
                pb = B.producer.get(bv)
                if pb is not None and B.matched[pb[0]] < 0:
                    union(("a", i), ("b", pb[0]))
                    values.append((o, bv))
        for x in A.inputs[i]:  # input side: B's rewrite reads the corresponding value
            bx = _b_value_for(A, B, x, anchor) if x else None
            if bx is None:
                continue
            for c, _ in B.consumers.get(bx, ()):
                if B.matched[c] < 0:
                    union(("a", i), ("b", c))
    groups: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for i in ua:
        groups.setdefault(find(("a", i)), ([], []))[0].append(i)
    for j in ub:
        groups.setdefault(find(("b", j)), ([], []))[1].append(j)
    out = []
    for root, (ra, rb) in groups.items():
        # A rewrite replaces a few nodes by a few others, between matched neighbours; a
        # region as big as a model is two different models, and the same ops on both sides
        # are unmatched nodes, not a rewrite: both stay removed + added.
        if not ra and rb and len(rb) <= _MAX_REWRITE_B and \
                all(B.nodes[j].op_type in ("QuantizeLinear", "DequantizeLinear") for j in rb):
            # QDQ format: a quantize-dequantize pair inserted on an edge, nothing of A replaced
            out.append(([], sorted(rb, key=B.order.index), []))
            continue
        if not ra or not rb or len(ra) > _MAX_REWRITE_A or len(rb) > _MAX_REWRITE_B:
            continue
        if sorted(A.nodes[i].op_type for i in ra) == sorted(B.nodes[j].op_type for j in rb):
            continue
        if len(ra) == len(rb) == 1 and A.names[ra[0]] and B.names[rb[0]] and A.names[ra[0]] != B.names[rb[0]] \
                and not _is_quant_or_fused([B.nodes[rb[0]].op_type]):
            continue  # one named node deleted and another added in its place: not a rewrite
        if ra and rb:
            set_a = set(ra)
            vals = list(dict.fromkeys((av, bv) for av, bv in values
                                      if A.producer.get(av, (-1,))[0] in set_a))
            out.append((sorted(ra, key=A.order.index), sorted(rb, key=B.order.index), vals))
    return out


def _is_quant_or_fused(ops: list[str]) -> bool:
    return any(op in _QUANT_OPS or op.startswith("QLinear") or op in _FUSED_OPS for op in ops)


def _classify(A: _Side, B: _Side, ra: list[int], rb: list[int], values: list[tuple[str, str]]) -> Rewrite:
    ops_a = [A.nodes[i].op_type for i in ra]
    ops_b = [B.nodes[j].op_type for j in rb]
    if not ra:
        return Rewrite("quantized", "value quantized to int8 (QuantizeLinear + DequantizeLinear inserted)", [],
                       [B.ref(j) for j in rb], values)
    main_a = "+".join(dict.fromkeys(op for op in ops_a if op not in ("Constant", "Identity", "Reshape", "Cast"))) \
        or "+".join(dict.fromkeys(ops_a))
    quant = [op for op in ops_b if op in _QUANT_OPS or op.startswith("QLinear")]
    if quant:
        core = [op for op in dict.fromkeys(quant) if op not in ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear")]
        how = ", ".join(core) if core else "QDQ"
        bits = "int8"
        return Rewrite("quantized", f"{main_a} quantized to {bits} ({how})", [A.ref(i) for i in ra],
                       [B.ref(j) for j in rb], values)
    ops_b_main = "+".join(dict.fromkeys(ops_b))
    if len(ra) > len(rb) or any(op in _FUSED_OPS for op in ops_b):
        return Rewrite("fused", f"{'+'.join(dict.fromkeys(ops_a))} fused into {ops_b_main}", [A.ref(i) for i in ra],
                       [B.ref(j) for j in rb], values)
    return Rewrite("rewritten", f"{'+'.join(dict.fromkeys(ops_a))} rewritten as {ops_b_main}",
                   [A.ref(i) for i in ra], [B.ref(j) for j in rb], values)


# -- helpers ---------------------------------------------------------------------------
def _combine(x: list[int], y: list[int]) -> list[int]:
    return [hash(p) for p in zip(x, y)]


def _domain(d: str) -> str:
    return "" if d == "ai.onnx" else d


def _fkey(fn: onnx.FunctionProto) -> tuple[str, str, str]:
    return (fn.domain, fn.name, fn.overload)


def _fname(key: tuple[str, str, str]) -> str:
    d, n, o = key
    return f"{d}.{n}" + (f":{o}" if o else "") if d else n + (f":{o}" if o else "")


def _match_names(a: list[str], b: list[str], *, by_position: bool) -> dict[str, str]:
    """B name -> A name: same names, then (optionally) the leftovers in order."""
    sa = set(a)
    mapping = {n: n for n in b if n in sa}
    if by_position:
        left_a = [n for n in a if n not in mapping.values()]
        left_b = [n for n in b if n not in mapping]
        for an, bn in zip(left_a, left_b):
            mapping[bn] = an
    return mapping


def _attr_text(attr: onnx.AttributeProto) -> str:
    if attr.ref_attr_name:
        return f"@{attr.ref_attr_name}"
    if attr.type in (onnx.AttributeProto.TENSOR,):
        return f"tensor {tensor_text(attr.t)}"
    if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        return "<graph>"
    try:
        value = helper.get_attribute_value(attr)
    except Exception:  # noqa: BLE001
        return "<unreadable>"
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif isinstance(value, list) and value and isinstance(value[0], bytes):
        value = [v.decode("utf-8", "replace") for v in value]
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _attribute_changes(na: onnx.NodeProto, nb: onnx.NodeProto) -> list[AttributeChange]:
    aa = {a.name: a for a in na.attribute}
    ab = {a.name: a for a in nb.attribute}
    out = []
    for name in sorted(aa.keys() | ab.keys()):
        x, y = aa.get(name), ab.get(name)
        if x is not None and y is not None:
            if x.HasField("g") or len(x.graphs):
                continue  # bodies are compared recursively
            if x.SerializeToString(deterministic=True) == y.SerializeToString(deterministic=True):
                continue
        out.append(AttributeChange(name, _attr_text(x) if x is not None else None,
                                   _attr_text(y) if y is not None else None))
    return out


def _raw_view(t: onnx.TensorProto, store: ExternalDataStore | None) -> memoryview | None:
    """The tensor's raw bytes without a copy when possible (None: values in typed fields)."""
    if uses_external_data(t):
        if store is None:
            raise ValueError(f"tensor {t.name!r} has external data and no data store")
        return store.read_bytes(t)
    if t.HasField("raw_data"):
        return memoryview(t.raw_data)
    return None


def _byte_chunks(t: onnx.TensorProto, store: ExternalDataStore | None) -> Iterator[bytes | memoryview]:
    try:
        view = _raw_view(t, store)
    except ValueError:
        yield repr(list(t.external_data)).encode()
        return
    if view is None:
        copy = onnx.TensorProto()
        copy.CopyFrom(t)
        copy.name = ""
        yield copy.SerializeToString(deterministic=True)
        return
    step = _CHUNK * 8
    for start in range(0, len(view), step):
        yield view[start:start + step]


def _compare_values(ta: onnx.TensorProto, store_a: ExternalDataStore | None, tb: onnx.TensorProto,
                    store_b: ExternalDataStore | None, rtol: float, atol: float) -> tuple[bool, float | None, int]:
    """(equal within tolerance, max |a-b| for numeric types, number of differing elements).

    Raw and external data are compared in chunks of views (memory-mapped for external
    data), so a large tensor is never copied whole, let alone twice.
    """
    va, vb = _raw_view(ta, store_a), _raw_view(tb, store_b)
    dtype = NUMPY_DTYPES.get(ta.data_type)
    if va is not None and vb is not None and dtype is not None and len(va) == len(vb) and dtype.itemsize:
        if va == vb:
            return True, 0.0, 0
        if len(va) % dtype.itemsize:  # packed sub-byte types: bytes are all we can compare
            differing = int(np.count_nonzero(np.frombuffer(va, np.uint8) != np.frombuffer(vb, np.uint8)))
            return False, None, differing
        xa = np.frombuffer(va, dtype=dtype)
        xb = np.frombuffer(vb, dtype=dtype)
        return _compare_arrays_chunked(xa, xb, rtol, atol)
    xa, xb = tensor_to_numpy(ta, store_a), tensor_to_numpy(tb, store_b)
    if xa.shape != xb.shape:
        return False, None, max(xa.size, xb.size)
    return _compare_arrays_chunked(xa.reshape(-1), xb.reshape(-1), rtol, atol)


def _compare_arrays_chunked(xa: np.ndarray, xb: np.ndarray, rtol: float, atol: float) -> tuple[bool, float | None, int]:
    numeric = xa.dtype.kind in "fciu"
    floating = xa.dtype.kind in "fc"
    if not numeric and xa.dtype.kind not in "bOSU":
        try:  # ml_dtypes (bfloat16, float8 ...) are numeric but numpy does not call them floats
            xa[:1].astype(np.float32)
            numeric = floating = True
        except (TypeError, ValueError):
            numeric = False
    max_diff = 0.0 if numeric else None
    differing = 0
    for start in range(0, xa.size, _CHUNK):
        ca, cb = xa[start:start + _CHUNK], xb[start:start + _CHUNK]
        if floating:
            fa = ca.astype(np.float64) if ca.dtype.kind != "c" else ca.astype(np.complex128)
            fb = cb.astype(np.float64) if cb.dtype.kind != "c" else cb.astype(np.complex128)
            close = np.isclose(fa, fb, rtol=rtol, atol=atol, equal_nan=True)
            diff = np.abs(fa - fb)
            finite = diff[np.isfinite(diff)]
            if finite.size:
                max_diff = max(max_diff, float(finite.max()))  # type: ignore[arg-type]
            differing += int(close.size - np.count_nonzero(close))
        elif numeric:
            ne = ca != cb
            differing += int(np.count_nonzero(ne))
            if differing:
                max_diff = max(max_diff, float(np.abs(ca.astype(np.float64) - cb.astype(np.float64)).max()))  # type: ignore[arg-type]
        else:
            differing += int(np.count_nonzero(ca != cb))
    return differing == 0, max_diff, differing
