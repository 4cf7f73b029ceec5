"""Tensors: every element type to and from numpy, inline and external; sizes; the walk."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from editor.io import (
    NUMPY_DTYPES,
    SaveOptions,
    iter_tensors,
    load_model,
    numpy_to_tensor,
    save_model,
    tensor_nbytes,
    tensor_to_numpy,
)
from editor.io.encode import build_trie, encode_with, unknown_bytes, varint
from editor.io.tensors import resolve_path

# Odd element counts on purpose: the packed 4- and 2-bit layouts must pad correctly.
SAMPLES: dict[int, np.ndarray] = {
    TensorProto.FLOAT: np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5),
    TensorProto.DOUBLE: np.linspace(-3, 3, 7),
    TensorProto.FLOAT16: np.linspace(-3, 3, 7).astype(np.float16),
    TensorProto.BFLOAT16: np.linspace(-3, 3, 7).astype(ml_dtypes.bfloat16),
    TensorProto.INT8: np.arange(-3, 4, dtype=np.int8),
    TensorProto.UINT8: np.arange(7, dtype=np.uint8),
    TensorProto.INT16: np.arange(-3, 4, dtype=np.int16),
    TensorProto.UINT16: np.arange(7, dtype=np.uint16),
    TensorProto.INT32: np.arange(-3, 4, dtype=np.int32),
    TensorProto.UINT32: np.arange(7, dtype=np.uint32),
    TensorProto.INT64: np.arange(-3, 4, dtype=np.int64),
    TensorProto.UINT64: np.arange(7, dtype=np.uint64),
    TensorProto.BOOL: np.array([True, False, True]),
    TensorProto.COMPLEX64: np.array([1 + 2j, -3j], dtype=np.complex64),
    TensorProto.COMPLEX128: np.array([1 + 2j, -3j], dtype=np.complex128),
    TensorProto.FLOAT8E4M3FN: np.linspace(-3, 3, 7).astype(ml_dtypes.float8_e4m3fn),
    TensorProto.FLOAT8E4M3FNUZ: np.linspace(-3, 3, 7).astype(ml_dtypes.float8_e4m3fnuz),
    TensorProto.FLOAT8E5M2: np.linspace(-3, 3, 7).astype(ml_dtypes.float8_e5m2),
    TensorProto.FLOAT8E5M2FNUZ: np.linspace(-3, 3, 7).astype(ml_dtypes.float8_e5m2fnuz),
    TensorProto.FLOAT8E8M0: np.array([0.5, 1, 2, 4], dtype=ml_dtypes.float8_e8m0fnu),
    TensorProto.INT4: np.array([-8, -1, 0, 3, 7], dtype=ml_dtypes.int4),
    TensorProto.UINT4: np.array([0, 1, 9, 15, 4], dtype=ml_dtypes.uint4),
    TensorProto.FLOAT4E2M1: np.array([-6, -0.5, 0, 1.5, 3], dtype=ml_dtypes.float4_e2m1fn),
    TensorProto.INT2: np.array([-2, -1, 0, 1, 1], dtype=ml_dtypes.int2),
    TensorProto.UINT2: np.array([0, 1, 2, 3, 2], dtype=ml_dtypes.uint2),
}
if hasattr(TensorProto, "FLOAT6E2M3"):
    SAMPLES[TensorProto.FLOAT6E2M3] = np.array([-1.5, 0, 0.5, 7.5, 1], dtype=ml_dtypes.float6_e2m3fn)
    SAMPLES[TensorProto.FLOAT6E3M2] = np.array([-1.5, 0, 0.5, 28, 1], dtype=ml_dtypes.float6_e3m2fn)


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_every_numeric_type_is_covered() -> None:
    assert set(SAMPLES) == set(NUMPY_DTYPES)


@pytest.mark.parametrize("elem_type", sorted(SAMPLES), ids=lambda t: TensorProto.DataType.Name(t))
def test_inline_round_trip(elem_type: int) -> None:
    arr = SAMPLES[elem_type]
    t = numpy_to_tensor(arr, "x")
    assert t.data_type == elem_type and list(t.dims) == list(arr.shape)
    assert _bits_equal(tensor_to_numpy(t), arr)
    assert _bits_equal(onnx.numpy_helper.to_array(t), arr)  # onnx reads what we wrote
    assert tensor_nbytes(t) == len(t.raw_data)


@pytest.mark.parametrize("elem_type", sorted(SAMPLES), ids=lambda t: TensorProto.DataType.Name(t))
def test_typed_field_tensors(elem_type: int) -> None:
    """Tensors stored in float_data/int32_data/... (not raw_data), as make_tensor writes them."""
    arr = SAMPLES[elem_type]
    t = helper.make_tensor("x", elem_type, arr.shape, arr.reshape(-1).tolist() if elem_type not in
                           (TensorProto.COMPLEX64, TensorProto.COMPLEX128) else arr.reshape(-1), raw=False)
    assert not t.HasField("raw_data")
    assert _bits_equal(tensor_to_numpy(t), onnx.numpy_helper.to_array(t))


def test_external_round_trip_every_type(tmp_path: Path) -> None:
    tensors = [numpy_to_tensor(arr, f"t{k}") for k, arr in SAMPLES.items()]
    graph = helper.make_graph([], "g", [], [], initializer=tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path = tmp_path / "types.onnx"
    save_model(model, path, options=SaveOptions(external="single-file", size_threshold=0))
    loaded = load_model(path)
    assert loaded.store.mapped_files == []
    for t in loaded.model.graph.initializer:
        assert t.data_location == TensorProto.EXTERNAL
        got = tensor_to_numpy(t, loaded.store)
        assert _bits_equal(got, SAMPLES[t.data_type]), TensorProto.DataType.Name(t.data_type)
        assert tensor_nbytes(t) == len(numpy_to_tensor(SAMPLES[t.data_type], "x").raw_data)


def test_strings() -> None:
    arr = np.array(["a", "héllo", ""], dtype=object)
    t = numpy_to_tensor(arr, "s")
    assert t.data_type == TensorProto.STRING
    assert tensor_to_numpy(t).tolist() == ["a", "héllo", ""]
    assert tensor_nbytes(t) == 1 + 6
    t.string_data.append(b"\xff\xfe")
    t.dims[0] = 4
    assert tensor_to_numpy(t).tolist()[-1] == b"\xff\xfe"  # not UTF-8: kept as bytes


def test_numpy_to_tensor_converts_elem_type() -> None:
    t = numpy_to_tensor(np.array([1.0, 2.5], np.float32), "h", elem_type=TensorProto.FLOAT16)
    assert t.data_type == TensorProto.FLOAT16
    assert tensor_to_numpy(t).tolist() == [1.0, 2.5]
    t8 = numpy_to_tensor(np.array([0.5, 448.0]), "f8", elem_type=TensorProto.FLOAT8E4M3FN)
    assert tensor_to_numpy(t8).astype(np.float32).tolist() == [0.5, 448.0]


def test_zero_copy_inline_view() -> None:
    t = numpy_to_tensor(np.arange(1000, dtype=np.float32), "x")
    arr = tensor_to_numpy(t)
    assert not arr.flags.owndata and not arr.flags.writeable


def test_iter_tensors_finds_everything() -> None:
    f = numpy_to_tensor(np.ones(2, np.float32), "")
    sparse = helper.make_sparse_tensor(numpy_to_tensor(np.ones(2, np.float32), "sv"),
                                       numpy_to_tensor(np.array([0, 3], np.int64), "si"), [5])
    body = helper.make_graph([helper.make_node("Constant", [], ["b"], value=numpy_to_tensor(np.ones(1), "inner"))],
                             "body", [], [helper.make_tensor_value_info("b", TensorProto.DOUBLE, [1])],
                             initializer=[numpy_to_tensor(np.zeros(1), "body_init")])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body),
         helper.make_node("Constant", [], ["k"], sparse_value=sparse)],
        "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1])],
        initializer=[numpy_to_tensor(np.zeros(3), "init")], sparse_initializer=[sparse],
    )
    fn_attr = helper.make_attribute("alpha", f)
    fn = helper.make_function("dom", "fn", ["x"], ["z"],
                              [helper.make_node("Constant", [], ["z"], value=numpy_to_tensor(np.ones(1), "fconst"))],
                              [helper.make_opsetid("", 18)])
    fn.attribute_proto.append(fn_attr)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("dom", 1)],
                              functions=[fn])
    ti = model.training_info.add()
    ti.initialization.CopyFrom(helper.make_graph([], "init", [], [], initializer=[numpy_to_tensor(np.ones(1), "ti")]))
    sites = list(iter_tensors(model))
    names = [s.tensor.name for s in sites]
    assert names.count("inner") == 2 and names.count("body_init") == 2
    assert {"init", "sv", "si", "ti", "fconst", ""} <= set(names)
    assert {s.role for s in sites} == {"initializer", "sparse", "attribute"}
    for s in sites:  # every path leads back to the same tensor
        assert resolve_path(model, s.path) == s.tensor


def test_encode_with_swaps_only_what_is_asked_and_keeps_unknown_fields() -> None:
    model = helper.make_model(helper.make_graph([], "g", [], [], initializer=[numpy_to_tensor(np.ones(3), "a")]),
                              opset_imports=[helper.make_opsetid("", 18)])
    raw = model.SerializeToString() + b"\xa0\x06" + varint(2**63 + 5) + b"\xaa\x06\x03abc" + b"\xad\x06\x01\x02\x03\x04"
    with_unknown = onnx.ModelProto.FromString(raw)
    assert unknown_bytes(with_unknown)
    assert encode_with(with_unknown, {}) == with_unknown.SerializeToString()
    replacement = numpy_to_tensor(np.zeros(2), "b")
    out = onnx.ModelProto.FromString(
        encode_with(with_unknown, build_trie({(("graph", None), ("initializer", 0)): replacement.SerializeToString()}))
    )
    assert out.graph.initializer[0] == replacement
    expected = onnx.ModelProto.FromString(raw)
    expected.graph.initializer[0].CopyFrom(replacement)
    assert out.SerializeToString() == expected.SerializeToString()  # unknown fields kept
