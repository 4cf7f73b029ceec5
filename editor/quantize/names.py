"""Short names for what onnxruntime's QDQ quantizer adds, and one copy of each equal scale.

A QDQ file spells every QuantizeLinear / DequantizeLinear and the tensors around them with
the quantized tensor's name and a suffix (``ConvAddFusion_Add_B_Reshape@10_quantized_scale``,
``..._DequantizeLinear_Output``): measured on PP-OCR's direction classifier, 90 KB of its
114 KB of nodes are such names, beside 137 KB of int8 weights, so the file was 0.55x the
float model's where the weights alone make 0.3x. And every scale and zero point is its own
initializer, though half of them (178 of 358 scalars there) equal another.

:func:`shorten_generated_names` renames only what the quantizer made: the tensors and nodes
the float model (as quantized) does not have get short names (tensors ``q1f``, nodes
``DQ1f`` / ``Q1f``), and equal scalar scales / zero points are one initializer read by
every Q/DQ that needs it. Every tensor and
node of the user's model keeps its name, so the compare engine maps the float model onto
the result as before (it pairs QDQ tensors by the float tensors' names and the nodes'). Not
for the QOperator format or dynamic quantization: the compare engine finds their tensors by
the quantizer's ``X_quantized`` spelling. Nor for a model with subgraphs (If, Loop), whose
nodes may read the main graph's names.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import onnx

__all__ = ["shorten_generated_names"]


def _known(model: onnx.ModelProto) -> tuple[set[str], set[str]]:
    g = model.graph
    tensors = {x for n in g.node for x in (*n.input, *n.output)}
    tensors |= {t.name for t in g.initializer} | {v.name for v in (*g.input, *g.output, *g.value_info)}
    return tensors, {n.name for n in g.node}


def _unused(taken: set[str], prefix: str) -> Iterator[str]:
    """``prefix`` + 0, 1, ... in hexadecimal, skipping names in ``taken``."""
    for k in itertools.count():
        if (name := f"{prefix}{k:x}") not in taken:
            yield name


def shorten_generated_names(model: onnx.ModelProto, float_model: onnx.ModelProto) -> int:
    """Rename what the quantizer added to ``model`` and share equal scalar initializers (in
    place; module docstring). The bytes saved."""
    before = model.ByteSize()
    g = model.graph
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in g.node for a in n.attribute):
        return 0  # a subgraph may read the main graph's names: left as onnxruntime wrote them
    keep, keep_nodes = _known(float_model)
    # equal scalars (a scale, a zero point): one initializer, the first of them
    first: dict[tuple[int, bytes], str] = {}
    alias: dict[str, str] = {}
    for t in g.initializer:
        if t.dims or t.name in keep:
            continue
        body = onnx.TensorProto()
        body.CopyFrom(t)
        body.name = ""
        key = (t.data_type, body.SerializeToString())
        if key in first:
            alias[t.name] = first[key]
        else:
            first[key] = t.name
    tensor_names = _unused(keep, "q")
    renamed: dict[str, str] = {}

    def new(name: str) -> str:
        if not name or name in keep:
            return name
        name = alias.get(name, name)
        if name not in renamed:
            renamed[name] = next(tensor_names)
        return renamed[name]

    for n in g.node:
        for i, x in enumerate(n.input):
            n.input[i] = new(x)
        for i, x in enumerate(n.output):
            n.output[i] = new(x)
    kept = [t for t in g.initializer if t.name not in alias]
    for t in kept:
        t.name = new(t.name)
    del g.initializer[:]
    g.initializer.extend(kept)
    for vi in g.value_info:
        vi.name = new(vi.name)
    node_names = {"QuantizeLinear": _unused(keep_nodes, "Q"), "DequantizeLinear": _unused(keep_nodes, "DQ")}
    other = _unused(keep_nodes, "n")
    for n in g.node:
        if n.name not in keep_nodes:
            n.name = next(node_names.get(n.op_type, other))
    return before - model.ByteSize()
