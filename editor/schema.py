"""Operator knowledge, read from the runtimes at run time (never hand-written lists).

Answers: which ops a domain offers at an opset, an op's schema at the model's opset, its
attributes with types and defaults, how many inputs and outputs it takes.

onnx's schemas (``onnx.defs``) come first; the ops only onnxruntime defines (its contrib
domains and the contrib ops it registers in the default domain) come from onnxruntime's
own registry (:mod:`editor.ort_schemas`), which joins onnx's on the first lookup that needs
it. :func:`schema_source` says which runtime knows an op.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import onnx
from onnx import defs

from editor.ort_schemas import ensure_registered, is_runtime_schema

AttrType = onnx.defs.OpSchema.AttrType

#: OpSchema.AttrType -> AttributeProto.AttributeType (the enums share names)
ATTR_PROTO_TYPE: dict[AttrType, int] = {
    t: getattr(onnx.AttributeProto, t.name) for t in AttrType if hasattr(onnx.AttributeProto, t.name)
}


def canonical_domain(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


@lru_cache(maxsize=4096)
def get_schema(op_type: str, domain: str = "", opset: int | None = None) -> defs.OpSchema | None:
    """The schema of ``domain.op_type`` in force at ``opset`` (newest if None), or None."""
    domain = canonical_domain(domain)
    found = _lookup(op_type, domain, opset)
    if found is None:
        ensure_registered()  # onnx does not know it: onnxruntime's registry may
        found = _lookup(op_type, domain, opset)
    return found


def _lookup(op_type: str, domain: str, opset: int | None) -> defs.OpSchema | None:
    try:
        if opset is None:
            return defs.get_schema(op_type, domain)
        return defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        return None


def schema_source(op_type: str, domain: str = "", opset: int | None = None) -> str:
    """Which runtime's schema of ``domain.op_type`` is in force at ``opset`` (newest if
    None): 'onnx', 'onnxruntime' (a version only onnxruntime defines) or '' (neither)."""
    schema = get_schema(op_type, domain, opset)
    if schema is None:
        return ""
    return "onnxruntime" if is_runtime_schema(domain, op_type, schema.since_version) else "onnx"


@lru_cache(maxsize=64)
def ops_in_domain(domain: str, opset: int | None = None) -> tuple[str, ...]:
    """Names of the ops of ``domain`` that exist at ``opset`` (not deprecated there)."""
    domain = canonical_domain(domain)
    ensure_registered()
    names = set()
    for s in defs.get_all_schemas_with_history():
        if canonical_domain(s.domain) != domain:
            continue
        if opset is not None and s.since_version > opset:
            continue
        names.add(s.name)
    out = []
    for name in sorted(names):
        s = get_schema(name, domain, opset)
        if s is not None and not s.deprecated:
            out.append(name)
    return tuple(out)


def known_domains() -> tuple[str, ...]:
    ensure_registered()
    return tuple(sorted({canonical_domain(s.domain) for s in defs.get_all_schemas()}))


@dataclass(frozen=True)
class AttrSpec:
    name: str
    type: int  # AttributeProto.AttributeType
    required: bool
    default: onnx.AttributeProto | None
    doc: str


def attribute_specs(schema: defs.OpSchema) -> dict[str, AttrSpec]:
    out = {}
    for name, a in schema.attributes.items():
        default = a.default_value if a.default_value.type != onnx.AttributeProto.UNDEFINED else None
        out[name] = AttrSpec(name, ATTR_PROTO_TYPE.get(a.type, 0), a.required, default, a.description)
    return out


def input_count_range(schema: defs.OpSchema) -> tuple[int, int]:
    """(min, max) inputs; max is a large number for variadic ops."""
    return schema.min_input, schema.max_input


def output_count_range(schema: defs.OpSchema) -> tuple[int, int]:
    return schema.min_output, schema.max_output


def default_io_names(schema: defs.OpSchema) -> tuple[list[str], list[str]]:
    """Formal names of the required inputs and outputs, to name new node ports."""
    ins = [p.name for p in schema.inputs if p.option != defs.OpSchema.FormalParameterOption.Optional]
    outs = [p.name for p in schema.outputs if p.option != defs.OpSchema.FormalParameterOption.Optional]
    return ins, outs


def runtime_ops() -> tuple[tuple[str, str, int], ...]:
    """(domain, op, first version) of every op only onnxruntime defines, sorted."""
    first: dict[tuple[str, str], int] = {}
    for domain, name, since in ensure_registered().schemas:
        first[(domain, name)] = min(first.get((domain, name), since), since)
    return tuple(sorted((d, n, v) for (d, n), v in first.items()))
