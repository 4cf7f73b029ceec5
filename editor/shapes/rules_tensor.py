"""Shape rules for shape arithmetic and tensor rearrangement: Shape, Size, Constant,
Reshape, Flatten, Transpose, (Un)Squeeze, Concat, Split, Gather, Slice, ConstantOfShape,
Expand, Tile, Pad — the ops whose small int tensors carry a torch export's shapes.

Registered into :data:`editor.shapes.rules.RULES` when :mod:`editor.shapes.rules` loads
(it imports this module at its end); helpers are that module's."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T

from editor.shapes import symbolic as S
from editor.shapes.rules import _vs, attr, axes_input, axis_of, broadcast, ints_of, rule
from editor.shapes.symbolic import Dim


@rule("Shape")
def _shape(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        if attr(node, "start") is None and attr(node, "end") is None and node.input and node.input[0]:
            # the whole shape of a value of unknown rank: one dim, its length the rank, a
            # number the run decides (If branches of different rank): a symbol, as a
            # symbolic dim is, so what follows (Gather of one dim -> [1]) stays known
            return [_vs(T.INT64, (S.symbol(f"rank({node.input[0]})"),))]
        return [_vs(T.INT64, None)]
    rank = len(x.dims)
    start = int(attr(node, "start", 0) or 0)
    end = attr(node, "end")
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = rank if end is None else max(0, min(rank, int(end) + rank if int(end) < 0 else int(end)))
    part = x.dims[start:end]
    value = None if any(d is None for d in part) else part
    return [_vs(T.INT64, (max(0, end - start),), value)]


@rule("Size")
def _size(node, inputs, ctx):
    x = inputs[0]
    value = None if x.dims is None or any(d is None for d in x.dims) else (S.product(x.dims),)
    return [_vs(T.INT64, (), value)]


@rule("Constant")
def _constant(node, inputs, ctx):
    from editor.shapes.engine import _tensor_shape

    for a in node.attribute:
        if a.name == "value":
            return [_tensor_shape(a.t)]
        if a.name in ("value_int", "value_ints", "value_float", "value_floats"):
            v = onnx.helper.get_attribute_value(a)
            elem = T.INT64 if "int" in a.name else T.FLOAT
            dims = () if a.name in ("value_int", "value_float") else (len(v),)
            value = ((v,) if a.name == "value_int" else tuple(v)) if elem == T.INT64 else None
            return [_vs(elem, dims, value)]
    return None


@rule("Reshape")
def _reshape(node, inputs, ctx):
    x, shape = inputs[0], inputs[1]
    if shape.value is None:
        n = shape.dims[0] if shape.dims and len(shape.dims) == 1 and isinstance(shape.dims[0], int) else None
        return [_vs(x.elem_type, None if n is None else (None,) * n)]
    allowzero = int(attr(node, "allowzero", 0) or 0)
    out: list[Dim | None] = []
    unknown = -1
    for k, v in enumerate(shape.value):
        if isinstance(v, int) and v == 0 and not allowzero:
            out.append(x.dims[k] if x.dims is not None and k < len(x.dims) else None)
        elif isinstance(v, int) and v == -1:
            unknown = k
            out.append(None)
        else:
            out.append(v)
    if unknown >= 0 and x.dims is not None and all(d is not None for d in x.dims):
        rest = [d for k, d in enumerate(out) if k != unknown]
        if all(d is not None for d in rest):
            out[unknown] = _divide(S.product(x.dims), S.product(rest))
    return [_vs(x.elem_type, out, x.value if x.value is not None and len(out) <= 1 else None)]


def _divide(total: Dim, part: Dim) -> Dim | None:
    """``total / part`` when it divides exactly (the -1 of a Reshape)."""
    if isinstance(part, int):
        return S.floordiv(total, part) if part > 0 else None
    if total == part:
        return 1
    if isinstance(total, S.Expr) and len(part.terms) == 1:
        (mono, coef), = part.terms.items()
        out: dict[tuple[str, ...], int] = {}
        for m, c in total.terms.items():
            rest = list(m)
            for atom in mono:
                if atom not in rest:
                    return None
                rest.remove(atom)
            if c % coef:
                return None
            out[tuple(rest)] = out.get(tuple(rest), 0) + c // coef
        return S._fold(out)  # noqa: SLF001
    return None


@rule("Flatten")
def _flatten(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        return [_vs(x.elem_type, (None, None))]
    rank = len(x.dims)
    axis = int(attr(node, "axis", 1))
    if not -rank <= axis <= rank:
        raise ValueError(f"Flatten axis {axis} out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    left, right = x.dims[:axis], x.dims[axis:]
    lv = None if any(d is None for d in left) else S.product(left)
    rv = None if any(d is None for d in right) else S.product(right)
    return [_vs(x.elem_type, (lv, rv))]


@rule("Transpose")
def _transpose(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        return [_vs(x.elem_type, None)]
    perm = attr(node, "perm") or list(reversed(range(len(x.dims))))
    return [_vs(x.elem_type, tuple(x.dims[p] for p in perm))]  # type: ignore[union-attr]


@rule("Squeeze")
def _squeeze(node, inputs, ctx):
    x = inputs[0]
    axes = axes_input(node, inputs, 1)
    if x.dims is None or axes is None:
        return [_vs(x.elem_type, None)]
    rank = len(x.dims)
    if not axes:
        if any(d is None or isinstance(d, S.Expr) for d in x.dims):
            return None
        drop = {k for k, d in enumerate(x.dims) if d == 1}
    else:
        drop = {axis_of(a, rank) for a in axes}
    dims = tuple(d for k, d in enumerate(x.dims) if k not in drop)
    return [_vs(x.elem_type, dims, x.value)]


@rule("Unsqueeze")
def _unsqueeze(node, inputs, ctx):
    x = inputs[0]
    axes = axes_input(node, inputs, 1)
    if x.dims is None or axes is None:
        return [_vs(x.elem_type, None)]
    rank = len(x.dims) + len(axes)
    ins = sorted(axis_of(a, rank) for a in axes)
    dims = list(x.dims)
    for a in ins:
        dims.insert(a, 1)
    return [_vs(x.elem_type, dims, x.value)]


@rule("Concat")
def _concat(node, inputs, ctx):
    present = [vs for n, vs in zip(node.input, inputs) if n]
    elem = next((vs.elem_type for vs in present if vs.elem_type), 0)
    if any(vs.dims is None for vs in present):
        rank = next((len(vs.dims) for vs in present if vs.dims is not None), None)
        return [_vs(elem, None if rank is None else (None,) * rank)]
    rank = len(present[0].dims)
    axis = axis_of(int(attr(node, "axis", 0)), rank)
    total: Dim | None = 0
    for vs in present:
        d = vs.dims[axis]
        total = None if total is None or d is None else S.add(total, d)
    dims = list(present[0].dims)
    for k in range(rank):
        if k != axis and dims[k] is None:
            dims[k] = next((vs.dims[k] for vs in present if vs.dims[k] is not None), None)
    dims[axis] = total
    value = None
    if rank == 1 and all(vs.value is not None for vs in present):
        value = [v for vs in present for v in vs.value]
    return [_vs(elem, dims, value)]


@rule("Split")
def _split(node, inputs, ctx):
    x = inputs[0]
    n = len(node.output)
    if x.dims is None:
        return [_vs(x.elem_type, None)] * n
    axis = axis_of(int(attr(node, "axis", 0)), len(x.dims))
    split = attr(node, "split")
    if split is None and len(node.input) > 1 and node.input[1]:
        split = ints_of(inputs[1])
        if split is None:
            return [_vs(x.elem_type, x.dims[:axis] + (None,) + x.dims[axis + 1:])] * n
    size = x.dims[axis]
    if not split:
        if size is None:
            parts: list[Dim | None] = [None] * n
        elif isinstance(size, int):
            chunk = -(-size // n)
            parts = [min(chunk, max(0, size - chunk * k)) for k in range(n)]
        else:
            parts = [S.floordiv(size, n)] * n if S.floordiv(size, n) is not None else [None] * n
    else:
        parts = list(split)  # type: ignore[arg-type]
    return [_vs(x.elem_type, x.dims[:axis] + (p,) + x.dims[axis + 1:]) for p in parts]


@rule("Gather")
def _gather(node, inputs, ctx):
    data, idx = inputs[0], inputs[1]
    if data.dims is None or idx.dims is None:
        return [_vs(data.elem_type, None)]
    axis = axis_of(int(attr(node, "axis", 0)), len(data.dims))
    dims = data.dims[:axis] + tuple(idx.dims) + data.dims[axis + 1:]
    value = None
    ids = ints_of(idx)
    if data.value is not None and len(data.dims) == 1 and ids is not None:
        n = len(data.value)
        value = [data.value[i + n if i < 0 else i] for i in ids]
    return [_vs(data.elem_type, dims, value)]


@rule("GatherElements")
def _gather_elements(node, inputs, ctx):
    return [_vs(inputs[0].elem_type, inputs[1].dims)]


@rule("Slice")
def _slice(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        return [_vs(x.elem_type, None)]
    if attr(node, "starts") is not None:
        starts, ends = list(attr(node, "starts")), list(attr(node, "ends"))  # type: ignore[arg-type]
        axes = list(attr(node, "axes") or range(len(starts)))  # type: ignore[arg-type]
        steps = [1] * len(starts)
    else:
        starts, ends = inputs[1].value, inputs[2].value
        axes = ints_of(inputs[3]) if len(inputs) > 3 and node.input[3] else None
        steps = ints_of(inputs[4]) if len(inputs) > 4 and node.input[4] else None
        if starts is None or ends is None or (len(inputs) > 3 and node.input[3] and axes is None) or (
                len(inputs) > 4 and node.input[4] and steps is None):
            return [_vs(x.elem_type, (None,) * len(x.dims))]
        starts, ends = list(starts), list(ends)
        axes = axes if axes is not None else list(range(len(starts)))
        steps = steps if steps is not None else [1] * len(starts)
    dims = list(x.dims)
    rank = len(dims)
    for a, st, en, sp in zip(axes, starts, ends, steps):
        a = axis_of(a, rank)
        dims[a] = _slice_len(dims[a], st, en, sp)
    value = None
    if x.value is not None and rank == 1 and len(axes) == 1 and steps == [1] and \
            isinstance(starts[0], int) and isinstance(ends[0], int):
        n = len(x.value)
        st, en = starts[0], ends[0]
        st = max(0, min(n, st + n if st < 0 else st))
        en = max(0, min(n, en + n if en < 0 else en))
        value = list(x.value[st:en])
    return [_vs(x.elem_type, dims, value)]


def _slice_len(size: Dim | None, start: Dim, end: Dim, step: int) -> Dim | None:
    if step == 0:
        raise ValueError("slice step 0")
    if not isinstance(start, int) or not isinstance(end, int):
        # a computed bound ([0:seq_len] of a position table): assumed inside the axis
        if step == 1 and (isinstance(start, int) and start >= 0 or not isinstance(start, int)) and \
                (not isinstance(end, int) or end >= 0):
            return S.sub(end, start)
        return None
    if isinstance(size, int):
        return len(range(*slice(start, end, step).indices(size)))
    if size is None:
        return None
    # symbolic size: the usual cases are [a:] [a:-b] [:b] with step 1 on a long enough axis;
    # exporters write "to the end" as INT64_MAX, INT32_MAX or 1e9 (tf2onnx): no real dim is
    # that long, so any end from 1e9 up means the end
    big = 10**9
    if step == -1 and end <= -big:  # [a::-1]: the first a+1 elements, reversed
        return start + 1 if start >= 0 else S.add(size, start + 1)
    if step != 1 or start < 0 and end < big:
        return None
    lo: Dim = S.add(size, start) if start < 0 else start
    hi: Dim = size if end >= big else (S.add(size, end) if end < 0 else end)
    return S.sub(hi, lo)


@rule("ConstantOfShape")
def _constant_of_shape(node, inputs, ctx):
    v = attr(node, "value")
    elem = v.data_type if v is not None else T.FLOAT  # type: ignore[union-attr]
    shape = inputs[0]
    if shape.value is not None:
        return [_vs(elem, shape.value)]
    n = shape.dims[0] if shape.dims and isinstance(shape.dims[0], int) else None
    return [_vs(elem, None if n is None else (None,) * n)]


@rule("Expand")
def _expand(node, inputs, ctx):
    x, shape = inputs[0], inputs[1]
    if shape.value is None or x.dims is None:
        return [_vs(x.elem_type, None)]
    return [_vs(x.elem_type, broadcast([x.dims, tuple(shape.value)]))]


@rule("Tile")
def _tile(node, inputs, ctx):
    x, reps = inputs[0], ints_of(inputs[1])
    if x.dims is None or reps is None:
        return [_vs(x.elem_type, None if x.dims is None else (None,) * len(x.dims))]
    return [_vs(x.elem_type, [None if d is None else S.mul(d, r) for d, r in zip(x.dims, reps)])]


@rule("Pad")
def _pad(node, inputs, ctx):
    x = inputs[0]
    pads = attr(node, "pads") if attr(node, "pads") is not None else (
        ints_of(inputs[1]) if len(inputs) > 1 else None)
    if x.dims is None or pads is None:
        return [_vs(x.elem_type, None if x.dims is None else (None,) * len(x.dims))]
    rank = len(x.dims)
    axes = ints_of(inputs[3]) if len(inputs) > 3 and node.input[3] else list(range(rank))
    if axes is None:
        return [_vs(x.elem_type, (None,) * rank)]
    dims = list(x.dims)
    n = len(axes)
    for k, a in enumerate(axes):
        a = axis_of(a, rank)
        dims[a] = None if dims[a] is None else S.add(dims[a], pads[k] + pads[k + n])  # type: ignore[index]
    return [_vs(x.elem_type, dims)]
