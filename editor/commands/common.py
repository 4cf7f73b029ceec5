"""Precondition helpers and value conversions shared by the commands."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import onnx

from editor.document import Document, NodeId, Scope, ScopeId
from editor.document.document import describe
from editor.errors import CommandError

__all__ = ["check_node", "check_scope", "describe", "fresh_name", "make_attribute", "require"]

A = onnx.AttributeProto


def require(condition: bool, message: str) -> None:
    """Refuse the edit with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CommandError(message)


def check_node(doc: Document, nid: NodeId) -> onnx.NodeProto:
    require(isinstance(nid, int) and doc.has_node(nid), f"there is no node with id {describe(nid)}")
    return doc.node(nid)


def check_scope(doc: Document, sid: ScopeId) -> Scope:
    require(isinstance(sid, int) and sid in doc.index.scopes, f"there is no graph with id {describe(sid)}")
    return doc.scope(sid)


def fresh_name(base: str, taken: Iterable[str] | set[str]) -> str:
    """``base`` if free, else ``base_1``, ``base_2`` ... (never a name in ``taken``)."""
    if not hasattr(taken, "__contains__"):
        taken = set(taken)  # an iterator: a lookup (a set, the index's view) is used as it is
    base = base or "value"
    if base not in taken:
        return base
    stem = re.sub(r"_\d+$", "", base)
    k = 1
    while f"{stem}_{k}" in taken:
        k += 1
    return f"{stem}_{k}"


_SCALAR_TYPES = {A.FLOAT, A.INT, A.STRING}
_LIST_OF = {A.FLOATS: A.FLOAT, A.INTS: A.INT, A.STRINGS: A.STRING}


def make_attribute(name: str, value: Any, attr_type: int | None = None) -> onnx.AttributeProto:
    """An AttributeProto from a Python value, coerced to ``attr_type`` when given.

    Accepts: int, float, str/bytes, numpy arrays or TensorProto (TENSOR), GraphProto (GRAPH),
    SparseTensorProto, TypeProto, lists of those, and AttributeProto itself (copied, renamed).
    Refuses values that do not fit ``attr_type`` with a message that quotes them.
    """
    if isinstance(value, onnx.AttributeProto):
        attr = A()
        attr.CopyFrom(value)
        attr.name = name
        require(attr_type is None or attr.type == attr_type or attr.ref_attr_name,
                f"attribute {name!r} must be {A.AttributeType.Name(attr_type)}, "
                f"not {A.AttributeType.Name(attr.type)}")
        return attr
    # onnx.helper.make_attribute iterates any iterable: a dict would silently become the
    # STRINGS of its keys, a set a list in hash order. Neither is an attribute value.
    if isinstance(value, (dict, set, frozenset)) or value is None:
        raise CommandError(f"attribute {name!r}: cannot store {describe(value)} (not an attribute value)")
    if isinstance(value, np.ndarray):
        if attr_type in _LIST_OF:
            value = value.reshape(-1).tolist()
        elif attr_type in _SCALAR_TYPES and value.size == 1:
            value = value.reshape(-1)[0].item()
        else:  # TENSOR, or no declared type: an array is a tensor
            from editor.commands.tensors import array_to_tensor

            value = array_to_tensor(value, name="")
    if isinstance(value, np.generic):
        value = value.item()
    try:
        if attr_type is not None:
            value = _coerce(name, value, attr_type)
            return onnx.helper.make_attribute(name, value, attr_type=attr_type)
        return onnx.helper.make_attribute(name, value)
    except CommandError:
        raise
    except (TypeError, ValueError) as exc:
        raise CommandError(f"attribute {name!r}: cannot store {describe(value)} ({exc})") from exc


def _coerce(name: str, value: Any, attr_type: int) -> Any:
    """Convert ``value`` to what ``attr_type`` holds, refusing lossy conversions."""
    tname = A.AttributeType.Name(attr_type)

    def bad() -> CommandError:
        return CommandError(f"attribute {name!r} must be {tname}, not {describe(value)}")

    def one(v: Any, t: int) -> Any:
        if t == A.INT:
            if isinstance(v, bool) or isinstance(v, (int, np.integer)):
                return int(v)
            if isinstance(v, float) and v.is_integer():
                return int(v)
            if isinstance(v, str):
                try:
                    return int(v.strip())
                except ValueError:
                    raise bad() from None
            raise bad()
        if t == A.FLOAT:
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                return float(v)
            if isinstance(v, str):
                try:
                    return float(v.strip())
                except ValueError:
                    raise bad() from None
            raise bad()
        if t == A.STRING:
            if isinstance(v, (str, bytes)):
                return v
            raise bad()
        return v

    if attr_type in _SCALAR_TYPES:
        if isinstance(value, (list, tuple)):
            raise bad()
        return one(value, attr_type)
    if attr_type in _LIST_OF:
        if isinstance(value, (str, bytes)) and attr_type != A.STRINGS:
            raise bad()
        if not isinstance(value, (list, tuple)):
            raise bad()
        return [one(v, _LIST_OF[attr_type]) for v in value]
    if attr_type == A.TENSOR and not isinstance(value, onnx.TensorProto):
        raise bad()
    if attr_type == A.GRAPH and not isinstance(value, onnx.GraphProto):
        raise bad()
    if attr_type == A.SPARSE_TENSOR and not isinstance(value, onnx.SparseTensorProto):
        raise bad()
    if attr_type == A.TYPE_PROTO and not isinstance(value, onnx.TypeProto):
        raise bad()
    if attr_type in (A.TENSORS, A.GRAPHS, A.SPARSE_TENSORS, A.TYPE_PROTOS):
        kind = {A.TENSORS: onnx.TensorProto, A.GRAPHS: onnx.GraphProto,
                A.SPARSE_TENSORS: onnx.SparseTensorProto, A.TYPE_PROTOS: onnx.TypeProto}[attr_type]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, kind) for v in value):
            raise bad()
    return value


def attribute_value(attr: onnx.AttributeProto) -> Any:
    """The Python value of an attribute (tensors stay TensorProtos)."""
    return onnx.helper.get_attribute_value(attr)
