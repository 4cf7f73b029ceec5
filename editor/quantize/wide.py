"""Which activation tensors can be quantized at 16 bits without taking a Conv/MatMul out of int8.

onnxruntime runs a QDQ Conv or MatMul as an integer kernel only when the activations it
reads (and, for a Conv, writes) are 8-bit. Every other activation, what the Conv/MatMul
family neither reads nor writes (the insides of a hardswish, a LayerNorm, a Softmax, a
squeeze-excite gate, a learnable affine after an activation), can be quantized at 16 bits
(onnxruntime's ``TensorQuantOverrides``): an integer format still, for the NPUs that run
QDQ graphs, at no cost in int8 MACs. ``--auto`` uses these before it takes any
Conv/MatMul out of int8 (:mod:`editor.quantize.auto`), and for the ones it must, widens
the tensors around them rather than keep them in float.

Measured on PP-OCRv4's text recognizer (onnxruntime's ``qdq_loss_debug``, README): the
accuracy lost to 8 bits is in the activations, not the weights (int8 weights with 16-bit
activations: cosine 0.991 against 0.876 with both 8-bit), and most of it in the first
few Convs at full resolution, whose share of the MACs is small.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from editor.quantize.classify import COMPUTE_OPS

__all__ = ["free_tensors", "node_tensors", "wider"]

#: ops whose outputs are not activations onnxruntime quantizes
_NOT_ACTIVATIONS = frozenset({"Constant", "Shape", "Size"})


def wider(activation_type: str) -> str:
    """The 16-bit sibling of an activation type ('uint8' -> 'uint16'); 16-bit types stay."""
    return {"uint8": "uint16", "int8": "int16"}.get(activation_type, activation_type)


def node_tensors(model: onnx.ModelProto, nodes: Iterable[str]) -> list[str]:
    """The activation tensors the named nodes read and write (weights are not activations)."""
    g = model.graph
    weights = {t.name for t in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    wanted = set(nodes)
    out: dict[str, None] = {}
    for n in g.node:
        if n.name in wanted:
            out.update((x, None) for x in (*n.input, *n.output) if x and x not in weights)
    return list(out)


def free_tensors(model: onnx.ModelProto) -> list[str]:
    """Activations no Conv/MatMul-family node reads or writes, in graph order."""
    g = model.graph
    at_macs = set(node_tensors(model, (n.name for n in g.node if n.op_type in COMPUTE_OPS)))
    return [o for n in g.node if n.op_type not in _NOT_ACTIVATIONS for o in n.output if o and o not in at_macs]
