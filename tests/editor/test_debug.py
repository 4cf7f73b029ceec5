"""Numeric debugging on real models: compare two runs, map tensors across two models,
find the first divergence, reduce to the smallest failing subgraph (editor.debug)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from editor.debug import (
    NanCheck,
    RunSpec,
    Tolerance,
    compare_runs,
    compare_values,
    map_tensors,
    reduce_model,
)
from editor.runtime import Runner
from editor.runtime.inputs import load_inputs
from tests.conftest import CORPUS

VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"  # 25 nodes: Conv stack, LSTM, Conv head
DIMS = {"seq_len": 4}


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def _with_weight(name: str, change) -> onnx.ModelProto:  # noqa: ANN001
    model = onnx.load(VAD)
    for t in model.graph.initializer:
        if t.name == name:
            w = numpy_helper.to_array(t).copy()
            change(w)
            t.CopyFrom(numpy_helper.from_array(w, name))
            return model
    raise AssertionError(f"no initializer {name!r}")


@pytest.fixture(scope="module")
def quantized(tmp_path_factory) -> Path:  # noqa: ANN001
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = tmp_path_factory.mktemp("q") / "vad_int8.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_dynamic(str(VAD), str(out), weight_type=QuantType.QInt8)
    return out


# -- error statistics ----------------------------------------------------------------------
def test_nan_on_one_side_never_agrees_whatever_the_tolerance() -> None:
    a = np.linspace(-1, 1, 50, dtype=np.float32)
    b = a.copy()
    b[7] = np.nan
    e = compare_values(a, b, atol=1e9, rtol=1e9)
    assert not e.ok and e.nan_b == 1 and e.nan_a == 0
    both = a.copy()
    both[7] = np.nan
    assert compare_values(both, b).ok  # NaN where the reference has NaN agrees


def test_statistics_follow_their_definitions() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(1000).astype(np.float32)
    b = a + np.float32(0.5)
    e = compare_values(a, b, atol=0.0, rtol=0.0)
    assert not e.ok and e.mismatched == 1000
    assert e.max_abs == pytest.approx(0.5, rel=1e-5) and e.mean_abs == pytest.approx(0.5, rel=1e-5)
    cos = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert e.cosine == pytest.approx(cos, rel=1e-6)
    assert compare_values(a, a, atol=0.0, rtol=0.0).ok


# -- first divergence ----------------------------------------------------------------------
def test_perturbed_weight_is_found_as_the_first_divergence(tmp_path: Path, runner: Runner) -> None:
    def nudge(w: np.ndarray) -> None:
        w.flat[::7] += np.float32(0.25)

    b_path = tmp_path / "b.onnx"
    onnx.save(_with_weight("encoder.conv_layers.1.weight", nudge), b_path)
    c = compare_runs(RunSpec(VAD), RunSpec(b_path), dims=DIMS, runner=runner)
    fd = c.first_divergence
    assert fd is not None and fd.node == "/encoder/conv_layers.1/Conv"
    before = [t for t in c.tensors if t.order < fd.order]
    assert before and all(t.ok for t in before)  # everything upstream agrees
    assert not c.outputs_ok


def test_same_model_on_two_backends_agrees(runner: Runner) -> None:
    c = compare_runs(RunSpec(VAD, "ort"), RunSpec(VAD, "reference"), dims=DIMS, runner=runner)
    assert c.outputs_ok and c.first_divergence is None
    assert c.counts()["compared"] == c.counts()["tensors"] > 20


# -- two models: fp32 vs int8 ----------------------------------------------------------------
def test_fp32_vs_quantized_maps_most_tensors(quantized: Path, runner: Runner) -> None:
    tmap = map_tensors(onnx.load(VAD), onnx.load(quantized))
    assert tmap.coverage() >= 0.9
    d = tmap.diff
    assert d is not None and not d.nodes_added and not d.nodes_removed  # each Conv: one rewrite
    assert any("Conv quantized to int8" in k for k in d.rewrite_counts())
    c = compare_runs(RunSpec(VAD), RunSpec(quantized), dims=DIMS, runner=runner)
    counts = c.counts()
    assert counts["compared"] >= 0.9 * counts["tensors"]
    assert c.first_divergence is not None and c.first_divergence.op_type == "Conv"  # the first quantized op


def test_unrelated_models_do_not_pair_their_constants() -> None:
    from editor.diff import diff_models

    a = onnx.load(CORPUS / "real" / "ppocr_mobile_v2_cls.onnx")
    b = onnx.load(CORPUS / "real" / "ppocrv4_det.onnx")
    d = diff_models(a, b)
    assert not [c for c in d.nodes_changed if c.a.op_type == "Constant" == c.b.op_type]
    assert not d.rewrites  # whole-model regions are not one "rewrite"


# -- reduce --------------------------------------------------------------------------------
@pytest.mark.parametrize("hints", [True, False], ids=["hinted", "bisect"])
def test_reduce_planted_nan_to_one_node_that_reproduces(tmp_path: Path, runner: Runner, hints: bool) -> None:
    def poison(w: np.ndarray) -> None:
        w.flat[3] = np.nan

    model = _with_weight("decoder.conv1d.weight", poison)
    result = reduce_model(model, NanCheck(), dims=DIMS, runner=runner, use_hints=hints)
    assert len(result.nodes) <= 3 and "/decoder/conv1d/Conv" in result.nodes
    n = result.original_nodes
    assert result.runs <= 2 * np.log2(n) + 20
    path, npz = result.save(tmp_path / "reduced.onnx")
    again = onnx.load(path)
    onnx.checker.check_model(again)
    feeds = load_inputs(npz, again)
    rerun = runner.run(path, feeds)
    assert rerun.ok and any(np.isnan(r.value).any() for r in rerun.outputs.values())
    assert not any(np.isnan(v).any() for v in feeds.values())


def test_reduce_refuses_a_model_that_does_not_fail(runner: Runner) -> None:
    from editor.errors import RuntimeBackendError

    with pytest.raises(RuntimeBackendError, match="does not fail"):
        reduce_model(onnx.load(VAD), NanCheck(), dims=DIMS, runner=runner)


# -- CLI -------------------------------------------------------------------------------------
def test_compare_cli_json_contract_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from editor.cli import main

    def nudge(w: np.ndarray) -> None:
        w += np.float32(0.5)

    b_path = tmp_path / "b.onnx"
    onnx.save(_with_weight("encoder.conv_layers.2.weight", nudge), b_path)
    code = main(["compare", str(VAD), str(b_path), "--dim", "seq_len=4", "--json", "--save", str(tmp_path / "out")])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["outputs_ok"] is False
    assert data["first_divergence"]["node"] == "/encoder/conv_layers.2/Conv"
    assert data["first_divergence"]["tensor"] == "/encoder/conv_layers.2/Conv_output_0"
    for row in data["tensors"]:
        assert {"a", "b", "max_abs", "max_rel", "cosine", "ok"} <= row.keys()
    saved = load_inputs(tmp_path / "out" / "inputs.npz")
    assert set(saved) == {"input", "h", "c"}

    assert main(["compare", str(VAD), "--vs-backend", "reference", "--dim", "seq_len=4", "--json",
                 "--inputs", str(tmp_path / "out" / "inputs.npz")]) == 0
    assert json.loads(capsys.readouterr().out)["first_divergence"] is None
    # the saved outputs of either side are a reference for a later run on the same inputs
    saved = ["--inputs", str(tmp_path / "out" / "inputs.npz")]
    assert main(["compare", str(VAD), "--vs-outputs", str(tmp_path / "out" / "a_outputs.npz"), "--json", *saved]) == 0
    assert json.loads(capsys.readouterr().out)["outputs_ok"] is True
    assert main(["compare", str(VAD), "--vs-outputs", str(tmp_path / "out" / "b_outputs.npz"), "--json", *saved]) == 1
    assert json.loads(capsys.readouterr().out)["outputs_ok"] is False
    assert main(["compare", str(tmp_path / "missing.onnx"), "--vs-backend", "reference"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_reduce_cli_writes_model_and_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from editor.cli import main

    def poison(w: np.ndarray) -> None:
        w.flat[0] = np.nan

    bad = tmp_path / "bad.onnx"
    onnx.save(_with_weight("decoder.conv1d.weight", poison), bad)
    out = tmp_path / "small.onnx"
    assert main(["reduce", str(bad), "--check", "nan", "-o", str(out), "--dim", "seq_len=4"]) == 0
    assert out.is_file() and out.with_suffix(".npz").is_file()
    assert len(onnx.load(out).graph.node) <= 3
    assert main(["reduce", str(VAD), "--check", "nan", "-o", str(tmp_path / "x.onnx"), "--dim", "seq_len=4"]) == 1
    assert "does not fail" in capsys.readouterr().err


def test_reduce_a_node_the_backend_refuses_keeps_running_and_reproduces(tmp_path: Path, runner: Runner) -> None:
    """onnxruntime has no CPU kernel for Tan on doubles (the reference evaluator has): the
    crash check isolates that node; the refusal is a result, not the end of the process."""
    from onnx import TensorProto, helper

    from editor.debug import CrashCheck

    model = onnx.load(VAD)
    g = model.graph
    k = next(i for i, n in enumerate(g.node) if n.op_type == "Relu")
    relu = g.node[k].output[0]
    for n in g.node[k + 1:]:
        for j, x in enumerate(n.input):
            if x == relu:
                n.input[j] = "back32"
    for i, n in enumerate([helper.make_node("Cast", [relu], ["as64"], to=TensorProto.DOUBLE, name="to64"),
                           helper.make_node("Tan", ["as64"], ["tan64"], name="tan_double"),
                           helper.make_node("Cast", ["tan64"], ["back32"], to=TensorProto.FLOAT, name="to32")]):
        g.node.insert(k + 1 + i, n)
    result = reduce_model(model, CrashCheck("ort"), dims=DIMS, runner=runner)
    assert result.nodes == ["tan_double"]
    assert result.runs <= 2 * np.log2(result.original_nodes) + 20
    path, npz = result.save(tmp_path / "refused.onnx")
    feeds = load_inputs(npz)
    assert runner.run(path, feeds, backend="ort").status == "failed"
    assert runner.run(path, feeds, backend="reference").ok


def test_reduce_an_op_two_backends_compute_differently(tmp_path: Path, runner: Runner) -> None:
    """ppocr's first BatchNormalization (opset 11, with a ``momentum`` attribute): onnxruntime
    follows the inference formula, the reference evaluator does not. Reduce finds that node,
    and the saved cut still shows the disagreement."""
    from editor.debug import BackendDiffCheck

    model = onnx.load(CORPUS / "real" / "ppocr_mobile_v2_cls.onnx")
    dims = {"x[2]": 48, "x[3]": 48}  # small images keep the reference evaluator quick
    result = reduce_model(model, BackendDiffCheck("ort", "reference"), dims=dims, runner=runner)
    assert len(result.nodes) <= 3 and "BatchNormalization@0" in result.nodes
    path, npz = result.save(tmp_path / "bn.onnx")
    feeds = load_inputs(npz)
    ra, rb = runner.run(path, feeds, backend="ort"), runner.run(path, feeds, backend="reference")
    assert ra.ok and rb.ok
    assert any(not compare_values(ra.outputs[k].value, rb.outputs[k].value).ok for k in ra.outputs)


def test_comparing_a_big_pair_needs_a_constant_not_copies() -> None:
    """Comparing two runs holds the two runs' values plus a few MB: a pair of 32 MB tensors
    is compared in chunks (no full-size difference, bound or float64 copy), with the same
    figures a whole-array computation gives."""
    import tracemalloc

    from editor.debug.metrics import compare_values

    rng = np.random.default_rng(0)
    n = 8 << 20  # 32 MB of float32 per side, 32 chunks
    a = rng.standard_normal(n, dtype=np.float32)
    b = a + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3)
    a[[3, n - 5]] = np.nan
    b[[3, 7]] = [np.nan, np.inf]
    tracemalloc.start()
    try:
        err = compare_values(a, b, atol=1e-4, rtol=1e-3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"compare held {peak / 1e6:.0f} MB of temporaries for a 32 MB pair"
    both = np.isfinite(a) & np.isfinite(b)
    diff = np.abs(a[both].astype(np.float64) - b[both])
    assert err.max_abs == pytest.approx(float(diff.max()), rel=1e-6)
    assert err.mean_abs == pytest.approx(float(diff.mean()), rel=1e-4)
    assert (err.nan_a, err.nan_b, err.inf_b) == (2, 1, 1)
    ok = (both & (np.abs(a - b) <= 1e-4 + 1e-3 * np.abs(b))) | (np.isnan(a) & np.isnan(b))
    assert err.mismatched == int((~ok).sum()) and not err.ok
