"""The live checks: one node, one graph, the model. Pure functions of the document (and the
validator's shadows), so re-running one after an edit gives exactly what a fresh pass
would.

NOTE: they mirror what ``onnx.checker`` enforces (``OpSchema::Verify``, the lexical-scope
walk of ``check_graph``, ``check_value_info`` for main-graph inputs and outputs,
``check_model``) so the live problems and the checker agree on the kind of a problem, and
add what only an editor can afford to say per node (declared vs inferred types of one
node's neighbourhood). Messages quote only the subject's own names, never another node's,
so renaming a node never leaves a stale message on its neighbours.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING

import onnx
from onnx import defs

from editor.schema import ATTR_PROTO_TYPE, get_schema
from editor.validation.names import name_problems, short
from editor.validation.problems import ERROR, INFO, WARNING, Problem
from editor.validation.declared import negative_dim_message, negative_dims
from editor.validation.ranks import axis_problems
from editor.validation.typecheck import constraint_problems, declared_type, infer_and_compare, type_rank

if TYPE_CHECKING:
    from editor.validation.validator import Validator

A = onnx.AttributeProto
Opt = defs.OpSchema.FormalParameterOption

#: domains whose ops the checker insists on knowing (others are custom: not checked)
STANDARD_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.training"})

OK, LATER = 1, 2

_SINGULAR_FIELD = {A.TENSOR: "t", A.SPARSE_TENSOR: "sparse_tensor", A.GRAPH: "g"}


def _attr_type_name(t: int) -> str:
    try:
        return A.AttributeType.Name(t)
    except ValueError:
        return str(t)


def unknown_op_note(domain: str, op_type: str) -> str:
    """The note of an op no installed runtime has a schema for (one text per op type, so
    reports can fold the notes of its nodes into one line)."""
    return f"no schema for {domain}.{op_type} in onnx or onnxruntime; not checked"


def node_label(node: onnx.NodeProto) -> str:
    op = node.op_type if node.op_type.isprintable() and len(node.op_type) <= 60 else short(node.op_type)
    return f"{op} {short(node.name)}" if node.name else f"{op} (unnamed)"


def resolve(v: Validator, sid: int, name: str, pos: int) -> int | None:
    """Is ``name`` visible to a node at position ``pos`` of scope ``sid``?

    OK: a graph input, an initializer or the output of an earlier node here or in an
    enclosing graph (before the node that owns the subgraph); LATER: it exists, but only
    after that point; None: nothing defines it.
    """
    ss = v.scopes[sid]
    local = None
    if name in ss.input_set or ss.is_initializer(name):
        return OK
    prods = ss.producers.get(name)
    if prods:
        scope = v.doc.index.scopes[sid]
        if any(scope.position(p) < pos for p in prods):
            return OK
        local = LATER
    if ss.parent is not None and ss.owner is not None:
        outer = resolve(v, ss.parent, name, v.doc.index.scopes[ss.parent].position(ss.owner))
        if outer == OK:
            return OK
        local = local or outer
    return local


def check_node(v: Validator, nid: int) -> list[Problem]:
    doc = v.doc
    node = doc.index.nodes[nid]
    sh = v.nodes[nid]
    sid = sh.sid
    ss = v.scopes[sid]
    graph = v.path(sid)
    label = node_label(node)
    out: list[Problem] = []

    def add(severity: str, code: str, message: str, value: str | None = None) -> None:
        out.append(Problem(severity, code, message, nid, value, sid, graph))

    bad_names = name_problems(node, f"node #{doc.index.scopes[sid].position(nid)} ({label})")
    for severity, code, message in bad_names:
        add(severity, code, message)
    if not node.op_type:
        return out  # nothing else can be said about a node without an operator

    domain = "" if node.domain == "ai.onnx" else node.domain
    opsets = v.info.scope_opsets(ss.root)
    version = opsets.get(domain)
    schema = None
    if version is None:
        add(ERROR, "unknown-domain", f"{label}: domain {domain or 'ai.onnx'!r} is not imported by the model")
    else:
        fn = v.info.functions.get((domain, node.op_type, node.overload))
        if fn is not None and domain not in STANDARD_DOMAINS:
            _check_function_call(node, fn, label, add)
        else:
            schema = get_schema(node.op_type, domain, version)
            if schema is None:
                if domain in STANDARD_DOMAINS:
                    add(ERROR, "unknown-op", f"{label}: no operator {node.op_type!r} in "
                        f"{domain or 'ai.onnx'!r} at opset {version}")
                elif fn is not None:
                    _check_function_call(node, fn, label, add)
                else:
                    add(INFO, "custom-op", f"{label}: {unknown_op_note(domain, node.op_type)}")
            elif schema.deprecated:
                add(ERROR, "deprecated-op", f"{label}: {node.op_type} is deprecated at opset {version} "
                    f"(since {schema.since_version})")
                schema = None
            else:
                _verify(node, schema, label, add)
                if not out and not schema.has_type_and_shape_inference_function and v.infer_types:
                    for severity, code, message, value in constraint_problems(v, sid, node, schema, label):
                        add(severity, code, message, value)
                if not out:
                    def rank_of(name: str) -> int | None:
                        tb = declared_type(v, sid, name)
                        return type_rank(tb) if tb is not None else None

                    for message in axis_problems(node, rank_of):
                        add(ERROR, "attr-range", f"{label}: {message}")

    # names: defined before use, one producer each
    scope = doc.index.scopes[sid]
    pos = scope.position(nid)
    for k, name in enumerate(node.input):
        if not name:
            continue
        where = resolve(v, sid, name, pos)
        if where is None:
            add(ERROR, "undefined-value", f"{label}: input {k} {name!r} is not defined in this graph "
                "or an enclosing one", name)
        elif where == LATER:
            add(ERROR, "graph-order", f"{label}: input {k} {name!r} is produced only after this node", name)
    seen: set[str] = set()
    for name in node.output:
        if not name:
            continue
        if name in seen:
            add(ERROR, "ssa", f"{label}: output {name!r} is listed twice", name)
            continue
        seen.add(name)
        if name in ss.input_set:
            add(ERROR, "ssa", f"{label}: output {name!r} is also a graph input", name)
        elif ss.is_initializer(name):
            add(ERROR, "ssa", f"{label}: output {name!r} is also an initializer", name)
        elif len(ss.producers.get(name, ())) > 1:
            add(ERROR, "ssa", f"{label}: output {name!r} is also produced by another node", name)
        elif ss.parent is not None and ss.owner is not None and resolve(
            v, ss.parent, name, doc.index.scopes[ss.parent].position(ss.owner)
        ) == OK:
            add(ERROR, "ssa", f"{label}: output {name!r} shadows a value of an enclosing graph", name)

    # types and shapes of the neighbourhood: only for a node that is otherwise sound, with
    # a schema that infers, no subgraph (its body is not this node's neighbourhood) and
    # outside function bodies (their attribute references have no values)
    if (
        v.infer_types
        and schema is not None
        and not any(p.severity == ERROR for p in out)
        and ss.kind != "function"
        and v.scopes[ss.root].kind != "function"
        and schema.has_type_and_shape_inference_function
        and not sh.kids
    ):
        for severity, code, message, value in infer_and_compare(v, sid, node, schema, label):
            add(severity, code, message, value)
    return out


def _verify(node: onnx.NodeProto, schema: defs.OpSchema, label: str, add) -> None:  # noqa: ANN001
    """What ``OpSchema::Verify`` checks, as problems instead of the first exception."""
    n_in, n_out = len(node.input), len(node.output)
    if not schema.min_input <= n_in <= schema.max_input:
        add(ERROR, "input-count", f"{label}: {n_in} inputs, {node.op_type} takes "
            f"{_range(schema.min_input, schema.max_input)}")
    if not schema.min_output <= n_out <= schema.max_output:
        add(ERROR, "output-count", f"{label}: {n_out} outputs, {node.op_type} gives "
            f"{_range(schema.min_output, schema.max_output)}")
    for kind, names, formals in (("input", node.input, schema.inputs), ("output", node.output, schema.outputs)):
        for k, name in enumerate(names):
            if k >= len(formals):
                if formals and formals[-1].option == Opt.Variadic:
                    break
                add(ERROR, f"{kind}-count", f"{label}: {len(names)} {kind}s, {node.op_type} declares {len(formals)}")
                break
            if not name and formals[k].option == Opt.Single:
                add(ERROR, f"missing-{kind}", f"{label}: required {kind} {k} ({formals[k].name!r}) is empty")
    attrs = schema.attributes
    seen: set[str] = set()
    for attr in node.attribute:
        name = attr.name
        if name in seen:
            add(ERROR, "attr-duplicate", f"{label}: attribute {name!r} appears more than once", name)
            continue
        seen.add(name)
        spec = attrs.get(name)
        if spec is None:
            if not name.startswith("__"):
                add(ERROR, "attr-unknown", f"{label}: {node.op_type} has no attribute {name!r}", name)
            continue
        expected = ATTR_PROTO_TYPE.get(spec.type, 0)
        if attr.type != expected:
            add(ERROR, "attr-type", f"{label}: attribute {name!r} must be {_attr_type_name(expected)}, "
                f"not {_attr_type_name(attr.type)}", name)
            continue
        if attr.ref_attr_name:
            continue
        singular = _SINGULAR_FIELD.get(expected)
        if singular and not attr.HasField(singular):
            add(ERROR, "attr-value", f"{label}: attribute {name!r} has no {_attr_type_name(expected)} value", name)
    for name, spec in attrs.items():
        if spec.required and name not in seen:
            add(ERROR, "attr-missing", f"{label}: required attribute {name!r} is missing", name)


def _range(lo: int, hi: int) -> str:
    if hi >= 2**31 - 1:
        return f"at least {lo}"
    return f"{lo}" if lo == hi else f"{lo} to {hi}"


def _check_function_call(node: onnx.NodeProto, fn: onnx.FunctionProto, label: str, add) -> None:  # noqa: ANN001
    # NOTE: onnx.checker does not check calls of model-local functions; these are warnings.
    if len(node.input) > len(fn.input):
        add(WARNING, "input-count", f"{label}: {len(node.input)} inputs, function {fn.name!r} takes {len(fn.input)}")
    if len(node.output) > len(fn.output):
        add(WARNING, "output-count", f"{label}: {len(node.output)} outputs, function {fn.name!r} gives {len(fn.output)}")
    known = set(fn.attribute) | {a.name for a in fn.attribute_proto}
    for attr in node.attribute:
        if attr.name not in known:
            add(WARNING, "attr-unknown", f"{label}: function {fn.name!r} has no attribute {attr.name!r}", attr.name)


def check_graph(v: Validator, sid: int) -> list[Problem]:
    """Graph-level problems: names of inputs, outputs and initializers."""
    ss = v.scopes[sid]
    g = v.doc.index.scopes[sid].graph
    graph = v.path(sid)
    out: list[Problem] = []

    def add(code: str, message: str, value: str | None = None, severity: str = ERROR) -> None:
        out.append(Problem(severity, code, message, None, value, sid, graph))

    where = "function" if ss.kind == "function" else "graph"
    if ss.kind != "function" and not g.name:
        add("graph-name", f"{graph}: the graph has no name")
    for name, n in Counter(ss.inputs).items():
        if n > 1:
            add("ssa", f"{where} input {name!r} is listed {n} times", name)
    for name, n in Counter(ss.inits).items():
        if n > 1:
            add("ssa", f"initializer {name!r} appears {n} times", name)
    if ss.kind == "function":
        for name, n in Counter(ss.outputs).items():
            if n > 1:
                add("ssa", f"function output {name!r} is listed {n} times", name)
    if v.info.ir_version <= 3 and ss.kind != "function":
        for name in dict.fromkeys(ss.inits):
            if name not in ss.input_set:
                add("initializer-input", f"initializer {name!r} is not a graph input (required for IR version "
                    f"{v.info.ir_version})", name)
    for name in dict.fromkeys(ss.outputs):
        if name and name not in ss.input_set and not ss.is_initializer(name) and name not in ss.producers:
            add("undefined-output", f"{where} output {name!r} is not produced by any node of this {where}", name)
    for kind in ("input", "output", "value_info"):
        for name, payload in ss.lists[kind].entries:
            if isinstance(payload, bytes):
                found = _negative_dims_of(payload)
                if found:
                    what = f"{where} {kind}" if kind != "value_info" else "value"
                    add("declared-dim", negative_dim_message(f"{what} {name!r}", found), name, WARNING)
    if ss.kind == "main":
        for kind, entries in (("input", g.input), ("output", g.output)):
            for vi in entries:
                problem = _main_io_type_problem(vi)
                if problem:
                    add("missing-type", f"graph {kind} {vi.name!r} {problem}", vi.name)
    return out


@lru_cache(maxsize=8192)
def _negative_dims_of(payload: bytes) -> list[tuple[int, int]]:
    # NOTE: a negative int64 is a 10-byte varint ending in 0x01 after nine bytes >= 0x80;
    # most types have none, so most payloads are never parsed
    if b"\x01" not in payload or len(payload) < 12:
        return []
    return negative_dims(onnx.TypeProto.FromString(payload))


def _main_io_type_problem(vi: onnx.ValueInfoProto) -> str | None:
    """``check_value_info``: main-graph inputs and outputs need a complete type."""
    if not vi.HasField("type"):
        return "has no type"
    tp = vi.type
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, kind)
        if not t.elem_type:
            return "has no element type"
        if not t.HasField("shape"):
            return "has no shape (give it a rank; dims may be symbolic)"
    elif kind is None:
        return "has an empty type"
    return None


def check_model(v: Validator) -> list[Problem]:
    m = v.doc.model
    out: list[Problem] = []
    if not m.ir_version:
        out.append(Problem(ERROR, "ir-version", "the model has no IR version"))
    elif m.ir_version > onnx.IR_VERSION:
        out.append(Problem(ERROR, "ir-version", f"IR version {m.ir_version} is newer than onnx supports "
                           f"({onnx.IR_VERSION})"))
    if m.ir_version >= 3 and not len(m.opset_import):
        out.append(Problem(ERROR, "opset-import", "the model imports no opset (ai.onnx needs one)"))
    keys = Counter(p.key for p in m.metadata_props)
    for key, n in keys.items():
        if n > 1:
            out.append(Problem(ERROR, "metadata", f"metadata key {key!r} appears {n} times", value=key))
    return out
