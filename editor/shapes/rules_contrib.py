"""Shape rules for onnxruntime's contrib ops: what LLM decoders and fused encoders are made of.

onnxruntime's own shape inference for these ops is C++ only (its schemas join onnx's
registry without it, :mod:`editor.ort_schemas`), so without rules every value after the
first contrib op would be blank. The rules follow onnxruntime's operator contracts
(``docs/ContribOperators.md``), symbolic in batch, sequence and past lengths:

- ``MatMulNBits`` ``[.., K] x [K, N] -> [.., N]`` (N from the attribute), and the integer
  MatMuls that give int32 (``MatMulInteger16``) or float (``DynamicQuantizeMatMul``,
  ``MatMulIntegerToFloat``);
- attention with a KV cache: ``GroupQueryAttention`` (present length = the
  ``total_sequence_length`` input's value, which a decoder computes from its attention mask),
  ``MultiHeadAttention`` and ``Attention`` (present = past + new);
- ``RotaryEmbedding`` and the fused norms and activations keep their input's shape;
  ``EmbedLayerNormalization`` gives ``[batch, sequence, hidden]`` and a mask index;
- ``GatherBlockQuantized`` (indices' shape in place of the gathered axis, packed components
  unpacked on the quantized axis), the ``QLinear*`` family (shape of the float op, type of
  the output zero point).

Registered by ``(domain, op)`` so a standard op of the same name (``Attention`` at opset 23,
``RotaryEmbedding`` at 23) keeps onnx's own inference.
"""

from __future__ import annotations

from collections.abc import Callable

from onnx import TensorProto as T

from editor.shapes import symbolic as S
from editor.shapes.rules import Rule, _matmul_dims, _vs, attr, axis_of, broadcast
from editor.shapes.symbolic import Dim

MS = "com.microsoft"
#: (domain, op_type) -> rule; looked up before the op-name rules of :mod:`editor.shapes.rules`
CONTRIB_RULES: dict[tuple[str, str], Rule] = {}


def contrib(*names: str, domain: str = MS) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for n in names:
            CONTRIB_RULES[(domain, n)] = fn
        return fn
    return register


def _present(node, k: int) -> bool:  # noqa: ANN001
    return len(node.input) > k and bool(node.input[k])


# ----------------------------------------------------------------------------- MatMuls


@contrib("MatMulNBits")
def _matmul_nbits(node, inputs, ctx):
    a = inputs[0]
    n = int(attr(node, "N"))
    dims = None if a.dims is None or not a.dims else tuple(a.dims[:-1]) + (n,)
    return [_vs(a.elem_type, dims)]


@contrib("MatMulInteger16")
def _matmul_int16(node, inputs, ctx):
    return [_vs(T.INT32, _matmul_dims(inputs[0].dims, inputs[1].dims))]


@contrib("DynamicQuantizeMatMul", "MatMulIntegerToFloat")
def _matmul_to_float(node, inputs, ctx):
    # the float type of A (DynamicQuantizeMatMul) or of A's scale (MatMulIntegerToFloat)
    elem = inputs[0].elem_type if node.op_type == "DynamicQuantizeMatMul" else inputs[2].elem_type
    return [_vs(elem or T.FLOAT, _matmul_dims(inputs[0].dims, inputs[1].dims))]


@contrib("MatMulBnb4", "MatMulFpQ4")
def _matmul_4bit(node, inputs, ctx):
    a = inputs[0]
    n = attr(node, "N")
    dims = None if a.dims is None or not a.dims or n is None else tuple(a.dims[:-1]) + (int(n),)
    return [_vs(a.elem_type, dims)]


# ----------------------------------------------------------------------------- attention


def _kv_length(past: Dim | None, new: Dim | None) -> Dim | None:
    if new is None:
        return None
    return new if past is None else S.add(past, new)


@contrib("GroupQueryAttention")
def _gqa(node, inputs, ctx):
    q = inputs[0]
    heads, kv_heads = int(attr(node, "num_heads")), int(attr(node, "kv_num_heads"))
    if q.dims is None or len(q.dims) != 3:
        return [_vs(q.elem_type, None)] * len(node.output)
    batch, seq, width = q.dims
    packed = not _present(node, 1)  # Q, K and V packed in the query input
    head_size: Dim | None = None
    past = inputs[3] if _present(node, 3) else None
    if isinstance(width, int):  # the query's width fixes it (a cache may declare it by name)
        head_size = width // (heads + 2 * kv_heads) if packed else width // heads
    elif past is not None and past.dims is not None and len(past.dims) == 4:
        head_size = past.dims[3]
    hidden = S.mul(head_size, heads) if head_size is not None else (None if packed else width)
    total_len: Dim | None = None
    if _present(node, 6) and inputs[6].value:  # a decoder computes it from its attention mask
        total_len = inputs[6].value[0]
    if total_len is None:
        past_len = past.dims[2] if past is not None and past.dims is not None else 0
        total_len = _kv_length(past_len, seq)
    if past is not None and past.dims is not None and attr(node, "past_present_share_buffer", 0):
        total_len = past.dims[2]  # the cache keeps its size; the new tokens are written into it
    # the caches keep the past's own head-size dim (onnxruntime copies it; a builder that
    # names it ``kv_cache_dim`` declares the presents so too)
    kv_size = past.dims[3] if past is not None and past.dims is not None and len(past.dims) == 4 else head_size
    kv = (batch, kv_heads, total_len, kv_size)
    return [_vs(q.elem_type, (batch, seq, hidden)), _vs(q.elem_type, kv), _vs(q.elem_type, kv)][:len(node.output)]


@contrib("MultiHeadAttention")
def _mha(node, inputs, ctx):
    q = inputs[0]
    heads = int(attr(node, "num_heads"))
    if q.dims is None:
        return [_vs(q.elem_type, None)] * len(node.output)
    if len(q.dims) == 5:  # packed QKV [B, S, H, 3, D] or packed KV beside it
        batch, seq = q.dims[0], q.dims[1]
        v_hidden = S.mul(q.dims[2], q.dims[4])
        kv_len, head_size = seq, q.dims[4]
    else:
        batch, seq, q_hidden = q.dims
        key = inputs[1] if _present(node, 1) else None
        value = inputs[2] if _present(node, 2) else None
        head_size = S.floordiv(q_hidden, heads) if q_hidden is not None else None
        v_hidden = q_hidden
        kv_len = seq
        if key is not None and key.dims is not None:
            if len(key.dims) == 5:  # packed KV [B, L, H, 2, D]
                kv_len = key.dims[1]
            elif len(key.dims) == 4:  # [B, H, L, D]: already past+new (cross attention cache)
                kv_len = key.dims[2]
            else:
                kv_len = key.dims[1]
        if value is not None and value.dims is not None:
            v_hidden = S.mul(value.dims[1], value.dims[3]) if len(value.dims) == 4 else value.dims[2]
    past_key = inputs[6] if _present(node, 6) else None
    past_len = past_key.dims[2] if past_key is not None and past_key.dims is not None else None
    v_head = S.floordiv(v_hidden, heads) if v_hidden is not None else None
    total = _kv_length(past_len, kv_len)
    outs = [_vs(q.elem_type, (batch, seq, v_hidden)),
            _vs(q.elem_type, (batch, heads, total, head_size)),
            _vs(q.elem_type, (batch, heads, total, v_head))]
    return outs[:len(node.output)]


@contrib("Attention")
def _attention(node, inputs, ctx):
    x, w = inputs[0], inputs[1]
    heads = int(attr(node, "num_heads"))
    if x.dims is None or len(x.dims) != 3:
        return [_vs(x.elem_type, None)] * len(node.output)
    batch, seq = x.dims[0], x.dims[1]
    sizes = attr(node, "qkv_hidden_sizes")
    if sizes:
        q_hidden, v_hidden = int(sizes[0]), int(sizes[2])  # type: ignore[index]
    elif w.dims is not None and isinstance(w.dims[-1], int):
        q_hidden = v_hidden = w.dims[-1] // 3
    else:
        return [_vs(x.elem_type, None)] * len(node.output)
    past = inputs[4] if _present(node, 4) else None
    past_len = past.dims[3] if past is not None and past.dims is not None and len(past.dims) == 5 else None
    total = _kv_length(past_len, seq)
    present = (2, batch, heads, total, q_hidden // heads)
    return [_vs(x.elem_type, (batch, seq, v_hidden)), _vs(x.elem_type, present)][:len(node.output)]


@contrib("RotaryEmbedding", "GemmFastGelu", "BiasAdd", "BiasDropout", "SkipGroupNorm")
def _same_as_input(node, inputs, ctx):
    x = inputs[0]
    if node.op_type == "GemmFastGelu":
        return [_vs(x.elem_type, _matmul_dims(x.dims, inputs[1].dims))]
    return [_vs(x.elem_type, x.dims)] + [_vs(x.elem_type, x.dims)] * (len(node.output) - 1)


@contrib("EmbedLayerNormalization")
def _embed_layer_norm(node, inputs, ctx):
    ids, word = inputs[0], inputs[2]
    hidden = word.dims[1] if word.dims is not None and len(word.dims) == 2 else None
    elem = word.elem_type or T.FLOAT
    if ids.dims is None or len(ids.dims) != 2:
        return [_vs(elem, None), _vs(T.INT32, None), _vs(elem, None)][:len(node.output)]
    batch, seq = ids.dims
    return [_vs(elem, (batch, seq, hidden)), _vs(T.INT32, (batch,)), _vs(elem, (batch, seq, hidden))][:len(node.output)]


# ----------------------------------------------------------------------------- block-quantized gather


@contrib("GatherBlockQuantized")
def _gather_block_quantized(node, inputs, ctx):
    data, indices, scales = inputs[0], inputs[1], inputs[2]
    if data.dims is None or indices.dims is None:
        return [_vs(scales.elem_type, None)]
    rank = len(data.dims)
    gather = axis_of(int(attr(node, "gather_axis", 0)), rank)
    quantize = axis_of(int(attr(node, "quantize_axis", 1)), rank)
    bits = int(attr(node, "bits", 4))
    dims = list(data.dims)
    if data.elem_type == T.UINT8 and dims[quantize] is not None:
        dims[quantize] = S.mul(dims[quantize], 8 // bits)  # packed components: unpacked on that axis
    out = dims[:gather] + list(indices.dims) + dims[gather + 1:]
    return [_vs(scales.elem_type, out)]


# ----------------------------------------------------------------------------- QLinear*


def _out_type(inputs: list, k: int, default: int) -> int:  # noqa: ANN001
    return inputs[k].elem_type if len(inputs) > k and inputs[k].elem_type else default


@contrib("QLinearAdd", "QLinearMul")
def _qlinear_binary(node, inputs, ctx):
    a = inputs[0]
    b = inputs[3] if len(inputs) > 3 else a
    return [_vs(_out_type(inputs, 7, a.elem_type), broadcast([a.dims, b.dims]))]


@contrib("QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax")
def _qlinear_unary(node, inputs, ctx):
    x = inputs[0]
    return [_vs(_out_type(inputs, 4, x.elem_type), x.dims)]


@contrib("QLinearConcat")
def _qlinear_concat(node, inputs, ctx):
    # Y_scale, Y_zero_point, then (tensor, scale, zero point) per input
    tensors = inputs[2::3]
    if not tensors or any(t.dims is None for t in tensors):
        return [_vs(_out_type(inputs, 1, T.UINT8), None)]
    rank = len(tensors[0].dims)
    axis = axis_of(int(attr(node, "axis")), rank)
    total: Dim | None = 0
    for t in tensors:
        d = t.dims[axis]
        total = None if total is None or d is None else S.add(total, d)
    dims = list(tensors[0].dims)
    dims[axis] = total
    return [_vs(_out_type(inputs, 1, tensors[0].elem_type), dims)]


@contrib("QLinearGlobalAveragePool")
def _qlinear_gap(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        return [_vs(x.elem_type, None)]
    if int(attr(node, "channels_last", 0)):
        dims = (x.dims[0],) + (1,) * (len(x.dims) - 2) + (x.dims[-1],)
    else:
        dims = tuple(x.dims[:2]) + (1,) * (len(x.dims) - 2)
    return [_vs(_out_type(inputs, 4, x.elem_type), dims)]


@contrib("QLinearReduceMean")
def _qlinear_reduce_mean(node, inputs, ctx):
    x = inputs[0]
    if x.dims is None:
        return [_vs(x.elem_type, None)]
    rank = len(x.dims)
    axes = {axis_of(int(a), rank) for a in (attr(node, "axes") or range(rank))}  # type: ignore[union-attr]
    keep = int(attr(node, "keepdims", 1))
    dims = [1 if k in axes else d for k, d in enumerate(x.dims)] if keep else [
        d for k, d in enumerate(x.dims) if k not in axes]
    return [_vs(_out_type(inputs, 4, x.elem_type), dims)]


@contrib("QLinearWhere")
def _qlinear_where(node, inputs, ctx):
    # condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp
    dims = broadcast([inputs[0].dims, inputs[1].dims, inputs[4].dims])
    return [_vs(_out_type(inputs, 8, inputs[1].elem_type), dims)]


@contrib("QLinearAveragePool")
def _qlinear_average_pool(node, inputs, ctx):
    from editor.shapes.rules import _window_dims

    x = inputs[0]
    kernel = attr(node, "kernel_shape")
    elem = _out_type(inputs, 4, x.elem_type)
    if x.dims is None or not kernel or int(attr(node, "channels_last", 0)):
        return [_vs(elem, None)]
    return [_vs(elem, _window_dims(node, x.dims, list(kernel)))]  # type: ignore[arg-type]


@contrib("QLinearMatMul")
def _qlinear_matmul(node, inputs, ctx):
    return [_vs(_out_type(inputs, 7, inputs[0].elem_type), _matmul_dims(inputs[0].dims, inputs[3].dims))]
