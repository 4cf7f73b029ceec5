"""Small models built with onnx.helper for the runtime tests, and a check that they are valid."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make(nodes, inputs, outputs, *, opset: int = 17, ir: int = 8, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def chain_model() -> onnx.ModelProto:
    """x -> Relu -> a -> Mul(w) -> b -> Cast(int64) -> c -> Neg -> y (a, b, c intermediates)."""
    return make(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Mul", ["a", "w"], ["b"], name="mul"),
            helper.make_node("Cast", ["b"], ["c"], to=TensorProto.INT64, name="cast"),
            helper.make_node("Neg", ["c"], ["y"], name="neg"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, ["N", 3])],
        inits=[numpy_helper.from_array(np.array([1.5, 2.0, 3.0], np.float32), "w")],
    )


def int4_model() -> onnx.ModelProto:
    """An int4 input cast to float: onnxruntime's binding cannot pass int4."""
    return make(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
        [helper.make_tensor_value_info("x", TensorProto.INT4, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        opset=21,
        ir=10,
    )


def new_opset_model(opset: int) -> onnx.ModelProto:
    return make(
        [helper.make_node("Abs", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        opset=opset,
        ir=10,
    )


def hang_model() -> onnx.ModelProto:
    """A Loop with 2**62 iterations and an always-true condition: a real hang in any backend."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["v_in", "one"], ["v_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
        initializer=[numpy_helper.from_array(np.ones(1, np.float32), "one")],
    )
    return make(
        [helper.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        inits=[
            numpy_helper.from_array(np.array(2**62, np.int64), "trip"),
            numpy_helper.from_array(np.array(True), "cond"),
        ],
    )


def bfloat16_model() -> onnx.ModelProto:
    return make(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [4])],
    )


def test_models_are_valid_onnx() -> None:
    """The builders above make checker-clean models (so failures elsewhere are the runtime's)."""
    for model in (chain_model(), int4_model(), new_opset_model(21), hang_model(), bfloat16_model()):
        onnx.checker.check_model(model, full_check=True)


def test_runtime_core_is_qt_free() -> None:
    import subprocess
    import sys

    code = "import sys, editor.runtime, editor.runtime.worker, editor.runtime.conformance, editor.cli.run; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
