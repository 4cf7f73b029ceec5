"""Every quantized op's output is compared after dequantization through its own scale and
zero point, checked op by op against a float reference (editor.debug.mapping /
compare): model F computes the op in float, model Q quantizes F's inputs, runs the QLinear /
QGemm / QuantizeLinear op on onnxruntime, and gives the raw integers; compare's row for the
output must be the dequantized value, as close to F's as the quantization steps allow.
(QLinearReduceMean has no CPU kernel in onnxruntime: its scale is found the same way, by
its schema's ``reduced_scale``, but no run checks it.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from editor.debug import RunSpec, compare_runs
from editor.debug.metrics import dequantize
from editor.runtime import Runner

S_IN, Z_IN = 0.04, 128  # uint8 activations: [-5.1, 5.1] in steps of 0.04


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def _c(name: str, value, dtype=np.float32) -> onnx.TensorProto:  # noqa: ANN001
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def _models(inputs: dict[str, list[int]], float_nodes: list[onnx.NodeProto], q_nodes: list[onnx.NodeProto],
            inits_f: list[onnx.TensorProto], inits_q: list[onnx.TensorProto], q_out: int = T.UINT8,
            opset: int = 17, extra_inputs: list[onnx.ValueInfoProto] = ()) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """F and Q with the same float inputs; Q quantizes each (``q_<name>``) before its op."""
    vis = [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs.items()] + list(extra_inputs)
    quantize = [h.make_node("QuantizeLinear", [n, "s_in", "z_in"], [f"q_{n}"]) for n in inputs]
    common = [_c("s_in", S_IN), _c("z_in", Z_IN, np.uint8)]
    opsets = [h.make_opsetid("", opset), h.make_opsetid("com.microsoft", 1)]
    f = h.make_model(h.make_graph(float_nodes, "f", vis, [h.make_tensor_value_info("y", T.FLOAT, None)], inits_f),
                     opset_imports=opsets)
    q = h.make_model(h.make_graph(quantize + q_nodes, "q", vis, [h.make_tensor_value_info("y", q_out, None)],
                                  common + inits_q), opset_imports=opsets)
    return f, q


def _unary(op: str, qop: str, s_out: float, z_out: int, q_attrs: dict | None = None,
           **attrs) -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    f, q = _models({"x": [1, 3, 6, 6]}, [h.make_node(op, ["x"], ["y"], **attrs)],
                   [h.make_node(qop, ["q_x", "s_in", "z_in", "s_out", "z_out"], ["y"], domain="com.microsoft",
                                **attrs, **(q_attrs or {}))],
                   [], [_c("s_out", s_out), _c("z_out", z_out, np.uint8)])
    return f, q, s_out


def _binary(op: str, qop: str, s_out: float) -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    f, q = _models({"a": [1, 3, 6, 6], "b": [1, 3, 6, 6]}, [h.make_node(op, ["a", "b"], ["y"])],
                   [h.make_node(qop, ["q_a", "s_in", "z_in", "q_b", "s_in", "z_in", "s_out", "z_out"], ["y"],
                                domain="com.microsoft")],
                   [], [_c("s_out", s_out), _c("z_out", 128, np.uint8)])
    return f, q, s_out


def _concat() -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    f, q = _models({"a": [1, 3, 4, 4], "b": [1, 2, 4, 4]}, [h.make_node("Concat", ["a", "b"], ["y"], axis=1)],
                   [h.make_node("QLinearConcat", ["s_out", "z_out", "q_a", "s_in", "z_in", "q_b", "s_in", "z_in"], ["y"],
                                domain="com.microsoft", axis=1)],
                   [], [_c("s_out", 0.05), _c("z_out", 128, np.uint8)])
    return f, q, 0.05


def _where() -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    cond = h.make_tensor_value_info("c", T.BOOL, [1, 3, 4, 4])
    f, q = _models({"a": [1, 3, 4, 4], "b": [1, 3, 4, 4]}, [h.make_node("Where", ["c", "a", "b"], ["y"])],
                   [h.make_node("QLinearWhere", ["c", "q_a", "s_in", "z_in", "q_b", "s_in", "z_in", "s_out", "z_out"], ["y"],
                                domain="com.microsoft")],
                   [], [_c("s_out", 0.05), _c("z_out", 128, np.uint8)], extra_inputs=[cond])
    return f, q, 0.05


def _weights(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float]:
    w_q = np.random.default_rng(3).integers(-60, 61, size=shape).astype(np.int8)
    w_s = 0.01
    return w_q, dequantize(w_q, np.float32(w_s), None), w_s


def _conv() -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    w_q, w_f, w_s = _weights((4, 3, 3, 3))
    bias_q = np.array([10, -20, 30, 0], np.int32)
    f, q = _models({"x": [1, 3, 6, 6]}, [h.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
                   [h.make_node("QLinearConv", ["q_x", "s_in", "z_in", "w", "w_s", "w_z", "s_out", "z_out", "b"], ["y"],
                                pads=[1, 1, 1, 1])],
                   [_c("w", w_f), _c("b", bias_q * S_IN * w_s)],
                   [_c("w", w_q, np.int8), _c("w_s", w_s), _c("w_z", 0, np.int8), _c("s_out", 0.05),
                    _c("z_out", 128, np.uint8), _c("b", bias_q, np.int32)])
    return f, q, 0.05


def _matmul() -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    w_q, w_f, w_s = _weights((8, 5))
    f, q = _models({"x": [2, 8]}, [h.make_node("MatMul", ["x", "w"], ["y"])],
                   [h.make_node("QLinearMatMul", ["q_x", "s_in", "z_in", "w", "w_s", "w_z", "s_out", "z_out"], ["y"])],
                   [_c("w", w_f)], [_c("w", w_q, np.int8), _c("w_s", w_s), _c("w_z", 0, np.int8), _c("s_out", 0.02),
                                    _c("z_out", 128, np.uint8)])
    return f, q, 0.02


def _qgemm() -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    w_q, w_f, w_s = _weights((5, 8))
    f, q = _models({"x": [2, 8]}, [h.make_node("Gemm", ["x", "w"], ["y"], transB=1)],
                   [h.make_node("QGemm", ["q_x", "s_in", "z_in", "w", "w_s", "w_z", "", "s_out", "z_out"], ["y"],
                                domain="com.microsoft", transB=1)],
                   [_c("w", w_f)], [_c("w", w_q, np.int8), _c("w_s", w_s), _c("w_z", 0, np.int8), _c("s_out", 0.02),
                                    _c("z_out", 128, np.uint8)])
    return f, q, 0.02


def _quantize(axis_scales: bool, block: int) -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    """QuantizeLinear itself: per axis, or per block of ``block`` elements (opset 21)."""
    if block:
        scale = np.linspace(0.02, 0.06, 12, dtype=np.float32).reshape(1, 3, 2, 2)  # 6 -> 2 blocks of 3 on axis 2
        attrs = {"axis": 2, "block_size": block}
    elif axis_scales:
        scale, attrs = np.array([0.02, 0.04, 0.06], np.float32), {"axis": 1}
    else:
        scale, attrs = np.array(0.04, np.float32), {}
    vi = {"x": [1, 3, 6, 2]}
    f = h.make_model(h.make_graph([h.make_node("Identity", ["x"], ["y"])], "f",
                                  [h.make_tensor_value_info("x", T.FLOAT, vi["x"])],
                                  [h.make_tensor_value_info("y", T.FLOAT, None)]),
                     opset_imports=[h.make_opsetid("", 21)])
    q = h.make_model(h.make_graph([h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **attrs)], "q",
                                  [h.make_tensor_value_info("x", T.FLOAT, vi["x"])],
                                  [h.make_tensor_value_info("y", T.INT8, None)],
                                  [_c("s", scale), _c("z", np.zeros(scale.shape, np.int8), np.int8)]),
                     opset_imports=[h.make_opsetid("", 21)])
    return f, q, float(scale.max())


CASES = {
    "QLinearConcat": _concat,
    "QLinearAdd": lambda: _binary("Add", "QLinearAdd", 0.1),
    "QLinearMul": lambda: _binary("Mul", "QLinearMul", 0.05),  # products of two normal samples: within 6.4
    "QLinearWhere": _where,
    "QLinearSigmoid": lambda: _unary("Sigmoid", "QLinearSigmoid", 1 / 256, 0),
    "QLinearLeakyRelu": lambda: _unary("LeakyRelu", "QLinearLeakyRelu", 0.05, 128, alpha=0.1),
    "QLinearSoftmax": lambda: _softmax(),
    "QLinearGlobalAveragePool": lambda: _unary("GlobalAveragePool", "QLinearGlobalAveragePool", 0.01, 128,
                                               q_attrs={"channels_last": 0}),
    "QLinearAveragePool": lambda: _unary("AveragePool", "QLinearAveragePool", 0.02, 128, kernel_shape=[2, 2]),
    "QLinearConv": _conv,
    "QLinearMatMul": _matmul,
    "QGemm": _qgemm,
    "QuantizeLinear per tensor": lambda: _quantize(False, 0),
    "QuantizeLinear per axis": lambda: _quantize(True, 0),
    "QuantizeLinear per block": lambda: _quantize(False, 3),
}


def _softmax() -> tuple[onnx.ModelProto, onnx.ModelProto, float]:
    f, q = _models({"x": [2, 10]}, [h.make_node("Softmax", ["x"], ["y"], axis=-1)],
                   [h.make_node("QLinearSoftmax", ["q_x", "s_in", "z_in", "s_out", "z_out"], ["y"], domain="com.microsoft",
                                axis=-1, opset=13)],
                   [], [_c("s_out", 1 / 256), _c("z_out", 0, np.uint8)])
    return f, q, 1 / 256


@pytest.mark.parametrize("op", list(CASES))
def test_quantized_output_matches_a_float_reference(op: str, runner: Runner) -> None:
    f, q, s_out = CASES[op]()
    c = compare_runs(RunSpec(f, "ort"), RunSpec(q, "ort"), runner=runner, intermediates=False)
    row = next(t for t in c.tensors if t.a == "y")
    assert row.error is not None and row.note.startswith("B dequantized"), f"{op}: not dequantized: {row.note!r}"
    # input quantization (steps of 0.04) and output rounding (half a step) bound the difference
    bound = 3 * S_IN + s_out
    assert row.error.max_abs <= bound and row.error.cosine >= 0.999, \
        f"{op}: dequantized output vs float reference: max abs {row.error.max_abs:.4g} (bound {bound:.3g}), " \
        f"cosine {row.error.cosine:.5f}"
