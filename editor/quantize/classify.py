"""Which nodes of the float model a quantized model computes in integers, and the share of
the multiply-accumulates that moved with them.

onnxruntime's tools leave a trail this reads back, per format:

* QDQ: the node keeps its name and op type; its inputs now come from DequantizeLinear
  (onnxruntime fuses DequantizeLinear -> op -> QuantizeLinear into an integer kernel when it
  loads the model). The kind is the type the DequantizeLinear reads (int8, uint8 -> "int8";
  int16 -> "int16"; int4 -> "int4 weights" when only the weight is quantized). A Conv whose
  output is read by anything but QuantizeLinear cannot be fused (onnxruntime's QDQ Conv
  selector wants the Q): it computes in float on dequantized inputs, and is counted float;
  MatMul and Gemm fuse without one (MatMulIntegerToFloat, QGemm with a float output);
* QOperator and dynamic: the node is replaced by ``<name>_quant`` (QLinearConv,
  ConvInteger, MatMulInteger, DynamicQuantizeMatMul ...);
* weight-only int4: ``<name>_Q4`` (MatMulNBits), with ``bits`` saying how narrow.

The MACs are the cost model's (:mod:`editor.cost`) on the float model, so a share compares
like with like whatever the quantized graph looks like.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import onnx

__all__ = ["COMPUTE_OPS", "NEEDS_Q", "MacShare", "mac_share", "quantized_nodes"]

#: the ops whose MACs a quantization is about (the Conv/MatMul family)
COMPUTE_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm", "FusedConv", "FusedMatMul", "Attention",
                         "MultiHeadAttention", "Einsum"})
_DQ = ("DequantizeLinear",)
#: QDQ ops onnxruntime fuses only when their output goes to QuantizeLinear
NEEDS_Q = frozenset({"Conv", "ConvTranspose"})
_DYNAMIC = ("ConvInteger", "MatMulInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM", "MatMulIntegerToFloat",
            "DynamicQuantizeLinear")
_BITS = {onnx.TensorProto.INT8: "int8", onnx.TensorProto.UINT8: "int8", onnx.TensorProto.INT16: "int16",
         onnx.TensorProto.UINT16: "int16", onnx.TensorProto.INT4: "int4", onnx.TensorProto.UINT4: "int4"}


def _elem_types(model: onnx.ModelProto) -> dict[str, int]:
    """Element types of the weights, of what QuantizeLinear makes (its zero point's type, or
    ``output_dtype``: the result keeps no value_info) and of what value_info declares."""
    g = model.graph
    out = {t.name: t.data_type for t in g.initializer}
    for n in g.node:
        if n.op_type == "QuantizeLinear" and n.output:
            dtype = next((a.i for a in n.attribute if a.name == "output_dtype"), 0)
            if not dtype and len(n.input) > 2:
                dtype = out.get(n.input[2], 0)
            if dtype:
                out[n.output[0]] = dtype
    for vi in [*g.input, *g.value_info, *g.output]:
        if vi.type.HasField("tensor_type"):
            out.setdefault(vi.name, vi.type.tensor_type.elem_type)
    return out


def _replaced_kind(node: onnx.NodeProto) -> str:
    if node.op_type in ("MatMulNBits", "GatherBlockQuantized", "MatMulBnb4"):
        bits = next((a.i for a in node.attribute if a.name == "bits"), 4)
        return f"int{bits} weights"
    if node.op_type in _DYNAMIC:
        return "int8 dynamic"
    return "int8"


def quantized_nodes(float_model: onnx.ModelProto, quantized: onnx.ModelProto) -> dict[str, str]:
    """Main-graph node of ``float_model`` (by name) -> its kind in ``quantized`` (module
    docstring); nodes still in float are absent."""
    by_name = {n.name: n for n in quantized.graph.node if n.name}
    producer = {o: n for n in quantized.graph.node for o in n.output if o}
    readers: dict[str, list[str]] = {}
    for n in quantized.graph.node:
        for x in n.input:
            readers.setdefault(x, []).append(n.op_type)
    for o in quantized.graph.output:
        readers.setdefault(o.name, []).append("")
    types = _elem_types(quantized)
    out: dict[str, str] = {}
    for node in float_model.graph.node:
        if not node.name:
            continue
        same = by_name.get(node.name)
        if same is not None and same.op_type != node.op_type:
            out[node.name] = _replaced_kind(same)
            continue
        if same is not None:
            dq = [producer[x] for x in same.input if x in producer and producer[x].op_type in _DQ]
            if not dq:
                continue
            if same.op_type in NEEDS_Q and any(r != "QuantizeLinear" for o in same.output if o
                                                 for r in readers.get(o, [])):
                continue  # not fusable: float compute on dequantized inputs
            kinds = {_BITS.get(types.get(d.input[0], 0), "int8") for d in dq}
            kind = "int16" if "int16" in kinds else "int4" if kinds == {"int4"} else "int8"
            if kind == "int4" and any(x and not (x in producer and producer[x].op_type in _DQ) for x in same.input):
                kind = "int4 weights"  # a float activation times int4 weights
            out[node.name] = kind
            continue
        for suffix in ("_quant", "_Q4", "_Q8", "_Q2", "_matmul_Q4"):
            replaced = by_name.get(node.name + suffix)
            if replaced is not None:
                out[node.name] = _replaced_kind(replaced)
                break
    return out


@dataclass
class MacShare:
    """MACs of the float model by how the quantized model computes them."""

    #: kind ('int8', 'int4 weights', 'float' ...) -> MACs, every node
    total: dict[str, int] = field(default_factory=dict)
    #: the same over the Conv/MatMul family (:data:`COMPUTE_OPS`) only
    compute: dict[str, int] = field(default_factory=dict)
    #: MACs per float-model node name (what the sensitivity table shows)
    per_node: dict[str, int] = field(default_factory=dict)
    #: nodes whose MACs the cost model could not give
    unknown: int = 0

    def share(self, kind_prefix: str = "int8", *, compute: bool = True) -> float | None:
        """The fraction of (Conv/MatMul, or all) MACs whose kind starts with ``kind_prefix``."""
        table = self.compute if compute else self.total
        whole = sum(table.values())
        if not whole:
            return None
        return sum(v for k, v in table.items() if k.startswith(kind_prefix)) / whole

    def integer_share(self, *, compute: bool = True) -> float | None:
        """The fraction of MACs in any integer kind (int8, int4 weights ...)."""
        table = self.compute if compute else self.total
        whole = sum(table.values())
        return sum(v for k, v in table.items() if k != "float") / whole if whole else None

    def to_json(self) -> dict[str, Any]:
        return {"macs_by_kind": self.total, "conv_matmul_macs_by_kind": self.compute,
                "conv_matmul_int8_share": self.share("int8"), "conv_matmul_integer_share": self.integer_share(),
                "int8_share": self.share("int8", compute=False), "unknown_nodes": self.unknown}


def mac_share(float_model: onnx.ModelProto, kinds: Mapping[str, str],
              dims: Mapping[str, int] | None = None) -> MacShare:
    """MACs of ``float_model``'s nodes grouped by their kind in ``kinds`` (absent: float),
    with the model's free dims at ``dims`` (the inputs' sizes)."""
    from editor.cost import model_cost

    cost = model_cost(float_model, dims)
    share = MacShare()
    for nc in cost.nodes:
        macs = cost.evaluate(nc.macs, dims)
        if macs is None:
            share.unknown += 1
            continue
        if not macs:
            continue
        kind = kinds.get(nc.name, "float")
        share.per_node[nc.name] = macs
        share.total[kind] = share.total.get(kind, 0) + macs
        if nc.op_type in COMPUTE_OPS:
            share.compute[kind] = share.compute.get(kind, 0) + macs
    return share
