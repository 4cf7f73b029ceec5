"""plan_inputs states what make_inputs (``run --random``) will feed, and why: dims from the
user, the model's metadata or a guess; value ranges from what each input feeds. The Run
dock shows the plan and takes its values from make_inputs, so the two cannot drift."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.runtime.input_plan import GUESS, METADATA, USER, plan_inputs, value_range
from editor.runtime.input_roles import InputRole
from editor.runtime.inputs import make_inputs, random_tensor


def _model() -> onnx.ModelProto:
    """token ids into a 300-row table, token types into 2 rows, a mask, an NCHW image."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])
    types = helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "sequence"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])
    image = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    words = numpy_helper.from_array(np.zeros((300, 4), np.float32), "word_embeddings")
    kinds = numpy_helper.from_array(np.zeros((2, 4), np.float32), "type_embeddings")
    nodes = [helper.make_node("Gather", ["word_embeddings", "input_ids"], ["w"]),
             helper.make_node("Gather", ["type_embeddings", "token_type_ids"], ["t"]),
             helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
             helper.make_node("Relu", ["images"], ["r"])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("w", "t", "m", "r")]
    model = helper.make_model(helper.make_graph(nodes, "g", [ids, types, mask, image], outs, [words, kinds]),
                              opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"imgsz": "[320, 256]"})
    return model


def test_the_plan_names_each_choice_and_its_reason():
    plan = plan_inputs(_model(), dims={"sequence": 8})
    assert plan.dims["sequence"].value == 8 and plan.dims["sequence"].source == USER
    assert plan.dims["batch"].value == 1 and plan.dims["batch"].source == GUESS
    assert "batch" in plan.dims["batch"].why
    assert (plan.dims["height"].value, plan.dims["width"].value) == (320, 256), plan.dims
    assert plan.dims["height"].source == METADATA and "imgsz" in plan.dims["height"].why
    ids = plan.inputs["input_ids"]
    assert ids.shape == (1, 8) and ids.values == "ints in [0, 299]", ids
    assert "word_embeddings" in ids.why and "300" in ids.why
    assert plan.inputs["token_type_ids"].values == "ints in [0, 1]"
    assert plan.inputs["attention_mask"].why == "the default for int64"
    assert plan.inputs["images"].shape == (1, 3, 320, 256) and plan.inputs["images"].values == "standard normal"


def test_the_plan_is_what_make_inputs_feeds():
    model = _model()
    plan = plan_inputs(model, val_ranges={"attention_mask": (0, 1)})
    assert plan.inputs["attention_mask"].values == "ints in [0, 1]" and plan.inputs["attention_mask"].why == "your range"
    feeds = make_inputs(model, "random", seed=3, val_ranges={"attention_mask": (0, 1)})
    for name, choice in plan.inputs.items():
        value = feeds[name]
        assert value.shape == choice.shape, f"{name}: plan {choice.shape}, make_inputs {value.shape}"
        rng = value_range(value.dtype, choice.role)
        if rng is not None:
            assert rng[0] <= value.min() and value.max() <= rng[1], f"{name}: {value.min()}..{value.max()} not in {rng}"


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int8, np.float32, np.bool_])
@pytest.mark.parametrize("role", [None, InputRole(low=0, high=5), InputRole(choices=(2.0, 7.0)), InputRole(low=3)])
def test_value_range_bounds_what_random_tensor_draws(dtype, role):
    drawn = random_tensor((4000,), np.dtype(dtype), seed=1, role=role)
    rng = value_range(np.dtype(dtype), role)
    if rng is None:
        assert np.dtype(dtype).kind in "fb" and role is None, f"{dtype} with {role} must have a stated range"
        return
    assert rng[0] <= float(drawn.min()) and float(drawn.max()) <= rng[1], (
        f"{dtype}, {role}: drew {drawn.min()}..{drawn.max()}, the plan says {rng}")
