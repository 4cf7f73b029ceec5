"""Types and shapes of one node's neighbourhood, through the op's own inference function.

The node's input types come from what the model *declares* (graph inputs, value_info,
initializers) in its graph or an enclosing one; ``onnx.shape_inference`` infers the output
types (checking the inputs against the op's type constraints on the way), and those are
compared with the outputs' declared types.

NOTE: only declared types feed the inference, never types inferred for upstream nodes, so
a check depends on the node and the declarations of its own inputs and outputs: an edit
re-checks a bounded neighbourhood instead of a cascade down the graph. Nodes whose inputs
are not all declared are not type-checked live; the background full check covers them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import onnx
from onnx import defs

from editor.validation.declared import compare_declared, negative_dims
from editor.validation.problems import ERROR, WARNING
from editor.types import type_text

if TYPE_CHECKING:
    from editor.validation.validator import Validator

try:  # the C++ errors the inference raises (names stable since onnx 1.10)
    from onnx.checker import ValidationError
    from onnx.shape_inference import InferenceError
except ImportError:  # pragma: no cover - very old onnx
    ValidationError = InferenceError = Exception  # type: ignore[misc,assignment]


@lru_cache(maxsize=4096)
def initializer_type(data_type: int, dims: tuple[int, ...]) -> bytes:
    tp = onnx.TypeProto()
    tp.tensor_type.elem_type = data_type
    tp.tensor_type.shape.SetInParent()
    for d in dims:
        tp.tensor_type.shape.dim.add().dim_value = d
    return tp.SerializeToString()


def declared_type(v: Validator, sid: int, name: str) -> bytes | None:
    """The declared type of ``name`` as seen from scope ``sid`` (serialized), if any."""
    while sid is not None:
        ss = v.scopes[sid]
        found = ss.declared(name)
        if found:
            return found
        it = ss.init_type(name)
        if it is not None:
            return initializer_type(*it)
        prods = ss.producers.get(name)
        if prods:
            if len(prods) == 1:
                (nid,) = prods
                node = v.doc.index.nodes.get(nid)
                if node is not None and node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                    return constant_type(node)
            return None  # computed here, without a declared type
        if name in ss.input_set:
            return None  # defined here, without a declared type
        sid = ss.parent
    return None


_CONSTANT_SCALARS = {
    "value_float": (onnx.TensorProto.FLOAT, False), "value_floats": (onnx.TensorProto.FLOAT, True),
    "value_int": (onnx.TensorProto.INT64, False), "value_ints": (onnx.TensorProto.INT64, True),
    "value_string": (onnx.TensorProto.STRING, False), "value_strings": (onnx.TensorProto.STRING, True),
}


def constant_type(node: onnx.NodeProto) -> bytes | None:
    """The type a Constant node's output has, read from its one value attribute (its own
    inference needs nothing else), or None when the node holds no single value."""
    if len(node.attribute) != 1:
        return None
    attr = node.attribute[0]
    if attr.ref_attr_name:
        return None
    if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
        return initializer_type(attr.t.data_type, tuple(attr.t.dims))
    if attr.name == "sparse_value" and attr.type == onnx.AttributeProto.SPARSE_TENSOR:
        return initializer_type(attr.sparse_tensor.values.data_type, tuple(attr.sparse_tensor.dims))
    kind = _CONSTANT_SCALARS.get(attr.name)
    if kind is None:
        return None
    elem, is_list = kind
    if not is_list:
        return initializer_type(elem, ())
    n = len(attr.floats) if elem == onnx.TensorProto.FLOAT else len(attr.ints) if elem == onnx.TensorProto.INT64 \
        else len(attr.strings)
    return initializer_type(elem, (n,))


@lru_cache(maxsize=8192)
def type_rank(tb: bytes) -> int | None:
    """The rank a serialized tensor type declares (None: not a tensor, or no shape)."""
    tp = onnx.TypeProto.FromString(tb)
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return len(tp.tensor_type.shape.dim)


def infer_and_compare(
    v: Validator, sid: int, node: onnx.NodeProto, schema: defs.OpSchema, label: str
) -> list[tuple[str, str, str, str | None]]:
    """(severity, code, message, value) for the node's type problems."""
    types: dict[str, bytes] = {}
    for name in node.input:
        if not name or name in types:
            continue
        tb = declared_type(v, sid, name)
        if tb is None:
            return []  # an input of unknown type: nothing sound to infer from
        types[name] = tb
    try:
        inferred = schema._infer_node_outputs(  # noqa: SLF001 - the public wrapper re-serializes every call
            node.SerializeToString(), types, {}, {}, v.info.opset_map, v.info.ir_version
        )
    except ValidationError as exc:
        return [(ERROR, "type-mismatch", f"{label}: {_first_line(exc)}", None)]
    except InferenceError as exc:
        return [(ERROR, "shape-inference", f"{label}: {_first_line(exc)}", None)]
    except Exception as exc:  # noqa: BLE001 - some inference functions raise plain ValueErrors
        return [(ERROR, "shape-inference", f"{label}: {_first_line(exc)}", None)]
    out = []
    ss = v.scopes[sid]
    for name, tb in inferred.items():
        declared = ss.declared(name)
        if not declared or declared == tb:
            continue
        inferred_tp, declared_tp = onnx.TypeProto.FromString(tb), onnx.TypeProto.FromString(declared)
        conflict = type_conflict(inferred_tp, declared_tp)
        if conflict and runtime_accepts(inferred_tp, declared_tp):
            out.append((WARNING, "declared-dim", f"{label}: output {name!r} is declared {conflict} "
                        f"({ORT_MERGES})", name))
            continue
        if conflict:
            out.append((ERROR, "type-mismatch", f"{label}: output {name!r} is declared {conflict}", name))
            continue
        # a symbolic dim the op fixes: the model promises what it does not do (a warning:
        # onnx's merge lets a name stand for any size)
        promise = compare_declared(declared_tp, inferred_tp)
        if promise and not negative_dims(declared_tp):
            out.append((WARNING, "declared-dim", f"{label}: output {name!r} {promise}", name))
    return out


#: why a declared shape that contradicts the op's is a warning, not an error
ORT_MERGES = "onnx.checker refuses this, onnxruntime accepts it: it keeps the computed shape"


def runtime_accepts(inferred: onnx.TypeProto, declared: onnx.TypeProto) -> bool:
    """Whether onnxruntime loads a model whose value is declared ``declared`` where its
    producer gives ``inferred``: it does when only the shapes differ (its graph resolve
    merges them with a warning and keeps the computed one: a Constant ``int64[1]`` declared
    ``int64[]``, as onnxruntime-genai's builder writes), never when the element types do."""
    ka, kb = inferred.WhichOneof("value"), declared.WhichOneof("value")
    if ka != "tensor_type" or kb != "tensor_type":
        return False
    ta, tb = inferred.tensor_type, declared.tensor_type
    return not (ta.elem_type and tb.elem_type and ta.elem_type != tb.elem_type)


def constraint_problems(
    v: Validator, sid: int, node: onnx.NodeProto, schema: defs.OpSchema, label: str
) -> list[tuple[str, str, str, str | None]]:
    """Declared input types against the schema's type constraints, for the schemas that
    have no inference function of their own to check them (onnxruntime's contrib ops):
    each input's element type must be one its constraint allows, and the inputs bound to
    one constraint must agree."""
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    bound: dict[str, tuple[str, str]] = {}
    out: list[tuple[str, str, str, str | None]] = []
    formals = list(schema.inputs)
    for k, name in enumerate(node.input):
        if not name or not formals:
            continue
        formal = formals[min(k, len(formals) - 1)]
        if k >= len(formals) and formal.option != defs.OpSchema.FormalParameterOption.Variadic:
            break
        tb = declared_type(v, sid, name)
        if tb is None:
            continue
        text = _type_str(onnx.TypeProto.FromString(tb))
        param = formal.type_str
        if text is None:
            continue
        choices = allowed.get(param, {param} if "(" in param else None)
        if choices is not None and text not in choices:
            out.append((ERROR, "type-mismatch", f"{label}: input {k} {name!r} is {text}, {node.op_type} takes "
                        f"{', '.join(sorted(choices))} there", name))
            continue
        if param in allowed and (formal.option != defs.OpSchema.FormalParameterOption.Variadic
                                 or formal.is_homogeneous):
            first = bound.setdefault(param, (text, name))
            if first[0] != text:
                out.append((ERROR, "type-mismatch", f"{label}: input {k} {name!r} is {text} but "
                            f"{first[1]!r} is {first[0]} (both {param})", name))
    return out


def _type_str(tp: onnx.TypeProto) -> str | None:
    """onnx's type string of a tensor type (``tensor(float)``), None when unknown."""
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.elem_type:
        return None
    try:
        return f"tensor({onnx.helper.tensor_dtype_to_string(tp.tensor_type.elem_type).split('.')[-1].lower()})"
    except (KeyError, ValueError):
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for prefix in ("[ShapeInferenceError]", "[TypeInferenceError]"):
        text = text.replace(prefix, "").strip()
    return text.splitlines()[0] if text else type(exc).__name__


def type_conflict(inferred: onnx.TypeProto, declared: onnx.TypeProto) -> str | None:
    """How ``declared`` contradicts ``inferred`` ("float[2,3] but inferred float[3,2]"),
    or None when they agree where both are known (unknown and symbolic dims agree with
    anything, as in onnx's own merge)."""
    if _conflicts(inferred, declared):
        return f"{type_text(declared)} but the op gives {type_text(inferred)}"
    return None


def _conflicts(a: onnx.TypeProto, b: onnx.TypeProto) -> bool:
    ka, kb = a.WhichOneof("value"), b.WhichOneof("value")
    if ka is None or kb is None:
        return False
    if ka != kb:
        return True
    if ka in ("tensor_type", "sparse_tensor_type"):
        ta, tb = getattr(a, ka), getattr(b, kb)
        if ta.elem_type and tb.elem_type and ta.elem_type != tb.elem_type:
            return True
        if ta.HasField("shape") and tb.HasField("shape"):
            if len(ta.shape.dim) != len(tb.shape.dim):
                return True
            for da, db in zip(ta.shape.dim, tb.shape.dim):
                if da.HasField("dim_value") and db.HasField("dim_value") and da.dim_value != db.dim_value:
                    return True
        return False
    if ka == "sequence_type":
        return _conflicts(a.sequence_type.elem_type, b.sequence_type.elem_type)
    if ka == "optional_type":
        return _conflicts(a.optional_type.elem_type, b.optional_type.elem_type)
    if ka == "map_type":
        return a.map_type.key_type != b.map_type.key_type or _conflicts(a.map_type.value_type, b.map_type.value_type)
    return False
