"""Small models shared by the document/command tests (built in code, not from a hub), and
tests that they are what the other tests assume.

``function_model()`` is a model with model-local functions (the corpus has none);
``nested_model()`` has an If whose branches hold a Loop body, and bodies that capture outer
values, so renames and deletions can be tested across nesting levels.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
from onnx import helper, numpy_helper

from tests.conftest import CORPUS

BACKEND = CORPUS / "onnx-backend" / "node"
REAL = CORPUS / "real"

FUNCTION_MODEL_TEXT = """
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
agraph (float[N] x, float[N] y) => (float[N] z) {
  t = local.AddRelu(x, y)
  z = local.Scale<alpha: float = 2.0>(t)
}
<domain: "local", opset_import: ["" : 18]>
AddRelu (a, b) => (c) {
  s = Add(a, b)
  c = Relu(s)
}
<domain: "local", opset_import: ["" : 18]>
Scale <alpha> (a) => (c) {
  k = Constant<value_float: float = @alpha>()
  c = Mul(a, k)
}
"""


@lru_cache(maxsize=None)
def _function_model_bytes() -> bytes:
    return onnx.parser.parse_model(FUNCTION_MODEL_TEXT).SerializeToString()


def function_model() -> onnx.ModelProto:
    """Main graph calling two model-local functions (domain ``local``)."""
    return onnx.load_from_string(_function_model_bytes())


@lru_cache(maxsize=None)
def _nested_model_bytes() -> bytes:
    f = onnx.TensorProto.FLOAT
    # Loop body: captures "w" (main graph initializer) and "bias" (If-branch value)
    loop_body = helper.make_graph(
        [
            helper.make_node("Add", ["acc_in", "w"], ["s"], name="body_add"),
            helper.make_node("Add", ["s", "bias"], ["acc_out"], name="body_bias"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
        ],
        "loop_body",
        [
            helper.make_tensor_value_info("iter", onnx.TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", f, [2]),
        ],
        [
            helper.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", f, [2]),
        ],
    )
    then_branch = helper.make_graph(
        [
            helper.make_node("Neg", ["w"], ["bias"], name="then_neg"),
            helper.make_node("Loop", ["trip", "", "x"], ["looped"], name="then_loop", body=loop_body),
        ],
        "then",
        [],
        [helper.make_tensor_value_info("looped", f, [2])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["h"], ["h_copy"], name="else_id")],
        "else",
        [],
        [helper.make_tensor_value_info("h_copy", f, [2])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["h"], name="relu"),
            helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch),
            helper.make_node("Mul", ["y", "h"], ["z"], name="mul"),
        ],
        "nested",
        [
            helper.make_tensor_value_info("x", f, [2]),
            helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("z", f, [2])],
        [
            numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w"),
            numpy_helper.from_array(np.array(3, np.int64), "trip"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


def nested_model() -> onnx.ModelProto:
    return onnx.load_from_string(_nested_model_bytes())


def load(path: str | Path) -> onnx.ModelProto:
    return onnx.load(str(path), load_external_data=False)


def backend(name: str) -> Path:
    return BACKEND / name / "model.onnx"


def test_function_model_is_valid_and_runs() -> None:
    import onnx.reference

    m = function_model()
    onnx.checker.check_model(m, full_check=True)
    assert [f.name for f in m.functions] == ["AddRelu", "Scale"]
    (z,) = onnx.reference.ReferenceEvaluator(m).run(
        None, {"x": np.array([1, -3], np.float32), "y": np.array([1, 1], np.float32)}
    )
    np.testing.assert_allclose(z, [4.0, 0.0])


def test_nested_model_is_valid_and_runs() -> None:
    import onnx.reference

    m = nested_model()
    ev = onnx.reference.ReferenceEvaluator(m)
    x = np.array([1.0, -1.0], np.float32)
    (z,) = ev.run(None, {"x": x, "c": np.array(True)})
    # then: loop 3 times acc += w + (-w) -> x ; z = x * relu(x)
    np.testing.assert_allclose(z, x * np.maximum(x, 0))
    (z,) = ev.run(None, {"x": x, "c": np.array(False)})
    np.testing.assert_allclose(z, np.maximum(x, 0) ** 2)
