"""Backends in-process: can_load reasons, intermediates, non-tensor values, profiling."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest

from editor.runtime import OrtBackend, ReferenceBackend, RunOptions
from editor.runtime.backends import LoadedModel, _ort_max_opset, clean_message
from editor.runtime.intermediates import expose_outputs, value_scopes
from editor.runtime.profiling import parse_ort_profile
from editor.runtime.source import ModelSource
from tests.conftest import CORPUS
from tests.editor.test_runtime_models import bfloat16_model, chain_model, int4_model, new_opset_model

# silero_vad's LSTM overflows exp() in the reference evaluator on random input; harmless here
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

X = np.array([[1.0, -2.0, 3.0], [-0.5, 0.25, 4.0]], np.float32)


def _loaded(model: onnx.ModelProto) -> LoadedModel:
    return LoadedModel.from_source(ModelSource.from_any(model))


def test_ort_lists_providers_cpu_last() -> None:
    provs = OrtBackend.default_providers()
    assert provs[-1] == "CPUExecutionProvider"
    assert set(provs) <= set(OrtBackend.available_providers())


def test_ort_refuses_unknown_provider_precisely() -> None:
    reason = OrtBackend().can_load(_loaded(chain_model()), ("y",), RunOptions(providers=("NoSuchExecutionProvider",)))
    assert reason and "'NoSuchExecutionProvider' is not in this onnxruntime build" in reason


def test_ort_refuses_int4_by_name_reference_runs_it() -> None:
    loaded = _loaded(int4_model())
    reason = OrtBackend().can_load(loaded, ("y",))
    assert reason == "value 'x' is tensor(int4): onnxruntime's Python binding cannot pass int4 tensors"
    x = np.array([-8, -1, 0, 7], dtype=ml_dtypes.int4)
    result = ReferenceBackend().run(int4_model(), {"x": x})
    assert result.ok, result.error
    np.testing.assert_array_equal(result.value("y"), [-8.0, -1.0, 0.0, 7.0])


def test_ort_refuses_too_new_opset() -> None:
    top = _ort_max_opset()
    assert OrtBackend().can_load(_loaded(new_opset_model(top)), ("y",)) is None
    reason = OrtBackend().can_load(_loaded(new_opset_model(top + 1)), ("y",))
    assert reason is not None and f"opset {top + 1}" in reason and f"accepts up to {top}" in reason


def test_ort_passes_bfloat16_through_raw_bytes() -> None:
    x = np.array([1.0, 2.5, -3.0, 1e5], np.float32)
    result = OrtBackend().run(bfloat16_model(), {"x": x})
    assert result.ok, result.error
    y = result.value("y")
    assert y.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(y, x.astype(ml_dtypes.bfloat16))


def test_intermediates_equal_a_manually_exposed_run() -> None:
    model = chain_model()
    want = ["a", "b", "c", "y"]
    manual = onnx.ModelProto()
    manual.CopyFrom(model)
    for name, et in (("a", onnx.TensorProto.FLOAT), ("b", onnx.TensorProto.FLOAT), ("c", onnx.TensorProto.INT64)):
        manual.graph.output.append(onnx.helper.make_tensor_value_info(name, et, None))
    import onnxruntime as ort

    sess = ort.InferenceSession(manual.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"x": X})))
    before = model.SerializeToString()
    for backend in (OrtBackend(), ReferenceBackend()):
        result = backend.run(model, {"x": X}, outputs=want)
        assert result.ok, result.error
        for name in want:
            np.testing.assert_array_equal(result.value(name), expected[name])
        assert result.outputs["a"].role == "intermediate" and result.outputs["y"].role == "output"
    assert model.SerializeToString() == before  # the user's model is untouched


def test_typeless_exposed_output_is_accepted_by_ort() -> None:
    model = chain_model()
    derived = expose_outputs(model, ["a"])
    # chain_model declares no value_info: the type comes from shape inference ...
    assert derived.graph.output[-1].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    # ... and without any type, onnxruntime still accepts the output.
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    bare.graph.output.append(onnx.ValueInfoProto(name="b"))
    import onnxruntime as ort

    sess = ort.InferenceSession(bare.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [o.name for o in sess.get_outputs()] == ["y", "b"]


def test_input_and_initializer_can_be_requested() -> None:
    result = OrtBackend().run(chain_model(), {"x": X}, outputs=["x", "w", "y"])
    assert result.ok, result.error
    np.testing.assert_array_equal(result.value("x"), X)
    np.testing.assert_array_equal(result.value("w"), [1.5, 2.0, 3.0])
    assert result.outputs["w"].role == "initializer"


def test_unknown_value_name_is_refused() -> None:
    assert OrtBackend().can_load(_loaded(chain_model()), ("nope",)) == "no value named 'nope' in the model"


def test_sequence_of_maps_output_logreg_iris() -> None:
    path = CORPUS / "real" / "ort_logreg_iris.onnx"
    x = np.array([[5.1, 3.5], [6.2, 2.9], [7.7, 3.0]], np.float32)
    result = OrtBackend().run(path, {"float_input": x})
    assert result.ok, result.error
    probs = result.outputs["probabilities"]
    assert probs.kind == "sequence" and probs.shape is None and probs.stats is None
    assert len(probs.value) == 3 and isinstance(probs.value[0], dict)
    assert set(probs.value[0]) == {0, 1, 2}
    assert sum(probs.value[0].values()) == pytest.approx(1.0, abs=1e-5)
    assert probs.summary == "sequence of 3 (map)"
    assert result.outputs["label"].dtype == "int64"


def test_subgraph_values_silero_vad_reference_capture() -> None:
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    model = onnx.load(str(path))
    scopes = value_scopes(model)
    then_names = [n for n, w in scopes.subgraph.items() if w == "/model/decoder/If/then_branch"]
    else_names = [n for n, w in scopes.subgraph.items() if w == "/model/decoder/If/else_branch"]
    assert then_names and else_names
    feeds = {
        "input": np.random.default_rng(0).standard_normal((1, 512)).astype(np.float32),
        "state": np.zeros((2, 1, 128), np.float32),
        "sr": np.array(16000, np.int64),
    }
    loaded = LoadedModel.from_source(ModelSource.from_path(path))
    assert "lives inside subgraph /model/decoder/If/then_branch" in (OrtBackend().can_load(loaded, (then_names[-1],)) or "")
    result = ReferenceBackend().run(path, feeds, outputs=["output", then_names[-1], else_names[-1]])
    assert result.ok, result.error
    # Which branch runs depends on the input length; exactly one of the two is computed.
    got = [n for n in (then_names[-1], else_names[-1]) if n in result.outputs]
    assert len(got) == 1
    assert any(n in result.missing and "did not run" in result.missing[n] for n in (then_names[-1], else_names[-1]))
    # The captured value equals what the same subgraph computes when run on its own output:
    # the If's output is the branch output; compare through the If node's result.
    ref_out = OrtBackend().run(path, feeds)
    np.testing.assert_allclose(result.value("output"), ref_out.value("output"), rtol=1e-4, atol=1e-6)


def test_subgraph_capture_matches_branch_output() -> None:
    """A value captured inside an If branch equals the If's output when it is the branch output."""
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    model = onnx.load(str(path))
    scopes = value_scopes(model)
    feeds = {
        "input": np.random.default_rng(1).standard_normal((1, 512)).astype(np.float32),
        "state": np.zeros((2, 1, 128), np.float32),
        "sr": np.array(16000, np.int64),
    }
    checked = 0
    for node in model.graph.node:
        if node.op_type != "If":
            continue
        branch_out = {a.name: a.g.output[0].name for a in node.attribute}
        names = [branch_out["then_branch"], branch_out["else_branch"]]
        if any(scopes.where(n) != "subgraph" for n in names):
            continue
        result = ReferenceBackend().run(path, feeds, outputs=[node.output[0], *names])
        assert result.ok, result.error
        captured = [n for n in names if n in result.outputs]
        assert len(captured) == 1
        np.testing.assert_array_equal(result.value(captured[0]), result.value(node.output[0]))
        checked += 1
        if checked == 3:
            break
    assert checked


def test_profile_parses_node_times() -> None:
    result = OrtBackend().run(chain_model(), {"x": X}, options=RunOptions(profile=True))
    assert result.ok, result.error
    assert result.profile is not None
    assert {"relu", "mul", "cast", "neg"} <= set(result.profile)
    assert result.profile["relu"].op_type == "Relu" and result.profile["relu"].microseconds >= 0


def test_parse_profile_sums_calls() -> None:
    events = [
        {"cat": "Session", "name": "model_run", "dur": 100},
        {"cat": "Node", "name": "conv_kernel_time", "dur": 10, "args": {"op_name": "Conv", "provider": "CPUExecutionProvider"}},
        {"cat": "Node", "name": "conv_kernel_time", "dur": 5, "args": {"op_name": "Conv"}},
        {"cat": "Node", "name": "conv_fence_before", "dur": 1},
    ]
    times = parse_ort_profile(events)
    assert list(times) == ["conv"] and times["conv"].microseconds == 15 and times["conv"].calls == 2


def test_clean_message_drops_cpp_noise() -> None:
    raw = (
        "[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running ConvInteger node. "
        "Name:'' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/quantization/conv_integer.cc:52 "
        "virtual onnxruntime::common::Status onnxruntime::ConvInteger::Compute(onnxruntime::OpKernelContext*) const "
        "IsScalarOr1ElementVector(W_Zero_Point) was false."
    )
    msg = clean_message(raw)
    assert "onnxruntime_src" not in msg and msg.endswith("IsScalarOr1ElementVector(W_Zero_Point) was false.")


def test_can_load_accepts_a_plain_model_proto() -> None:
    assert ReferenceBackend().can_load(chain_model()) is None
    assert "int4" in (OrtBackend().can_load(int4_model()) or "")


def test_values_close_complex_and_strings() -> None:
    from editor.runtime.values import values_close

    assert values_close(np.array([1 + 1j], np.complex64), np.array([1 + 1j], np.complex64)) is None
    assert values_close(np.array([1 + 2j], np.complex64), np.array([1 + 1j], np.complex64)) is not None
    assert values_close(np.array(["a"], dtype=object), np.array(["b"], dtype=object)) == "values differ"
