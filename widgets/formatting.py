"""Text for what panels show: types, shapes, attribute values, sizes.

Pure functions over protobuf messages and numbers (no Qt), shared by the panels so that a
type reads the same everywhere: ``float32[1,3,224,224]``, ``seq(map(int64,float32))``.
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, TensorProto, TypeProto

MAX_LIST = 24
MAX_TEXT = 200


def dtype_name(elem_type: int) -> str:
    if elem_type == 0:
        return "?"
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name if elem_type not in _SPECIAL else _SPECIAL[elem_type]
    except Exception:  # noqa: BLE001 - float8 / int4 / float4 have no plain numpy dtype
        try:
            return TensorProto.DataType.Name(elem_type).lower()
        except ValueError:
            return f"dtype{elem_type}"


_SPECIAL = {TensorProto.STRING: "string", TensorProto.BOOL: "bool", TensorProto.BFLOAT16: "bfloat16"}


def dims_text(shape) -> str:
    dims = []
    for d in shape.dim:
        if d.HasField("dim_value"):
            dims.append(str(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append("?")
    return "[" + ",".join(dims) + "]"


def type_text(tp: TypeProto | None) -> str:
    """``float32[1,3,224,224]``, ``float32`` (rank unknown), ``seq(...)``, ``map(k,v)``."""
    if tp is None:
        return ""
    which = tp.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        tt = getattr(tp, which)
        text = dtype_name(tt.elem_type)
        if tt.HasField("shape"):
            text += dims_text(tt.shape)
        return f"sparse {text}" if which == "sparse_tensor_type" else text
    if which == "sequence_type":
        return f"seq({type_text(tp.sequence_type.elem_type)})"
    if which == "map_type":
        return f"map({dtype_name(tp.map_type.key_type)},{type_text(tp.map_type.value_type)})"
    if which == "optional_type":
        return f"optional({type_text(tp.optional_type.elem_type)})"
    return ""


def tensor_text(t: TensorProto) -> str:
    shape = "[" + ",".join(str(d) for d in t.dims) + "]"
    return f"{dtype_name(t.data_type)}{shape}"


def human_bytes(n: int | float) -> str:
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def human_count(n: int) -> str:
    if n >= 1_000_000_000:
        return f"{n / 1e9:.2f} G"
    if n >= 1_000_000:
        return f"{n / 1e6:.2f} M"
    if n >= 10_000:
        return f"{n / 1e3:.1f} K"
    return str(n)


def _short_list(values, fmt=str) -> str:
    values = list(values)
    body = ", ".join(fmt(v) for v in values[:MAX_LIST])
    if len(values) > MAX_LIST:
        body += f", … ({len(values)} items)"
    return f"[{body}]"


def _fmt_float(v: float) -> str:
    return f"{v:.6g}"


def _fmt_bytes(b: bytes) -> str:
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        return repr(b)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + "…"
    return repr(text)


def attribute_text(attr: AttributeProto) -> str:
    """One line for an attribute value; tensors and graphs are summarised, not dumped."""
    A = AttributeProto
    if attr.ref_attr_name:
        return f"@{attr.ref_attr_name}"
    t = attr.type
    if t == A.INT:
        return str(attr.i)
    if t == A.FLOAT:
        return _fmt_float(attr.f)
    if t == A.STRING:
        return _fmt_bytes(attr.s)
    if t == A.INTS:
        return _short_list(attr.ints)
    if t == A.FLOATS:
        return _short_list(attr.floats, _fmt_float)
    if t == A.STRINGS:
        return _short_list(attr.strings, _fmt_bytes)
    if t == A.TENSOR:
        return f"tensor {tensor_text(attr.t)}" + _tensor_preview(attr.t)
    if t == A.TENSORS:
        return _short_list(attr.tensors, lambda x: tensor_text(x))
    if t == A.GRAPH:
        return f"graph '{attr.g.name}' ({len(attr.g.node)} nodes)"
    if t == A.GRAPHS:
        return _short_list(attr.graphs, lambda g: f"graph '{g.name}'")
    if t == A.SPARSE_TENSOR:
        return f"sparse tensor {list(attr.sparse_tensor.dims)}"
    if t == A.TYPE_PROTO:
        return type_text(attr.tp)
    if t == A.TYPE_PROTOS:
        return _short_list(attr.type_protos, type_text)
    return "?"


def _tensor_preview(t: TensorProto) -> str:
    """`` = [1, 2, 3]`` for tensors of at most a few elements stored inline."""
    count = 1
    for d in t.dims:
        count *= d
    if count > 8 or t.data_location == TensorProto.EXTERNAL:
        return ""
    try:
        from onnx import numpy_helper

        arr = numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - exotic dtypes: no preview
        return ""
    values = arr.ravel().tolist()
    if t.data_type in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16):
        return " = " + _short_list(values, _fmt_float) if arr.ndim else f" = {_fmt_float(values[0])}"
    return " = " + (_short_list(values) if arr.ndim else str(values[0]))


def attribute_search_texts(attr: AttributeProto) -> list[str]:
    """Every scalar of an attribute as text, for Find (``kernel_shape`` -> ["3", "3"])."""
    A = AttributeProto
    t = attr.type
    if t == A.INT:
        return [str(attr.i)]
    if t == A.FLOAT:
        return [_fmt_float(attr.f)]
    if t == A.STRING:
        return [attr.s.decode("utf-8", "replace")]
    if t == A.INTS:
        return [str(v) for v in attr.ints] + [attribute_text(attr)]
    if t == A.FLOATS:
        return [_fmt_float(v) for v in attr.floats] + [attribute_text(attr)]
    if t == A.STRINGS:
        return [s.decode("utf-8", "replace") for s in attr.strings]
    return [attribute_text(attr)]
