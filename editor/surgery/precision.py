"""fp32 -> fp16 / bf16 conversion that follows the operator schemas (valid by construction).

Why not a block list: a tensor may become fp16 only where every node that reads it accepts
fp16 there, and onnx's own operator schemas say exactly that (the type constraint ``T`` of
the slot, at the model's opset). So a node runs in the lower precision when, for a type
parameter of its schema, every slot bound to that parameter is a float32 tensor today and
the parameter allows the target type; slots bound to other parameters (Resize's scales,
a Range's limits ...) keep their type. Parameters that only outputs use (Cast's ``to``,
ConstantOfShape, RandomNormal) follow attributes, not inputs, and are left alone.

Correctness does not depend on those decisions: after them, every input slot whose wanted
type differs from the stored type of its value gets a Cast, inserted just before the first
node that needs it, so the node list stays in topological order. Weights (initializers,
``Constant`` nodes) and ``Cast(to=FLOAT)`` outputs become the target type only when every
reader wants it. Values beyond fp16's range are clamped to ±65504 and reported.

Control flow: the outer slots of ``If``/``Loop``/``Scan`` keep their types, and each body is
converted inside with its own inputs and outputs kept, so the bodies need no type changes
at their boundary; values a body captures are cast inside the body where needed.
Model-local functions and ops without a schema are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import TensorProto

from editor.commands.common import fresh_name
from editor.document import Command, Document, Transaction
from editor.errors import CommandError
from editor.io.tensors import numpy_to_tensor, tensor_to_numpy, uses_external_data
from editor.schema import get_schema

if TYPE_CHECKING:
    from editor.io import ExternalDataStore

__all__ = ["ConvertPrecision", "PrecisionResult", "convert_precision", "TARGETS"]

F32 = TensorProto.FLOAT
FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)
TARGETS = {"fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
_TYPE_STR = {TensorProto.FLOAT16: "tensor(float16)", TensorProto.BFLOAT16: "tensor(bfloat16)"}
FP16_MAX = 65504.0
_BIG_TENSOR = 1 << 16  # raw payloads above this are stripped from the copy given to inference


@dataclass
class PrecisionResult:
    model: onnx.ModelProto
    target: int
    #: names of the nodes (or "#k" for unnamed ones) that now compute in the target type
    converted: list[str] = field(default_factory=list)
    #: node names kept in fp32 on request
    kept: list[str] = field(default_factory=list)
    casts: int = 0
    weights: int = 0
    #: converted weights that were stored outside the model (their copies are inline)
    inlined: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        kind = onnx.helper.tensor_dtype_to_string(self.target).replace("TensorProto.", "").lower()
        return (f"{len(self.converted)} node(s) now compute in {kind}, {self.weights} weight(s) converted, "
                f"{self.casts} Cast(s) inserted")


def node_label(node: onnx.NodeProto, k: int) -> str:
    return node.name or f"{node.op_type}#{k}"


# ----------------------------------------------------------------------------- types


def _strip_for_inference(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.HasField("raw_data") and len(t.raw_data) > _BIG_TENSOR:
            t.ClearField("raw_data")  # dims and data_type are all inference needs
            t.data_location = TensorProto.EXTERNAL
            del t.external_data[:]
            e = t.external_data.add()
            e.key, e.value = "location", "stripped"
    return m


def _inferred(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every type onnx can infer recorded (same node structure)."""
    try:
        return onnx.shape_inference.infer_shapes(_strip_for_inference(model), check_type=False, strict_mode=False)
    except Exception:  # noqa: BLE001 - without inference, only declared types are known
        return _strip_for_inference(model)


def _graph_types(g: onnx.GraphProto) -> dict[str, int]:
    out: dict[str, int] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            out[vi.name] = vi.type.tensor_type.elem_type
    for t in g.initializer:
        out[t.name] = t.data_type
    for n in g.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output:
            for a in n.attribute:
                if a.name == "value":
                    out[n.output[0]] = a.t.data_type
                elif a.name in ("value_float", "value_floats"):
                    out[n.output[0]] = F32
    return out


# ------------------------------------------------------------------------- decisions


def _bindings(node: onnx.NodeProto, schema: onnx.defs.OpSchema) -> dict[object, list[tuple[str, int]]] | None:
    """Type parameter -> the node's slots bound to it (("in"|"out", index)); None if the
    node has more slots than the schema can bind."""
    params = {c.type_param_str for c in schema.type_constraints}
    out: dict[object, list[tuple[str, int]]] = {}
    for kind, names, formals in (("in", node.input, schema.inputs), ("out", node.output, schema.outputs)):
        for i, name in enumerate(names):
            if not name:
                continue
            if i < len(formals):
                formal = formals[i]
            elif formals and formals[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
                formal = formals[-1]
            else:
                return None
            key: object = formal.type_str
            if key not in params:
                continue  # a concrete type: never changes
            if (formal.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
                    and not formal.is_homogeneous):
                key = (key, kind, i)
            out.setdefault(key, []).append((kind, i))
    return out


def _allowed(schema: onnx.defs.OpSchema, key: object) -> set[str]:
    param = key[0] if isinstance(key, tuple) else key
    for c in schema.type_constraints:
        if c.type_param_str == param:
            return set(c.allowed_type_strs)
    return set()


@dataclass
class _Env:
    """What a graph being converted sees of its enclosing graphs."""

    storage: Callable[[str], int | None]
    opsets: dict[str, int]
    target: int
    keep_ops: frozenset[str]
    keep_nodes: frozenset[str]
    store: ExternalDataStore | None
    result: PrecisionResult
    taken: set[str]
    #: weights with finite values beyond fp16's range: their readers stay fp32 unless clamping
    out_of_range: frozenset[str] = frozenset()


def _convert_graph(g: onnx.GraphProto, ig: onnx.GraphProto, env: _Env, *, main: bool, keep_io: bool,
                   outer_types: Callable[[str], int | None]) -> None:
    """Convert graph ``g`` in place (``ig``: the same graph with inferred types)."""
    target = env.target
    local_types = _graph_types(ig)

    def typ(name: str) -> int | None:
        return local_types.get(name) if name in local_types else outer_types(name)

    init_names = {t.name for t in g.initializer}
    input_names = {vi.name for vi in g.input}
    # per node: the slots that compute in the target type
    converted_slots: list[set[tuple[str, int]]] = []
    flexible: dict[str, int] = {}  # value -> node index of a Constant / Cast(to=FLOAT) producer
    for k, node in enumerate(g.node):
        slots: set[tuple[str, int]] = set()
        converted_slots.append(slots)
        domain = "" if node.domain == "ai.onnx" else node.domain
        has_body = any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)
        if has_body:
            continue
        if node.op_type in env.keep_ops or node_label(node, k) in env.keep_nodes:
            env.result.kept.append(node_label(node, k))
            continue
        big = [n for n in node.input if n in env.out_of_range]
        if big:
            env.result.notes.append(f"{node_label(node, k)} stays in fp32: it reads {big[0]!r}, whose values "
                                    "exceed fp16's range (clamp=True converts it anyway)")
            continue
        if domain == "" and node.op_type == "Constant" and node.output and typ(node.output[0]) == F32:
            flexible[node.output[0]] = k
            continue
        if domain == "" and node.op_type == "Cast" and node.output and any(
                a.name == "to" and a.i == F32 for a in node.attribute):
            flexible[node.output[0]] = k
            continue
        version = env.opsets.get(domain)
        schema = get_schema(node.op_type, domain, version) if version is not None else None
        if schema is None:
            continue
        if domain == "" and node.op_type == "ConstantOfShape" and node.output and typ(node.output[0]) == F32 \
                and _TYPE_STR[target] in _allowed(schema, schema.outputs[0].type_str):
            flexible[node.output[0]] = k  # a weight made at run time: its value attribute sets the type
            continue
        bound = _bindings(node, schema)
        if bound is None:
            continue
        for key, members in bound.items():
            if not any(kind == "in" for kind, _ in members):
                continue  # set by an attribute (Cast's to, ConstantOfShape ...), not by inputs
            if _TYPE_STR[target] not in _allowed(schema, key):
                continue
            names = [(node.input if kind == "in" else node.output)[i] for kind, i in members]
            if all(typ(n) == F32 for n in names):
                slots.update(members)
        if slots:
            env.result.converted.append(node_label(node, k))

    # who wants what: value -> wanted types of its readers in this graph
    wants: dict[str, list[int | None]] = {}
    for k, node in enumerate(g.node):
        for i, name in enumerate(node.input):
            if name:
                wants.setdefault(name, []).append(target if ("in", i) in converted_slots[k] else typ(name))
        for sub in _bodies(node):
            for name in _captured(sub):
                wants.setdefault(name, []).append(typ(name))
    for vi in g.output:
        wants.setdefault(vi.name, []).append(target if (main and not keep_io) else typ(vi.name))

    def all_want_target(name: str) -> bool:
        w = wants.get(name, [])
        return bool(w) and all(t == target for t in w)

    storage: dict[str, int] = {}
    for vi in g.input:
        t = typ(vi.name)
        if t is not None:
            # an input becomes fp16 only where something reads it in fp16 (else a Cast right back)
            to_target = t == F32 and main and not keep_io and vi.name not in init_names and \
                any(w == target for w in wants.get(vi.name, []))
            storage[vi.name] = target if to_target else t
    # initializers listed as inputs too (IR < 4 requires it) are weights with an override
    convert_inits = {n for n in init_names if typ(n) == F32 and all_want_target(n)}
    for n in init_names:
        t = typ(n)
        if t is not None:
            storage[n] = target if n in convert_inits else t
    for k, node in enumerate(g.node):
        for i, name in enumerate(node.output):
            if not name:
                continue
            t = typ(name)
            if ("out", i) in converted_slots[k]:
                storage[name] = target
            elif name in flexible and all_want_target(name):
                storage[name] = target
            elif t is not None:
                storage[name] = t

    def stored(name: str) -> int | None:
        return storage[name] if name in storage else env.storage(name)

    # graph outputs that must keep their type but are produced in the target type
    out_types = {vi.name: typ(vi.name) for vi in g.output}
    renamed: dict[str, str] = {}
    for vi in g.output:
        want = target if (main and not keep_io) else out_types[vi.name]
        have = storage.get(vi.name)
        if want is not None and have is not None and have != want and have in FLOATS and want in FLOATS \
                and vi.name not in init_names and vi.name not in input_names:
            renamed[vi.name] = fresh_name(f"{vi.name}_{_suffix(target)}", env.taken)
            env.taken.add(renamed[vi.name])
            storage[renamed[vi.name]] = have

    # rewrite the node list with Casts at the boundaries, in topological order
    cast_cache: dict[tuple[str, int], str] = {}
    new_nodes: list[onnx.NodeProto] = []
    inner_env = _Env(stored, env.opsets, target, env.keep_ops, env.keep_nodes, env.store, env.result, env.taken,
                     env.out_of_range)

    def cast_to(name: str, want: int) -> str:
        key = (name, want)
        if key not in cast_cache:
            out = fresh_name(f"{name}_to_{_suffix(want)}", env.taken)
            env.taken.add(out)
            new_nodes.append(onnx.helper.make_node("Cast", [name], [out], to=want,
                                                   name=fresh_name(f"Cast_{out}", env.taken)))
            env.taken.add(new_nodes[-1].name)
            env.result.casts += 1
            cast_cache[key] = out
        return cast_cache[key]

    for k, node in enumerate(g.node):
        new = onnx.NodeProto()
        new.CopyFrom(node)
        for i, name in enumerate(node.input):
            if not name:
                continue
            src = renamed.get(name, name)
            want = target if ("in", i) in converted_slots[k] else typ(name)
            have = stored(src)
            if want is not None and have is not None and want != have and want in FLOATS and have in FLOATS:
                src = cast_to(src, want)
            new.input[i] = src
        for i, name in enumerate(node.output):
            if name in renamed:
                new.output[i] = renamed[name]
        if node.output and node.output[0] in flexible and storage.get(node.output[0]) == target:
            _retarget_flexible(new, target, env)
        for a, ia in zip(new.attribute, _matching_attrs(node, ig.node[k] if k < len(ig.node) else None)):
            if a.type == onnx.AttributeProto.GRAPH:
                _convert_graph(a.g, ia.g if ia is not None else a.g, inner_env, main=False, keep_io=True,
                               outer_types=typ)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for j, sub in enumerate(a.graphs):
                    isub = ia.graphs[j] if ia is not None and j < len(ia.graphs) else sub
                    _convert_graph(sub, isub, inner_env, main=False, keep_io=True, outer_types=typ)
        new_nodes.append(new)
        for name in node.output:
            if name in renamed:
                back = onnx.helper.make_node("Cast", [renamed[name]], [name], to=out_types[name],
                                             name=fresh_name(f"Cast_{name}", env.taken))
                env.taken.add(back.name)
                new_nodes.append(back)
                env.result.casts += 1
    del g.node[:]
    g.node.extend(new_nodes)

    # declared types follow the stored ones
    for t in g.initializer:
        if t.name in convert_inits:
            t.CopyFrom(_convert_tensor(t, target, env, f"weight {t.name!r}"))
            env.result.weights += 1
    for vi in [*g.input, *g.value_info]:
        st = storage.get(vi.name)
        if st is not None and vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type == F32 and st != F32:
            vi.type.tensor_type.elem_type = st
    if main and not keep_io:
        for vi in g.output:
            st = storage.get(vi.name)
            if st is not None and vi.type.HasField("tensor_type") and st in FLOATS:
                vi.type.tensor_type.elem_type = st
    # value_info of values that a rename moved: the old name is the fp32 Cast output now
    for vi in g.value_info:
        if vi.name in renamed and vi.type.HasField("tensor_type"):
            vi.type.tensor_type.elem_type = out_types[vi.name] or vi.type.tensor_type.elem_type


def _suffix(t: int) -> str:
    return {TensorProto.FLOAT16: "fp16", TensorProto.BFLOAT16: "bf16", F32: "fp32"}.get(t, str(t))


def _bodies(node: onnx.NodeProto) -> Iterable[onnx.GraphProto]:
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _captured(g: onnx.GraphProto) -> list[str]:
    from editor.passes.extract import captured_names

    return captured_names(g)


def _matching_attrs(node: onnx.NodeProto, inode: onnx.NodeProto | None) -> list[onnx.AttributeProto | None]:
    if inode is None or len(inode.attribute) != len(node.attribute):
        return [None] * len(node.attribute)
    return list(inode.attribute)


def _retarget_flexible(node: onnx.NodeProto, target: int, env: _Env) -> None:
    """A Constant's value or a Cast's ``to`` in the target type."""
    if node.op_type == "Cast":
        for a in node.attribute:
            if a.name == "to":
                a.i = target
        return
    if node.op_type == "ConstantOfShape" and not any(a.name == "value" for a in node.attribute):
        node.attribute.append(onnx.helper.make_attribute("value", _convert_array(
            np.zeros(1, np.float32), target, env, "", "")))  # the default value is a float32 zero
        return
    for k, a in enumerate(node.attribute):
        where = f"constant {node.output[0]!r}"
        if a.name == "value":
            a.t.CopyFrom(_convert_tensor(a.t, target, env, where))
        elif a.name in ("value_float", "value_floats"):
            arr = np.array(a.f if a.name == "value_float" else list(a.floats), dtype=np.float32)
            tensor = _convert_array(arr, target, env, where, "")
            node.attribute.remove(a)
            node.attribute.insert(k, onnx.helper.make_attribute("value", tensor))
        else:
            continue
        env.result.weights += 1
        return


def _convert_tensor(t: TensorProto, target: int, env: _Env, where: str) -> TensorProto:
    try:
        arr = np.asarray(tensor_to_numpy(t, env.store), dtype=np.float32)
    except Exception as exc:  # noqa: BLE001 - unreadable weights are refused, not guessed
        raise CommandError(f"cannot read {where}: {exc}") from exc
    if uses_external_data(t):
        env.result.inlined += 1
    out = _convert_array(arr, target, env, where, t.name)
    if t.doc_string:
        out.doc_string = t.doc_string
    return out


def _convert_array(arr: np.ndarray, target: int, env: _Env, where: str, name: str) -> TensorProto:
    if target == TensorProto.FLOAT16:
        finite = np.isfinite(arr)
        over = finite & (np.abs(arr) > FP16_MAX)
        if over.any():
            env.result.notes.append(f"{where}: {int(over.sum())} value(s) beyond fp16's range clamped to ±65504 "
                                    f"(largest {float(np.abs(arr[over]).max()):.4g})")
            arr = np.where(over, np.sign(arr) * FP16_MAX, arr).astype(np.float32)
    return numpy_to_tensor(arr, name, elem_type=target)


# ----------------------------------------------------------------------------- entry


def convert_precision(model: onnx.ModelProto, *, target: int = TensorProto.FLOAT16, keep_io_types: bool = False,
                      keep_ops: Iterable[str] = (), keep_nodes: Iterable[str] = (),
                      store: ExternalDataStore | None = None, clamp: bool = False) -> PrecisionResult:
    """A converted copy of ``model`` (the argument is not changed).

    Weights with finite values beyond fp16's range keep their readers in fp32 (noted); with
    ``clamp`` they are clamped to ±65504 instead (also noted).
    """
    if target not in _TYPE_STR:
        raise CommandError(f"cannot convert to element type {target}: choose float16 or bfloat16")
    keep_ops, keep_nodes = frozenset(keep_ops), frozenset(keep_nodes)
    all_ops = {n.op_type for n in _all_nodes(model.graph)}
    unknown = sorted(keep_ops - all_ops)
    if unknown:
        raise CommandError(f"no node of op type {', '.join(map(repr, unknown))} in the model")
    names = {n.name for n in _all_nodes(model.graph)} | {node_label(n, k) for k, n in enumerate(model.graph.node)}
    missing = sorted(keep_nodes - names)
    if missing:
        raise CommandError(f"no node named {', '.join(map(repr, missing))}")
    out = onnx.ModelProto()
    out.CopyFrom(model)
    result = PrecisionResult(out, target)
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    taken = {n for node in _all_nodes(model.graph) for n in [*node.input, *node.output, node.name]}
    taken |= {vi.name for vi in [*model.graph.input, *model.graph.output]} | {t.name for t in model.graph.initializer}
    big = frozenset() if (clamp or target != TensorProto.FLOAT16) else _out_of_range(model, store)
    env = _Env(lambda _n: None, opsets, target, keep_ops, keep_nodes, store, result, taken, big)
    _convert_graph(out.graph, _inferred(model).graph, env, main=True, keep_io=keep_io_types,
                   outer_types=lambda _n: None)
    if result.casts and "" not in opsets:
        from editor.surgery.io_types import ensure_default_opset

        ensure_default_opset(out, 13)
        result.notes.append("the model imported no default ONNX domain; it now imports opset 13 for its Casts")
        opsets[""] = 13
    if target == TensorProto.BFLOAT16 and opsets.get("", 0) < 13 and result.casts:
        raise CommandError(f"bfloat16 Casts need opset 13 or newer; the model is at opset {opsets.get('', 0)}")
    if result.inlined:
        result.notes.append(f"{result.inlined} converted weight(s) were stored outside the model; their "
                            f"{_suffix(target)} copies are inline until saved with external data")
    if not result.converted and not result.weights:
        result.notes.append("no node can compute in the target type at this opset (nothing changed)")
    return result


def _out_of_range(model: onnx.ModelProto, store: ExternalDataStore | None) -> frozenset[str]:
    """Names of float32 weights (initializers, Constant outputs, any graph) beyond fp16's range."""
    found: set[str] = set()

    def big(t: TensorProto) -> bool:
        if t.data_type != F32:
            return False
        try:
            arr = np.asarray(tensor_to_numpy(t, store))
        except Exception:  # noqa: BLE001 - unreadable: the conversion itself will say so
            return False
        finite = arr[np.isfinite(arr)]
        return bool(finite.size) and float(np.abs(finite).max()) > FP16_MAX

    def walk(g: onnx.GraphProto) -> None:
        found.update(t.name for t in g.initializer if big(t))
        for n in g.node:
            if n.op_type == "Constant" and n.output:
                for a in n.attribute:
                    if (a.name == "value" and big(a.t)) or (a.name == "value_float" and abs(a.f) > FP16_MAX) or (
                            a.name == "value_floats" and any(abs(v) > FP16_MAX for v in a.floats)):
                        found.add(n.output[0])
            for sub in _bodies(n):
                walk(sub)

    walk(model.graph)
    return frozenset(found)


def _all_nodes(g: onnx.GraphProto) -> Iterable[onnx.NodeProto]:
    for n in g.node:
        yield n
        for sub in _bodies(n):
            yield from _all_nodes(sub)


class ConvertPrecision(Command):
    """Convert the document to fp16 / bf16 (see the module docstring) as one undo step."""

    def __init__(self, target: str = "fp16", *, keep_io_types: bool = False, keep_ops: Iterable[str] = (),
                 keep_nodes: Iterable[str] = (), clamp: bool = False) -> None:
        super().__init__()
        self.clamp = clamp
        if target not in TARGETS:
            raise CommandError(f"unknown precision {target!r}: choose {' or '.join(TARGETS)}")
        self.target, self.keep_io_types = target, keep_io_types
        self.keep_ops, self.keep_nodes = list(keep_ops), list(keep_nodes)
        self.label = f"Convert to {target}"
        self.result: PrecisionResult | None = None

    def run(self, doc: Document, tx: Transaction) -> None:
        from editor.passes.apply import ApplyModel

        self.result = convert_precision(doc.model, target=TARGETS[self.target], keep_io_types=self.keep_io_types,
                                        keep_ops=self.keep_ops, keep_nodes=self.keep_nodes, store=doc.store,
                                        clamp=self.clamp)
        ApplyModel(self.result.model, self.label).run(doc, tx)
