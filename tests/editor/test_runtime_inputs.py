"""Input specs, symbolic-dim guesses and generated / loaded input values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.errors import RuntimeBackendError
from editor.runtime.inputs import guess_dim, input_specs, load_input_file, make_input, make_inputs, resolve_shape
from tests.conftest import CORPUS


def _model() -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["ids"], ["z"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"]),
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq_len"]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None), helper.make_tensor_value_info("z", TensorProto.INT64, None)],
        initializer=[numpy_helper.from_array(np.zeros(2, np.float32), "w")],
    )
    return helper.make_model(g)


def test_specs_skip_initializers_listed_as_inputs() -> None:
    specs = input_specs(_model())
    assert [s.name for s in specs] == ["x", "ids"]
    assert specs[0].shape == ("batch", 3, "height", "width")


def test_dim_guesses_and_user_values() -> None:
    assert guess_dim("batch") == 1 and guess_dim("N") == 1 and guess_dim(None) == 1
    assert guess_dim("seq_len") == 16 and guess_dim("height") == 224
    assert resolve_shape(("batch", 3, "height", -1), {"height": 32}) == (1, 3, 32, 1)


def test_make_inputs_random_is_seeded_and_typed() -> None:
    a = make_inputs(_model(), dims={"height": 8, "width": 8, "seq_len": 5})
    b = make_inputs(_model(), dims={"height": 8, "width": 8, "seq_len": 5})
    assert a["x"].shape == (1, 3, 8, 8) and a["x"].dtype == np.float32
    assert a["ids"].shape == (1, 5) and a["ids"].dtype == np.int64
    np.testing.assert_array_equal(a["x"], b["x"])
    assert -10 <= a["ids"].min() and a["ids"].max() <= 10


@pytest.mark.parametrize("mode,expected", [("zeros", 0), ("ones", 1)])
def test_fill_modes(mode: str, expected: int) -> None:
    spec = input_specs(_model())[0]
    v = make_input(spec, mode, dims={"height": 2, "width": 2})
    assert v.shape == (1, 3, 2, 2) and (v == expected).all()


def test_constant_mode() -> None:
    spec = input_specs(_model())[1]
    assert (make_input(spec, "constant", constant=7) == 7).all()


def test_load_npy_npz_pb(tmp_path: Path) -> None:
    spec = input_specs(_model())[0]
    arr = np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2)
    np.save(tmp_path / "a.npy", arr)
    np.savez(tmp_path / "b.npz", x=arr, other=arr + 1)
    (tmp_path / "c.pb").write_bytes(numpy_helper.from_array(arr).SerializeToString())
    for name in ("a.npy", "b.npz", "c.pb"):
        np.testing.assert_array_equal(load_input_file(tmp_path / name, spec), arr)


def test_load_rejects_wrong_dtype_and_missing(tmp_path: Path) -> None:
    spec = input_specs(_model())[0]
    np.save(tmp_path / "i.npy", np.zeros(3, np.int32))
    with pytest.raises(RuntimeBackendError, match="expects tensor\\(float\\)"):
        load_input_file(tmp_path / "i.npy", spec)
    with pytest.raises(RuntimeBackendError, match="not found"):
        load_input_file(tmp_path / "nope.npy", spec)


def test_load_sequence_pb_from_backend_suite() -> None:
    folder = CORPUS / "onnx-backend" / "node" / "test_sequence_insert_at_back"
    model = onnx.load(str(folder / "model.onnx"))
    spec = input_specs(model)[0]
    assert spec.kind == "sequence"
    value = load_input_file(folder / "test_data_set_0" / "input_0.pb", spec)
    assert isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value)
