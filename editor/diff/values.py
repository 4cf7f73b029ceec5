"""Comparing the parts of matched things: attributes, names, functions, tensor values
(chunk by chunk, so external weights are never read whole)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper

from editor.io.tensors import NUMPY_DTYPES, tensor_to_numpy, uses_external_data
from editor.types import tensor_text

if TYPE_CHECKING:
    from editor.io.external import ExternalDataStore
from editor.diff.records import AttributeChange

_CHUNK = 1 << 20  # elements per chunk when comparing tensor values


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


def _attribute_changes(na: onnx.NodeProto, nb: onnx.NodeProto,
                       defaults: Callable[[onnx.NodeProto], dict[str, onnx.AttributeProto]] | None = None,
                       ) -> list[AttributeChange]:
    """Attributes that differ. ``defaults(node)``: the schema's default values of the node's
    op; an attribute written out with its default value on one side only is no change (an
    optimizer or a quantizer's pre-processing writes ``auto_pad: NOTSET`` out)."""
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
        elif defaults is not None and na.op_type == nb.op_type:
            given = x if x is not None else y
            default = defaults(na if x is not None else nb).get(name)
            if default is not None and _same_attribute_value(given, default):
                continue
        out.append(AttributeChange(name, _attr_text(x) if x is not None else None,
                                   _attr_text(y) if y is not None else None))
    return out


def _same_attribute_value(x: onnx.AttributeProto, y: onnx.AttributeProto) -> bool:
    try:
        return helper.get_attribute_value(x) == helper.get_attribute_value(y)
    except Exception:  # noqa: BLE001 - an unreadable attribute is never "the default"
        return False


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
