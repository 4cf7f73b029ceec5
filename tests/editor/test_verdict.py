"""A numeric verdict states its evidence (editor.debug.compare, ``compare`` / ``reduce``):
exit codes with one meaning each, NaN/Inf as findings in words, no silent fallback to the
reference evaluator, inputs fed to both sides in each side's declared types, and
``--outputs-only`` working."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from editor.cli import main
from editor.debug import RunFailed, RunSpec, Tolerance, compare_runs
from editor.runtime import Runner, RunOptions
from tests.conftest import CORPUS

VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"  # 25 nodes: Conv stack, LSTM, Conv head


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def _model(nodes: list[onnx.NodeProto], shape: list[int], out_type: int = T.FLOAT, in_type: int = T.FLOAT) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", in_type, shape)],
                     [h.make_tensor_value_info("y", out_type, shape)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def nan_model(tmp_path_factory) -> Path:  # noqa: ANN001
    """sqrt of a normal sample: NaN in about half the elements, on every backend."""
    path = tmp_path_factory.mktemp("nan") / "nan.onnx"
    onnx.save(_model([h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Sqrt", ["x"], ["s"], name="sqrt"),
                      h.make_node("Add", ["r", "s"], ["y"], name="add")], [4, 8]), path)
    return path


def test_nan_on_both_sides_is_a_difference_in_words(nan_model: Path, runner: Runner,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from editor.cli.compare import _print

    code = main(["compare", str(nan_model), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert (code, data["verdict"], data["exit_code"]) == (1, "differ", 1), f"NaN in both outputs agreed: {data}"
    first = data["first_nonfinite"]
    assert first["node"] == "sqrt" and "NaN" in first["nonfinite"], f"the NaN is made by 'sqrt', report: {first}"
    assert "NaN" in data["reason"] and "not agreement" in data["reason"], data["reason"]
    c = compare_runs(RunSpec(nan_model), RunSpec(nan_model, "reference"), runner=runner)
    _print(c, False, sys.stdout)
    text = capsys.readouterr().out
    rows = [ln for ln in text.splitlines() if ln.endswith("[output]")]
    assert rows and rows[0].startswith("NaN") and "A 1" in rows[0] and "NaN, B" in rows[0], \
        f"the output row must say NaN in words for each side, got {rows}"
    assert " 0 " not in rows[0], f"no 0 / 0 / 1 of the finite elements on a NaN row: {rows[0]!r}"


def test_the_same_inf_agrees_only_when_asked(tmp_path: Path, runner: Runner) -> None:
    path = tmp_path / "inf.onnx"
    onnx.save(_model([h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Log", ["a"], ["y"], name="log")],
                     [3, 5]), path)
    a, b = RunSpec(path), RunSpec(path, "reference")
    c = compare_runs(a, b, runner=runner)  # log(0) = -Inf on both sides
    assert (c.verdict, c.exit_code) == ("differ", 1), c.summary()
    assert c.first_nonfinite is not None and c.first_nonfinite.node == "log" and "Inf" in c.first_nonfinite.finding
    c = compare_runs(a, b, runner=runner, tolerance=Tolerance(infinities_equal=True))
    assert (c.verdict, c.exit_code) == ("agree", 0), c.summary()


def test_outputs_only_feeds_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", str(VAD), "--vs-backend", "reference", "--outputs-only", "--dim", "seq_len=4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["verdict"] == "agree", f"--outputs-only must run both sides: exit {code}, {data}"
    assert {t["a"] for t in data["tensors"]} == {"hn", "cn", "speech_probs"}


@pytest.mark.parametrize("argv", [
    ["--input", "nope=x.npy"],
    ["--val-range", "x:1"],
    ["--dim", "seq_len"],
    ["--inputs", "missing.npz"],
], ids=["unknown-input", "bad-range", "bad-dim", "missing-npz"])
def test_bad_input_is_no_verdict_never_differ(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", str(VAD), "--json", *argv])
    captured = capsys.readouterr()
    assert code == 2, f"a bad input must exit 2 (no verdict), not {code}: {captured.err}"
    assert json.loads(captured.out) == {"verdict": "no verdict", "exit_code": 2, "error": captured.err[len("error: "):].strip()}
    assert main(["reduce", str(VAD), "--check", "nan", "-o", "/nonexistent/x.onnx", *argv]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_a_side_onnxruntime_cannot_run_is_no_verdict_unless_fallback_is_allowed(tmp_path: Path, runner: Runner) -> None:
    model = tmp_path / "fixed.onnx"
    onnx.save(_model([h.make_node("Relu", ["x"], ["y"], name="relu")], [1, 4]), model)
    wrong = {"x": np.ones((1, 5), np.float32)}  # onnxruntime refuses the shape; the reference evaluator runs it
    a, b = RunSpec(model), RunSpec(model, options=RunOptions(graph_optimization_level="disable"))
    with pytest.raises(RunFailed, match="could not run.*--allow-fallback") as info:
        compare_runs(a, b, wrong, runner=runner)
    assert info.value.exit_code == 2
    c = compare_runs(a, b, wrong, runner=runner, allow_fallback=True)
    assert c.side_a is not None and c.side_a.fell_back and c.backend_a == "reference", c.summary()
    assert c.side_a.passed_over[0].startswith("ort:") and "FELL BACK" in c.summary()[0], c.summary()


def test_fp16_model_is_fed_fp16_and_runs_on_onnxruntime(tmp_path: Path, runner: Runner) -> None:
    from editor.surgery.precision import convert_precision

    half = tmp_path / "vad16.onnx"
    onnx.save(convert_precision(onnx.load(VAD)).model, half)  # fp16 inputs and outputs, as `fp16` writes
    c = compare_runs(RunSpec(VAD), RunSpec(half), dims={"seq_len": 4}, runner=runner)
    assert (c.backend_a, c.backend_b) == ("ort", "ort"), f"both sides run on onnxruntime: {c.side_a}, {c.side_b}"
    assert any("B: input 'input' cast float32 -> float16" in n for n in c.notes), c.notes
    assert c.verdict in ("agree", "differ") and c.counts()["compared"] > 20, c.counts()


def test_a_node_inserted_in_b_is_named_at_the_first_divergence(tmp_path: Path, runner: Runner) -> None:
    a_path, b_path = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(_model([h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Neg", ["r"], ["y"], name="neg")],
                     [4, 8]), a_path)
    onnx.save(_model([h.make_node("Relu", ["x"], ["r0"], name="relu"), h.make_node("Sin", ["r0"], ["r"], name="inserted"),
                      h.make_node("Neg", ["r"], ["y"], name="neg")], [4, 8]), b_path)
    c = compare_runs(RunSpec(a_path), RunSpec(b_path), runner=runner)
    fd = c.first_divergence
    assert fd is not None and "'inserted' (Sin)" in fd.b_cause, f"B's extra node must be named: {c.summary()}"
    assert "inserted" in c.to_json()["first_divergence"]["b_cause"]
