"""Block-quantized weights as what they mean: int4/int2/int8 blocks with per-block scales.

The weights of today's LLM decoders are stored packed: ``MatMulNBits`` (onnxruntime's int4
and int2 MatMul) keeps its right-hand matrix as ``B[N, blocks, blob]`` bytes, ``bits``
values per element, ``block_size`` consecutive K elements of one output column per block,
one scale per block and optional packed zero points; ``GatherBlockQuantized`` does the same
for embedding tables along its quantize axis, and ``DequantizeLinear`` with ``block_size``
(opset 21) for int4 tensors. Reading such a tensor as raw bytes says nothing; this module
unpacks it into the float matrix the op multiplies by, so the Weights panel, ``info`` and
the comparisons speak of values, not nibbles.

Layout (onnxruntime's ``MatMulNBits`` contract): element ``k`` of block ``b`` of column
``n`` sits in ``B[n, b]`` at bit offset ``(k % per_byte) * bits`` of byte ``k // per_byte``
(low bits first); ``scales[n * blocks + b]``; zero points, when given as bytes, packed the
same way per column (``ceil(blocks * bits / 8)`` bytes each), when given as floats one per
block; without them the zero point is ``2 ** (bits - 1)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["NBitsLayout", "PackedWeight", "block_values", "dequantized_parts", "matmul_nbits_weight",
           "packed_weights", "unpack"]


@dataclass(frozen=True)
class NBitsLayout:
    """The shape of a ``MatMulNBits`` weight, from the node's attributes."""

    k: int
    n: int
    bits: int = 4
    block_size: int = 32

    @property
    def blocks(self) -> int:
        return -(-self.k // self.block_size)

    @property
    def blob(self) -> int:
        return self.block_size * self.bits // 8

    @property
    def packed_bytes(self) -> int:
        """Bytes of B, scales excluded."""
        return self.n * self.blocks * self.blob


def unpack(data: np.ndarray, bits: int) -> np.ndarray:
    """The ``bits``-wide unsigned values of a byte array, low bits first, flattened."""
    raw = np.ascontiguousarray(data, dtype=np.uint8).reshape(-1)
    if bits == 8:
        return raw.copy()
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    return ((raw[:, None] >> shifts[None, :]) & mask).reshape(-1)


def matmul_nbits_weight(layout: NBitsLayout, b: np.ndarray, scales: np.ndarray,
                        zero_points: np.ndarray | None = None) -> np.ndarray:
    """The float ``[K, N]`` matrix a ``MatMulNBits`` multiplies by (float32)."""
    q = block_values(layout, b)  # [N, blocks, block_size]
    s = np.asarray(scales, dtype=np.float32).reshape(layout.n, layout.blocks, 1)
    zp = _zero_points(layout, zero_points)
    w = (q.astype(np.float32) - zp) * s
    return np.ascontiguousarray(w.reshape(layout.n, -1)[:, :layout.k].T)


def block_values(layout: NBitsLayout, b: np.ndarray) -> np.ndarray:
    """The stored integers of B as ``[N, blocks, block_size]`` (uint8)."""
    values = unpack(b, layout.bits)
    return values[: layout.n * layout.blocks * layout.block_size].reshape(layout.n, layout.blocks, layout.block_size)


def _zero_points(layout: NBitsLayout, zero_points: np.ndarray | None) -> np.ndarray | float:
    if zero_points is None:
        return float(2 ** (layout.bits - 1))
    zp = np.asarray(zero_points)
    if zp.dtype.kind == "f":
        return zp.astype(np.float32).reshape(layout.n, layout.blocks, 1)
    per_column = -(-layout.blocks * layout.bits // 8)
    values = unpack(zp.reshape(layout.n, per_column), layout.bits).reshape(layout.n, -1)[:, : layout.blocks]
    return values.astype(np.float32).reshape(layout.n, layout.blocks, 1)


@dataclass(frozen=True)
class PackedWeight:
    """A uint8 initializer that packs narrower values, and how to read them: the
    ``MatMulNBits`` that consumes it as B (its scales and zero points by name)."""

    name: str
    op_type: str
    node_name: str
    layout: NBitsLayout
    scales: str
    zero_points: str | None

    @property
    def label(self) -> str:
        """The dtype label reports show: ``int4 (MatMulNBits)``."""
        return f"int{self.layout.bits} ({self.op_type})"

    @property
    def shape(self) -> tuple[int, int]:
        """The float matrix the op uses: MatMulNBits' ``[K, N]``; GatherBlockQuantized's
        table ``[rows, columns]`` (its rows are stored as MatMulNBits stores columns)."""
        lay = self.layout
        return (lay.k, lay.n) if self.op_type == "MatMulNBits" else (lay.n, lay.k)

    @property
    def values(self) -> int:
        return self.layout.k * self.layout.n


def packed_weights(graph) -> dict[str, PackedWeight]:  # noqa: ANN001 - an onnx.GraphProto
    """The packed weights of ``graph`` by initializer name: MatMulNBits' B inputs, and the
    uint8 tables of GatherBlockQuantized (2-D, gathered on rows, quantized along columns)."""
    out: dict[str, PackedWeight] = {}
    dims = {t.name: list(t.dims) for t in graph.initializer if t.data_type == 2}  # uint8
    for node in graph.node:
        if node.domain != "com.microsoft" or len(node.input) < 3:
            continue
        attrs = {a.name: a.i for a in node.attribute}
        zp = node.input[3] if len(node.input) > 3 and node.input[3] else None
        if node.op_type == "MatMulNBits" and "K" in attrs and "N" in attrs:
            layout = NBitsLayout(int(attrs["K"]), int(attrs["N"]), int(attrs.get("bits", 4)),
                                 int(attrs.get("block_size", 32)))
            out[node.input[1]] = PackedWeight(node.input[1], node.op_type, node.name, layout, node.input[2], zp)
        elif node.op_type == "GatherBlockQuantized" and len(dims.get(node.input[0], ())) == 2 \
                and attrs.get("gather_axis", 0) == 0 and attrs.get("quantize_axis", 1) in (1, -1):
            bits = int(attrs.get("bits", 4))
            rows, packed = dims[node.input[0]]
            layout = NBitsLayout(packed * 8 // bits, rows, bits, int(attrs.get("block_size", 128)))
            out[node.input[0]] = PackedWeight(node.input[0], node.op_type, node.name, layout, node.input[2], zp)
    return out


def dequantized_parts(pw: PackedWeight, b: np.ndarray, scales: np.ndarray, zero_points: np.ndarray | None,
                      columns: int) -> Iterator[np.ndarray]:
    """The dequantized weight, ``columns`` blocked vectors at a time (float32): MatMulNBits'
    ``[K, columns]`` output columns, GatherBlockQuantized's ``[columns, K]`` table rows, so
    the memory a reader needs does not grow with the matrix."""
    lay = pw.layout
    b = np.asarray(b).reshape(lay.n, -1)
    s = np.asarray(scales).reshape(lay.n, -1)
    zp = None
    if zero_points is not None:
        zp = np.asarray(zero_points).reshape(lay.n, -1)
    for start in range(0, lay.n, max(1, columns)):
        stop = min(lay.n, start + columns)
        part = NBitsLayout(lay.k, stop - start, lay.bits, lay.block_size)
        w = matmul_nbits_weight(part, b[start:stop], s[start:stop], None if zp is None else zp[start:stop])
        yield w if pw.op_type == "MatMulNBits" else np.ascontiguousarray(w.T)
