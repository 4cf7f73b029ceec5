"""How ONNX types read as text, in one place for every view and message.

Element types use numpy-like lower-case names (``float32``, ``int64``, ``bfloat16``,
``float8e4m3fn``, ``int4``, ``string``); tensor types read ``float32[1,3,224,224]`` with
symbolic dims by name and ``?`` for unknown ones; ``float32[...]`` when the rank is unknown.
"""

from __future__ import annotations

from functools import lru_cache

import onnx

Dim = int | str | None

_NUMPY_NAMES = {"float": "float32", "double": "float64"}


@lru_cache(maxsize=64)
def dtype_name(elem_type: int) -> str:
    """``TensorProto.FLOAT`` -> ``"float32"``; ``"?"`` for UNDEFINED (0)."""
    if elem_type == onnx.TensorProto.UNDEFINED:
        return "?"
    try:
        name = onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"unknown type {elem_type}"
    return _NUMPY_NAMES.get(name, name)


def shape_dims(tp: onnx.TypeProto) -> list[Dim] | None:
    """Dims of a (sparse) tensor type: ints, symbolic names, None for unknown; None if unranked."""
    which = tp.WhichOneof("value")
    if which not in ("tensor_type", "sparse_tensor_type"):
        return None
    t = getattr(tp, which)
    if not t.HasField("shape"):
        return None
    out: list[Dim] = []
    for d in t.shape.dim:
        kind = d.WhichOneof("value")
        out.append(int(d.dim_value) if kind == "dim_value" else d.dim_param if kind == "dim_param" else None)
    return out


def dims_text(dims: list[Dim] | None, sep: str = ",") -> str:
    """``[1,3,"N"]`` -> ``"1,3,N"`` (``?`` for unknown dims); ``"..."`` for an unknown rank."""
    if dims is None:
        return "..."
    return sep.join("?" if d is None else str(d) for d in dims)


def type_text(tp: onnx.TypeProto | None) -> str:
    """``float32[1,3,224,224]``, ``seq(float32[...])``, ``map(int64,float32)``, ``optional(...)``."""
    if tp is None:
        return ""
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        text = f"{dtype_name(getattr(tp, which).elem_type)}[{dims_text(shape_dims(tp))}]"
        return f"sparse {text}" if which == "sparse_tensor_type" else text
    if which == "sequence_type":
        return f"seq({type_text(tp.sequence_type.elem_type)})"
    if which == "map_type":
        return f"map({dtype_name(tp.map_type.key_type)},{type_text(tp.map_type.value_type)})"
    if which == "optional_type":
        return f"optional({type_text(tp.optional_type.elem_type)})"
    if which == "opaque_type":
        o = tp.opaque_type
        return f"opaque({o.domain + '.' if o.domain else ''}{o.name})"
    return "(untyped)"


def tensor_text(t: onnx.TensorProto) -> str:
    """``float32[64,3,7,7]`` for an initializer or Constant tensor."""
    return f"{dtype_name(t.data_type)}[{dims_text(list(t.dims))}]"
