"""Inputs that exercise the model, stated (editor.runtime.input_dims / input_plan): open dims
get sizes the model can take (roles, metadata, the shape engine's check, a refit when a run
fails), never 1 for an image or sequence dim without saying so; every run says what it fed.
Planted bugs on real models that 1-sized dims hid must show as differences at the planted
node with default options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from editor.debug import RunSpec, compare_runs
from editor.runtime import Runner, choose_dims, plan_inputs
from editor.runtime.input_plan import refit
from tests.conftest import CORPUS

DET = CORPUS / "real" / "ppocrv4_det.onnx"  # Paddle text detector, x [N, 3, H, W] all open
CLS = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"  # x [-1, 3, ?, ?]
VAD16 = CORPUS / "real" / "silero_vad_16k_op15.onnx"  # takes 256..640 samples: If branches decide


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def _constant_of(model: onnx.ModelProto, name: str) -> onnx.TensorProto:
    return next(n.attribute[0].t for n in model.graph.node if n.op_type == "Constant" and n.output[0] == name)


# -- sizes -------------------------------------------------------------------------------------
def test_an_image_with_open_sizes_gets_image_sizes_and_says_they_are_guessed() -> None:
    plan = plan_inputs(onnx.load(DET))
    x = plan.inputs[0]
    assert x.shape is not None and x.shape[2] >= 32 and x.shape[3] >= 32, f"a detector fed {x.shape}"
    roles = {c.role: c for c in plan.dims.choices.values()}
    assert {"batch", "height", "width"} <= set(roles), roles
    assert roles["height"].guessed and "axis 2" in roles["height"].why, roles["height"]
    warning = " ".join(plan.warnings())
    assert "guessed" in warning and "--dim" in warning, plan.warnings()
    text = "\n".join(plan.lines())
    assert f"float32[1, 3, {x.shape[2]}, {x.shape[3]}]" in text and "in [" in text, text


def test_the_shape_engine_moves_a_guess_the_model_cannot_take() -> None:
    # x [N, 1, H, 4] -> Transpose -> MatMul with a [48, 2] weight: only H = 48 multiplies
    w = numpy_helper.from_array(np.ones((48, 2), np.float32), "w")
    g = h.make_graph([h.make_node("Transpose", ["x"], ["t"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["t", "w"], ["y"])],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 1, "height", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    dims = choose_dims(model)
    height = dims.choices["height"]
    assert height.value == 48 and height.guessed and "MatMul" in height.why, height
    assert not dims.problems, dims.problems
    user = choose_dims(model, {"height": 20})  # a user's size wins, and the problem is said
    assert user.choices["height"].value == 20 and user.choices["height"].source == "given"
    assert user.problems and "MatMul" in user.problems[0], user.problems


def test_a_given_input_fixes_the_dims_it_fills_and_masks_attend() -> None:
    ids = h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"])
    mask = h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "sequence"])
    emb = numpy_helper.from_array(np.zeros((30, 4), np.float32), "emb")
    g = h.make_graph([h.make_node("Gather", ["emb", "input_ids"], ["e"]), h.make_node("Cast", ["attention_mask"], ["m"], to=T.FLOAT),
                      h.make_node("Unsqueeze", ["m", "axes"], ["mu"]), h.make_node("Mul", ["e", "mu"], ["y"])],
                     "g", [ids, mask], [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [emb, numpy_helper.from_array(np.array([2], np.int64), "axes")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    plan = plan_inputs(model, given={"input_ids": np.zeros((1, 37), np.int64)})
    assert plan.feeds["attention_mask"].shape == (1, 37), plan.lines()
    assert set(np.unique(plan.feeds["attention_mask"])) == {1}, "a random mask turns softmax into NaN"
    assert plan.dims.choices["sequence"].source == "given" and "input_ids" in plan.dims.choices["sequence"].why
    made = plan_inputs(model)
    assert made.feeds["input_ids"].max() < 30 and made.feeds["input_ids"].shape[1] > 1, made.lines()


def test_a_size_no_static_check_sees_is_refit_by_running(runner: Runner) -> None:
    model = onnx.load(VAD16)
    plan = plan_inputs(model)
    samples = plan.dims.choices["sequence"]
    assert samples.role == "samples" and samples.value > 1000, samples  # a signal, not 16 values

    def error_of(feeds) -> str | None:  # noqa: ANN001
        result = runner.run(str(VAD16), feeds, backend="ort")
        return None if result.ok else result.error

    first = error_of(plan.feeds)
    assert first is not None, "the VAD took the default size: the refit is not exercised"
    better = refit(model, plan, first, error_of)
    assert better is not None, "no size the VAD takes was found"
    chosen = better.dims.choices["sequence"]
    assert 256 <= chosen.value <= 640 and "the run failed" in chosen.why, chosen
    assert error_of(better.feeds) is None and better.feeds["input"].shape == (1, chosen.value)


# -- planted bugs that 1-sized dims hid --------------------------------------------------------
def test_a_flipped_dilation_in_a_detector_is_found_at_its_node(tmp_path: Path, runner: Runner) -> None:
    model = onnx.load(DET)
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    target = next(n for n in convs[30:] if [list(a.ints) for a in n.attribute if a.name == "kernel_shape"] == [[3, 3]]
                  and [list(a.ints) for a in n.attribute if a.name == "strides"] == [[1, 1]])
    for a in target.attribute:
        if a.name == "dilations":
            a.ints[:] = [2, 2]
        if a.name == "pads":
            a.ints[:] = [2, 2, 2, 2]  # the same output size: only the numbers change
    bad = tmp_path / "det_bad.onnx"
    onnx.save(model, bad)
    c = compare_runs(RunSpec(DET), RunSpec(bad), runner=runner)
    fd = c.first_divergence
    assert c.verdict == "differ" and fd is not None and fd.node == target.name, \
        f"planted at {target.name!r}, first divergence {fd and fd.node!r}, verdict {c.verdict}; inputs {c.input_plan.lines()}"


def test_a_weight_change_in_a_classifier_is_a_difference_with_default_sizes(tmp_path: Path, runner: Runner,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from editor.cli import main

    model = onnx.load(CLS)
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    target = convs[len(convs) // 2]
    t = _constant_of(model, target.input[1])
    t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(1.05), t.name))
    bad = tmp_path / "cls_bad.onnx"
    onnx.save(model, bad)
    tiny = compare_runs(RunSpec(CLS), RunSpec(bad), dims={"x[2]": 1, "x[3]": 1}, runner=runner)
    assert tiny.verdict == "agree", "the planted change is invisible at 1x1 (what 1-sized dims hid)"
    assert main(["compare", str(CLS), str(bad), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "differ" and data["first_divergence"]["tensor"] == target.output[0], data["first_divergence"]
    shape = data["inputs"]["inputs"][0]["shape"]
    assert shape[2] > 1 and shape[3] > 1 and set(data["inputs"]["guessed_dims"]) >= {"x[2]", "x[3]"}, data["inputs"]
