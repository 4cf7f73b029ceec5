"""The changes of a diff as stops to visit, with their details: how
:func:`editor.diff.display.display_of` turns a :class:`~editor.diff.records.ModelDiff` into
statuses, counterparts and stops, one phase per kind of record.

# NOTE: one edit, one stop. The diff lists what differs between the two graphs; a user
# thinks in edits. Deleting a node and reconnecting its consumer changes the consumer's
# input too, and quantizing in the QDQ format inserts a QuantizeLinear -> DequantizeLinear
# pair on every edge. A stop gathers what one edit did: the consumer rewired by a removal
# (or an insertion) belongs to that removal's stop and keeps the colour "same"; inserted
# Q/DQ nodes join the stop of the node that reads them (else the one that writes them).
# So three planted edits read as exactly three stops and three marked nodes per side.
#
# NOTE: renames throughout are not edits. Two exporter versions of one network name every
# node (and value) differently; marking 10,000 nodes "changed: renamed" hides the three
# that really changed. When most pairs were renamed, a rename alone is no change in the
# picture (the stop's rows still show both names where something else changed), and a
# note says so; a few renames among kept names are edits and stay stops.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from editor.diff.display import (
    ADDED,
    CHANGED,
    REMOVED,
    REWRITTEN,
    SAME,
    Detail,
    DiffDisplay,
    Stop,
    WeightRef,
    strongest,
)
from editor.diff.records import ModelDiff, NodeChange, NodeRef
from editor.diff.walk import b_ranks, ranks

if TYPE_CHECKING:
    from editor.document import Document

__all__ = ["StopBuilder"]


def _op(ref: NodeRef) -> str:
    return f"{ref.domain}.{ref.op_type}" if ref.domain not in ("", "ai.onnx") else ref.op_type


def _none(text: str | None) -> str:
    return "—" if text is None else text


class StopBuilder:
    """Statuses, counterparts and stops of one diff, phase by phase (see :meth:`build`)."""

    def __init__(self, diff: ModelDiff, da: Document, db: Document) -> None:
        self.diff, self.da, self.db = diff, da, db
        self.status_a = dict(diff.status_a)
        self.status_b = dict(diff.status_b)
        self.cp_a: dict[int, list[int]] = defaultdict(list)
        self.cp_b: dict[int, list[int]] = defaultdict(list)
        for a, b in diff.pairs.items():
            self.cp_a[a].append(b)
            self.cp_b[b].append(a)
        self.stops: list[Stop] = []
        self.by_a: dict[int, Stop] = {}  # node -> the stop it is the subject of
        self.by_b: dict[int, Stop] = {}
        self.io_a: dict[str, str] = {}
        self.io_b: dict[str, str] = {}
        self.rank_a = ranks(da)
        self.sid_a = {da.index.path(s): s for s in da.index.scopes}
        self.sid_b = {db.index.path(s): s for s in db.index.scopes}
        renamed_nodes = sum(1 for ch in diff.nodes_changed if "renamed" in ch.kinds)
        #: names differ throughout (another exporter): a rename alone is no change (NOTE)
        self.renames_throughout = renamed_nodes * 2 > max(len(diff.pairs), 1)
        self.notes: list[str] = []
        if self.renames_throughout:
            self.notes.append(f"{renamed_nodes} of {len(diff.pairs)} paired nodes have other names "
                              "(another exporter?): a rename alone is not marked")
        #: "scope path", A value name -> its B name (renamed values)
        self.renamed = {(v.scope, v.old): v.new for v in diff.values_renamed}
        self.a_to_b = {v.old: v.new for v in diff.values_renamed}
        self.b_to_a = {v.new: v.old for v in diff.values_renamed}

    # -- helpers ------------------------------------------------------------------------
    def _add(self, kind: str, title: str, a=(), b=(), **extra: Any) -> Stop:  # noqa: ANN001
        stop = Stop(kind, title, tuple(dict.fromkeys(a)), tuple(dict.fromkeys(b)), **extra)
        self.stops.append(stop)
        for nid in stop.a:
            self.by_a.setdefault(nid, stop)
        for nid in stop.b:
            self.by_b.setdefault(nid, stop)
        return stop

    def _join(self, stop: Stop, a=(), b=()) -> None:  # noqa: ANN001
        stop.a = tuple(dict.fromkeys(stop.a + tuple(a)))
        stop.b = tuple(dict.fromkeys(stop.b + tuple(b)))
        for nid in a:
            self.by_a.setdefault(nid, stop)
        for nid in b:
            self.by_b.setdefault(nid, stop)

    def _drop(self, stop: Stop) -> None:
        self.stops = [s for s in self.stops if s is not stop]
        for table in (self.by_a, self.by_b):
            for nid in [n for n, s in table.items() if s is stop]:
                del table[nid]

    def _label(self, doc: Document, nid: int) -> str:
        if not doc.has_node(nid):
            return f"#{nid}"
        nd = doc.node(nid)
        return f"{nd.name!r} ({nd.op_type})" if nd.name else f"<unnamed {nd.op_type} #{nid}>"

    @staticmethod
    def _weights_of(doc: Document, nid: int) -> list[WeightRef]:
        """The weight inputs of node ``nid`` (initializers and Constant-made values)."""
        if not doc.has_node(nid):
            return []
        sid = doc.index.node_scope[nid]
        scope = doc.scope(sid)
        inits = set(scope.initializer_names()) if not scope.is_function else set()
        out = []
        for k, x in enumerate(doc.node(nid).input):
            if not x:
                continue
            p = doc.producer(sid, x)
            if x in inits or (p is not None and doc.node(p).op_type in ("Constant", "DequantizeLinear")
                              and _constant_input(doc, sid, p)):
                out.append(WeightRef(nid, k, x))
        return out

    # -- the phases ------------------------------------------------------------------------
    def build(self) -> DiffDisplay:
        self.rewrites()
        self.changed_nodes()
        self.removed_and_added()
        self.renamed_values()
        self.changed_weights()
        self.graph_io()
        self.inserted_qdq()
        self.model_fields()
        self.order()
        cp_a = {k: tuple(dict.fromkeys(v)) for k, v in self.cp_a.items()}
        cp_b = {k: tuple(dict.fromkeys(v)) for k, v in self.cp_b.items()}
        return DiffDisplay(self.status_a, self.status_b, cp_a, cp_b, self.stops, self.io_a, self.io_b,
                           self._io_pairs(), self.diff.summary_lines(), self.notes)

    def rewrites(self) -> None:
        self._qdq: list = []  # inserted (or removed) Q/DQ regions: they join a neighbour's stop
        for rw in self.diff.rewrites:
            a_ids = [r.id for r in rw.a if r.id >= 0]
            b_ids = [r.id for r in rw.b if r.id >= 0]
            for nid in a_ids:
                self.status_a[nid] = REWRITTEN
                self.cp_a[nid].extend(b_ids)
            for nid in b_ids:
                self.status_b[nid] = REWRITTEN
                self.cp_b[nid].extend(a_ids)
            if not rw.a or not rw.b:
                self._qdq.append(rw)
                continue
            lead = rw.a[0]
            stop = self._add(REWRITTEN, f"{rw.summary}: {lead.label()}", a_ids, b_ids)
            stop.details.append(Detail("ops", " + ".join(_op(r) for r in rw.a), " + ".join(_op(r) for r in rw.b)))
            for va, vb in rw.values:
                if va != vb:
                    stop.details.append(Detail("value", va, vb))
            wa = [w for nid in a_ids for w in self._weights_of(self.da, nid)]
            wb = [w for nid in b_ids for w in self._weights_of(self.db, nid)]
            stop.weights.extend(_pair_weights(self.da, self.db, wa, wb))

    def changed_nodes(self) -> None:
        self._converted_for: dict[int, Stop] = {}  # reader of converted weights -> their stop
        for ch in self.diff.nodes_changed:
            a, b = ch.a.id, ch.b.id
            if set(ch.kinds) <= {"quantized"}:
                self.status_a[a] = self.status_b[b] = REWRITTEN
                stop = self._add(REWRITTEN, f"quantized (QDQ): {ch.a.label()}", [a], [b])
                stop.details.append(Detail("op", _op(ch.a), _op(ch.b)))
                for p in ch.quantized:
                    stop.details.append(Detail(f"input {p.index} (quantized)", _none(p.old), _none(p.new)))
                    if self._is_weight(self.da, a, p.old) and self._is_weight(self.db, b, p.new):
                        stop.weights.append((WeightRef(a, p.index, p.old), WeightRef(b, p.index, p.new)))
                continue
            kinds = self._kinds(ch)
            if not kinds:
                self.status_a[a] = self.status_b[b] = SAME
                continue
            converted = _converted(ch)
            if converted is not None:  # a weight stored in another float type (fp16 conversion)
                self.status_a[a] = self.status_b[b] = REWRITTEN
                reader = self.da.consumers(self.da.index.node_scope[a], self.da.node(a).output[0]) \
                    if self.da.has_node(a) and self.da.node(a).output else []
                where = self._label(self.da, reader[0][0]) if reader else ch.a.label()
                stop = self._converted_for.get(reader[0][0]) if reader else None
                if stop is None:  # one stop per reader: a BatchNormalization's four weights together
                    stop = self._add(REWRITTEN, f"weights stored as {converted}: {where}", [a], [b])
                    if reader:
                        self._converted_for[reader[0][0]] = stop
                else:
                    self._join(stop, a=[a], b=[b])
                stop.details.extend(_node_details(ch))
                out_a = self.da.node(a).output[0]
                out_b = self.db.node(b).output[0] if self.db.has_node(b) and self.db.node(b).output else ""
                if reader and out_b:
                    users_b = self.db.consumers(self.db.index.node_scope[b], out_b)
                    if users_b:
                        stop.weights.append((WeightRef(reader[0][0], reader[0][1], out_a),
                                             WeightRef(users_b[0][0], users_b[0][1], out_b)))
                continue
            stop = self._add(CHANGED, f"{ch.a.label()}: {', '.join(k.replace('_', ' ') for k in kinds)}", [a], [b])
            stop.details.extend(_node_details(ch))
            for p in ch.weights:
                stop.weights.append((WeightRef(a, p.index, p.old or ""), WeightRef(b, p.index, p.new or "")))
            for p in ch.quantized:
                if self._is_weight(self.da, a, p.old) and self._is_weight(self.db, b, p.new):
                    stop.weights.append((WeightRef(a, p.index, p.old), WeightRef(b, p.index, p.new)))

    def _kinds(self, ch: NodeChange) -> list[str]:
        """What changed on a pair, a rename left out when names differ throughout (NOTE)."""
        return [k for k in ch.kinds if not (k == "renamed" and self.renames_throughout)]

    def _is_weight(self, doc: Document, nid: int, name: str | None) -> bool:
        return bool(name) and any(w.name == name for w in self._weights_of(doc, nid))

    def removed_and_added(self) -> None:
        """A removed (added) node is one stop; a consumer only rewired around it joins it
        (module NOTE)."""
        rewired = {ch.a.id: ch for ch in self.diff.nodes_changed if self._kinds(ch) == ["inputs"]}
        for side, refs, kind in (("a", self.diff.nodes_removed, REMOVED), ("b", self.diff.nodes_added, ADDED)):
            doc = self.da if side == "a" else self.db
            for r in refs:
                if r.id < 0:
                    continue
                stop = self._add(kind, f"{kind}: {r.label()}", [r.id] if side == "a" else [],
                                 [r.id] if side == "b" else [])
                node = doc.node(r.id) if doc.has_node(r.id) else None
                if node is None:
                    continue
                stop.details.append(Detail("op", _op(r) if side == "a" else "—", _op(r) if side == "b" else "—"))
                outs = {o for o in node.output if o}
                ins = [x for x in node.input if x]
                for ch in list(rewired.values()):
                    ports = ch.inputs
                    old_side = [p.old for p in ports] if side == "a" else [p.new for p in ports]
                    new_side = [p.new for p in ports] if side == "a" else [p.old for p in ports]
                    # the consumer read the removed node's output and now reads what it read
                    if not all(o in outs for o in old_side) or not all(self._same_name(side, n, ins) for n in new_side):
                        continue
                    rewired.pop(ch.a.id)
                    self._drop(self.by_a[ch.a.id])
                    self.status_a[ch.a.id] = self.status_b[ch.b.id] = SAME
                    if side == "a":
                        self._join(stop, b=[ch.b.id])
                    else:
                        self._join(stop, a=[ch.a.id])
                    for p in ports:
                        stop.details.append(Detail(f"{ch.a.label()} input {p.index} (rewired)", _none(p.old),
                                                   _none(p.new)))

    def _same_name(self, side: str, name: str | None, candidates: list[str]) -> bool:
        """Whether ``name`` (a value of the other side) is one of ``candidates`` (values of
        ``side``), renames considered."""
        if name in candidates:
            return True
        if side == "a":  # name is a B value, candidates are A values
            return self.b_to_a.get(name) in candidates
        return self.a_to_b.get(name) in candidates

    def renamed_values(self) -> None:
        main_io = set(self.da.main.input_names()) | set(self.da.main.output_names())
        for v in self.diff.values_renamed:
            if self.renames_throughout and not (v.scope == "main" and v.old in main_io):
                continue
            sa, sb = self.sid_a.get(v.scope), self.sid_b.get(v.scope)
            if sa is None or sb is None:
                continue
            pa, pb = self.da.producer(sa, v.old), self.db.producer(sb, v.new)
            # the quantizer's and the fp16 converter's spellings of the same value
            spelled = next((how for suffix, how in _SPELLINGS if v.new == v.old + suffix), None)
            detail = Detail("value renamed", v.old, v.new)
            if pa is not None and pb is not None:
                stop = self.by_a.get(pa)
                if stop is not None:
                    stop.details.append(detail)
                    continue
                kind = REWRITTEN if spelled else CHANGED
                title = (f"{spelled}: {self._label(self.da, pa)}" if spelled
                         else f"value {v.old!r} renamed {v.new!r}")
                self._add(kind, title, [pa], [pb], details=[detail])
                self.status_a[pa], self.status_b[pb] = kind, kind
                continue
            scope = self.da.scope(sa)
            if sa == self.da.index.main and v.old in scope.input_names() and v.old not in scope.initializer_names():
                self.io_a[v.old] = self.io_b[v.new] = CHANGED
                self._add(CHANGED, f"graph input {v.old!r} renamed {v.new!r}", details=[detail],
                          io_a=(v.old,), io_b=(v.new,))
                continue
            users_a = [nid for nid, _k in self.da.consumers(sa, v.old)]
            users_b = [nid for nid, _k in self.db.consumers(sb, v.new)]
            if users_a:
                stop = self.by_a.get(users_a[0])
                if stop is None:
                    stop = self._add(CHANGED, f"weight {v.old!r} renamed {v.new!r}", users_a, users_b)
                    for nid in users_a:
                        self.status_a[nid] = strongest([self.status_a.get(nid, SAME), CHANGED])
                    for nid in users_b:
                        self.status_b[nid] = strongest([self.status_b.get(nid, SAME), CHANGED])
                stop.details.append(detail)

    def changed_weights(self) -> None:
        for ic in self.diff.initializers_changed:
            sa, sb = self.sid_a.get(ic.scope), self.sid_b.get(ic.scope)
            if sa is None or sb is None:
                continue
            name_b = self.renamed.get((ic.scope, ic.name), ic.name)
            users_a = self.da.consumers(sa, ic.name)
            users_b = self.db.consumers(sb, name_b)
            what = ", ".join(ic.kinds)
            converted = ic.kinds == ["dtype"] and _float_text(ic.old) and _float_text(ic.new)
            detail = Detail(f"weight {ic.name!r} ({what})", ic.old, ic.new)
            if ic.max_abs_diff is not None:
                detail = Detail(f"weight {ic.name!r}: {ic.differing} values differ, max |Δ| {ic.max_abs_diff:.4g}",
                                ic.old, ic.new)
            stop = next((self.by_a[n] for n, _k in users_a if n in self.by_a), None)
            kind = REWRITTEN if converted else CHANGED
            if stop is None:
                lead = users_a[0][0] if users_a else None
                title = f"weights of {self._label(self.da, lead)}" if lead is not None else f"weight {ic.name!r}"
                if converted:
                    title = f"weights stored as {ic.new.split('[')[0]}: {self._label(self.da, lead)}"
                stop = self._add(kind, title, [n for n, _k in users_a], [n for n, _k in users_b])
            stop.details.append(detail)
            for (na, ka), (nb, kb) in zip(users_a, users_b):
                stop.weights.append((WeightRef(na, ka, ic.name), WeightRef(nb, kb, name_b)))
            for n, _k in users_a:
                if self.status_a.get(n) == SAME:
                    self.status_a[n] = kind
            for n, _k in users_b:
                if self.status_b.get(n) == SAME:
                    self.status_b[n] = kind

    def graph_io(self) -> None:
        for c in self.diff.io_changes:
            if c.scope != "main":
                continue  # a body's inputs and outputs: the owner's body change says it
            status = ADDED if c.old is None else REMOVED if c.new is None else CHANGED
            name_b = self.renamed.get((c.scope, c.name), c.name)
            io_a = (c.name,) if c.old is not None else ()
            io_b = (name_b,) if c.new is not None else ()
            for n in io_a:
                self.io_a[n] = status
            for n in io_b:
                self.io_b[n] = status
            self._add(status, f"graph {c.kind} {c.name!r}: {status}", details=[Detail(f"{c.kind} type", _none(c.old),
                                                                                     _none(c.new))],
                      io_a=io_a, io_b=io_b)

    def inserted_qdq(self) -> None:
        """Inserted (or removed) Quantize/Dequantize regions join the stop of the node that
        reads them, else the one that writes them, else make one of their own."""
        for rw in self._qdq:
            side_b = bool(rw.b)
            refs = rw.b if side_b else rw.a
            doc = self.db if side_b else self.da
            table = self.by_b if side_b else self.by_a
            ids = [r.id for r in refs if r.id >= 0 and doc.has_node(r.id)]
            if not ids:
                continue
            sid = doc.index.node_scope[ids[0]]
            inside = set(ids)
            readers = [c for nid in ids for o in doc.node(nid).output if o
                       for c, _k in doc.consumers(sid, o) if c not in inside]
            writers = [p for nid in ids for x in doc.node(nid).input if x
                       for p in [doc.producer(sid, x)] if p is not None and p not in inside]
            stop = next((table[n] for n in readers + writers if n in table), None)
            if stop is None:
                stop = self._add(REWRITTEN, f"{rw.summary}: {refs[0].label()}")
                other = self.cp_b if side_b else self.cp_a
                near = [m for n in writers + readers for m in other.get(n, ())]
                if side_b:
                    self._join(stop, a=near[:1])
                else:
                    self._join(stop, b=near[:1])
            if side_b:
                self._join(stop, b=ids)
            else:
                self._join(stop, a=ids)
            stop.details.append(Detail("inserted" if side_b else "removed",
                                       "" if side_b else " + ".join(_op(r) for r in refs),
                                       " + ".join(_op(r) for r in refs) if side_b else ""))

    def model_fields(self) -> None:
        if self.diff.model_changes:
            stop = self._add(CHANGED, f"model: {len(self.diff.model_changes)} field(s)")
            for f in self.diff.model_changes:
                stop.details.append(Detail(f.field, _none(None if f.old is None else str(f.old)),
                                           _none(None if f.new is None else str(f.new))))
            stop.rank = -2.0

    def order(self) -> None:
        """Stops in A's topological order; a stop with B nodes only sits after the A
        counterpart of the nearest paired node before it in B."""
        rank_b = b_ranks(self.db, self.cp_b, self.rank_a)
        inputs = set(self.da.main.input_names()) | set(self.db.main.input_names())
        for stop in self.stops:
            if stop.rank == -2.0:
                continue  # model fields come first
            ranks = [self.rank_a[n] for n in stop.a if n in self.rank_a] or [rank_b[n] for n in stop.b if n in rank_b]
            if ranks:
                stop.rank = min(ranks)
            else:  # a graph input before every node, an output after them
                stop.rank = -1.0 if set(stop.io_a + stop.io_b) & inputs else float(len(self.rank_a) + 1)
        self.stops.sort(key=lambda s: s.rank)

    def _io_pairs(self) -> dict[str, str]:
        ma, mb = self.da.main, self.db.main
        out = {}
        for names_a, names_b in ((ma.input_names(), mb.input_names()), (ma.output_names(), mb.output_names())):
            set_b = set(names_b)
            for n in names_a:
                nb = self.renamed.get(("main", n), n)
                if nb in set_b:
                    out[n] = nb
        return out


# -- details of a changed node -------------------------------------------------------------
def _node_details(ch: NodeChange) -> list[Detail]:
    rows = []
    if "renamed" in ch.kinds:
        rows.append(Detail("name", ch.a.name or "(unnamed)", ch.b.name or "(unnamed)"))
    if "op_type" in ch.kinds or "domain" in ch.kinds:
        rows.append(Detail("op type", _op(ch.a), _op(ch.b)))
    for at in ch.attributes:
        rows.append(Detail(f"attribute {at.name}", _none(at.old), _none(at.new)))
    for p in ch.inputs:
        rows.append(Detail(f"input {p.index}", _none(p.old), _none(p.new)))
    for p in ch.weights:
        rows.append(Detail(f"weight input {p.index}", _none(p.old), _none(p.new)))
    for p in ch.quantized:
        rows.append(Detail(f"input {p.index} (quantized)", _none(p.old), _none(p.new)))
    for p in ch.outputs:
        rows.append(Detail(f"output {p.index}", _none(p.old), _none(p.new)))
    for s in ch.subgraphs:
        rows.append(Detail(f"body {s}", "differs", "differs"))
    if "doc_string" in ch.kinds:
        rows.append(Detail("doc string", "differs", "differs"))
    return rows


_FLOATS = ("float", "float16", "bfloat16", "double", "float32", "float64")
#: value-name suffixes a converter adds to a value it keeps: (suffix, what it means)
_SPELLINGS = (("_quantized", "runs on int8 values"), ("_fp16", "runs in float16"), ("_bf16", "runs in bfloat16"))


def _float_text(text: str | None) -> bool:
    """Whether a tensor text ("float16[64,3]", "tensor float32[16]") is of a float type."""
    if not text:
        return False
    return text.removeprefix("tensor ").split("[")[0] in _FLOATS


def _converted(ch: NodeChange) -> str | None:
    """The new float type when the only change of a Constant is its value's float type at
    the same shape (fp32 -> fp16 conversion), else None."""
    if ch.a.op_type != "Constant" or ch.kinds != ["attributes"] or len(ch.attributes) != 1:
        return None
    at = ch.attributes[0]
    if at.name != "value" or not _float_text(at.old) or not _float_text(at.new):
        return None
    old_type, old_shape = at.old.removeprefix("tensor ").split("[", 1) if "[" in at.old else (at.old, "")
    new_type, new_shape = at.new.removeprefix("tensor ").split("[", 1) if "[" in at.new else (at.new, "")
    return new_type if old_type != new_type and old_shape == new_shape else None


def _constant_input(doc: Document, sid: int, nid: int) -> bool:
    """Whether node ``nid`` (a Constant, or a DequantizeLinear of a weight) makes a weight."""
    node = doc.node(nid)
    if node.op_type == "Constant":
        return True
    scope = doc.scope(sid)
    inits = set(scope.initializer_names()) if not scope.is_function else set()
    return bool(node.input) and node.input[0] in inits


def _pair_weights(da: Document, db: Document, wa: list[WeightRef],
                  wb: list[WeightRef]) -> list[tuple[WeightRef | None, WeightRef | None]]:
    """The main weight of a rewrite's A side against the B weight its quantized op reads
    (editor.diff.weight_stats knows where each op keeps it)."""
    from editor.diff.weight_stats import main_weight

    first_a = next((w for w in wa if main_weight(da, w)), None)
    first_b = next((w for w in wb if main_weight(db, w)), None)
    if first_a is None and first_b is None:
        return []
    return [(first_a, first_b)]
