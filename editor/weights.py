"""The weights catalogue: every weight tensor of a model, and statistics over each.

Weights live in three places in ONNX and the weights view shows them alike:

* ``initializer``: a graph's ``initializer`` list (main graph, subgraph bodies);
* ``sparse``: a graph's ``sparse_initializer`` list;
* ``constant``: the payload of a ``Constant`` node (Paddle2ONNX and spox exports keep every
  weight there): its ``value`` / ``sparse_value`` tensor or a ``value_float(s)`` /
  ``value_int(s)`` / ``value_string(s)`` literal.

:func:`list_weights` describes them from dims and element type alone (nothing is read, so
listing a 10 GB model costs no I/O). :func:`weight_stats` summarises one tensor in chunks:
an external tensor is a view over the data file's memory map (see
:class:`editor.io.ExternalDataStore`) and only one chunk at a time is converted to float64,
so the memory a summary needs does not grow with the tensor. :func:`export_npy` writes a
tensor to a ``.npy`` file, also in chunks.

NOTE: dtype labels. Element types are shown with numpy-like lower-case names
(:func:`dtype_label`): ``float32``, ``float64``, ``float16``, ``bfloat16``, ``int64``,
``bool``, ``string``, ``float8e4m3fn``, ``int4`` ... i.e. the ``TensorProto.DataType`` name in
lower case, except FLOAT -> ``float32`` and DOUBLE -> ``float64``. The CLI, the summary and
the GUI all use these labels.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto

from editor.blockquant import PackedWeight, dequantized_parts, packed_weights
from editor.errors import LoadError, SaveError, StudioError
from editor.io import tensor_nbytes, tensor_to_numpy, uses_external_data
from editor.io.tensors import NUMPY_DTYPES, element_count, raw_nbytes
from editor.types import dtype_name

if TYPE_CHECKING:
    from editor.document import Document

#: Elements converted to float64 at a time; 1 Mi elements = 8 MB of scratch per chunk.
CHUNK_ELEMENTS = 1 << 20
#: Histogram bins (integer tensors with a narrower range get one bin per value).
HISTOGRAM_BINS = 64

_CONSTANT_ATTRS = (
    "value",
    "sparse_value",
    "value_float",
    "value_floats",
    "value_int",
    "value_ints",
    "value_string",
    "value_strings",
)

# Packed sub-byte element types: bits per element and the numpy (ml_dtypes) type they unpack to.
_PACKED: dict[int, int] = {
    TensorProto.INT4: 4,
    TensorProto.UINT4: 4,
    TensorProto.FLOAT4E2M1: 4,
}
for _name, _bits in (("INT2", 2), ("UINT2", 2)):
    if hasattr(TensorProto, _name):
        _PACKED[getattr(TensorProto, _name)] = _bits


#: numpy-like label of an ONNX element type (kept under this name for callers)
dtype_label = dtype_name


@dataclass(frozen=True)
class WeightInfo:
    """One weight tensor, described without reading its data.

    ``name`` is the initializer name or, for a Constant node, the name of its output (the
    name the rest of the graph uses). ``scope`` is the document scope id; ``node`` and
    ``attr`` say which Constant node attribute holds it. ``elements`` is the dense element
    count (a sparse tensor's full shape), ``nbytes`` what the tensor stores (for sparse:
    values plus indices), ``nnz`` the stored values of a sparse tensor.
    """

    name: str
    scope: int
    scope_path: str
    source: str  # "initializer" | "sparse" | "constant"
    dtype: str
    elem_type: int
    shape: tuple[int, ...]
    elements: int
    nbytes: int
    external: bool = False
    location: str | None = None
    node: int | None = None
    node_name: str | None = None
    attr: str | None = None
    nnz: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["shape"] = list(self.shape)
        return out


@dataclass
class WeightStats:
    """Statistics of one tensor's values (population std, ddof=0).

    ``count`` is every element; ``finite_count`` the ones that enter min/max/mean/std and
    the histogram (NaN and +-Inf are counted apart). Booleans count as 0/1, complex tensors
    are summarised by magnitude (``note`` says so), strings get only counts and lengths.
    Empty tensors and tensors with no finite value have ``None`` for the numbers.
    """

    dtype: str
    shape: tuple[int, ...]
    count: int
    finite_count: int = 0
    min: float | int | None = None
    max: float | int | None = None
    mean: float | None = None
    std: float | None = None
    nan_count: int = 0
    posinf_count: int = 0
    neginf_count: int = 0
    zero_count: int = 0
    histogram_counts: list[int] = field(default_factory=list)
    histogram_edges: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def inf_count(self) -> int:
        return self.posinf_count + self.neginf_count

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["shape"] = list(self.shape)
        out["inf_count"] = self.inf_count
        return out


# ----------------------------------------------------------------------------- catalogue


def list_weights(doc: Document, *, include_functions: bool = True) -> list[WeightInfo]:
    """Every weight of the document: initializers, sparse initializers, Constant payloads.

    Ordered by scope (main graph first, then subgraphs and functions in index order), and
    within a scope: initializers, sparse initializers, then Constant nodes in graph order.
    """
    out: list[WeightInfo] = []
    index = doc.index
    for sid, scope in index.scopes.items():
        root = index.scope_chain(sid)[-1]
        if root.kind == "function" and not include_functions:
            continue
        path = index.path(sid)
        g = scope.graph
        if isinstance(g, onnx.GraphProto):
            for t in g.initializer:
                out.append(_dense_info(t, t.name, sid, path, "initializer"))
            for sp in g.sparse_initializer:
                out.append(_sparse_info(sp, sp.values.name, sid, path, "sparse"))
        for nid in scope.node_ids:
            node = index.nodes[nid]
            if node.op_type != "Constant" or node.domain not in ("", "ai.onnx"):
                continue
            info = _constant_info(node, nid, sid, path)
            if info is not None:
                out.append(info)
    return out


def _external_location(t: TensorProto) -> str | None:
    for e in t.external_data:
        if e.key == "location":
            return e.value
    return None


def _dense_info(t: TensorProto, name: str, sid: int, path: str, source: str, **extra: Any) -> WeightInfo:
    dims = tuple(int(d) for d in t.dims)
    external = uses_external_data(t)
    return WeightInfo(
        name=name,
        scope=sid,
        scope_path=path,
        source=source,
        dtype=dtype_label(t.data_type),
        elem_type=t.data_type,
        shape=dims,
        elements=element_count(dims, t.name),
        nbytes=tensor_nbytes(t),
        external=external,
        location=_external_location(t) if external else None,
        **extra,
    )


def _sparse_info(sp: onnx.SparseTensorProto, name: str, sid: int, path: str, source: str, **extra: Any) -> WeightInfo:
    dims = tuple(int(d) for d in sp.dims)
    values, indices = sp.values, sp.indices
    external = uses_external_data(values) or uses_external_data(indices)
    nnz = element_count(values.dims, values.name)
    return WeightInfo(
        name=name,
        scope=sid,
        scope_path=path,
        source=source,
        dtype=dtype_label(values.data_type),
        elem_type=values.data_type,
        shape=dims,
        elements=element_count(dims, name),
        nbytes=tensor_nbytes(values) + (tensor_nbytes(indices) if sp.HasField("indices") else 0),
        external=external,
        location=_external_location(values if uses_external_data(values) else indices) if external else None,
        nnz=nnz,
        **extra,
    )


def _constant_info(node: onnx.NodeProto, nid: int, sid: int, path: str) -> WeightInfo | None:
    name = node.output[0] if len(node.output) else node.name
    for attr in node.attribute:
        if attr.name not in _CONSTANT_ATTRS:
            continue
        extra = {"node": nid, "node_name": node.name, "attr": attr.name}
        if attr.name == "value":
            return _dense_info(attr.t, name, sid, path, "constant", **extra)
        if attr.name == "sparse_value":
            return _sparse_info(attr.sparse_tensor, name, sid, path, "constant", **extra)
        elem_type, shape, nbytes = _literal_layout(attr)
        count = int(np.prod(shape)) if shape else 1
        return WeightInfo(
            name=name,
            scope=sid,
            scope_path=path,
            source="constant",
            dtype=dtype_label(elem_type),
            elem_type=elem_type,
            shape=shape,
            elements=count,
            nbytes=nbytes,
            **extra,
        )
    return None  # a Constant with no payload: the validator reports it, nothing to list


def _literal_layout(attr: AttributeProto) -> tuple[int, tuple[int, ...], int]:
    """(elem_type, shape, bytes) of a value_float(s)/int(s)/string(s) literal."""
    n = attr.name
    if n == "value_float":
        return TensorProto.FLOAT, (), 4
    if n == "value_floats":
        return TensorProto.FLOAT, (len(attr.floats),), 4 * len(attr.floats)
    if n == "value_int":
        return TensorProto.INT64, (), 8
    if n == "value_ints":
        return TensorProto.INT64, (len(attr.ints),), 8 * len(attr.ints)
    if n == "value_string":
        return TensorProto.STRING, (), len(attr.s)
    return TensorProto.STRING, (len(attr.strings),), sum(len(s) for s in attr.strings)


# ----------------------------------------------------------------------------- resolving

Payload = TensorProto | onnx.SparseTensorProto | AttributeProto


def _payload(doc: Document, w: WeightInfo) -> Payload:
    """The proto that holds ``w`` now (the document may have changed since listing)."""
    missing = StudioError(f"weight {w.name!r} is no longer in the model")
    if w.scope not in doc.index.scopes:
        raise missing
    if w.source == "constant":
        if w.node is None or not doc.has_node(w.node):
            raise missing
        for attr in doc.node(w.node).attribute:
            if attr.name == w.attr:
                if attr.name == "value":
                    return attr.t
                if attr.name == "sparse_value":
                    return attr.sparse_tensor
                return attr
        raise missing
    g = doc.scope(w.scope).graph
    if isinstance(g, onnx.GraphProto):
        if w.source == "initializer":
            for t in g.initializer:
                if t.name == w.name:
                    return t
        elif w.source == "sparse":
            for sp in g.sparse_initializer:
                if sp.values.name == w.name:
                    return sp
    raise missing


def weight_array(doc: Document, w: WeightInfo) -> np.ndarray:
    """The values of ``w`` as a dense numpy array (ml_dtypes types kept; strings as bytes objects).

    External tensors come back as read-only views over the memory map (no copy); sparse
    tensors are densified, which allocates the full shape.
    """
    p = _payload(doc, w)
    if isinstance(p, onnx.SparseTensorProto):
        return _densify(p, doc)
    if isinstance(p, AttributeProto):
        return _literal_array(p)
    return tensor_to_numpy(p, doc.store)


def _literal_array(attr: AttributeProto) -> np.ndarray:
    n = attr.name
    if n == "value_float":
        return np.array(attr.f, dtype=np.float32)
    if n == "value_floats":
        return np.array(list(attr.floats), dtype=np.float32)
    if n == "value_int":
        return np.array(attr.i, dtype=np.int64)
    if n == "value_ints":
        return np.array(list(attr.ints), dtype=np.int64)
    out = np.empty((), dtype=object) if n == "value_string" else np.empty(len(attr.strings), dtype=object)
    if n == "value_string":
        out[()] = attr.s
    else:
        out[:] = list(attr.strings)
    return out


def _sparse_flat_indices(sp: onnx.SparseTensorProto, doc: Document) -> np.ndarray:
    dims = [int(d) for d in sp.dims]
    nnz = element_count(sp.values.dims, sp.values.name)
    if not sp.HasField("indices") or nnz == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.asarray(tensor_to_numpy(sp.indices, doc.store)).astype(np.int64)
    if idx.ndim == 2:  # [nnz, rank] coordinates
        if idx.shape[1] != len(dims):
            raise LoadError(f"sparse tensor {sp.values.name!r}: indices of rank {idx.shape[1]} for dims {dims}")
        idx = np.ravel_multi_index(tuple(idx.T), dims) if dims else np.zeros(len(idx), np.int64)
    idx = idx.reshape(-1)
    total = element_count(dims, sp.values.name)
    if idx.size != nnz or (idx.size and (idx.min() < 0 or idx.max() >= total)):
        raise LoadError(f"sparse tensor {sp.values.name!r}: indices do not fit dims {dims}")
    return idx


def _densify(sp: onnx.SparseTensorProto, doc: Document) -> np.ndarray:
    dims = [int(d) for d in sp.dims]
    values = np.asarray(tensor_to_numpy(sp.values, doc.store)).reshape(-1)
    dense = np.zeros(element_count(dims, sp.values.name), dtype=values.dtype)
    dense[_sparse_flat_indices(sp, doc)] = values
    return dense.reshape(dims)


# ----------------------------------------------------------------------------- chunks


def _unpack(packed: np.ndarray, bits: int) -> np.ndarray:
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    out = np.empty(packed.size * per_byte, dtype=np.uint8)
    for k in range(per_byte):
        out[k::per_byte] = (packed >> (k * bits)) & mask
    return out


def _chunks(doc: Document, w: WeightInfo, chunk: int) -> Iterator[np.ndarray]:
    """The values of ``w`` as flat numpy chunks of at most ``chunk`` elements each.

    External packed (4/2-bit) tensors are unpacked chunk by chunk from the memory map;
    everything else is a flat view sliced into chunks, so nothing is copied up front.
    A sparse tensor yields only its stored values (implicit zeros are accounted by the caller).
    """
    p = _payload(doc, w)
    if isinstance(p, onnx.SparseTensorProto):
        p = p.values
    if isinstance(p, TensorProto) and uses_external_data(p) and p.data_type in _PACKED:
        bits = _PACKED[p.data_type]
        count = element_count(p.dims, p.name)
        buf = doc.store.read_bytes(p) if doc.store is not None else None
        if buf is None:
            raise LoadError(f"tensor {p.name!r} has external data but the document has no data store")
        if len(buf) != raw_nbytes(p.data_type, count):
            raise LoadError(f"tensor {p.name!r}: external data has {len(buf)} bytes, dims {list(p.dims)} need more")
        raw = np.frombuffer(buf, dtype=np.uint8)
        per_byte = 8 // bits
        step = max(1, chunk // per_byte)
        dtype = NUMPY_DTYPES[p.data_type]
        done = 0
        for start in range(0, raw.size, step):
            codes = _unpack(raw[start : start + step], bits)[: count - done]
            done += codes.size
            yield codes.view(dtype)
        return
    if isinstance(p, AttributeProto):
        flat = _literal_array(p).reshape(-1)
    else:
        flat = np.asarray(tensor_to_numpy(p, doc.store)).reshape(-1)
    for start in range(0, flat.size, chunk):
        yield flat[start : start + chunk]


def packed_weight_of(doc: Document, w: WeightInfo) -> PackedWeight | None:
    """How ``w`` is packed when it is a MatMulNBits weight (uint8 bytes of int4/int2 values
    in blocks), else None."""
    if w.source != "initializer" or w.elem_type != TensorProto.UINT8 or w.scope not in doc.index.scopes:
        return None
    g = doc.scope(w.scope).graph
    return packed_weights(g).get(w.name) if isinstance(g, onnx.GraphProto) else None


def _packed_note(pw: PackedWeight) -> str:
    lay = pw.layout
    rows, cols = pw.shape
    zero = "its zero point" if pw.zero_points else f"zero point {2 ** (lay.bits - 1)}"
    vector = "column" if pw.op_type == "MatMulNBits" else "row"
    return (f"{pw.op_type} {pw.node_name!r}: {rows} x {cols} weights at {lay.bits} bits, {lay.blocks} blocks "
            f"of {lay.block_size} per {vector}, each with a scale and {zero}; statistics and histogram of the "
            "dequantized values, scale x (value - zero point)")


def _packed_arrays(doc: Document, w: WeightInfo, pw: PackedWeight) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(packed bytes, scales, zero points or None) of a packed weight."""
    g = doc.scope(w.scope).graph
    by_name = {t.name: t for t in g.initializer}
    if pw.scales not in by_name:
        raise StudioError(f"the scales {pw.scales!r} of {w.name!r} are not an initializer")
    scales = tensor_to_numpy(by_name[pw.scales], doc.store)
    zp = tensor_to_numpy(by_name[pw.zero_points], doc.store) if pw.zero_points in by_name else None
    return tensor_to_numpy(_payload(doc, w), doc.store), scales, zp


def _dequantized_chunks(doc: Document, w: WeightInfo, pw: PackedWeight, chunk: int) -> Iterator[np.ndarray]:
    """The dequantized values of a packed weight, flat, a few blocked vectors at a time."""
    b, scales, zp = _packed_arrays(doc, w, pw)
    for part in dequantized_parts(pw, b, scales, zp, max(1, chunk // max(1, pw.layout.k))):
        yield part.reshape(-1)


def dequantized_array(doc: Document, w: WeightInfo) -> np.ndarray | None:
    """A packed weight's dequantized ``[K, N]`` matrix (float32; None for other weights)."""
    pw = packed_weight_of(doc, w)
    if pw is None:
        return None
    b, scales, zp = _packed_arrays(doc, w, pw)
    parts = list(dequantized_parts(pw, b, scales, zp, max(1, CHUNK_ELEMENTS // max(1, pw.layout.k))))
    return np.concatenate(parts, axis=1 if pw.op_type == "MatMulNBits" else 0)


def block_scales(doc: Document, w: WeightInfo) -> np.ndarray | None:
    """The per-block scales of a packed weight as ``[N, blocks]`` (None for other weights):
    what the Weights panel shows as the values per block."""
    pw = packed_weight_of(doc, w)
    if pw is None:
        return None
    g = doc.scope(w.scope).graph
    t = next((t for t in g.initializer if t.name == pw.scales), None)
    return None if t is None else np.asarray(tensor_to_numpy(t, doc.store)).reshape(pw.layout.n, pw.layout.blocks)


# ----------------------------------------------------------------------------- statistics


@dataclass
class _Moments:
    """Running count/mean/M2 merged chunk by chunk (Chan et al.), numerically stable."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, n: int, mean: float, m2: float) -> None:
        if n == 0:
            return
        total = self.n + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * self.n * n / total
        self.n = total


def _as_numbers(values: np.ndarray, kind: str) -> np.ndarray:
    if kind == "complex":
        return np.abs(values).astype(np.float64)
    if values.dtype == np.float64:
        return values
    return values.astype(np.float64)


def _kind(elem_type: int) -> str:
    if elem_type == TensorProto.STRING:
        return "string"
    if elem_type == TensorProto.BOOL:
        return "bool"
    if elem_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        return "complex"
    dt = NUMPY_DTYPES.get(elem_type)
    if dt is not None and np.issubdtype(dt, np.integer):
        return "int"
    if elem_type in (TensorProto.INT4, TensorProto.UINT4) or dtype_label(elem_type) in ("int2", "uint2"):
        return "int"
    return "float"


def weight_stats(
    doc: Document,
    w: WeightInfo,
    *,
    bins: int = HISTOGRAM_BINS,
    chunk_elements: int = CHUNK_ELEMENTS,
    progress: Callable[[float], None] | None = None,
) -> WeightStats:
    """Summarise the values of ``w`` in two chunked passes (moments, then histogram).

    ``progress(fraction)`` is called after each chunk; raise from it to cancel.
    Sparse tensors are summarised as their dense form (implicit zeros included) without
    densifying them.
    """
    kind = _kind(w.elem_type)
    stats = WeightStats(dtype=w.dtype, shape=w.shape, count=w.elements)
    packed = packed_weight_of(doc, w)
    chunks: Callable[[], Iterator[np.ndarray]] = functools.partial(_chunks, doc, w, chunk_elements)
    if packed is not None:  # int4/int2 in uint8 bytes: the values they stand for
        kind = "float"
        stats = WeightStats(dtype=packed.label, shape=packed.shape, count=packed.values, note=_packed_note(packed))
        chunks = functools.partial(_dequantized_chunks, doc, w, packed, chunk_elements)
    implicit_zeros = (w.elements - (w.nnz or 0)) if w.nnz is not None else 0
    if kind == "string":
        return _string_stats(doc, w, stats, chunk_elements)
    if kind == "complex":
        stats.note = "statistics of the magnitude |z|"
    elif kind == "bool":
        stats.note = "false = 0, true = 1"

    stored = w.nnz if w.nnz is not None else stats.count
    total_work = max(1, 2 * stored)
    moments = _Moments()
    with np.errstate(over="ignore", invalid="ignore"):
        lo, hi = _first_pass(chunks(), kind, stats, moments, progress, total_work)
    done = stored
    if implicit_zeros:
        stats.zero_count += implicit_zeros
        moments.add(implicit_zeros, 0.0, 0.0)
        lo = 0 if lo is None else min(lo, 0)
        hi = 0 if hi is None else max(hi, 0)
    stats.finite_count = moments.n
    if moments.n == 0:
        return stats
    if kind == "float" or kind == "complex":
        lo, hi = float(lo), float(hi)
    stats.min, stats.max = lo, hi
    stats.mean = moments.mean
    # Only finite values enter M2, so a non-finite M2 means float64 overflowed (|x| ~ 1e154+).
    stats.std = math.sqrt(max(moments.m2, 0.0) / moments.n) if math.isfinite(moments.m2) else math.inf

    edges = _edges(float(lo), float(hi), kind, bins)
    counts = np.zeros(len(edges) - 1, dtype=np.int64)
    for raw in chunks():
        if kind == "bool":
            raw = raw.astype(np.uint8)
        vals = _as_numbers(raw, kind)
        if kind in ("float", "complex"):
            finite = np.isfinite(vals)
            if not finite.all():
                vals = vals[finite]
        # NOTE: equal-width bins given as (count, range) take numpy's fast path, several
        # times quicker than searching an explicit edges array; the edges are the same.
        counts += _histogram(vals, edges)
        done += raw.size
        if progress is not None:
            progress(min(1.0, done / total_work))
    if implicit_zeros:
        counts += _histogram(np.zeros(1), edges) * implicit_zeros
    stats.histogram_counts = [int(c) for c in counts]
    stats.histogram_edges = [float(e) for e in edges]
    return stats


def _first_pass(
    chunks: Iterator[np.ndarray],
    kind: str,
    stats: WeightStats,
    moments: _Moments,
    progress: Callable[[float], None] | None,
    total_work: int,
) -> tuple[Any, Any]:
    """Counts, min/max and moments over every chunk; returns (min, max) of finite values."""
    lo: Any = None
    hi: Any = None
    done = 0
    for raw in chunks:
        if kind == "bool":
            raw = raw.astype(np.uint8)
        vals = _as_numbers(raw, kind)
        if kind in ("float", "complex"):
            finite = np.isfinite(vals)
            if not finite.all():  # rare: break the non-finite ones down only then
                stats.nan_count += int(np.isnan(vals).sum())
                stats.posinf_count += int(np.isposinf(vals).sum())
                stats.neginf_count += int(np.isneginf(vals).sum())
                vals = vals[finite]
        stats.zero_count += int(np.count_nonzero(vals == 0))
        if vals.size:
            if kind == "int" and raw.dtype.kind in "iu":
                cmin, cmax = int(raw.min()), int(raw.max())  # exact for int64/uint64
            elif kind in ("int", "bool"):
                cmin, cmax = int(vals.min()), int(vals.max())
            else:
                cmin, cmax = float(vals.min()), float(vals.max())
            lo = cmin if lo is None else min(lo, cmin)
            hi = cmax if hi is None else max(hi, cmax)
            mean = float(vals.mean())
            dev = vals - mean
            moments.add(int(vals.size), mean, float(np.dot(dev, dev)))
            del dev
        done += raw.size
        if progress is not None:
            progress(done / total_work)
    return lo, hi


def _histogram(vals: np.ndarray, edges: np.ndarray) -> np.ndarray:
    if math.isfinite(float(edges[-1]) - float(edges[0])):
        return np.histogram(vals, bins=len(edges) - 1, range=(float(edges[0]), float(edges[-1])))[0]
    return np.histogram(vals, bins=edges)[0]


def _edges(lo: float, hi: float, kind: str, bins: int) -> np.ndarray:
    """Bin edges over [lo, hi]; integers with a narrow range get one bin per value."""
    if kind in ("int", "bool") and hi - lo + 1 <= bins:
        return np.arange(lo - 0.5, hi + 1.0, 1.0)
    if lo == hi:  # one distinct value: a single bin around it
        pad = 0.5 if lo == 0 else abs(lo) * 1e-6
        return np.array([lo - pad, hi + pad])
    if math.isfinite(hi - lo):
        edges = np.linspace(lo, hi, bins + 1)
    else:  # the span overflows float64 (values near +-1.8e308): halve, space, double back
        edges = np.linspace(lo * 0.5, hi * 0.5, bins + 1) * 2.0
    if not np.all(np.diff(edges) > 0):  # range too narrow for float64 spacing
        return np.array([lo, hi])
    return edges


def _string_stats(doc: Document, w: WeightInfo, stats: WeightStats, chunk: int) -> WeightStats:
    """Strings: count empty ones; the histogram is of byte lengths."""
    lengths: list[int] = []
    for part in _chunks(doc, w, chunk):
        lengths.extend(len(s) for s in part.tolist())
    stats.note = "string tensor: min/max/mean/std and the histogram are of byte lengths"
    stats.zero_count = sum(1 for n in lengths if n == 0)
    stats.finite_count = len(lengths)
    if lengths:
        arr = np.asarray(lengths, dtype=np.float64)
        stats.min, stats.max = int(arr.min()), int(arr.max())
        stats.mean, stats.std = float(arr.mean()), float(arr.std())
        edges = _edges(float(arr.min()), float(arr.max()), "int", HISTOGRAM_BINS)
        stats.histogram_counts = [int(c) for c in np.histogram(arr, bins=edges)[0]]
        stats.histogram_edges = [float(e) for e in edges]
    return stats


# ----------------------------------------------------------------------------- export

#: Exotic element types are exported as the smallest standard numpy type that holds every
#: value exactly, so the .npy file opens with plain numpy (no ml_dtypes needed).
def _portable_dtype(dtype: np.dtype) -> np.dtype:
    # NOTE: test the module, not ``kind``: ml_dtypes reports float8_e5m2 as kind "f".
    if dtype.type.__module__.split(".")[0] == "numpy":
        return dtype
    name = dtype.name
    if name in ("int4", "int2"):
        return np.dtype(np.int8)
    if name in ("uint4", "uint2"):
        return np.dtype(np.uint8)
    return np.dtype(np.float32)  # bfloat16, float8*, float4, float6: exact in float32


def export_npy(doc: Document, w: WeightInfo, path: str | os.PathLike) -> Path:
    """Write the values of ``w`` to ``path`` as ``.npy`` (atomically, in chunks).

    bfloat16/float8/float4 become float32 and int4/int2 become int8/uint8 (exact); strings
    become a fixed-width bytes array (``S``), so the file loads with ``np.load`` and no
    pickle. Sparse tensors are written dense.
    """
    from editor.io import atomic

    target = Path(path)
    if not target.parent.is_dir():
        raise SaveError(f"cannot export to '{target}': folder '{target.parent}' does not exist")
    if w.elem_type == TensorProto.STRING or w.nnz is not None:
        arr = weight_array(doc, w)
        if arr.dtype == object:
            arr = arr.astype(np.bytes_) if arr.size else np.zeros(arr.shape, dtype="S1")
        chunks: Iterator[np.ndarray] = iter([np.ascontiguousarray(arr).reshape(-1)])
        out_dtype = arr.dtype
        out_dtype = _portable_dtype(out_dtype)
    else:
        first = NUMPY_DTYPES.get(w.elem_type)
        if first is None:
            raise SaveError(f"cannot export {w.name!r}: element type {w.dtype} has no numpy type")
        out_dtype = _portable_dtype(first)
        chunks = _chunks(doc, w, CHUNK_ELEMENTS)
    header = {"descr": np.lib.format.dtype_to_descr(out_dtype), "fortran_order": False, "shape": tuple(w.shape)}
    try:
        with atomic.Transaction() as tx:
            f = tx.open(target)
            buf = _HeaderSink()
            np.lib.format.write_array_header_1_0(buf, header)
            f.write(bytes(buf.data))
            written = 0
            for part in chunks:
                part = np.ascontiguousarray(part.astype(out_dtype, copy=False))
                if part.dtype.byteorder == ">":  # pragma: no cover - big-endian hosts only
                    part = part.astype(part.dtype.newbyteorder("<"))
                f.write(part.tobytes() if part.dtype.kind == "S" else memoryview(part).cast("B"))
                written += part.size
            if written != w.elements:
                raise SaveError(f"cannot export {w.name!r}: read {written} elements, expected {w.elements}")
            tx.commit()
    except OSError as exc:
        raise SaveError(f"cannot export to '{target}': {exc.strerror or exc}") from exc
    return target


class _HeaderSink:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, b: bytes) -> None:
        self.data += b


__all__ = [
    "CHUNK_ELEMENTS",
    "HISTOGRAM_BINS",
    "WeightInfo",
    "WeightStats",
    "dtype_label",
    "export_npy",
    "list_weights",
    "weight_array",
    "weight_stats",
]
