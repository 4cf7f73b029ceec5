"""Random inputs that respect what each input feeds (editor.runtime.input_roles)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.errors import RuntimeBackendError
from editor.runtime import Runner
from editor.runtime.input_roles import input_roles
from editor.runtime.input_dims import metadata_dims
from editor.runtime.inputs import make_inputs
from tests.conftest import CORPUS


def _embedding_and_rate() -> onnx.ModelProto:
    table = numpy_helper.from_array(np.zeros((37, 4), np.float32), "table")
    rates = numpy_helper.from_array(np.array([8000, 16000], np.int64), "rates")
    nodes = [
        helper.make_node("Cast", ["ids"], ["ids64"], to=TensorProto.INT64),
        helper.make_node("Gather", ["table", "ids64"], ["emb"]),
        helper.make_node("Unsqueeze", ["sr", "axes"], ["sr1"]),
        helper.make_node("Equal", ["sr1", "rates"], ["is_rate"]),
    ]
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT32, ["batch", "seq"]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("emb", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("is_rate", TensorProto.BOOL, None)],
        initializer=[table, rates, axes],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_gather_indices_stay_inside_the_table_and_rates_come_from_the_constants() -> None:
    model = _embedding_and_rate()
    roles = input_roles(model)
    assert (roles["ids"].low, roles["ids"].high) == (0, 36)
    assert set(roles["sr"].choices) == {8000.0, 16000.0}
    for seed in range(5):
        feeds = make_inputs(model, dims={"seq": 500}, seed=seed)
        assert feeds["ids"].dtype == np.int32 and 0 <= feeds["ids"].min() and feeds["ids"].max() <= 36
        assert int(feeds["sr"]) in (8000, 16000)
    with Runner() as runner:  # the values make a valid run (out-of-range indices would not)
        assert runner.run(model, make_inputs(model, dims={"seq": 500}), backend="ort").ok


def test_user_range_wins_and_unknown_names_are_refused() -> None:
    model = _embedding_and_rate()
    feeds = make_inputs(model, val_ranges={"ids": (3, 4)}, dims={"seq": 100})
    assert set(np.unique(feeds["ids"])) <= {3, 4}
    with pytest.raises(RuntimeBackendError, match="no such input"):
        make_inputs(model, val_ranges={"nope": (0, 1)})


def test_lengths_are_positive_and_no_longer_than_their_data() -> None:
    model = onnx.load(CORPUS / "real" / "asr_prep_resample_44_16.onnx")  # waveforms [B, N] + waveforms_lens [B]
    feeds = make_inputs(model, dims={"N": 4410, "batch_size": 3}, seed=2)
    lens = feeds["waveforms_lens"]
    assert lens.shape == (3,) and lens.min() >= 1 and lens.max() <= 4410
    with Runner() as runner:
        result = runner.run(CORPUS / "real" / "asr_prep_resample_44_16.onnx", feeds)
    assert result.ok


def test_image_size_comes_from_metadata() -> None:
    g = helper.make_graph([helper.make_node("Relu", ["images"], ["y"])], "g",
                          [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, "height", "width"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g)
    helper.set_model_props(model, {"imgsz": "[320, 256]"})
    assert metadata_dims(model)["height"] == 320
    assert make_inputs(model)["images"].shape == (1, 3, 320, 256)
    unnamed = onnx.ModelProto()
    unnamed.CopyFrom(model)
    for d in unnamed.graph.input[0].type.tensor_type.shape.dim[2:]:
        d.Clear()
    assert make_inputs(unnamed)["images"].shape == (1, 3, 320, 256)
    assert make_inputs(unnamed, dims={"images[2]": 64})["images"].shape == (1, 3, 64, 256)


def test_run_cli_val_range_errors_are_one_line(tmp_path, capsys) -> None:  # noqa: ANN001
    from editor.cli import main

    path = tmp_path / "m.onnx"
    onnx.save(_embedding_and_rate(), path)
    assert main(["run", str(path), "--random", "--val-range", "ids:9"]) != 0
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "NAME:LO,HI" in err and "Traceback" not in err
    assert main(["run", str(path), "--random", "--dim", "seq=8", "--val-range", "ids:1,2", "--save", str(tmp_path / "o")]) == 0
    with np.load(tmp_path / "o" / "inputs.npz") as saved:
        assert set(np.unique(saved["ids"])) <= {1, 2}

