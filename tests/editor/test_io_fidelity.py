"""Fidelity: every field of the spec survives load and save, in every save mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from editor.io import SaveOptions, iter_tensors, load_model, numpy_to_tensor, save_model, tensor_to_numpy
from tests.editor.test_io_tensors import SAMPLES


def _kitchen_sink() -> onnx.ModelProto:
    """A model that sets (nearly) every field of onnx.proto, with big and small tensors of each type."""
    inits = [numpy_to_tensor(arr, f"init_{TensorProto.DataType.Name(k)}") for k, arr in SAMPLES.items()]
    big = numpy_to_tensor(np.arange(4096, dtype=np.float32), "big")
    big.doc_string = "a big tensor"
    md = big.metadata_props.add()
    md.key, md.value = "origin", "test"
    strings = numpy_to_tensor(np.array(["x", "yz"], dtype=object), "strings")
    typed = helper.make_tensor("typed", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    sparse = helper.make_sparse_tensor(numpy_to_tensor(np.ones(2, np.float32), "sp_values"),
                                       numpy_to_tensor(np.array([1, 3], np.int64), "sp_indices"), [4])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4096], doc_string="input doc")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4096])
    body = helper.make_graph([helper.make_node("Identity", ["big"], ["then_out"])], "then", [],
                             [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [4096])])
    add = helper.make_node("Add", ["x", "big"], ["s"], name="add", doc_string="node doc")
    meta = add.metadata_props.add()
    meta.key, meta.value = "k", "v"
    cfg = add.device_configurations.add()
    cfg.configuration_id = "mesh"
    cfg.pipeline_stage = 1
    spec = cfg.sharding_spec.add()
    spec.tensor_name = "x"
    spec.device.extend([0, 1])
    dim = spec.sharded_dim.add()
    dim.axis = 0
    dim.simple_sharding.add(dim_param="N", num_shards=2)
    nodes = [
        add,
        helper.make_node("If", ["cond"], ["branch"], then_branch=body, else_branch=body),
        helper.make_node("Constant", [], ["c"], value=numpy_to_tensor(np.ones(2048, np.float32), "cval")),
        helper.make_node("custom_fn", ["s"], ["y"], domain="my.domain", overload="v2"),
        helper.make_node("Strange", ["s"], ["z"], domain="com.unknown.vendor", attr_s="hello", attr_f=1.5),
    ]
    graph = helper.make_graph(
        nodes, "kitchen", [x, helper.make_tensor_value_info("cond", TensorProto.BOOL, [])], [y],
        initializer=[*inits, big, strings, typed], sparse_initializer=[sparse], doc_string="graph doc",
        value_info=[helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N", 4096])],
    )
    qa = graph.quantization_annotation.add()
    qa.tensor_name = "s"
    functions = [
        helper.make_function("my.domain", "custom_fn", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                             [helper.make_opsetid("", 18)], overload=ov, doc_string=f"overload {ov}")
        for ov in ("v1", "v2")
    ]
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("my.domain", 1),
                              helper.make_opsetid("com.unknown.vendor", 7)],
        functions=functions, producer_name="tests", producer_version="1", domain="studio.test",
        model_version=3, doc_string="model doc", ir_version=11,
    )
    helper.set_model_props(model, {"author": "io tests", "license": "none"})
    conf = model.configuration.add()
    conf.name, conf.num_devices = "mesh", 2
    conf.device.extend(["gpu0", "gpu1"])
    ti = model.training_info.add()
    ti.algorithm.CopyFrom(helper.make_graph([helper.make_node("Neg", ["big"], ["big_new"])], "algo", [], [],
                                            initializer=[numpy_to_tensor(np.zeros(3000, np.float32), "ti_w")]))
    b = ti.update_binding.add()
    b.key, b.value = "big", "big_new"
    return model


def _values(loaded) -> dict[tuple, bytes]:
    return {s.path: tensor_to_numpy(s.tensor, loaded.store).tobytes() if s.tensor.data_type != TensorProto.STRING
            else repr(tensor_to_numpy(s.tensor).tolist()).encode() for s in iter_tensors(loaded.model)}


def _without_storage(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every tensor's payload/location fields cleared: what must survive any mode."""
    copy = onnx.ModelProto.FromString(model.SerializeToString())
    for s in iter_tensors(copy):
        for field in ("raw_data", "external_data", "data_location", "float_data", "int32_data"):
            s.tensor.ClearField(field)
    return copy


def test_every_field_survives_an_unchanged_save(tmp_path: Path) -> None:
    model = _kitchen_sink()
    src = tmp_path / "src.onnx"
    src.write_bytes(model.SerializeToString())
    loaded = load_model(src)
    out = tmp_path / "out.onnx"
    save_model(loaded.model, out, store=loaded.store)
    assert out.read_bytes() == src.read_bytes()
    assert load_model(out).model == model


@pytest.mark.parametrize("mode", ["inline", "single-file"])
def test_every_field_survives_other_modes(tmp_path: Path, mode: str) -> None:
    model = _kitchen_sink()
    src = tmp_path / "src.onnx"
    save_model(model, src, options=SaveOptions(external="single-file", size_threshold=512))
    first = load_model(src)
    assert first.store.files() == [tmp_path / "src.onnx.data"]
    out = tmp_path / f"{mode}.onnx"
    save_model(first.model, out, store=first.store,
               options=SaveOptions(external=mode, size_threshold=100, convert_attributes=True))
    again = load_model(out)
    assert _without_storage(again.model) == _without_storage(model)
    assert _values(again) == _values(load_model_inline(model, tmp_path))
    if mode == "inline":
        assert again.store.files() == []


def load_model_inline(model: onnx.ModelProto, tmp_path: Path):
    p = tmp_path / "reference.onnx"
    p.write_bytes(model.SerializeToString())
    return load_model(p)
