"""Tensors: element types, payload sizes, numpy conversion and a walk over every tensor.

This module never reads external data by itself: :func:`tensor_to_numpy` asks an
:class:`~editor.io.external.ExternalDataStore` for the bytes of an external tensor, which
hands out a slice of a memory map, so a numpy view over a 2 GB weight costs no copy.

:func:`iter_tensors` finds every ``TensorProto`` of a model (initializers, sparse
initializers, ``Constant``-style attribute tensors, attribute default values of functions,
subgraphs at any depth, training graphs) together with a *path* of ``(field, index)`` keys
from the model down to it; the saver uses those paths to re-encode a model with some tensors
swapped, without touching the caller's proto.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from editor.errors import LoadError

if TYPE_CHECKING:
    from editor.io.external import ExternalDataStore

# Element types whose raw layout packs several elements into one byte.
_PACKED_BITS: dict[int, int] = {
    TensorProto.INT4: 4,
    TensorProto.UINT4: 4,
    TensorProto.FLOAT4E2M1: 4,
    TensorProto.INT2: 2,
    TensorProto.UINT2: 2,
}
for _name, _bits in (("FLOAT6E2M3", 6), ("FLOAT6E3M2", 6)):
    if hasattr(TensorProto, _name):  # onnx >= 1.20 only
        _PACKED_BITS[getattr(TensorProto, _name)] = _bits


def _build_dtype_table() -> dict[int, np.dtype]:
    table: dict[int, np.dtype] = {}
    for name, value in TensorProto.DataType.items():
        if value in (TensorProto.UNDEFINED, TensorProto.STRING):
            continue
        try:
            table[value] = np.dtype(helper.tensor_dtype_to_np_dtype(value))
        except (KeyError, ValueError, TypeError):  # an enum value this onnx cannot map
            continue
    return table


#: ONNX element type -> numpy dtype (ml_dtypes for bfloat16, float8*, int4, int2, float4 ...).
NUMPY_DTYPES: dict[int, np.dtype] = _build_dtype_table()

#: Raw payloads larger than this are absurd (8 EiB); dims that multiply past it are rejected.
MAX_TENSOR_BYTES = 1 << 63

# Fields of a TensorProto that hold the payload; dropped when a tensor is re-encoded.
PAYLOAD_FIELDS = frozenset(
    {
        "raw_data",
        "float_data",
        "int32_data",
        "string_data",
        "int64_data",
        "double_data",
        "uint64_data",
        "external_data",
        "data_location",
    }
)


def dtype_name(elem_type: int) -> str:
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"unknown type {elem_type}"


def element_bits(elem_type: int) -> int:
    """Bits one element of ``elem_type`` takes in the raw (little-endian, packed) layout."""
    if elem_type in _PACKED_BITS:
        return _PACKED_BITS[elem_type]
    dt = NUMPY_DTYPES.get(elem_type)
    if dt is None:
        raise LoadError(f"unknown tensor element type {elem_type!r}")
    return dt.itemsize * 8


def element_count(dims: list[int] | tuple[int, ...], name: str = "") -> int:
    """Product of ``dims``; negative or absurd dims raise :class:`LoadError`."""
    n = 1
    for d in dims:
        if d < 0:
            raise LoadError(f"tensor {name!r} has a negative dim {d} in {list(dims)}")
        n *= d
        if n > MAX_TENSOR_BYTES:
            raise LoadError(f"tensor {name!r} has absurd dims {list(dims)} (more than 2**63 elements)")
    return n


def raw_nbytes(elem_type: int, count: int) -> int:
    """Bytes of ``count`` elements in the raw layout (packed types round up to a byte)."""
    return (count * element_bits(elem_type) + 7) // 8


def uses_external_data(tensor: TensorProto) -> bool:
    return tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL


def external_entries(tensor: TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in tensor.external_data}


def tensor_nbytes(tensor: TensorProto) -> int:
    """Payload size of ``tensor`` in bytes, without reading any data.

    External tensors report their ``length`` entry when present; strings report the sum of
    their byte strings; every other tensor reports dims x element size (packed for 4/2-bit).
    """
    if uses_external_data(tensor):
        length = external_entries(tensor).get("length")
        if length is not None and length.isdigit():
            return int(length)
    if tensor.data_type == TensorProto.STRING:
        return sum(len(s) for s in tensor.string_data)
    count = element_count(tensor.dims, tensor.name)
    if tensor.data_type not in NUMPY_DTYPES and tensor.data_type not in _PACKED_BITS:
        return 0
    return raw_nbytes(tensor.data_type, count)


# ----------------------------------------------------------------------------- numpy


def _unpack_bits(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """Unpack little-end-first sub-byte codes (4 or 2 bits) into one uint8 per element."""
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    out = np.empty(packed.size * per_byte, dtype=np.uint8)
    for k in range(per_byte):
        out[k::per_byte] = (packed >> (k * bits)) & mask
    return out[:count]


def _from_raw(buffer: bytes | memoryview, tensor: TensorProto, where: str) -> np.ndarray:
    elem_type = tensor.data_type
    dims = list(tensor.dims)
    count = element_count(dims, tensor.name)
    need = raw_nbytes(elem_type, count)
    have = len(buffer)
    if have != need:
        raise LoadError(
            f"tensor {tensor.name!r}: {where} has {have} bytes but dims {dims} of "
            f"{dtype_name(elem_type)} need {need}"
        )
    dtype = NUMPY_DTYPES[elem_type]
    bits = _PACKED_BITS.get(elem_type)
    if bits in (4, 2):
        codes = _unpack_bits(np.frombuffer(buffer, dtype=np.uint8), bits, count)
        return codes.view(dtype).reshape(dims)
    if bits is not None:  # 6-bit floats: rare, let onnx unpack them (one copy)
        tmp = TensorProto(data_type=elem_type, dims=dims, raw_data=bytes(buffer))
        return numpy_helper.to_array(tmp)
    # NOTE: zero-copy: a read-only view over the bytes object (inline) or the memory map
    # (external). Raw data is little-endian by the spec; swap only on big-endian hosts.
    array = np.frombuffer(buffer, dtype=dtype.newbyteorder("<"), count=count)
    if sys.byteorder == "big":
        array = array.astype(dtype)
    return array.reshape(dims)


def _decode(value: bytes) -> str | bytes:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value  # not text: keep the bytes rather than guess an encoding


def tensor_to_numpy(tensor: TensorProto, store: ExternalDataStore | None = None) -> np.ndarray:
    """The values of ``tensor`` as a numpy array (ml_dtypes for the exotic element types).

    Inline raw data and external data come back as read-only views without a copy (external:
    a view over the store's memory map, valid while the store is open); packed 4/2-bit types
    are unpacked to one element per byte. Strings come back as an object array of ``str``
    (like onnx.numpy_helper), with ``bytes`` for any element that is not UTF-8.
    Raises :class:`LoadError` (or :class:`ExternalDataError`) on any inconsistency.
    """
    from editor.errors import ExternalDataError

    elem_type = tensor.data_type
    if elem_type == TensorProto.STRING:
        count = element_count(tensor.dims, tensor.name)
        if len(tensor.string_data) != count:
            raise LoadError(
                f"tensor {tensor.name!r}: {len(tensor.string_data)} strings for dims {list(tensor.dims)}"
            )
        out = np.empty(count, dtype=object)
        out[:] = [_decode(s) for s in tensor.string_data]
        return out.reshape(list(tensor.dims))
    if elem_type not in NUMPY_DTYPES:
        raise LoadError(f"tensor {tensor.name!r} has unsupported element type {dtype_name(elem_type)}")
    if tensor.HasField("segment"):
        raise LoadError(f"tensor {tensor.name!r} is a segment; segmented tensors are not supported")
    if uses_external_data(tensor):
        if store is None:
            raise ExternalDataError(f"tensor {tensor.name!r} has external data but no data store was given")
        return _from_raw(store.read_bytes(tensor), tensor, "external data")
    if tensor.HasField("raw_data"):
        return _from_raw(tensor.raw_data, tensor, "raw_data")
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as exc:
        raise LoadError(f"tensor {tensor.name!r}: {str(exc).splitlines()[0]}") from exc


def numpy_to_tensor(array: np.ndarray, name: str, *, elem_type: int | None = None) -> TensorProto:
    """A TensorProto (raw_data, little-endian, packed 4/2-bit) holding ``array``.

    ``elem_type`` converts the values to that ONNX element type first (``astype``, so
    float32 -> FLOAT8E4M3FN rounds like ml_dtypes does); it never reinterprets bits.
    """
    array = np.asarray(array)
    if elem_type is not None:
        if elem_type == TensorProto.STRING:
            array = array.astype(object)
        else:
            target = NUMPY_DTYPES.get(elem_type)
            if target is None:
                raise ValueError(f"unknown ONNX element type {elem_type!r}")
            if array.dtype != target:
                array = array.astype(target)
    tensor = numpy_helper.from_array(array, name)
    if not name:
        tensor.ClearField("name")
    return tensor


# ----------------------------------------------------------------------------- walking

#: A path from the model to a message: ``(field name, index or None)`` per step.
Path_ = tuple[tuple[str, int | None], ...]


@dataclass(frozen=True, slots=True)
class TensorSite:
    """Where a tensor lives: its path from the model and what role it plays."""

    tensor: TensorProto
    path: Path_
    #: "initializer", "sparse" (values/indices of a sparse tensor) or "attribute".
    role: str


_SEARCHED_ATTR_TYPES = frozenset(
    {
        AttributeProto.UNDEFINED,
        AttributeProto.TENSOR,
        AttributeProto.TENSORS,
        AttributeProto.SPARSE_TENSOR,
        AttributeProto.SPARSE_TENSORS,
        AttributeProto.GRAPH,
        AttributeProto.GRAPHS,
    }
)


def _sparse(sp: onnx.SparseTensorProto, path: Path_, role: str) -> Iterator[TensorSite]:
    if sp.HasField("values"):
        yield TensorSite(sp.values, (*path, ("values", None)), role)
    if sp.HasField("indices"):
        yield TensorSite(sp.indices, (*path, ("indices", None)), role)


def _attribute(attr: AttributeProto, path: Path_) -> Iterator[TensorSite]:
    kind = attr.type
    # NOTE: dispatch on ``type`` (one field access per attribute keeps the walk cheap on
    # graphs of 10k+ nodes); an attribute without a type (hand-built protos) is searched in
    # every field that can hold a tensor or a graph, so nothing it carries goes unseen.
    every = kind == AttributeProto.UNDEFINED
    if (every or kind == AttributeProto.TENSOR) and attr.HasField("t"):
        yield TensorSite(attr.t, (*path, ("t", None)), "attribute")
    if every or kind == AttributeProto.TENSORS:
        for k, t in enumerate(attr.tensors):
            yield TensorSite(t, (*path, ("tensors", k)), "attribute")
    if (every or kind == AttributeProto.SPARSE_TENSOR) and attr.HasField("sparse_tensor"):
        yield from _sparse(attr.sparse_tensor, (*path, ("sparse_tensor", None)), "attribute")
    if every or kind == AttributeProto.SPARSE_TENSORS:
        for k, sp in enumerate(attr.sparse_tensors):
            yield from _sparse(sp, (*path, ("sparse_tensors", k)), "attribute")
    if (every or kind == AttributeProto.GRAPH) and attr.HasField("g"):
        yield from _graph(attr.g, (*path, ("g", None)))
    if every or kind == AttributeProto.GRAPHS:
        for k, g in enumerate(attr.graphs):
            yield from _graph(g, (*path, ("graphs", k)))


def _nodes(nodes, path: Path_, field: str = "node") -> Iterator[TensorSite]:
    wanted = _SEARCHED_ATTR_TYPES
    for i, node in enumerate(nodes):
        attrs = node.attribute
        if not attrs:
            continue
        for j, attr in enumerate(attrs):
            if attr.type in wanted:
                yield from _attribute(attr, (*path, (field, i), ("attribute", j)))


def _graph(graph: onnx.GraphProto, path: Path_) -> Iterator[TensorSite]:
    for i, t in enumerate(graph.initializer):
        yield TensorSite(t, (*path, ("initializer", i)), "initializer")
    for i, sp in enumerate(graph.sparse_initializer):
        yield from _sparse(sp, (*path, ("sparse_initializer", i)), "sparse")
    yield from _nodes(graph.node, path)


def iter_tensors(model: onnx.ModelProto) -> Iterator[TensorSite]:
    """Every TensorProto in ``model``, in a stable order, with its path and role."""
    if model.HasField("graph"):
        yield from _graph(model.graph, (("graph", None),))
    for i, info in enumerate(model.training_info):
        base = (("training_info", i),)
        if info.HasField("initialization"):
            yield from _graph(info.initialization, (*base, ("initialization", None)))
        if info.HasField("algorithm"):
            yield from _graph(info.algorithm, (*base, ("algorithm", None)))
    for i, fn in enumerate(model.functions):
        base = (("functions", i),)
        for j, attr in enumerate(fn.attribute_proto):
            yield from _attribute(attr, (*base, ("attribute_proto", j)))
        yield from _nodes(fn.node, base)


def resolve_path(model: onnx.ModelProto, path: Path_):
    """The message at ``path`` inside ``model`` (inverse of the paths :func:`iter_tensors` gives)."""
    msg = model
    for field, index in path:
        value = getattr(msg, field)
        msg = value if index is None else value[index]
    return msg


__all__ = [
    "NUMPY_DTYPES",
    "TensorSite",
    "dtype_name",
    "element_bits",
    "element_count",
    "external_entries",
    "iter_tensors",
    "numpy_to_tensor",
    "raw_nbytes",
    "resolve_path",
    "tensor_nbytes",
    "tensor_to_numpy",
    "uses_external_data",
]
