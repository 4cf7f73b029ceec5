"""Commands on nodes: add, delete, rename, change op, rewire, add/remove ports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import onnx

from editor.commands.common import (
    check_node,
    check_scope,
    describe,
    fresh_name,
    make_attribute,
    require,
)
from editor.document import Command, Document, NodeId, ScopeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, SetField, node_target, scope_target
from editor.errors import CommandError
from editor.schema import attribute_specs, default_io_names, get_schema


class AddNode(Command):
    """Add a node of any op of any imported domain; schema defaults fill what is not given.

    ``inputs``/``outputs`` default to fresh value names after the schema's formal
    parameters; ``attributes`` maps names to Python values (or AttributeProtos);
    ``with_defaults`` writes every attribute that has a schema default explicitly.
    """

    def __init__(
        self,
        scope: ScopeId,
        op_type: str,
        *,
        domain: str = "",
        name: str | None = None,
        inputs: Sequence[str] | None = None,
        outputs: Sequence[str] | None = None,
        attributes: Mapping[str, Any] | None = None,
        position: int | None = None,
        with_defaults: bool = False,
    ) -> None:
        super().__init__()
        self.scope, self.op_type, self.domain = scope, op_type, domain
        self.name, self.inputs, self.outputs = name, inputs, outputs
        self.attributes = dict(attributes or {})
        self.position, self.with_defaults = position, with_defaults
        self.label = f"Add {op_type} node"
        self.node_id: NodeId | None = None

    def run(self, doc: Document, tx: Transaction) -> None:
        scope = check_scope(doc, self.scope)
        require(self.op_type.isidentifier(), f"op type {describe(self.op_type)} is not a valid identifier")
        domain = "" if self.domain == "ai.onnx" else self.domain
        version = doc.opset(domain)
        if scope.is_function:
            version = version or _function_opset(scope.graph, domain)
        require(
            version is not None,
            f"domain {describe(domain or 'ai.onnx')} is not imported by this model: add an opset import first",
        )
        schema = get_schema(self.op_type, domain, version)
        is_local_function = any(
            f.name == self.op_type and f.domain == domain for f in doc.model.functions
        )
        if schema is None and domain in ("", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training"):
            require(is_local_function, f"no operator {describe(self.op_type)} in domain "
                    f"{describe(domain or 'ai.onnx')} at opset {version}")
        taken = _TakenNames(scope)
        if self.inputs is None:
            ins = default_io_names(schema)[0] if schema else []
            inputs = ["" for _ in ins]  # unconnected: the user wires them
        else:
            inputs = list(self.inputs)
        if self.outputs is None:
            outs = default_io_names(schema)[1] if schema else ["output"]
            base = self.name or self.op_type
            outputs = []
            for o in outs or ["output"]:
                n = fresh_name(f"{base}_{o}", taken)
                taken.add(n)
                outputs.append(n)
        else:
            outputs = list(self.outputs)
            for o in outputs:
                require(not o or o not in scope.producers, f"value {describe(o)} already has a producer")
                require(not o or not scope.positions_of("input", o), f"{describe(o)} is a graph input")
                require(not o or scope.initializer_position(o) is None and not scope._sparse_defines(o),
                        f"{describe(o)} is an initializer")
            require(len(set(o for o in outputs if o)) == len([o for o in outputs if o]),
                    "the same output name is given twice")
        loop = sorted({i for i in inputs if i} & {o for o in outputs if o})
        require(not loop, f"input {describe(loop[0]) if loop else ''} is this node's own output")
        node = onnx.NodeProto()
        node.op_type = self.op_type
        if domain:
            node.domain = domain
        name = self.name if self.name is not None else fresh_name(self.op_type, {n.name for _, _, n in doc.index.iter_nodes()})
        if name:
            node.name = name
        node.input.extend(inputs)
        node.output.extend(outputs)
        specs = attribute_specs(schema) if schema else {}
        for key, value in self.attributes.items():
            spec = specs.get(key)
            # as SetAttribute does: an op with a schema takes only the attributes it declares
            require(schema is None or spec is not None,
                    f"{self.op_type} has no attribute {key!r} at opset {version}")
            node.attribute.append(make_attribute(key, value, spec.type if spec else None))
        if self.with_defaults:
            for key, spec in specs.items():
                if key not in self.attributes and spec.default is not None:
                    node.attribute.append(spec.default)
        pos = len(scope.node_ids) if self.position is None else self.position
        require(0 <= pos <= len(scope.node_ids), f"position {pos} is outside the graph")
        tx.apply(InsertItem(scope_target(self.scope), "node", pos, node))
        self.node_id = doc.scope(self.scope).node_ids[pos]

def _function_opset(fn: onnx.FunctionProto, domain: str) -> int | None:
    for imp in fn.opset_import:
        if (imp.domain if imp.domain != "ai.onnx" else "") == domain:
            return imp.version
    return None


def _all_names(doc: Document, scope: ScopeId) -> set[str]:
    s = doc.scope(scope)
    names = s.defined_names() | set(s.consumers) | set(s.output_names())
    return names


class _TakenNames:
    """Names used in a scope, asked one at a time through the index (O(1) each), plus the
    names this command has already given out: building the whole set cost ~10 ms per
    added node on a 10,000-node graph."""

    def __init__(self, scope) -> None:
        self.scope = scope
        self.extra: set[str] = set()

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.extra or self.scope.defines(name)
                                          or name in self.scope.consumers or bool(self.scope.positions_of("output", name)))

    def add(self, name: str) -> None:
        self.extra.add(name)


class DeleteNodes(Command):
    """Delete nodes. Their outputs are left dangling, or, with ``reconnect``, the consumers
    of a single-output node are rewired to its first (pass-through) input."""

    def __init__(self, node_ids: Sequence[NodeId], *, reconnect: bool = False) -> None:
        super().__init__()
        self.node_ids = list(dict.fromkeys(node_ids))
        self.reconnect = reconnect
        n = len(self.node_ids)
        self._tail = " and reconnect" if reconnect else ""
        self.label = ("Delete node" if n == 1 else f"Delete {n} nodes") + self._tail

    def run(self, doc: Document, tx: Transaction) -> None:
        require(bool(self.node_ids), "nothing to delete")
        for nid in self.node_ids:
            check_node(doc, nid)
        if len(self.node_ids) == 1:
            node = doc.node(self.node_ids[0])
            self.label = f"Delete node {describe(node.name or node.op_type)}{self._tail}"
        if self.reconnect:
            for nid in self.node_ids:
                node = doc.node(nid)
                live_in = [i for i in node.input if i]
                require(
                    len(live_in) >= 1 and len([o for o in node.output if o]) == 1,
                    f"node {describe(node.name or node.op_type)} has no single pass-through input and output "
                    "to reconnect through",
                )
        for nid in self.node_ids:
            node = doc.node(nid)
            sid = doc.scope_of(nid).id
            if self.reconnect:
                src = next(i for i in node.input if i)
                out = next(o for o in node.output if o)
                scope = doc.scope(sid)
                require(
                    out not in scope.output_names() or src not in scope.input_names() + scope.output_names(),
                    f"cannot reconnect through {describe(node.name or node.op_type)}: "
                    f"graph output {describe(out)} would alias {describe(src)}",
                )
                # a body's output must be computed in the body: it cannot name a value the
                # body captures from outside (onnx.checker: "not an output of any node")
                require(
                    out not in scope.output_names() or src in scope.defined_names(),
                    f"cannot reconnect through {describe(node.name or node.op_type)}: graph output "
                    f"{describe(out)} would name {describe(src)}, which this graph does not define",
                )
                # uses in this graph and in bodies that capture the value follow the input
                for use_nid, k in doc.consumers(sid, out, nested=True):
                    if use_nid != nid:
                        # inside a body that defines its own value named like ``src``, the
                        # rewired use would read that one instead
                        for inner in doc.index.scope_chain(doc.scope_of(use_nid).id):
                            if inner.id == sid:
                                break
                            require(src not in inner.defined_names(),
                                    f"cannot reconnect through {describe(node.name or node.op_type)}: "
                                    f"{doc.index.path(inner.id)} has its own {describe(src)}")
                        tx.apply(ReplaceItem(node_target(use_nid), "input", k, src))
                if out in scope.output_names():
                    _keep_output_name(doc, tx, sid, nid, src, out)
                    continue
            pos = doc.scope(sid).position(nid)
            tx.apply(RemoveItem(scope_target(sid), "node", pos))


def _keep_output_name(doc: Document, tx: Transaction, sid: ScopeId, nid: NodeId, src: str, out: str) -> None:
    """Delete node ``nid`` whose output ``out`` is a graph output, reconnecting through its
    input ``src``: the pass-through value takes the name ``out``.

    NOTE: graph output names are the model's interface (runtimes fetch outputs by name;
    ppocr's ``fetch_name_0``). Renaming the output to ``src`` broke every caller, so the
    surviving value is renamed instead: the output keeps its name and declared type, and
    its producer and every use of ``src`` follow (a :class:`RenameValue`, with its checks).
    """
    from editor.commands.values import RenameValue

    scope = doc.scope(sid)
    g = scope.graph
    k = scope.output_names().index(out)
    entry = g.output[k] if isinstance(g, onnx.FunctionProto) else _copy(g.output[k])
    tx.apply(RemoveItem(scope_target(sid), "output", k))
    tx.apply(RemoveItem(scope_target(sid), "node", doc.scope(sid).position(nid)))
    # a declaration of ``out`` describes the deleted node's result; ``src``'s own follows it
    vis = getattr(g, "value_info", ())
    for j in reversed([j for j, vi in enumerate(vis) if vi.name == out]):
        tx.apply(RemoveItem(scope_target(sid), "value_info", j))
    RenameValue(sid, src, out).run(doc, tx)
    tx.apply(InsertItem(scope_target(sid), "output", k, entry))


def _copy(vi: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    new = onnx.ValueInfoProto()
    new.CopyFrom(vi)
    return new

class SetNodeField(Command):
    """Rename a node, or change its op type, domain, doc string or function overload."""

    FIELDS = ("name", "op_type", "domain", "doc_string", "overload")

    def __init__(self, node_id: NodeId, field: str, value: str) -> None:
        super().__init__()
        self.node_id, self.field, self.value = node_id, field, value
        self.merge_key = ("node-field", node_id, field)
        self.label = {
            "name": "Rename node",
            "op_type": "Change op type",
            "domain": "Change domain",
            "doc_string": "Edit node doc string",
            "overload": "Change overload",
        }.get(field, f"Set node {field}")

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.field in self.FIELDS, f"nodes have no editable field {describe(self.field)}")
        node = check_node(doc, self.node_id)
        require(isinstance(self.value, str), f"{self.field} must be text, not {describe(self.value)}")
        if self.field == "op_type":
            require(self.value.isidentifier(), f"op type {describe(self.value)} is not a valid identifier")
        if self.field == "name":
            # the history names both ends: "Rename node 'conv1' → 'stem'"
            self.label = f"Rename node {describe(node.name or node.op_type)} → {describe(self.value)}"
        elif self.field == "op_type":
            self.label = f"Change op type of {describe(node.name or node.op_type)} to {self.value}"
        if getattr(node, self.field) == self.value:
            return
        tx.apply(SetField(node_target(self.node_id), self.field, self.value, bool(self.value) or self.field == "op_type"))

    def absorb(self, later: Command) -> None:
        """Typing a name merges into one step that still names both ends: the name undo
        returns to, and the latest one."""
        super().absorb(later)
        if self.field == "name" and isinstance(later, SetNodeField) and " → " in self.label:
            self.label = f"{self.label.rsplit(' → ', 1)[0]} → {describe(later.value)}"

class SetNodeInput(Command):
    """Rewire input ``index`` of a node to value ``name`` ("" leaves an optional input empty)."""

    def __init__(self, node_id: NodeId, index: int, name: str) -> None:
        super().__init__()
        self.node_id, self.index, self.name = node_id, index, name
        self.label = "Connect input" if name else "Disconnect input"

    def run(self, doc: Document, tx: Transaction) -> None:
        node = check_node(doc, self.node_id)
        require(0 <= self.index < len(node.input), f"node {describe(node.name or node.op_type)} has no input {self.index}")
        if node.input[self.index] == self.name:
            return
        if self.name:
            sid = doc.scope_of(self.node_id).id
            require(self.name not in node.output, f"input {describe(self.name)} is this node's own output")
            _refuse_cycle(doc, sid, self.node_id, self.name)
        tx.apply(ReplaceItem(node_target(self.node_id), "input", self.index, self.name))

def _refuse_cycle(doc: Document, sid: ScopeId, nid: NodeId, name: str) -> None:
    """Refuse wiring ``name`` into node ``nid`` if ``name`` depends on ``nid``'s outputs."""
    scope = doc.scope(sid)
    start = scope.producers.get(name)
    if start is None:
        return
    seen = set()
    stack = [start]
    while stack:
        cur = stack.pop()
        if cur == nid:
            raise CommandError(
                f"connecting {describe(name)} to {describe(doc.node(nid).name or doc.node(nid).op_type)} would make a cycle"
            )
        if cur in seen:
            continue
        seen.add(cur)
        for i in _reads(doc, cur):
            p = scope.producers.get(i)
            if p is not None and p not in seen:
                stack.append(p)


def _reads(doc: Document, nid: NodeId) -> set[str]:
    """Names node ``nid`` reads: its inputs and what its bodies capture from outside.

    NOTE: an If/Loop/Scan depends on the values its bodies capture just as on its inputs;
    ignoring them let a rewire close a cycle through a body.
    """
    names = set(doc.node(nid).input)
    stack = list(doc.index.children.get(nid, ()))
    while stack:
        sub = doc.scope(stack.pop())
        defined = sub.defined_names()
        names |= {n for n in sub.consumers if n not in defined}
        names |= {n for n in sub.output_names() if n not in defined}
        stack += [s for inner in sub.node_ids for s in doc.index.children.get(inner, ())]
    names.discard("")
    return names


class AddNodePort(Command):
    """Insert an input or output on a node at ``index`` (default: at the end)."""

    def __init__(self, node_id: NodeId, kind: str, name: str, index: int | None = None) -> None:
        super().__init__()
        self.node_id, self.kind, self.name, self.index = node_id, kind, name, index
        self.label = f"Add node {kind}"

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.kind in ("input", "output"), f"port kind must be input or output, not {describe(self.kind)}")
        node = check_node(doc, self.node_id)
        seq = getattr(node, self.kind)
        pos = len(seq) if self.index is None else self.index
        require(0 <= pos <= len(seq), f"position {pos} is outside the node's {self.kind}s")
        sid = doc.scope_of(self.node_id).id
        if self.kind == "output" and self.name:
            scope = doc.scope(sid)
            require(self.name not in scope.producers, f"value {describe(self.name)} already has a producer")
            require(self.name not in scope.input_names() and self.name not in scope.initializer_names(),
                    f"{describe(self.name)} is already defined in this graph")
        if self.kind == "input" and self.name:
            _refuse_cycle(doc, sid, self.node_id, self.name)
        tx.apply(InsertItem(node_target(self.node_id), self.kind, pos, self.name))


class RemoveNodePort(Command):
    """Remove input or output ``index`` of a node (consumers of a removed output dangle)."""

    def __init__(self, node_id: NodeId, kind: str, index: int) -> None:
        super().__init__()
        self.node_id, self.kind, self.index = node_id, kind, index
        self.label = f"Remove node {kind}"

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.kind in ("input", "output"), f"port kind must be input or output, not {describe(self.kind)}")
        node = check_node(doc, self.node_id)
        seq = getattr(node, self.kind)
        require(0 <= self.index < len(seq), f"node has no {self.kind} {self.index}")
        tx.apply(RemoveItem(node_target(self.node_id), self.kind, self.index))
