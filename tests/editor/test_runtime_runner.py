"""The child-process runner: warm reuse, crash isolation, timeout, cancel, fallback."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

from editor.runtime import Runner, RunOptions
from editor.runtime.backends import _ort_max_opset
from tests.conftest import CORPUS
from tests.editor.test_runtime_models import chain_model, hang_model, int4_model, new_opset_model

X = np.array([[1.0, -2.0, 3.0]], np.float32)


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    # The worker honours the crash/hang hooks only with this variable (spawn copies environ).
    os.environ["ONNX_STUDIO_RUNTIME_TEST_HOOKS"] = "1"
    r = Runner()
    try:
        yield r
    finally:
        r.close()
        os.environ.pop("ONNX_STUDIO_RUNTIME_TEST_HOOKS", None)


def test_runs_in_a_child_and_stays_warm(runner: Runner) -> None:
    model = chain_model()
    t0 = time.perf_counter()
    first = runner.run(model, {"x": X})
    cold = time.perf_counter() - t0
    assert first.ok, first.error
    pid = runner.worker_pid
    assert pid is not None and pid != os.getpid()
    np.testing.assert_array_equal(first.value("y"), [[-1, 0, -9]])
    t0 = time.perf_counter()
    second = runner.run(model, {"x": X})
    warm = time.perf_counter() - t0
    assert second.ok and runner.worker_pid == pid, f"pid {runner.worker_pid}, was {pid}"  # same process
    # the cached session: a fraction of the first run (a process start, imports, a session),
    # a ratio in this process rather than a bound a busy machine breaks
    assert warm < max(0.5, cold / 3), f"a warm run took {warm:.3f} s, the first {cold:.3f} s"


def test_large_arrays_round_trip(runner: Runner) -> None:
    x = np.random.default_rng(0).standard_normal((1_000_000, 3)).astype(np.float32)
    result = runner.run(chain_model(), {"x": x}, outputs=["a", "y"])
    assert result.ok, result.error
    np.testing.assert_array_equal(result.value("a"), np.maximum(x, 0))


@pytest.mark.parametrize("action,signal", [("sigfpe", "SIGFPE"), ("sigsegv", "SIGSEGV")])
def test_pinned_backend_crash_is_reported_and_parent_survives(runner: Runner, action: str, signal: str) -> None:
    result = runner.run(chain_model(), {"x": X}, backend="ort", debug=action)
    assert result.status == "crashed"
    assert result.signal == signal
    assert result.error == f"ort: worker process died with {signal}"
    # the next run gets a fresh worker
    assert runner.run(chain_model(), {"x": X}).ok


def test_exit_code_is_reported(runner: Runner) -> None:
    result = runner.run(chain_model(), {"x": X}, backend="ort", debug="exit")
    assert result.status == "crashed" and result.exit_code == 3 and result.signal is None
    assert "exited with code 3" in (result.error or "")


def test_crash_in_ort_falls_back_to_reference(runner: Runner) -> None:
    result = runner.run(chain_model(), {"x": X}, debug="ort:sigfpe")
    assert result.ok and result.backend == "reference"
    assert result.attempts[0].status == "crashed" and "SIGFPE" in (result.attempts[0].reason or "")
    np.testing.assert_array_equal(result.value("y"), [[-1, 0, -9]])


def test_real_hang_hits_the_time_limit(runner: Runner) -> None:
    t0 = time.monotonic()
    result = runner.run(hang_model(), {"x": np.zeros(1, np.float32)}, backend="ort", timeout=1.5)
    elapsed = time.monotonic() - t0
    assert result.status == "timeout" and "time limit" in (result.error or ""), f"{result.status}: {result.error}"
    assert elapsed < 120, f"a 1.5 s time limit ended the run after {elapsed:.0f} s"  # never a hang
    assert runner.run(chain_model(), {"x": X}).ok


def test_cancel_from_another_thread(runner: Runner) -> None:
    runner.start()
    timer = threading.Timer(1.0, runner.cancel)
    timer.start()
    t0 = time.monotonic()
    result = runner.run(chain_model(), {"x": X}, debug="hang")
    timer.join()
    assert result.status == "cancelled", result.error
    assert time.monotonic() - t0 < 120, "the cancel did not end the endless run"  # never a hang
    assert not runner.cancel()  # nothing running any more
    assert runner.run(chain_model(), {"x": X}).ok


def test_memory_limit_turns_a_runaway_allocation_into_an_error(runner: Runner) -> None:
    result = runner.run(chain_model(), {"x": X}, backend="ort", debug="oom", options=RunOptions(memory_limit_mb=2048))
    assert result.status == "failed"
    assert result.error == "ort: out of memory (limit 2 GB)"
    assert runner.run(chain_model(), {"x": X}).ok


def test_int4_falls_back_to_reference_with_reason(runner: Runner) -> None:
    x = np.array([-8, -1, 0, 7], dtype=ml_dtypes.int4)
    result = runner.run(int4_model(), {"x": x})
    assert result.ok and result.backend == "reference"
    assert result.fallback_reasons() == ["ort: value 'x' is tensor(int4): onnxruntime's Python binding cannot pass int4 tensors"]
    np.testing.assert_array_equal(result.value("y"), [-8, -1, 0, 7])


def test_too_new_opset_falls_back_to_reference(runner: Runner) -> None:
    """An opset the installed onnx knows but onnxruntime does not: the reference evaluator runs it.

    Built from what the installed packages report, so a new release of either moves the
    opset, not the promise."""
    import onnx

    opset = _ort_max_opset() + 1
    if opset > onnx.defs.onnx_opset_version():
        pytest.skip(f"onnxruntime accepts every opset the installed onnx knows (up to {opset - 1})")
    result = runner.run(new_opset_model(opset), {"x": np.array([-1, 2, -3], np.float32)})
    assert result.ok and result.backend == "reference"
    assert result.attempts[0].status == "skipped" and f"opset {opset}" in (result.attempts[0].reason or "")


def test_pinned_backend_does_not_fall_back(runner: Runner) -> None:
    result = runner.run(int4_model(), {"x": np.zeros(4, ml_dtypes.int4)}, backend="ort")
    assert result.status == "failed" and result.backend is None and len(result.attempts) == 1
    assert result.error == "ort: value 'x' is tensor(int4): onnxruntime's Python binding cannot pass int4 tensors"


def test_ort_run_time_error_falls_back(runner: Runner) -> None:
    """ConvInteger with a per-channel zero point loads in onnxruntime but fails when it runs."""
    folder = CORPUS / "onnx-backend" / "node" / "test_convinteger_with_padding"
    import onnx

    from editor.runtime import input_specs
    from editor.runtime.values import load_value_file, values_close

    model = onnx.load(str(folder / "model.onnx"))
    feeds = {s.name: load_value_file(folder / "test_data_set_0" / f"input_{k}.pb", s.type) for k, s in enumerate(input_specs(model))}
    expected = load_value_file(folder / "test_data_set_0" / "output_0.pb", model.graph.output[0].type)
    result = runner.run(folder / "model.onnx", feeds)
    assert result.ok and result.backend == "reference"
    assert result.attempts[0].status == "failed" and "ConvInteger" in (result.attempts[0].reason or "")
    assert values_close(result.value(model.graph.output[0].name), expected) is None


def test_bytes_model_sent_once_then_by_key(runner: Runner) -> None:
    data = chain_model().SerializeToString()
    assert runner.run(data, {"x": X}).ok
    assert runner.run(data, {"x": X * 2}).ok


def test_profile_through_the_worker(runner: Runner) -> None:
    result = runner.run(chain_model(), {"x": X}, options=RunOptions(profile=True))
    assert result.ok and result.profile and "mul" in result.profile


def test_providers_listed_by_the_worker(runner: Runner) -> None:
    assert "CPUExecutionProvider" in runner.providers()


def test_nontensor_output_through_the_worker(runner: Runner) -> None:
    x = np.array([[5.1, 3.5], [6.2, 2.9], [7.7, 3.0]], np.float32)
    result = runner.run(CORPUS / "real" / "ort_logreg_iris.onnx", {"float_input": x})
    assert result.ok
    probs = result.value("probabilities")
    assert isinstance(probs, list) and len(probs) == 3 and isinstance(probs[0], dict)


def test_sigkill_is_reported_as_possible_oom(runner: Runner) -> None:
    result = runner.run(chain_model(), {"x": X}, backend="ort", debug="sigkill")
    assert result.status == "crashed" and result.signal == "SIGKILL"
    assert "possibly out of memory" in (result.error or "")


def test_external_data_model_with_intermediates(runner: Runner, tmp_path) -> None:  # noqa: ANN001
    import onnx

    model = chain_model()
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
    loaded = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    assert loaded.graph.initializer[0].data_location == onnx.TensorProto.EXTERNAL
    for backend in ("ort", "reference"):
        # the derived copy (extra outputs) is loaded from bytes: the weights must still be found
        result = runner.run(tmp_path / "m.onnx", {"x": X}, outputs=["b", "y"], backend=backend)
        assert result.ok, result.error
        np.testing.assert_array_equal(result.value("b"), [[1.5, 0.0, 9.0]])


def test_fallback_runs_reference_even_when_providers_were_chosen(tmp_path) -> None:
    """Providers are an onnxruntime option: a model onnxruntime cannot take (int4) still
    falls back to the reference evaluator when the user picked providers."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    from editor.runtime.backends import RunOptions
    from editor.runtime.runner import Runner

    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT4)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT4, [4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    runner = Runner()
    try:
        result = runner.run(m.SerializeToString(), {"x": np.array([1, 2, 3, -4], np.float32)},
                            options=RunOptions(providers=("CPUExecutionProvider",)), timeout=60)
    finally:
        runner.close()
    assert result.status == "ok", result.error
    assert result.backend == "reference"
    assert [a.backend for a in result.attempts] == ["ort", "reference"]
