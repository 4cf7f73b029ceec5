"""Enum attributes by name: ``Cast to: int64``, not ``to: 7``.

ONNX stores some enumerations as integers. Which attributes are data types is read from
the operator schemas (an ``INT`` attribute whose documentation says it is a data type or
a precision: Cast ``to``, EyeLike ``dtype``, QuantizeLinear ``output_dtype``,
LayerNormalization ``stash_type``, ...), so new operators are covered without a list here;
onnxruntime's contrib ops are read from its registry (:mod:`editor.ort_schemas`), and
operators no runtime knows fall back to the attribute names those schemas use. String
enumerations (``mode``, ``reduction``, ``auto_pad``, ``norm``) are names
already. Qt-free: the canvas boxes, the properties panel and the CLI share it.
"""

from __future__ import annotations

import re
from functools import lru_cache

import onnx

#: documentation wording of an INT attribute that holds a TensorProto data type
_DTYPE_DOC = re.compile(r"data ?type|precision|TensorProto|\btype of\b", re.IGNORECASE)
#: the names schemas give data-type attributes: used for operators without a schema
_DTYPE_NAMES = frozenset({"to", "dtype", "output_dtype", "output_datatype", "stash_type"})


@lru_cache(maxsize=4096)
def is_dtype_attribute(op_type: str, domain: str, name: str) -> bool:
    """Whether attribute ``name`` of ``domain::op_type`` holds a TensorProto data type."""
    from editor.schema import get_schema

    schema = get_schema(op_type, domain)
    if schema is None:  # no schema in onnx or onnxruntime (a custom op): go by the name
        return name in _DTYPE_NAMES
    spec = schema.attributes.get(name)
    if spec is None or spec.type != onnx.defs.OpSchema.AttrType.INT:
        return False
    return bool(_DTYPE_DOC.search(spec.description or ""))


def dtype_label(value: int) -> str | None:
    """``7`` -> ``"int64"`` (the names used everywhere else, :func:`editor.types.dtype_name`);
    None for a number that is no data type."""
    from editor.types import dtype_name

    if value <= 0:
        return None
    name = dtype_name(value)
    return None if name.startswith("unknown") else name


def enum_name(op_type: str, domain: str, attr: onnx.AttributeProto) -> str | None:
    """The name an integer enum attribute stands for (``"int64"``), or None when the
    attribute is no enum or the number names nothing."""
    if attr.type != onnx.AttributeProto.INT or not is_dtype_attribute(op_type, domain or "", attr.name):
        return None
    return dtype_label(int(attr.i))
