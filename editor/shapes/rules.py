"""Shape rules of our own, per op type, over symbolic dims.

Each rule takes the node, its inputs' :class:`~editor.shapes.engine.ValueShape` and a
:class:`Context`, and returns the outputs' shapes, or ``None`` to hand the node to onnx's
own inference. Rules are written for the ops that carry real models and for the shape
arithmetic of torch exports (whose small int tensors' *values* are tracked as dims), and
they follow the operator specifications at the opsets in use (attributes that became
inputs, such as Squeeze's ``axes`` at opset 13, are read from either place).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx
from onnx import TensorProto as T

from editor.shapes import symbolic as S
from editor.shapes.symbolic import Dim

if TYPE_CHECKING:
    from editor.shapes.engine import ValueShape

__all__ = ["Context", "apply", "INT_TYPES", "NOT_CONSTANT"]

INT_TYPES = {T.INT64, T.INT32, T.INT16, T.INT8, T.UINT8, T.UINT16, T.UINT32, T.UINT64}
#: ops whose outputs are not constant even when every input is
NOT_CONSTANT = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                "Bernoulli", "Dropout"}


@dataclass(frozen=True)
class Context:
    opsets: Mapping[str, int]
    ir_version: int


Shape = tuple  # tuple[Dim | None, ...]
Rule = Callable[[onnx.NodeProto, "list[ValueShape]", Context], "list[ValueShape] | None"]
RULES: dict[str, Rule] = {}


def _vs(elem_type: int, dims: Sequence[Dim | None] | None, value: Sequence[Dim] | None = None) -> ValueShape:
    from editor.shapes.engine import ValueShape

    return ValueShape(elem_type, None if dims is None else tuple(dims), None if value is None else tuple(value))


def apply(node: onnx.NodeProto, inputs: list[ValueShape], ctx: Context) -> list[ValueShape] | None:
    domain = node.domain or ""
    rule = RULES.get(node.op_type) if domain in ("", "ai.onnx", "com.microsoft") else None
    if rule is None:
        return None
    try:
        return rule(node, inputs, ctx)
    except (ValueError, IndexError, TypeError, ZeroDivisionError, KeyError):
        return None  # malformed for our rule: onnx's inference (or unknown) decides


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn
    return register


# ----------------------------------------------------------------------------- helpers


def attr(node: onnx.NodeProto, name: str, default: object = None) -> object:
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def broadcast(shapes: Sequence[Shape | None]) -> Shape | None:
    """numpy broadcasting over symbolic dims (a valid model is assumed: a symbolic dim facing
    a fixed one is that fixed size or 1)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    return tuple(_broadcast_dim([s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0])
                 for k in range(rank))


def _broadcast_dim(dims: list[Dim | None]) -> Dim | None:
    rest = [d for d in dims if d != 1]
    if not rest:
        return 1
    ints = [d for d in rest if isinstance(d, int)]
    if ints:
        return ints[0]
    exprs = [d for d in rest if d is not None]
    if not exprs:
        return None
    # two formulas of one size (2*floor(h/2) after an upsample meets h on the skip path):
    # in a valid run they are equal; keep the simpler
    return min(exprs, key=lambda e: len(S.to_text(e)))


def axis_of(a: int, rank: int) -> int:
    if not -rank <= a < max(rank, 1):
        raise ValueError(f"axis {a} out of range for rank {rank}")
    return a + rank if a < 0 else a


def ints_of(vs: ValueShape | None) -> list[int] | None:
    """The value of a small int tensor when every element is known."""
    if vs is None or vs.value is None or not all(isinstance(v, int) for v in vs.value):
        return None
    return list(vs.value)  # type: ignore[arg-type]


def axes_input(node: onnx.NodeProto, inputs: list[ValueShape], index: int) -> list[int] | None:
    """Axes given as an attribute (older opsets) or as input ``index`` (newer)."""
    a = attr(node, "axes")
    if a is not None:
        return list(a)  # type: ignore[arg-type]
    if len(node.input) > index and node.input[index]:
        return ints_of(inputs[index])
    return []


def same(node: onnx.NodeProto, inputs: list[ValueShape], elem_type: int | None = None) -> list[ValueShape]:
    x = inputs[0]
    return [_vs(elem_type or x.elem_type, x.dims, x.value if elem_type is None else None)]


# ----------------------------------------------------------------------------- element-wise

UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Gelu", "Softplus", "Softsign",
         "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Clip", "Identity", "Softmax",
         "LogSoftmax", "Hardmax", "Floor", "Ceil", "Round", "Reciprocal", "Sign", "Sin", "Cos", "Tan", "Asin",
         "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Mish", "ThresholdedRelu", "CumSum",
         "LpNormalization", "Trilu", "Shrink", "Not", "BitwiseNot", "FastGelu", "BiasGelu", "QuickGelu",
         "MeanVarianceNormalization", "LRN", "Swish"]


@rule(*UNARY)
def _unary(node, inputs, ctx):
    x = inputs[0]
    keep_value = node.op_type in ("Identity", "Neg", "Abs")
    value = None
    if keep_value and x.value is not None:
        value = x.value if node.op_type == "Identity" else tuple(
            S.mul(v, -1) if node.op_type == "Neg" else v for v in x.value)
        if node.op_type == "Abs" and not all(isinstance(v, int) for v in x.value):
            value = None
        elif node.op_type == "Abs":
            value = tuple(abs(v) for v in x.value)  # type: ignore[arg-type]
    return [_vs(x.elem_type, x.dims, value)]


@rule("IsNaN", "IsInf")
def _isnan(node, inputs, ctx):
    return same(node, inputs, T.BOOL)


@rule("Cast", "CastLike")
def _cast(node, inputs, ctx):
    to = attr(node, "to") if node.op_type == "Cast" else inputs[1].elem_type
    x = inputs[0]
    value = x.value if to in INT_TYPES and x.elem_type in INT_TYPES else None
    return [_vs(int(to or 0), x.dims, value)]


@rule("Dropout")
def _dropout(node, inputs, ctx):
    x = inputs[0]
    return [_vs(x.elem_type, x.dims), _vs(T.BOOL, x.dims)]


@rule("BatchNormalization", "InstanceNormalization", "GroupNormalization", "RMSNormalization",
      "SimplifiedLayerNormalization")
def _norm(node, inputs, ctx):
    x = inputs[0]
    return [_vs(x.elem_type, x.dims)] + [_vs(x.elem_type, None)] * (len(node.output) - 1)


@rule("LayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
def _layernorm(node, inputs, ctx):
    x = inputs[0]
    outs = [_vs(x.elem_type, x.dims)]
    if node.op_type == "LayerNormalization" and x.dims is not None:
        axis = axis_of(int(attr(node, "axis", -1)), len(x.dims))
        reduced = x.dims[:axis] + (1,) * (len(x.dims) - axis)
        outs += [_vs(T.FLOAT, reduced)] * (len(node.output) - 1)
    else:
        outs += [_vs(x.elem_type, x.dims if k == len(node.output) - 1 else None) for k in range(1, len(node.output))]
    return outs


def _arith(op: str, a: Dim, b: Dim) -> Dim | None:
    if op == "Add":
        return S.add(a, b)
    if op == "Sub":
        return S.sub(a, b)
    if op == "Mul":
        return S.mul(a, b)
    if op == "Div":
        if isinstance(b, int) and b > 0:
            return S.floordiv(a, b)
        if isinstance(a, int) and isinstance(b, int) and b != 0:
            return int(a / b)
        return None
    return None


BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "Mod", "PRelu", "BitShift",
          "BitwiseAnd", "BitwiseOr", "BitwiseXor"]
COMPARE = ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"]


@rule(*BINARY, *COMPARE)
def _binary(node, inputs, ctx):
    present = [vs for n, vs in zip(node.input, inputs) if n]
    dims = broadcast([vs.dims for vs in present])
    elem = T.BOOL if node.op_type in COMPARE else present[0].elem_type
    value = None
    if node.op_type in ("Add", "Sub", "Mul", "Div") and len(present) == 2 and all(
            vs.value is not None and vs.dims is not None and len(vs.dims) <= 1 and
            all(not isinstance(v, float) for v in vs.value) for vs in present):
        a, b = present[0].value, present[1].value  # shape arithmetic: 1-D int vectors
        if len(a) == 1 or len(b) == 1 or len(a) == len(b):
            n = max(len(a), len(b))
            vals = [_arith(node.op_type, a[k if len(a) > 1 else 0], b[k if len(b) > 1 else 0]) for k in range(n)]
            value = None if any(v is None for v in vals) else vals
    return [_vs(elem, dims, value)]


@rule("Where")
def _where(node, inputs, ctx):
    return [_vs(inputs[1].elem_type or inputs[2].elem_type, broadcast([vs.dims for vs in inputs[:3]]))]


# ----------------------------------------------------------------------------- linear algebra


def _matmul_dims(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None or not a or not b:
        return None
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    batch = broadcast([a2[:-2], b2[:-2]])
    if batch is None:
        return None
    out = list(batch) + [a2[-2], b2[-1]]
    if len(b) == 1:
        out.pop(-1)
    if len(a) == 1:
        out.pop(-2 if len(b) != 1 else -1)
    return tuple(out)


@rule("MatMul", "FusedMatMul")
def _matmul(node, inputs, ctx):
    a, b = inputs[0], inputs[1]
    if node.op_type == "FusedMatMul" and (attr(node, "transA", 0) or attr(node, "transB", 0)):
        return None
    return [_vs(a.elem_type, _matmul_dims(a.dims, b.dims))]


@rule("MatMulInteger")
def _matmul_int(node, inputs, ctx):
    return [_vs(T.INT32, _matmul_dims(inputs[0].dims, inputs[1].dims))]


@rule("QLinearMatMul")
def _qlinear_matmul(node, inputs, ctx):
    return [_vs(inputs[7].elem_type if len(inputs) > 7 else inputs[0].elem_type,
                _matmul_dims(inputs[0].dims, inputs[3].dims))]


@rule("Gemm")
def _gemm(node, inputs, ctx):
    a, b = inputs[0].dims, inputs[1].dims
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return [_vs(inputs[0].elem_type, None)]
    m = a[1] if attr(node, "transA", 0) else a[0]
    n = b[0] if attr(node, "transB", 0) else b[1]
    return [_vs(inputs[0].elem_type, (m, n))]


# ----------------------------------------------------------------------------- windows


def _window_dims(node: onnx.NodeProto, x: Shape, kernel: Sequence[int], transpose: bool = False,
                 out_channels: Dim | None = None) -> Shape | None:
    spatial = len(x) - 2
    if len(kernel) != spatial:
        return None
    strides = list(attr(node, "strides", None) or [1] * spatial)
    dilations = list(attr(node, "dilations", None) or [1] * spatial)
    pads = list(attr(node, "pads", None) or [0] * (2 * spatial))
    auto_pad = attr(node, "auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    ceil_mode = int(attr(node, "ceil_mode", 0) or 0)
    out: list[Dim | None] = [x[0], out_channels if out_channels is not None else x[1]]
    for k in range(spatial):
        size = x[2 + k]
        if size is None:
            out.append(None)
            continue
        s, d, kk = strides[k], dilations[k], kernel[k]
        eff = (kk - 1) * d + 1
        if transpose:
            output_shape = attr(node, "output_shape")
            if output_shape:
                out.append(int(output_shape[k]))  # type: ignore[index]
                continue
            op = list(attr(node, "output_padding", None) or [0] * spatial)
            if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                out.append(S.mul(size, s))
            else:
                out.append(S.add(S.sub(S.add(S.mul(S.sub(size, 1), s), eff), pads[k] + pads[k + spatial]), op[k]))
            continue
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out.append(S.ceildiv(size, s))
        elif auto_pad == "VALID":
            out.append(S.add(S.floordiv(S.sub(size, eff), s), 1))
        else:
            span = S.sub(S.add(size, pads[k] + pads[k + spatial]), eff)
            if not ceil_mode:
                out.append(S.add(S.floordiv(span, s), 1))
            elif isinstance(span, int):
                n = -(-span // s) + 1
                if (n - 1) * s >= size + pads[k]:  # the last window would start in the end padding
                    n -= 1
                out.append(n)
            else:
                out.append(None)  # whether the last window starts in the padding depends on the size
    return tuple(out)


def _kernel_from_weight(node: onnx.NodeProto, w: ValueShape) -> list[int] | None:
    k = attr(node, "kernel_shape")
    if k:
        return list(k)  # type: ignore[arg-type]
    if w.dims is None or not all(isinstance(d, int) for d in w.dims[2:]):
        return None
    return list(w.dims[2:])  # type: ignore[arg-type]


@rule("Conv", "ConvInteger", "QLinearConv", "FusedConv", "NhwcConv")
def _conv(node, inputs, ctx):
    if node.op_type == "NhwcConv":
        return None
    qlinear = node.op_type == "QLinearConv"
    x, w = (inputs[0], inputs[3]) if qlinear else (inputs[0], inputs[1])
    elem = {"ConvInteger": T.INT32, "QLinearConv": inputs[7].elem_type if len(inputs) > 7 else x.elem_type}.get(
        node.op_type, x.elem_type)
    if x.dims is None or w.dims is None:
        return [_vs(elem, None)]
    kernel = _kernel_from_weight(node, w)
    if kernel is None:
        return [_vs(elem, None)]
    return [_vs(elem, _window_dims(node, x.dims, kernel, out_channels=w.dims[0]))]


@rule("ConvTranspose")
def _conv_transpose(node, inputs, ctx):
    x, w = inputs[0], inputs[1]
    if x.dims is None or w.dims is None:
        return [_vs(x.elem_type, None)]
    kernel = _kernel_from_weight(node, w)
    if kernel is None:
        return [_vs(x.elem_type, None)]
    m = S.mul(w.dims[1], int(attr(node, "group", 1))) if w.dims[1] is not None else None
    return [_vs(x.elem_type, _window_dims(node, x.dims, kernel, transpose=True, out_channels=m))]


@rule("MaxPool", "AveragePool", "LpPool")
def _pool(node, inputs, ctx):
    x = inputs[0]
    kernel = attr(node, "kernel_shape")
    if x.dims is None or not kernel:
        return [_vs(x.elem_type, None)] * len(node.output)
    dims = _window_dims(node, x.dims, list(kernel))  # type: ignore[arg-type]
    outs = [_vs(x.elem_type, dims)]
    if len(node.output) > 1:
        outs.append(_vs(T.INT64, dims))
    return outs


@rule("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def _global_pool(node, inputs, ctx):
    x = inputs[0]
    return [_vs(x.elem_type, None if x.dims is None else tuple(x.dims[:2]) + (1,) * (len(x.dims) - 2))]


# ----------------------------------------------------------------------------- shape arithmetic


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


REDUCE = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


@rule(*REDUCE, "ArgMax", "ArgMin")
def _reduce(node, inputs, ctx):
    x = inputs[0]
    arg = node.op_type.startswith("Arg")
    elem = T.INT64 if arg else x.elem_type
    if x.dims is None:
        return [_vs(elem, None)]
    keep = int(attr(node, "keepdims", 1))
    rank = len(x.dims)
    if arg:
        axes: list[int] | None = [int(attr(node, "axis", 0))]
    else:
        axes = axes_input(node, inputs, 1)
        if axes is None:
            return [_vs(elem, (None,) * rank if keep else None)]
        if not axes and int(attr(node, "noop_with_empty_axes", 0)):
            return [_vs(elem, x.dims)]
    axes_set = {axis_of(a, rank) for a in axes} if axes else set(range(rank))
    dims = [1 if k in axes_set else d for k, d in enumerate(x.dims)] if keep else [
        d for k, d in enumerate(x.dims) if k not in axes_set]
    return [_vs(elem, dims)]


@rule("TopK")
def _topk(node, inputs, ctx):
    x = inputs[0]
    k = attr(node, "k")
    if k is None:
        ks = ints_of(inputs[1]) if len(inputs) > 1 else None
        k = ks[0] if ks else None
    if x.dims is None:
        return [_vs(x.elem_type, None), _vs(T.INT64, None)]
    axis = axis_of(int(attr(node, "axis", -1)), len(x.dims))
    dims = x.dims[:axis] + (k,) + x.dims[axis + 1:]
    return [_vs(x.elem_type, dims), _vs(T.INT64, dims)]


@rule("NonZero")
def _nonzero(node, inputs, ctx):
    x = inputs[0]
    # how many elements are non-zero is data-dependent: that dim stays unknown
    return [_vs(T.INT64, None if x.dims is None else (len(x.dims), None))]


@rule("Resize", "Upsample")
def _resize(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        return [_vs(x.elem_type, None)]
    rank = len(x.dims)
    if node.op_type == "Upsample":
        scales_in = attr(node, "scales") or (inputs[1].value if len(inputs) > 1 else None)
        sizes = None
    else:
        sizes = list(inputs[3].value) if len(inputs) > 3 and node.input[3] and inputs[3].value else None
        scales_in = inputs[2].value if len(inputs) > 2 and node.input[2] else None
        if node.input and len(node.input) == 2 or (len(inputs) > 1 and inputs[1].value and
                                                   ctx.opsets.get("", 11) < 11):
            scales_in = inputs[1].value  # Resize-10: (X, scales)
    if sizes:
        axes = attr(node, "axes")
        if axes is None and len(sizes) == rank:
            return [_vs(x.elem_type, sizes)]
        return None
    if not scales_in or len(scales_in) != rank or attr(node, "axes") is not None:
        return None
    out: list[Dim | None] = []
    for d, sc in zip(x.dims, scales_in):
        if d is None:
            out.append(None)
        elif isinstance(d, int):
            out.append(int(d * float(sc)))
        elif float(sc).is_integer():
            out.append(S.mul(d, int(sc)))
        else:
            out.append(None)
    return [_vs(x.elem_type, out)]


@rule("DequantizeLinear")
def _dequantize(node, inputs, ctx):
    elem = inputs[1].elem_type if len(inputs) > 1 and inputs[1].elem_type else T.FLOAT
    out = attr(node, "output_dtype")
    return [_vs(int(out) if out else elem, inputs[0].dims)]


@rule("QuantizeLinear", "DynamicQuantizeLinear")
def _quantize(node, inputs, ctx):
    x = inputs[0]
    if node.op_type == "DynamicQuantizeLinear":
        return [_vs(T.UINT8, x.dims), _vs(T.FLOAT, ()), _vs(T.UINT8, ())]
    out = attr(node, "output_dtype")
    elem = int(out) if out else (inputs[2].elem_type if len(inputs) > 2 and node.input[2] else T.UINT8)
    return [_vs(elem, x.dims)]


@rule("Range")
def _range(node, inputs, ctx):
    start, limit, delta = (ints_of(v) for v in inputs[:3])
    elem = inputs[0].elem_type
    if start and limit and delta and delta[0] != 0:
        n = max(0, -(-(limit[0] - start[0]) // delta[0]))
        return [_vs(elem, (n,), list(range(start[0], limit[0], delta[0])) if n <= 64 else None)]
    lim = inputs[1].value
    if start == [0] and delta == [1] and lim is not None:
        return [_vs(elem, (lim[0],))]
    return [_vs(elem, (None,))]


@rule("LSTM", "GRU", "RNN", "DynamicQuantizeLSTM")
def _recurrent(node, inputs, ctx):
    x, w = inputs[0], inputs[1]
    hidden = attr(node, "hidden_size")
    if x.dims is None or len(x.dims) != 3:
        return None
    direction = attr(node, "direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    dirs = 2 if direction == "bidirectional" else 1
    if hidden is None:
        return None
    layout = int(attr(node, "layout", 0) or 0)
    seq, batch = (x.dims[1], x.dims[0]) if layout else (x.dims[0], x.dims[1])
    y = (batch, seq, dirs, hidden) if layout else (seq, dirs, batch, hidden)
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    elem = x.elem_type if node.op_type != "DynamicQuantizeLSTM" else T.FLOAT
    return [_vs(elem, y), _vs(elem, state), _vs(elem, state)][:len(node.output)]


@rule("STFT")
def _stft(node, inputs, ctx):
    # NOTE: our own rule because onnx's inference ignores `onesided` when the frame length
    # comes from the window (a real preprocessor showed 512 bins where a run gives 257)
    signal = inputs[0]
    step = ints_of(inputs[1]) if len(inputs) > 1 else None
    length: Dim | None = None
    if len(node.input) > 3 and node.input[3]:
        lv = ints_of(inputs[3])
        length = lv[0] if lv else None
    elif len(node.input) > 2 and node.input[2] and inputs[2].dims:
        length = inputs[2].dims[0]
    if signal.dims is None or len(signal.dims) < 2 or not step or not isinstance(length, int):
        return [_vs(signal.elem_type, (signal.dims[0] if signal.dims else None, None, None, 2))]
    onesided = int(attr(node, "onesided", 1))
    bins = length // 2 + 1 if onesided else length
    n = signal.dims[1]
    frames = None if n is None else S.add(S.floordiv(S.sub(n, length), step[0]), 1)
    return [_vs(signal.elem_type, (signal.dims[0], frames, bins, 2))]
