"""Which axes a dimension edit rewrites, before it is made (the Set Dimension preview).

Naming a dim across several inputs means "this is the same dim everywhere": the batch of
``input [batch, sequence]`` is the batch of ``state [2, batch, 128]``, at axis 1 there.
So the reference dim (the chosen axis of the first chosen input) decides:

- symbolic (``batch``): every axis of the chosen inputs that carries that same symbol is
  rewritten, whatever its position; fixed dims are never touched;
- fixed (``1``): the chosen axis of each chosen input that holds that same size;
- unknown: the chosen axis of each chosen input whose dim is unknown too.

Qt-free; ``widgets.editing.graph_io.DimensionDialog`` shows the plan and applies it as
one ``SetDimension`` per axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Dim = int | str | None


@dataclass(frozen=True)
class DimChange:
    """One axis of one value: its dim now and after the edit."""

    name: str
    axis: int
    old: Dim
    new: Dim


def value_dims(doc, sid: int, name: str) -> list[Dim] | None:
    """The declared dims of a value (a size, a symbol or None each); None when unranked."""
    vi = doc.value_info(sid, name)
    if vi is None or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    out: list[Dim] = []
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def plan_dim_changes(doc, sid: int, names: Sequence[str], axis: int, new: Dim) -> list[DimChange]:
    """The axes the edit rewrites (see module docstring); axes already equal to ``new``
    are left out. The first of ``names`` with a dim at ``axis`` is the reference."""
    shapes = {n: value_dims(doc, sid, n) for n in names}
    reference = next((dims[axis] for dims in shapes.values() if dims is not None and axis < len(dims)), "\0none")
    if reference == "\0none":
        return []
    out: list[DimChange] = []
    for name in names:
        dims = shapes[name]
        if dims is None:
            continue
        if isinstance(reference, str):
            axes = [i for i, d in enumerate(dims) if d == reference]
        else:
            axes = [axis] if axis < len(dims) and dims[axis] == reference else []
        out += [DimChange(name, i, dims[i], new) for i in axes if dims[i] != new]
    return out


def shape_text(dims: Sequence[Dim] | None) -> str:
    if dims is None:
        return "(any rank)"
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def preview_lines(doc, sid: int, changes: Sequence[DimChange]) -> list[str]:
    """``state: [2, batch, 128] -> [2, N, 128]``, one line per value the edit changes."""
    lines = []
    for name in dict.fromkeys(c.name for c in changes):
        before = value_dims(doc, sid, name)
        after = list(before or [])
        for c in changes:
            if c.name == name:
                after[c.axis] = c.new
        lines.append(f"{name}: {shape_text(before)} -> {shape_text(after)}")
    return lines
