"""Where a value's shape comes from: declared in the file, inferred, or seen in a run.

A label on an edge is one shape; a user deciding whether to trust it wants its source.
:func:`value_fact` gathers, for one value, what the file declares (graph input/output or
``value_info``), what the shape engine infers, and what the last run produced, and says
whether the declaration contradicts the inference (:func:`conflict`).

A contradiction is stated only where it is certain: the element types differ (both
known), the ranks differ (both known), or a dim the engine computes as a number is
declared as another number or as a name (a name promises "varies"; the model always gives
that number). A symbolic dim the engine leaves symbolic, or an unknown one, is no
contradiction: the engine may know less than the file, never something else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import onnx

from editor.shapes.engine import ShapeTable, ValueShape, shape_of_type
from editor.shapes.symbolic import to_text

__all__ = ["ValueFact", "value_fact", "conflict", "shape_text", "observed_value_info", "graph_conflicts"]


@dataclass(frozen=True)
class ValueFact:
    """What is known of one value's type and shape, by source (None: that source says nothing)."""

    name: str
    declared: str | None
    inferred: str | None
    observed: str | None = None
    #: how the declaration contradicts the inference (None: it does not)
    conflict: str | None = None


def _dtype(elem_type: int) -> str:
    from editor.shapes.declare import dtype_name

    return dtype_name(elem_type) or "?"


def shape_text(vs: ValueShape) -> str | None:
    """``float32 [batch, 3, 224, 224]`` (None when neither type nor rank is known)."""
    if not vs.elem_type and vs.dims is None:
        return None
    dims = "[?]" if vs.dims is None else "[" + ", ".join("?" if d is None else to_text(d) for d in vs.dims) + "]"
    return f"{_dtype(vs.elem_type)} {dims}"


def conflict(declared: ValueShape, inferred: ValueShape) -> str | None:
    """How ``declared`` contradicts ``inferred`` (see the module docstring), else None."""
    if declared.elem_type and inferred.elem_type and declared.elem_type != inferred.elem_type:
        return f"declared {_dtype(declared.elem_type)}, the model computes {_dtype(inferred.elem_type)}"
    if declared.dims is None or inferred.dims is None:
        return None
    if len(declared.dims) != len(inferred.dims):
        return f"declared rank {len(declared.dims)}, the model computes rank {len(inferred.dims)}"
    for k, (d, i) in enumerate(zip(declared.dims, inferred.dims)):
        if not isinstance(i, int) or d is None:
            continue
        if isinstance(d, int):
            if d != i:
                return f"declares dim {k} as {d}, the model computes {i}"
        else:
            return f"declares dim {k} as {to_text(d)!r} (varies), the model always computes {i}"
    return None


def _declared(graph: onnx.GraphProto) -> dict[str, onnx.ValueInfoProto]:
    out = {vi.name: vi for vi in graph.value_info}
    out.update({vi.name: vi for vi in graph.output})
    out.update({vi.name: vi for vi in graph.input})
    return out


def value_fact(name: str, graph: onnx.GraphProto, table: ShapeTable | None,
               observed: Mapping[str, tuple[str | None, Sequence[int] | None]] | None = None, *,
               declared: Mapping[str, onnx.ValueInfoProto] | None = None) -> ValueFact:
    """The :class:`ValueFact` of value ``name`` of ``graph``. ``observed``: name ->
    (dtype, shape) of a run's values; ``declared`` (optional) the graph's declarations by
    name, when the caller asks for many values."""
    decl = (declared if declared is not None else _declared(graph)).get(name)
    dvs = shape_of_type(decl.type) if decl is not None and decl.HasField("type") else None
    ivs = table.get(name) if table is not None else None
    seen = None
    if observed and name in observed:
        dtype, shape = observed[name]
        seen = f"{dtype or '?'} {list(shape) if shape is not None else '(not a tensor)'}"
    return ValueFact(
        name,
        declared=shape_text(dvs) if dvs is not None else None,
        inferred=shape_text(ivs) if ivs is not None else None,
        observed=seen,
        conflict=conflict(dvs, ivs) if dvs is not None and ivs is not None else None,
    )


def graph_conflicts(graph: onnx.GraphProto, table: ShapeTable) -> dict[str, str]:
    """Value name -> contradiction, for the graph's outputs and value_info (the inputs are
    where the engine starts: they cannot contradict it)."""
    out: dict[str, str] = {}
    for vi in list(graph.output) + list(graph.value_info):
        if not vi.HasField("type") or vi.name not in table.values:
            continue
        found = conflict(shape_of_type(vi.type), table.get(vi.name))
        if found:
            out.setdefault(vi.name, found)
    return out


def observed_value_info(observed: Mapping[str, tuple[str | None, Sequence[int] | None]]
                        ) -> dict[str, onnx.ValueInfoProto]:
    """ValueInfoProtos of a run's tensors (their actual dims), for labelling edges with the
    shapes of the last run instead of the symbolic ones."""
    import numpy as np

    out: dict[str, onnx.ValueInfoProto] = {}
    for name, (dtype, shape) in observed.items():
        if shape is None or dtype is None:
            continue
        try:
            elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        except (TypeError, KeyError, ValueError):
            continue
        out[name] = onnx.helper.make_tensor_value_info(name, elem, [int(d) for d in shape])
    return out
