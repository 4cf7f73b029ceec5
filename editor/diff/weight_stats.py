"""Weights of a change, before and after: statistics of both and the largest element-wise
difference, with a quantized weight read back as the float values it stands for.

A change's weights are :class:`~editor.diff.display.WeightRef` pairs (a reader node, the
input port, the value name). Where a quantized op keeps its weight and how it is stored
differ per format; :func:`weight_values` knows the ones onnxruntime writes:

* QDQ: ``DequantizeLinear(w_q, scale, zero_point)`` feeding the op (per tensor, per axis,
  or blocked);
* QOperator: QLinearConv / QLinearMatMul / QGemm read ``w_q, w_scale, w_zero_point``;
* dynamic: ConvInteger / MatMulInteger read ``w_q`` (and its zero point); the scale sits
  in an initializer the quantizer names ``<weight>_scale``;
* int4: MatMulNBits packs ``[N, blocks, bytes]`` nibbles with per-block scales (and zero
  points), read back as the ``[K, N]`` matrix a MatMul holds.

Values are read once per call and only for the change on show (a few tensors), so the
window asks for them when the user visits the change, not when the diff is computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import onnx

from editor.io.tensors import tensor_to_numpy

if TYPE_CHECKING:
    from editor.diff.display import Detail, Stop, WeightRef
    from editor.document import Document

__all__ = ["WeightValues", "main_weight", "weight_details", "weight_values"]

#: quantized op -> (weight port, scale port, zero point port, channel axis of the weight)
_QOPS = {
    "QLinearConv": (3, 4, 5, 0),
    "QLinearMatMul": (3, 4, 5, 1),
    "QGemm": (3, 4, 5, 0),
    "QLinearAdd": (3, 4, 5, 0),  # or a at 0 (scale 1, zero point 2): see _qop_ports
    "QLinearMul": (3, 4, 5, 0),
}
#: float op -> its weight port
_FLOAT_WEIGHT = {"Conv": 1, "ConvTranspose": 1, "MatMul": 1, "Gemm": 1, "ConvInteger": 1, "MatMulInteger": 1,
                 "MatMulNBits": 1, "Gather": 0, "LSTM": 1, "GRU": 1, "RNN": 1, "DynamicQuantizeMatMul": 1}


@dataclass
class WeightValues:
    values: np.ndarray  # float64 (or the stored type when nothing says how to read it back)
    stored: str  # "float32[64,3,3,3]", "int8[64,3,3,3] (dequantized)", ...


def main_weight(doc: Document, ref: WeightRef) -> bool:
    """Whether ``ref`` is its reader's main weight (a Conv's W, a MatMul's B, a
    QLinearConv's w), not a bias, a scale or a zero point."""
    if not doc.has_node(ref.node):
        return False
    node = doc.node(ref.node)
    if node.op_type in _QOPS:
        return ref.port == _qop_ports(node, ref.port)[0]
    return ref.port == _FLOAT_WEIGHT.get(node.op_type, ref.port)


def _qop_ports(node: onnx.NodeProto, port: int) -> tuple[int, int, int, int]:
    """(weight, scale, zero point, channel axis) ports of a quantized op; QLinearAdd and
    QLinearMul may hold their constant operand first (a, a_scale, a_zero_point)."""
    ports = _QOPS[node.op_type]
    if node.op_type in ("QLinearAdd", "QLinearMul") and port == 0:
        return (0, 1, 2, 0)
    return ports


def _tensor(doc: Document, sid: int, name: str) -> onnx.TensorProto | None:
    """The tensor holding weight ``name`` seen from scope ``sid``: an initializer (this
    scope or an enclosing one) or a Constant node's value."""
    where = doc.resolve_value(sid, name)
    for s in ([where] if where is not None else []) + [sid]:
        found = doc.initializer(s, name)
        if found is not None:
            return found[1]
        p = doc.producer(s, name)
        if p is not None:
            node = doc.node(p)
            if node.op_type == "Constant":
                attr = next((a for a in node.attribute if a.name == "value"), None)
                if attr is not None and attr.HasField("t"):
                    return attr.t
    return None


def _array(doc: Document, sid: int, name: str) -> np.ndarray | None:
    t = _tensor(doc, sid, name) if name else None
    if t is None:
        return None
    return np.asarray(tensor_to_numpy(t, doc.store))


def _attr(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name), default)


def _dequantize(q: np.ndarray, scale: np.ndarray, zp: np.ndarray | None, axis: int) -> np.ndarray:
    x = q.astype(np.float64)
    s = scale.astype(np.float64)
    z = zp.astype(np.float64) if zp is not None else np.zeros_like(s)
    if s.size > 1 and x.ndim:
        shape = [1] * x.ndim
        shape[axis % x.ndim] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    return (x - z) * s


def _nbits(doc: Document, sid: int, node: onnx.NodeProto) -> np.ndarray | None:
    """MatMulNBits' packed weight read back as the [K, N] float matrix."""
    packed = _array(doc, sid, node.input[1])
    scales = _array(doc, sid, node.input[2]) if len(node.input) > 2 else None
    if packed is None or scales is None:
        return None
    k, n = _attr(node, "K", 0), _attr(node, "N", 0)
    bits, block = _attr(node, "bits", 4), _attr(node, "block_size", 32)
    if bits != 4 or not k or not n:
        return None
    raw = packed.reshape(n, -1).astype(np.uint8)
    q = np.empty((n, raw.shape[1] * 2), dtype=np.float64)
    q[:, 0::2] = raw & 0x0F
    q[:, 1::2] = raw >> 4
    blocks = q.shape[1] // block
    q = q[:, :blocks * block].reshape(n, blocks, block)
    s = scales.astype(np.float64).reshape(n, blocks, 1)
    zp_name = node.input[3] if len(node.input) > 3 else ""
    zps = _array(doc, sid, zp_name) if zp_name else None
    if zps is None:
        z = np.full((n, blocks, 1), 8.0)
    elif zps.dtype == np.uint8 and zps.size * 2 >= n * blocks:  # packed nibbles, like the weight
        flat = np.empty(zps.reshape(n, -1).shape[1] * 2 * n, dtype=np.float64).reshape(n, -1)
        zr = zps.reshape(n, -1)
        flat[:, 0::2] = zr & 0x0F
        flat[:, 1::2] = zr >> 4
        z = flat[:, :blocks].reshape(n, blocks, 1)
    else:
        z = zps.astype(np.float64).reshape(n, blocks, 1)
    w = ((q - z) * s).reshape(n, blocks * block)[:, :k]
    return w.T


def weight_values(doc: Document, ref: WeightRef) -> WeightValues | None:
    """The values weight ``ref`` stands for, read back to float where it is quantized;
    None when it cannot be read (a computed weight, a format not known here)."""
    if not doc.has_node(ref.node):
        return None
    sid = doc.index.node_scope[ref.node]
    node = doc.node(ref.node)
    name = ref.name
    op = node.op_type
    if op == "MatMulNBits" and ref.port == 1:
        w = _nbits(doc, sid, node)
        t = _tensor(doc, sid, name)
        stored = f"int{_attr(node, 'bits', 4)} blocks of {_attr(node, 'block_size', 32)}"
        if t is not None:
            stored += f" ({len(t.raw_data) or 0} bytes)"
        return None if w is None else WeightValues(w, stored + ", dequantized")
    if op in _QOPS and ref.port == _qop_ports(node, ref.port)[0]:
        _wp, sp, zp, axis = _qop_ports(node, ref.port)
        q = _array(doc, sid, name)
        s = _array(doc, sid, node.input[sp]) if len(node.input) > sp else None
        z = _array(doc, sid, node.input[zp]) if len(node.input) > zp and node.input[zp] else None
        if q is None or s is None:
            return None
        if op == "QGemm" and _attr(node, "transB", 0) == 0:
            axis = 1
        return WeightValues(_dequantize(q, s, z, axis), f"{q.dtype}{list(q.shape)}, dequantized")
    producer = doc.producer(sid, name)
    if producer is not None and doc.node(producer).op_type == "DequantizeLinear":
        dq = doc.node(producer)
        q = _array(doc, sid, dq.input[0])
        s = _array(doc, sid, dq.input[1]) if len(dq.input) > 1 else None
        z = _array(doc, sid, dq.input[2]) if len(dq.input) > 2 and dq.input[2] else None
        if q is None or s is None:
            return None
        block = _attr(dq, "block_size", 0)
        axis = _attr(dq, "axis", 1)
        if block and s.size > 1:  # blocked: repeat each scale over its block along the axis
            s = np.repeat(s, block, axis=axis % s.ndim)
            z = np.repeat(z, block, axis=axis % z.ndim) if z is not None else None
            slicer = tuple(slice(0, d) for d in q.shape)
            s = s[slicer]
            z = z[slicer] if z is not None else None
            values = (q.astype(np.float64) - (z.astype(np.float64) if z is not None else 0.0)) * s
        else:
            values = _dequantize(q, s, z, axis)
        return WeightValues(values, f"{q.dtype}{list(q.shape)}, dequantized")
    x = _array(doc, sid, name)
    if x is None:
        return None
    if op in ("ConvInteger", "MatMulInteger") and ref.port == 1:
        base = name[: -len("_quantized")] if name.endswith("_quantized") else name
        s = _array(doc, sid, f"{base}_scale")
        z = _array(doc, sid, node.input[3]) if len(node.input) > 3 and node.input[3] else None
        if s is not None:
            axis = 0 if op == "ConvInteger" else 1
            return WeightValues(_dequantize(x, s, z, axis), f"{x.dtype}{list(x.shape)}, dequantized")
        return WeightValues(x, f"{x.dtype}{list(x.shape)} (no scale found: stored values)")
    return WeightValues(x, f"{x.dtype}{list(x.shape)}")


def _stats(v: np.ndarray) -> str:
    if v.size == 0:
        return "empty"
    if v.dtype.kind not in "fiub":
        return f"{v.size} values"
    f = v.astype(np.float64)
    finite = f[np.isfinite(f)]
    if finite.size == 0:
        return "no finite values"
    text = (f"min {finite.min():.4g}  max {finite.max():.4g}  mean {finite.mean():.4g}  "
            f"std {finite.std():.4g}")
    if finite.size < f.size:
        text += f"  ({f.size - finite.size} not finite)"
    return text


def weight_details(doc_a: Document, doc_b: Document, stop: Stop) -> list[Detail]:
    """Rows for the weights of ``stop``: what each side stores, statistics before and
    after, and the largest element-wise difference when the shapes agree."""
    from editor.diff.display import Detail

    rows: list[Detail] = []
    for ra, rb in stop.weights:
        va = weight_values(doc_a, ra) if ra is not None else None
        vb = weight_values(doc_b, rb) if rb is not None else None
        label = f"weight {ra.name if ra is not None else rb.name!r}"
        rows.append(Detail(label + " stored", va.stored if va else "—", vb.stored if vb else "—"))
        rows.append(Detail(label + " statistics", _stats(va.values) if va else "—", _stats(vb.values) if vb else "—"))
        if va is None or vb is None:
            continue
        a, b = va.values, vb.values
        if a.shape != b.shape:
            rows.append(Detail("largest element-wise difference", f"shape {list(a.shape)}",
                               f"shape {list(b.shape)}: not compared"))
            continue
        if a.size == 0 or a.dtype.kind not in "fiub" or b.dtype.kind not in "fiub":
            continue
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        k = int(np.nanargmax(diff)) if np.isfinite(diff).any() else 0
        where = [int(i) for i in np.unravel_index(k, a.shape)] if a.ndim else []
        rows.append(Detail("largest element-wise difference", f"{float(a.flat[k]):.6g} at {where}",
                           f"{float(b.flat[k]):.6g}  (|Δ| {float(diff.flat[k]):.4g})"))
    return rows
