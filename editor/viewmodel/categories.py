"""Colour categories of operators, derived from ``onnx.defs`` at run time.

No operator list is written by hand here. Each category is a rule over the metadata the ONNX
schema registry carries for every operator:

* ``schema.file`` -- the source file the ONNX project itself files the operator under
  (``defs/nn``, ``defs/math``, ``defs/tensor``, ``defs/logical``, ``defs/controlflow`` ...);
  this is the project's own taxonomy and the backbone of the rules;
* attributes (a ``kernel_shape`` attribute means a sliding-window operator; an attribute of
  type GRAPH means control flow), formal inputs (a weight input ``W``/``B``/``scale``),
  whether the schema is defined as a function body, deprecation, the domain
  (``ai.onnx.ml`` -> ``ml``), and words of the schema's own doc string.

The result is cached per ``(domain, op_type, opset)``. Unknown operators (custom domains)
are ``"custom"``.
"""

from __future__ import annotations

import re
from functools import lru_cache

import onnx
import onnx.defs

from editor import ort_schemas
from editor.schema import get_schema

#: Every category a box can have, in a stable order (the canvas maps them to colours).
CATEGORIES: tuple[str, ...] = (
    "layer", "activation", "pool", "normalization", "dropout", "shape", "tensor", "math",
    "reduce", "logic", "control", "quantization", "generator", "sequence", "ml",
    "training", "deprecated", "custom", "input", "output", "group",
)

_GRAPH_ATTR_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def _section(schema: onnx.defs.OpSchema) -> str:
    """``nn`` for ``onnx/defs/nn/defs.cc``: the folder ONNX files the operator under.

    onnxruntime's contrib ops (:mod:`editor.ort_schemas`) carry no onnx file: its own
    ``quantization_defs.cc`` files the Q/DQ ops, and the rest (attention, fused norms,
    MatMulNBits, NCHWc convolutions) read as ``nn``, where the doc decides the category."""
    path = schema.file.replace("\\", "/")
    if "/defs/" in path:
        return path.split("/defs/", 1)[1].split("/", 1)[0]
    runtime_file = ort_schemas.runtime_file(schema.domain, schema.name)
    if runtime_file:
        return "quantization" if schema.name.endswith("QuantizeLinear") else "nn"
    return ""


def _doc(schema: onnx.defs.OpSchema) -> str:
    return " ".join((schema.doc or "").split()).lower()


def _is_activation(schema: onnx.defs.OpSchema, doc: str) -> bool:
    # Activations are the element-wise math operators of one data input whose doc string
    # describes a non-linearity; ONNX defines most of them as function bodies.
    piecewise = bool(re.search(r"x\s*<\s*-?\s*(0|lambd)", doc))  # f(x) = ... for x < 0
    if schema.min_input != 1 and not piecewise and "activation" not in doc:
        return False
    first = schema.inputs[0].name if schema.inputs else ""
    if first in ("size",):  # window generators (HannWindow ...) are function bodies too
        return False
    words = ("activation", "sigmoid", "hyperbolic tangent", "rectified", "linear unit",
             "softmax", "hardmax", "softplus", "softsign", "swish", "gelu", "mish",
             "limits the given input within an interval")
    return piecewise or any(w in doc for w in words)


def _categorize(schema: onnx.defs.OpSchema) -> str:
    section = _section(schema)
    doc = _doc(schema)
    attrs = schema.attributes
    if schema.domain == "ai.onnx.ml" or section == "traditionalml":
        return "ml"
    if section == "training" or schema.domain == "ai.onnx.preview.training":
        return "training"
    if section == "controlflow" or any(a.type in _GRAPH_ATTR_TYPES for a in attrs.values()):
        return "control"
    if section == "quantization":
        return "quantization"
    if schema.deprecated:
        return "deprecated"
    if section == "logical":
        return "logic"
    if section == "reduction":
        return "reduce"
    if section in ("generator",):
        return "generator"
    if section in ("sequence", "optional"):
        return "sequence"
    if section == "rnn":
        return "layer"
    input_names = {p.name.lower() for p in schema.inputs}
    if section == "nn":
        if _is_activation(schema, doc) and not ({"w", "weight"} & input_names):
            return "activation"
        if "dropout" in doc.split(" ", 3)[0:3] or "dropout" in schema.name.lower():
            return "dropout"
        if "normaliz" in doc[:200]:
            return "normalization"
        if "pool" in doc[:200] and not ({"w", "weight"} & input_names):
            return "pool"
        if not schema.inputs or schema.min_input == 1 and "kernel_shape" not in attrs and "shape" in doc[:80]:
            return "shape"
        return "layer"
    if section == "math":
        if "matrix product" in doc[:120] or "matrix multiplication" in doc[:120] or schema.name.lower() == "einsum":
            return "layer"
        if _is_activation(schema, doc):
            return "activation"
        if "size" in input_names and schema.min_input <= 1 and schema.has_function:
            return "generator"
        if "shape" in input_names:
            return "shape"
        return "math"
    if section == "tensor":
        first_sentence = doc.split(". ", 1)[0][:100]
        if "shape" in input_names or "shape" in first_sentence or "flatten" in first_sentence:
            return "shape"
        return "tensor"
    if section in ("image", "text", "object_detection"):
        return "tensor"
    return "custom"


@lru_cache(maxsize=4096)
def category_of(op_type: str, domain: str = "", opset: int | None = None) -> str:
    """Colour category of ``domain::op_type`` at ``opset`` (latest version when ``None``)."""
    schema = get_schema(op_type, domain, opset) or get_schema(op_type, domain)
    return _categorize(schema) if schema is not None else "custom"


@lru_cache(maxsize=1)
def category_table() -> dict[tuple[str, str], str]:
    """``(domain, op_type) -> category`` for the latest version of every registered schema."""
    ort_schemas.ensure_registered()
    latest: dict[tuple[str, str], onnx.defs.OpSchema] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        key = (s.domain, s.name)
        if key not in latest or latest[key].since_version < s.since_version:
            latest[key] = s
    return {k: _categorize(s) for k, s in sorted(latest.items())}
