"""Values that flow into and out of a run: tensors and the ONNX non-tensor kinds.

A *value* here is what the backends exchange with Python:

- a tensor: ``np.ndarray`` (strings as ``object`` arrays of ``str``, the onnxruntime
  convention; bfloat16/float8/int4 ... as ``ml_dtypes`` arrays);
- a sequence: ``list`` of values;
- a map: ``dict`` of scalar key -> value;
- an optional: the contained value, or ``None`` when empty.

This module converts between those and ONNX protos (``.pb`` files of the backend suite and
user input files), names ONNX element types, and compares values the way the ONNX backend
test runner does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from editor.errors import RuntimeBackendError

__all__ = [
    "Value",
    "describe_type",
    "elem_type_name",
    "is_tensor",
    "load_value_file",
    "load_value_proto",
    "normalize_value",
    "numpy_dtype_for",
    "type_kind",
    "values_close",
]

Value = Any  # np.ndarray | list[Value] | dict[Any, Value] | None

# ONNX element types with no plain numpy dtype: onnxruntime's Python binding cannot accept
# or return them as numpy arrays (it passes some as raw bytes through OrtValue, see
# backends.py), and packed sub-byte types cannot be passed at all.
SUB_BYTE_TYPES: frozenset[int] = frozenset(
    t
    for t in (
        getattr(onnx.TensorProto, name, None)
        for name in ("INT4", "UINT4", "INT2", "UINT2", "FLOAT4E2M1")
    )
    if t is not None
)


def elem_type_name(elem_type: int) -> str:
    """``TensorProto.FLOAT`` -> ``'float'`` (lower case, as in ``tensor(float)``)."""
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"unknown type {elem_type}"


def numpy_dtype_for(elem_type: int) -> np.dtype:
    """The numpy (or ml_dtypes) dtype that holds ONNX ``elem_type``; ``object`` for strings."""
    if elem_type == onnx.TensorProto.STRING:
        return np.dtype(object)
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError):
        raise RuntimeBackendError(f"element {elem_type_name(elem_type)} has no numpy type") from None


def type_kind(tp: onnx.TypeProto) -> str:
    """'tensor', 'sparse_tensor', 'sequence', 'map', 'optional' or 'unknown'."""
    which = tp.WhichOneof("value")
    return {
        "tensor_type": "tensor",
        "sparse_tensor_type": "sparse_tensor",
        "sequence_type": "sequence",
        "map_type": "map",
        "optional_type": "optional",
    }.get(which or "", "unknown")


def describe_type(tp: onnx.TypeProto) -> str:
    """A short human-readable type, e.g. ``tensor(float)[N,3]`` or ``seq(map(int64,float))``."""
    kind = type_kind(tp)
    if kind == "tensor":
        tt = tp.tensor_type
        dims = []
        if tt.HasField("shape"):
            for d in tt.shape.dim:
                dims.append(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?"))
            return f"tensor({elem_type_name(tt.elem_type)})[{','.join(dims)}]"
        return f"tensor({elem_type_name(tt.elem_type)})"
    if kind == "sequence":
        return f"seq({describe_type(tp.sequence_type.elem_type)})"
    if kind == "map":
        return (
            f"map({elem_type_name(tp.map_type.key_type)},"
            f"{describe_type(tp.map_type.value_type)})"
        )
    if kind == "optional":
        return f"optional({describe_type(tp.optional_type.elem_type)})"
    if kind == "sparse_tensor":
        return f"sparse_tensor({elem_type_name(tp.sparse_tensor_type.elem_type)})"
    return "unknown"


def is_tensor(value: Value) -> bool:
    return isinstance(value, np.ndarray)


def normalize_value(value: Value) -> Value:
    """Bring a backend's value to the shared conventions (see module docstring).

    numpy unicode/bytes arrays become ``object`` arrays of ``str`` (the reference evaluator
    returns ``<U9`` where onnxruntime returns ``object``), numpy scalars become 0-d arrays,
    and containers are normalized recursively.
    """
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "U":
            return value.astype(object)
        if value.dtype.kind == "S":
            return np.vectorize(lambda b: b.decode("utf-8"), otypes=[object])(value) if value.size else value.astype(object)
        return value
    if isinstance(value, np.generic):
        return normalize_value(np.asarray(value))
    if isinstance(value, (list, tuple)):
        return [normalize_value(v) for v in value]
    if isinstance(value, dict):
        return {(k.item() if isinstance(k, np.generic) else k): normalize_value(v) for k, v in value.items()}
    return value


def load_value_proto(data: bytes, tp: onnx.TypeProto | None = None) -> Value:
    """Parse a serialized TensorProto / SequenceProto / MapProto / OptionalProto.

    ``tp`` (the graph's declared type for that value) says which proto it is; without it the
    bytes are read as a TensorProto.
    """
    kind = type_kind(tp) if tp is not None else "tensor"
    if kind == "sequence":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return normalize_value(numpy_helper.to_list(proto))
    if kind == "map":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return normalize_value(numpy_helper.to_dict(proto))
    if kind == "optional":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return normalize_value(numpy_helper.to_optional(proto))
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return normalize_value(numpy_helper.to_array(proto))


def load_value_file(path: str | Path, tp: onnx.TypeProto | None = None) -> Value:
    return load_value_proto(Path(path).read_bytes(), tp)


def _as_float64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def values_close(actual: Value, expected: Value, *, rtol: float = 1e-3, atol: float = 1e-5) -> str | None:
    """``None`` when ``actual`` matches ``expected``, else a one-line reason.

    Tensors must agree in dtype and shape; numbers are compared like
    ``np.testing.assert_allclose`` (NaNs in the same places count as equal), strings exactly.
    Sequences, maps and optionals are compared element by element.
    """
    if expected is None:
        return None if actual is None else f"expected an empty optional, got {type(actual).__name__}"
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"expected a sequence, got {type(actual).__name__}"
        if len(actual) != len(expected):
            return f"sequence length {len(actual)} != expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            why = values_close(a, e, rtol=rtol, atol=atol)
            if why:
                return f"[{i}]: {why}"
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"expected a map, got {type(actual).__name__}"
        if set(actual) != set(expected):
            return f"map keys {sorted(actual)[:5]} != expected {sorted(expected)[:5]}"
        for k in expected:
            why = values_close(actual[k], expected[k], rtol=rtol, atol=atol)
            if why:
                return f"[{k!r}]: {why}"
        return None
    exp = np.asarray(expected)
    if not isinstance(actual, np.ndarray):
        if actual is None:
            return "got an empty value"
        actual = np.asarray(actual)
    if actual.dtype != exp.dtype:
        return f"dtype {actual.dtype} != expected {exp.dtype}"
    if actual.shape != exp.shape:
        return f"shape {actual.shape} != expected {exp.shape}"
    if exp.dtype.kind in "OUSb":
        if not np.array_equal(actual, exp):
            return "values differ"
        return None
    if exp.dtype.kind == "c":
        a64, e64 = actual.astype(np.complex128), exp.astype(np.complex128)
        both_nan = np.isnan(a64) & np.isnan(e64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a64 - e64)
            ok = (diff <= atol + rtol * np.abs(e64)) | both_nan | (a64 == e64)
        return None if ok.all() else f"{int((~ok).sum())} of {ok.size} complex values differ beyond rtol={rtol}, atol={atol}"
    a64, e64 = _as_float64(actual), _as_float64(exp)
    both_nan = np.isnan(a64) & np.isnan(e64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a64 - e64)
        ok = (diff <= atol + rtol * np.abs(e64)) | both_nan | (a64 == e64)
    if not ok.all():
        bad = int((~ok).sum())
        return f"{bad} of {ok.size} values differ beyond rtol={rtol}, atol={atol} (max abs diff {np.nanmax(np.where(ok, 0, diff)):.3g})"
    return None
