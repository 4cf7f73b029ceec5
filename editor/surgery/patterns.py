"""Find a pattern of nodes and replace its occurrences with a node or a subgraph.

A pattern is a list of :class:`Op` in dependency order; names in their ``inputs`` and
``outputs`` are pattern variables. A variable some pattern op produces is internal; any
other is a pattern input that binds to any value (the same value everywhere it is used).
``"?b"`` marks an optional trailing input (it may be absent). Attributes are matched by
value or by a predicate; in a script (``surgery`` is in its namespace)::

    fuse = surgery.Pattern([
        surgery.Op("BatchNormalization", ["x", "s", "b", "m", "v"], ["c"], name="bn"),
        surgery.Op("Relu", ["c"], ["y"]),
    ])
    fused = [surgery.Op("BnRelu", ["x", "s", "b", "m", "v"], ["y"], domain="custom",
                        attrs=lambda m: {"epsilon": m.attributes("bn")["epsilon"]})]
    doc.execute(surgery.ReplacePattern(fuse, fused))   # every occurrence, one undo step

Matching starts from the last op and follows producers back; an occurrence whose internal
values are read outside it (or are graph outputs) is skipped, since removing it would
break those readers. The replacement's outputs take the names of the pattern's outputs
(the last op's, or ``outputs=`` of the pattern), so readers after it need no rewiring;
its intermediate values get fresh names. Occurrences never overlap. The main graph only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx

from editor.commands.common import fresh_name, make_attribute
from editor.document import Command, Document, Transaction
from editor.errors import CommandError
from editor.surgery.merge import _value_names

__all__ = ["Match", "Op", "Pattern", "ReplacePattern", "find_matches"]

AttrSpec = Mapping[str, Any] | Callable[["Match"], Mapping[str, Any]] | None


@dataclass
class Op:
    op_type: str
    inputs: Sequence[str] = ()
    outputs: Sequence[str] = ()
    #: in a pattern: {name: value or predicate(value) -> bool}; in a replacement: {name:
    #: value} or a function of the :class:`Match` returning such a dict
    attrs: AttrSpec = None
    domain: str = ""
    #: a label to find the matched node by (``match.node("conv")``)
    name: str | None = None


@dataclass
class Match:
    """One occurrence: the nodes (by position in the graph) and what the variables bound to."""

    positions: list[int]
    nodes: dict[str, onnx.NodeProto]  # pattern label (or op index as str) -> node
    values: dict[str, str] = field(default_factory=dict)  # variable -> value name ("" absent)

    def node(self, label: str) -> onnx.NodeProto:
        return self.nodes[label]

    def attributes(self, label: str) -> dict[str, onnx.AttributeProto]:
        return {a.name: a for a in self.nodes[label].attribute}


class Pattern:
    def __init__(self, ops: Sequence[Op], *, outputs: Sequence[str] | None = None) -> None:
        if not ops:
            raise CommandError("a pattern needs at least one op")
        self.ops = list(ops)
        self.produced: dict[str, int] = {}
        for k, op in enumerate(self.ops):
            for v in op.outputs:
                if v in self.produced:
                    raise CommandError(f"pattern variable {v!r} is produced twice")
                self.produced[v] = k
            for v in op.inputs:
                var = v.lstrip("?")
                if var in self.produced and self.produced[var] >= k:
                    raise CommandError(f"pattern op {k} reads {var!r} before it is produced")
        self.outputs = list(outputs) if outputs is not None else list(self.ops[-1].outputs)
        # every op must lead to the last one, or backward matching cannot reach it
        reach = {len(self.ops) - 1}
        for k in range(len(self.ops) - 1, -1, -1):
            if k in reach:
                for v in self.ops[k].inputs:
                    if v.lstrip("?") in self.produced:
                        reach.add(self.produced[v.lstrip("?")])
        if len(reach) != len(self.ops):
            raise CommandError("every pattern op must feed (directly or not) the last one")

    def label(self, k: int) -> str:
        return self.ops[k].name or str(k)


def _attr_ok(node: onnx.NodeProto, spec: AttrSpec) -> bool:
    if not spec:
        return True
    if callable(spec):
        raise CommandError("a pattern's attrs are {name: value or predicate}, not a function")
    have = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    for name, want in spec.items():
        value = have.get(name)
        if callable(want):
            try:
                if not want(value):
                    return False
            except Exception:  # noqa: BLE001 - a predicate that cannot judge a value rejects it
                return False
        else:
            if isinstance(value, bytes) and isinstance(want, str):
                value = value.decode("utf-8", "replace")
            if isinstance(value, list) and isinstance(want, tuple):
                want = list(want)
            if value != want:
                return False
    return True


def find_matches(graph: onnx.GraphProto, pattern: Pattern) -> list[Match]:
    """Non-overlapping occurrences of ``pattern`` in ``graph`` (its own nodes, not bodies)."""
    producer: dict[str, int] = {}
    readers: dict[str, set[int]] = {}
    for k, n in enumerate(graph.node):
        for o in n.output:
            if o:
                producer[o] = k
        for i in n.input:
            if i:
                readers.setdefault(i, set()).add(k)
        for a in n.attribute:  # bodies capturing a value read it too
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                from editor.passes.extract import captured_names

                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    for name in captured_names(sub):
                        readers.setdefault(name, set()).add(k)
    graph_outputs = {o.name for o in graph.output}
    used: set[int] = set()
    matches: list[Match] = []
    last = len(pattern.ops) - 1

    def bind(k: int, pos: int, m: Match) -> bool:
        op, node = pattern.ops[k], graph.node[pos]
        if node.op_type != op.op_type or (node.domain or "") != (op.domain or "") or pos in m.positions:
            return False
        if pos in used or not _attr_ok(node, op.attrs):
            return False
        required = [v for v in op.inputs if not v.startswith("?")]
        if len(node.input) < len(required) or len(node.input) > len(op.inputs):
            return False
        if len(node.output) < len(op.outputs):
            return False
        m.positions.append(pos)
        m.nodes[pattern.label(k)] = node
        for v, o in zip(op.outputs, node.output):
            if m.values.get(v, o) != o:
                return False
            m.values[v] = o
        for i, v in enumerate(op.inputs):
            var = v.lstrip("?")
            actual = node.input[i] if i < len(node.input) else ""
            if var in m.values and m.values[var] != actual:
                return False
            m.values[var] = actual
            if var in pattern.produced:
                src = producer.get(actual)
                if src is None or not bind(pattern.produced[var], src, m):
                    return False
        return True

    for pos, node in enumerate(graph.node):
        if node.op_type != pattern.ops[last].op_type:
            continue
        m = Match([], {})
        if not bind(last, pos, m) or len(m.nodes) != len(pattern.ops):
            continue
        inside = set(m.positions)
        internal = [m.values[v] for v in pattern.produced if v not in pattern.outputs]
        if any(readers.get(v, set()) - inside or v in graph_outputs for v in internal):
            continue  # something outside reads an intermediate value: removing it would break that
        used |= inside
        m.positions.sort()
        matches.append(m)
    return matches


class ReplacePattern(Command):
    """Replace occurrences of ``pattern`` with ``replacement`` (ops whose variables are the
    pattern's) in the main graph. ``which``: indexes into the occurrences found (all if None)."""

    def __init__(self, pattern: Pattern, replacement: Sequence[Op], *, which: Sequence[int] | None = None) -> None:
        super().__init__()
        self.pattern, self.replacement = pattern, list(replacement)
        self.which = None if which is None else list(which)
        self.label = f"Replace pattern ending in {pattern.ops[-1].op_type}"
        self.count = 0

    def run(self, doc: Document, tx: Transaction) -> None:
        from editor.passes.apply import ApplyModel

        g = doc.model.graph
        matches = find_matches(g, self.pattern)
        if not matches:
            raise CommandError("the pattern occurs nowhere in the main graph")
        chosen = matches if self.which is None else []
        for k in self.which or []:
            if not 0 <= k < len(matches):
                raise CommandError(f"occurrence {k} does not exist ({len(matches)} found)")
            chosen.append(matches[k])
        known = set(self.pattern.produced) | {v.lstrip("?") for op in self.pattern.ops for v in op.inputs}
        produced_by_repl = {v for op in self.replacement for v in op.outputs}
        for v in self.pattern.outputs:
            if v not in produced_by_repl:
                raise CommandError(f"the replacement does not produce the pattern's output {v!r}")
        out = onnx.ModelProto()
        out.CopyFrom(doc.model)
        og = out.graph
        taken = _value_names(out) | {n.name for n in og.node}
        new_at: dict[int, list[onnx.NodeProto]] = {}
        drop: set[int] = set()
        for m in chosen:
            names = dict(m.values)
            for op in self.replacement:
                for v in op.outputs:
                    if v not in self.pattern.outputs:
                        names[v] = fresh_name(v, taken)
                        taken.add(names[v])
            nodes = []
            for op in self.replacement:
                ins = []
                for v in op.inputs:
                    var = v.lstrip("?")
                    if var not in names and var not in known:
                        raise CommandError(f"replacement reads {var!r}, which the pattern does not bind")
                    ins.append(names.get(var, ""))
                while ins and not ins[-1]:
                    ins.pop()  # absent optional inputs at the end are left out
                attrs = op.attrs(m) if callable(op.attrs) else (op.attrs or {})
                node = onnx.helper.make_node(op.op_type, ins, [names[v] for v in op.outputs], domain=op.domain or None,
                                             name=fresh_name(op.name or op.op_type, taken))
                taken.add(node.name)
                node.attribute.extend(_attribute(k, v) for k, v in attrs.items())
                nodes.append(node)
            # the replacement goes where the last matched node was: every value it reads is
            # defined before that, and every reader of its outputs comes after their producers
            new_at[max(m.positions)] = nodes
            drop |= set(m.positions)
        new_nodes: list[onnx.NodeProto] = []
        for k, node in enumerate(og.node):
            if k in new_at:
                new_nodes.extend(new_at[k])
            elif k not in drop:
                new_nodes.append(node)
        new_nodes = _toposort(new_nodes, og)
        del og.node[:]
        og.node.extend(new_nodes)
        for op in self.replacement:
            if op.domain and op.domain not in {o.domain for o in out.opset_import}:
                out.opset_import.append(onnx.helper.make_opsetid(op.domain, 1))
        self.count = len(chosen)
        self.label = f"Replace {self.count} occurrence(s) of a pattern ending in {self.pattern.ops[-1].op_type}"
        ApplyModel(out, self.label).run(doc, tx)


def _attribute(name: str, value: Any) -> onnx.AttributeProto:
    if isinstance(value, onnx.AttributeProto):  # copied from a matched node
        attr = onnx.AttributeProto()
        attr.CopyFrom(value)
        attr.name = name
        return attr
    return make_attribute(name, value)


def _toposort(nodes: list[onnx.NodeProto], graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """``nodes`` in an order where each reads only values defined before it (stable: a
    node moves only when a pattern output it reads now comes later)."""
    from editor.passes.extract import captured_names

    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    defined |= {s.values.name for s in graph.sparse_initializer}
    produced = {o for n in nodes for o in n.output}
    pending = list(nodes)
    out: list[onnx.NodeProto] = []
    while pending:
        rest = []
        progressed = False
        for n in pending:
            needs = set(n.input)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    needs |= set(captured_names(a.g))
            needs &= produced
            if needs <= defined:
                out.append(n)
                defined |= set(n.output)
                progressed = True
            else:
                rest.append(n)
        if not progressed:
            raise CommandError("the replacement would make a cycle in the graph")
        pending = rest
    return out
