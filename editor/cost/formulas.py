"""MACs per operator: the textbook formulas, over symbolic shapes.

One MAC is one multiply-accumulate; FLOPs = 2 x MACs throughout ONNX Studio. The counting
conventions, per op (``out`` = output elements, ``in`` = input elements):

==========================================  ==================================================
Conv, ConvInteger, QLinearConv              out x (C_in / group) x prod(kernel); the bias add
                                            is not counted (it is one add per output, not a MAC)
ConvTranspose                               in x (C_out / group) x prod(kernel)
MatMul, MatMulInteger, QLinearMatMul,       out x K (the contracted dim); Gemm: M x N x K
FusedMatMul, Gemm                           (alpha, beta and C not counted)
Einsum                                      product of the sizes of every distinct index
MatMulNBits, MatMulBnb4                     out x K (the K attribute): the weight is unpacked,
                                            the MACs are the float MatMul's
Attention (ai.onnx), MultiHeadAttention,    B x heads x S_q x S_kv x (D_qk + D_v): Q·Kᵀ and ·V;
GroupQueryAttention                         S_kv is the KV length, past + new (the present
                                            key's length when the op returns one)
Attention (com.microsoft)                   the QKV projection (B x S x in x 3·hidden) plus the
                                            above
LSTM / GRU / RNN                            seq x batch x directions x gates x hidden x
                                            (input + hidden); gates 4 / 3 / 1
MaxPool, AveragePool, LpPool                out x prod(kernel)
GlobalAveragePool, GlobalMaxPool, Reduce*   in
BatchNormalization                          out (scale and shift folded into one MAC)
LayerNormalization, GroupNormalization,     4 x out (mean, variance, normalise, scale+shift)
InstanceNormalization
RMSNormalization, SimplifiedLayerNorm       3 x out; SkipLayerNormalization: 5 x out
Softmax, LogSoftmax                         3 x out (exp, sum, divide)
element-wise arithmetic and activations     1 x out per operation (Sum/Mean of n: n-1)
Quantize/DequantizeLinear of activations    1 x out (of a weight: folded, 0)
Resize                                      linear: out x 2^r, cubic: out x 4^r (r resized
                                            axes); nearest: 0 (a copy)
data movement (Reshape, Transpose, Concat,  0
Gather, Slice, Cast, Shape ...)
==========================================  ==================================================

A node whose inputs are all constants costs nothing at run time (runtimes fold it): the
cost model does not call these formulas for it.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from editor.shapes import ValueShape
from editor.shapes import symbolic as S
from editor.shapes.rules import attr
from editor.shapes.symbolic import Dim

__all__ = ["Unknown", "macs_of", "elements"]


class Unknown(Exception):
    """The cost cannot be known from shapes; the message says why."""


Formula = Callable[[onnx.NodeProto, list[ValueShape], list[ValueShape]], Dim]
FORMULAS: dict[str, Formula] = {}


def formula(*names: str) -> Callable[[Formula], Formula]:
    def register(fn: Formula) -> Formula:
        for n in names:
            FORMULAS[n] = fn
        return fn
    return register


def elements(vs: ValueShape, what: str = "a value") -> Dim:
    if vs.dims is None:
        raise Unknown(f"the rank of {what} is unknown")
    if any(d is None for d in vs.dims):
        raise Unknown(f"a dim of {what} is unknown")
    return S.product(vs.dims)


def _dims(vs: ValueShape, what: str) -> tuple[Dim, ...]:
    elements(vs, what)
    return vs.dims  # type: ignore[return-value]


def macs_of(node: onnx.NodeProto, inputs: list[ValueShape], outputs: list[ValueShape]) -> Dim:
    """MACs of one node (raises :class:`Unknown`)."""
    fn = FORMULAS.get(node.op_type)
    if fn is None:
        return 0
    return fn(node, inputs, outputs)



def _out(outputs: list[ValueShape]) -> Dim:
    return elements(outputs[0], "the output")


# ----------------------------------------------------------------------------- compute-bound


@formula("Conv", "ConvInteger", "QLinearConv", "FusedConv")
def _conv(node, inputs, outputs):
    w = inputs[3] if node.op_type == "QLinearConv" else inputs[1]
    wd = _dims(w, "the weight")
    return S.product([_out(outputs), *wd[1:]])


@formula("ConvTranspose")
def _conv_transpose(node, inputs, outputs):
    wd = _dims(inputs[1], "the weight")
    return S.product([elements(inputs[0], "the input"), *wd[1:]])


@formula("MatMul", "MatMulInteger", "FusedMatMul")
def _matmul(node, inputs, outputs):
    a = _dims(inputs[0], "input A")
    k = a[-1]
    if node.op_type == "FusedMatMul" and attr(node, "transA", 0):
        k = a[-2]
    return S.mul(_out(outputs), k)


@formula("MatMulNBits", "MatMulBnb4")
def _matmul_nbits(node, inputs, outputs):
    return S.mul(_out(outputs), int(attr(node, "K")))


@formula("QLinearMatMul")
def _qlinear_matmul(node, inputs, outputs):
    return S.mul(_out(outputs), _dims(inputs[0], "input A")[-1])


@formula("Gemm")
def _gemm(node, inputs, outputs):
    a = _dims(inputs[0], "input A")
    k = a[0] if attr(node, "transA", 0) else a[-1]
    return S.mul(_out(outputs), k)


@formula("Einsum")
def _einsum(node, inputs, outputs):
    eq = attr(node, "equation")
    eq = (eq.decode() if isinstance(eq, bytes) else str(eq)).replace(" ", "")
    lhs = eq.split("->")[0].split(",")
    if "..." in eq or len(lhs) != len(inputs):
        raise Unknown("an Einsum with an ellipsis is not counted")
    sizes: dict[str, Dim] = {}
    for term, vs in zip(lhs, inputs):
        dims = _dims(vs, "an operand")
        if len(dims) != len(term):
            raise Unknown("Einsum operand ranks do not match the equation")
        for letter, d in zip(term, dims):
            if d != 1 or letter not in sizes:
                sizes[letter] = d
    return S.product(sizes.values())


@formula("Attention", "MultiHeadAttention", "GroupQueryAttention")
def _attention(node, inputs, outputs):
    q = _dims(inputs[0], "the query")
    if node.domain == "com.microsoft" and node.op_type == "Attention":
        w = _dims(inputs[1], "the QKV weight")
        b, s, hidden_in = q
        projection = S.product([b, s, hidden_in, w[1]])
        hidden = S.floordiv(w[1], 3) if isinstance(w[1], int) else w[1]
        kv = _present_length(outputs, 3) or s
        return S.add(projection, S.product([b, s, kv, hidden, 2]))
    if len(q) == 4:  # [B, heads, S_q, D]
        k = _dims(inputs[1], "the key")
        v = _dims(inputs[2], "the value")
        kv = _present_length(outputs, 2) or k[2]
        return S.product([q[0], q[1], q[2], kv, S.add(q[3], v[3])])
    # 3-D: [B, S, heads*D]; the output's width is heads x D_v
    out = _dims(outputs[0], "the output")
    if node.op_type == "GroupQueryAttention":
        q_width = out[2]  # the query input may carry K and V packed beside Q
        kv = _present_length(outputs, 2) or q[1]
        return S.product([q[0], q[1], kv, S.add(q_width, out[2])])
    k = _dims(inputs[1], "the key") if len(inputs) > 1 and inputs[1].dims else q
    kv = _present_length(outputs, 2) or (k[2] if len(k) == 4 else k[1])
    return S.product([q[0], q[1], kv, S.add(q[2], out[2])])


def _present_length(outputs: list[ValueShape], axis: int) -> Dim | None:
    """The KV length (past + new) from the present key output, when the op returns one."""
    if len(outputs) < 2 or outputs[1].dims is None or len(outputs[1].dims) <= axis:
        return None
    return outputs[1].dims[axis]


@formula("LSTM", "GRU", "RNN")
def _rnn(node, inputs, outputs):
    x = _dims(inputs[0], "the input")
    w = _dims(inputs[1], "W")
    r = _dims(inputs[2], "R")
    layout = int(attr(node, "layout", 0) or 0)
    seq, batch = (x[1], x[0]) if layout else (x[0], x[1])
    # W: [dirs, gates*hidden, input], R: [dirs, gates*hidden, hidden]
    return S.product([seq, batch, w[0], w[1], S.add(w[2], r[2])])


# ----------------------------------------------------------------------------- windows, reductions


@formula("MaxPool", "AveragePool", "LpPool")
def _pool(node, inputs, outputs):
    kernel = attr(node, "kernel_shape") or []
    return S.product([_out(outputs), *kernel])  # type: ignore[list-item]


REDUCE = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "GlobalAveragePool", "GlobalMaxPool",
          "GlobalLpPool", "ArgMax", "ArgMin"]


@formula(*REDUCE)
def _reduce(node, inputs, outputs):
    return elements(inputs[0], "the input")


def _per_output(k: int) -> Formula:
    def fn(node, inputs, outputs):
        return S.mul(_out(outputs), k)
    return fn


FORMULAS["BatchNormalization"] = _per_output(1)
for _op in ("LayerNormalization", "GroupNormalization", "InstanceNormalization", "MeanVarianceNormalization"):
    FORMULAS[_op] = _per_output(4)
for _op in ("RMSNormalization", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization"):
    FORMULAS[_op] = _per_output(3)
FORMULAS["SkipLayerNormalization"] = _per_output(5)
for _op in ("Softmax", "LogSoftmax"):
    FORMULAS[_op] = _per_output(3)

ELEMENTWISE = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "PRelu", "Where", "Relu", "Sigmoid",
               "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Gelu", "Softplus", "Softsign", "LeakyRelu",
               "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Clip", "Floor", "Ceil", "Round",
               "Reciprocal", "Sign", "Sin", "Cos", "Tan", "Mish", "ThresholdedRelu", "Shrink", "FastGelu",
               "BiasGelu", "QuickGelu", "Swish", "RotaryEmbedding", "QuantizeLinear", "DequantizeLinear",
               "DynamicQuantizeLinear",
               "CumSum", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "IsNaN", "IsInf",
               "Trilu", "LpNormalization", "LRN", "BitShift", "And", "Or", "Xor", "Not"]
for _op in ELEMENTWISE:
    FORMULAS[_op] = _per_output(1)


@formula("Sum", "Mean")
def _variadic(node, inputs, outputs):
    n = len([i for i in node.input if i])
    return S.mul(_out(outputs), max(1, n - 1))


@formula("Resize", "Upsample")
def _resize(node, inputs, outputs):
    mode = attr(node, "mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode == "nearest":
        return 0
    x, y = _dims(inputs[0], "the input"), _dims(outputs[0], "the output")
    resized = sum(1 for a, b in zip(x, y) if a != b)
    return S.mul(S.product(y), (4 if mode == "cubic" else 2) ** resized)
