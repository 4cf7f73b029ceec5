"""Text for what panels show: types, shapes, attribute values, sizes.

Pure functions over protobuf messages and numbers (no Qt), shared by the panels so that a
type reads the same everywhere: ``float32[1,3,224,224]``, ``seq(map(int64,float32))``.
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, TensorProto, TypeProto

from editor.types import dims_text, dtype_name, tensor_text, type_text  # noqa: F401 - re-exported for panels

MAX_LIST = 24
MAX_TEXT = 200


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


# -- file names that are not UTF-8 ------------------------------------------------------------
# NOTE: Python reads such names with surrogate escapes ('\udcff'); Qt strings cannot hold
# them (PySide drops or refuses them). Shown: with U+FFFD. Kept (settings, item data): as
# the file name's bytes in hex, so "recent files" opens the real file again.

_BYTES_PREFIX = "fsbytes:"


def shown(text: str) -> str:
    """``text`` fit for a Qt label: undecodable bytes of a file name become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def path_for_qt(path: str) -> str:
    """A path as a Qt string that :func:`path_from_qt` turns back into the same path."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return _BYTES_PREFIX + path.encode("utf-8", "surrogateescape").hex()
    return path


def path_from_qt(text: str) -> str:
    if text.startswith(_BYTES_PREFIX):
        try:
            return bytes.fromhex(text[len(_BYTES_PREFIX):]).decode("utf-8", "surrogateescape")
        except ValueError:
            return text
    return text
