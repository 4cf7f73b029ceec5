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
    rule = rules_contrib.CONTRIB_RULES.get((domain, node.op_type))
    if rule is None and domain in ("", "ai.onnx", "com.microsoft"):
        rule = RULES.get(node.op_type)
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


# NOTE: the shape-arithmetic rules and onnxruntime's contrib ops live in their own modules;
# importing them registers them. They import this module's helpers, so they come last, once
# they are all defined.
from editor.shapes import rules_contrib, rules_tensor  # noqa: E402, F401
