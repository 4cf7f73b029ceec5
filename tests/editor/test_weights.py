"""``editor.weights``: the catalogue (initializers, sparse, Constant payloads) and chunked stats."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.commands import RemoveInitializer
from editor.document import Document
from editor.errors import StudioError
from editor.io import numpy_to_tensor
from editor.weights import dtype_label, export_npy, list_weights, weight_array, weight_stats
from tests.conftest import CORPUS
from tests.editor.test_summary_support import FUNCTION_MODEL, external_model, model_with


@np.errstate(over="ignore")
def _numpy_stats(a: np.ndarray) -> dict:
    v = np.asarray(a).astype(np.float64).reshape(-1)
    f = v[np.isfinite(v)]
    edges = np.histogram_bin_edges(f, bins=64) if f.size and f.min() != f.max() else None
    return {
        "min": f.min(), "max": f.max(), "mean": f.mean(), "std": f.std(),
        "nan": int(np.isnan(v).sum()), "inf": int(np.isinf(v).sum()), "zeros": int((f == 0).sum()),
        "hist": np.histogram(f, bins=edges)[0].tolist() if edges is not None else None,
    }


def _assert_matches(s, a: np.ndarray) -> None:
    ref = _numpy_stats(a)
    assert s.count == a.size
    assert s.min == pytest.approx(ref["min"]) and s.max == pytest.approx(ref["max"])
    assert s.mean == pytest.approx(ref["mean"], rel=1e-9, abs=1e-12)
    assert s.std == pytest.approx(ref["std"], rel=1e-9, abs=1e-12)
    assert s.nan_count == ref["nan"] and s.inf_count == ref["inf"] and s.zero_count == ref["zeros"]
    assert sum(s.histogram_counts) == s.finite_count == a.size - ref["nan"] - ref["inf"]
    if ref["hist"] is not None and len(s.histogram_counts) == 64:
        assert s.histogram_counts == ref["hist"]


# ----------------------------------------------------------------------------- catalogue


def test_ppocr_constants_catalogue_and_stats() -> None:
    path = CORPUS / "real" / "ppocrv4_det.onnx"
    doc = Document.open(path)
    ws = list_weights(doc)
    m = onnx.load(str(path))
    consts = [n for n in m.graph.node if n.op_type == "Constant"]
    assert len(ws) == len(consts) == 342
    assert {w.source for w in ws} == {"constant"} and all(w.attr == "value" for w in ws)
    assert [w.name for w in ws] == [n.output[0] for n in consts]
    by_name = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in consts}
    for w in ws:
        assert doc.node(w.node).output[0] == w.name
        assert w.shape == by_name[w.name].shape and w.nbytes == by_name[w.name].nbytes and w.dtype == "float32"
    for w in sorted(ws, key=lambda w: -w.elements)[:5] + ws[:5]:
        _assert_matches(weight_stats(doc, w), by_name[w.name])
        # chunking must not change the answer
        _assert_matches(weight_stats(doc, w, chunk_elements=1000), by_name[w.name])


def test_initializers_in_subgraphs_listed_with_scope() -> None:
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    doc = Document.open(path)
    ws = list_weights(doc)
    inits = [w for w in ws if w.source == "initializer"]
    assert len(inits) == 15 and all(w.scope == doc.index.main for w in inits)
    nested = [w for w in ws if w.scope != doc.index.main]
    assert nested and all(w.source == "constant" and w.scope_path.startswith("main/") for w in nested)
    w = max(inits, key=lambda w: w.elements)
    _assert_matches(weight_stats(doc, w), numpy_helper.to_array(doc.initializer(w.scope, w.name)[1]))


def test_function_constants_optional() -> None:
    import onnx.parser


    doc = Document(onnx.parser.parse_model(FUNCTION_MODEL))
    ws = list_weights(doc)
    assert [(w.name, w.attr, w.dtype, w.shape) for w in ws] == [("two", "value_float", "float32", ())]
    assert ws[0].scope_path.startswith("fn:")
    assert list_weights(doc, include_functions=False) == []
    s = weight_stats(doc, ws[0])
    assert s.min == s.max == s.mean == 2.0 and s.std == 0.0 and s.histogram_counts == [1]


# ----------------------------------------------------------------------------- external


def test_external_weights_chunked_over_the_map(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    arrays = {
        "f32": rng.standard_normal((300, 500)).astype(np.float32),
        "f16": rng.standard_normal(7777).astype(np.float16),
        "i64": rng.integers(-(2**62), 2**62, 999, dtype=np.int64),
    }
    arrays["f32"][0, :3] = [np.nan, np.inf, -np.inf]
    arrays["f32"][1, :10] = 0
    path = external_model(tmp_path, arrays, data="w.bin")
    doc = Document.open(path)
    ws = {w.name: w for w in list_weights(doc)}
    assert all(w.external and w.location == "w.bin" for w in ws.values())
    assert doc.store.mapped_files == []  # listing reads nothing
    for name, a in arrays.items():
        s = weight_stats(doc, ws[name], chunk_elements=4096)
        _assert_matches(s, a)
    assert weight_stats(doc, ws["f32"]).posinf_count == 1
    assert weight_stats(doc, ws["f32"]).neginf_count == 1
    s = weight_stats(doc, ws["i64"])
    assert s.min == int(arrays["i64"].min()) and s.max == int(arrays["i64"].max())  # exact ints
    assert doc.store.mapped_files == [tmp_path / "w.bin"]


def test_large_external_tensor_memory_stays_bounded(tmp_path: Path) -> None:
    n = 12 << 20  # 12 Mi float32 = 48 MB on disk; as one float64 array it would be 96 MB
    data = tmp_path / "big.bin"
    with open(data, "wb") as f:
        f.truncate(n * 4)  # sparse file of zeros: cheap to make
    t = TensorProto(name="big", data_type=TensorProto.FLOAT, dims=[n])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "big.bin"), ("offset", "0"), ("length", str(n * 4))):
        e = t.external_data.add()
        e.key, e.value = k, v
    m = model_with([t], [helper.make_node("Identity", ["big"], ["o"])], outputs=["o"])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    doc = Document.open(tmp_path / "m.onnx")
    (w,) = list_weights(doc)
    seen: list[float] = []
    tracemalloc.start()
    try:
        s = weight_stats(doc, w, progress=seen.append)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert s.count == n and s.zero_count == n and s.min == s.max == 0.0 and s.std == 0.0
    assert sum(s.histogram_counts) == n
    assert peak < 40 << 20, f"peak {peak / 2**20:.1f} MiB for a 48 MB tensor"
    assert seen and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)


def test_progress_can_cancel(tmp_path: Path) -> None:
    path = external_model(tmp_path, {"a": np.arange(100_000, dtype=np.float32)})
    doc = Document.open(path)

    def stop(fraction: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        weight_stats(doc, list_weights(doc)[0], chunk_elements=1000, progress=stop)


# ----------------------------------------------------------------------------- dtypes


def _doc_with(*tensors: TensorProto, constants: list[onnx.NodeProto] = (), sparse=()) -> Document:
    outs = [n.output[0] for n in constants]
    return Document(model_with(list(tensors), list(constants), sparse=list(sparse), outputs=outs))


@pytest.mark.parametrize(
    "elem_type,values",
    [
        (TensorProto.FLOAT16, np.array([1.5, -2.0, 0.0, np.nan, 65504.0], np.float16)),
        (TensorProto.BFLOAT16, np.array([1.0, -3.5, 0.0, 1e30, np.inf], np.float32)),
        (TensorProto.FLOAT8E4M3FN, np.array([0.5, -448.0, 0.0, 3.0], np.float32)),
        (TensorProto.FLOAT8E5M2, np.array([0.25, -2.0, np.inf, 0.0], np.float32)),
        (TensorProto.INT4, np.array([-8, 7, 0, 3, -1], np.int8)),
        (TensorProto.UINT4, np.array([0, 15, 9], np.uint8)),
        (TensorProto.FLOAT4E2M1, np.array([0.5, -6.0, 0.0, 1.5], np.float32)),
        (TensorProto.UINT8, np.arange(256, dtype=np.uint8)),
        (TensorProto.DOUBLE, np.array([1e-300, -1e300, 0.0])),
    ],
)
def test_exotic_dtypes(elem_type: int, values: np.ndarray, tmp_path: Path) -> None:
    t = numpy_to_tensor(values, "w", elem_type=elem_type)
    doc = _doc_with(t)
    (w,) = list_weights(doc)
    assert w.dtype == dtype_label(elem_type) and w.shape == values.shape
    arr = weight_array(doc, w)
    expect = arr.astype(np.float64)
    _assert_matches(weight_stats(doc, w), expect)
    out = export_npy(doc, w, tmp_path / "w.npy")
    loaded = np.load(out)  # plain numpy, no ml_dtypes descr
    assert loaded.dtype.kind in "fiu"
    np.testing.assert_array_equal(loaded.astype(np.float64), expect)


def test_extreme_doubles_do_not_break_the_histogram() -> None:
    doc = _doc_with(numpy_helper.from_array(np.array([1.7e308, -1.7e308, 1.0, np.nan]), "x"))
    s = weight_stats(doc, list_weights(doc)[0])
    assert (s.min, s.max, s.nan_count, s.finite_count) == (-1.7e308, 1.7e308, 1, 3)
    assert s.std == np.inf
    assert sum(s.histogram_counts) == 3 and len(s.histogram_counts) == 64
    assert s.histogram_edges[0] == -1.7e308 and s.histogram_edges[-1] == 1.7e308
    assert all(np.isfinite(s.histogram_edges))


def test_packed_int4_external_unpacked_per_chunk(tmp_path: Path) -> None:
    values = np.array([(-8 + i) % 16 - 8 for i in range(10001)], np.int8)
    t = numpy_to_tensor(values, "q", elem_type=TensorProto.INT4)
    raw = t.raw_data
    (tmp_path / "q.bin").write_bytes(raw)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "q.bin"), ("length", str(len(raw)))):
        e = t.external_data.add()
        e.key, e.value = k, v
    m = model_with([t], [helper.make_node("Identity", ["q"], ["o"])], outputs=["o"])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    doc = Document.open(tmp_path / "m.onnx")
    (w,) = list_weights(doc)
    assert w.external and w.dtype == "int4" and w.nbytes == 5001
    s = weight_stats(doc, w, chunk_elements=999)  # odd chunk size: byte boundaries inside
    _assert_matches(s, values)
    assert s.histogram_counts == np.bincount(values.astype(np.int64) + 8, minlength=16).tolist()
    assert s.histogram_edges[0] == -8.5 and s.histogram_edges[-1] == 7.5
    np.testing.assert_array_equal(np.load(export_npy(doc, w, tmp_path / "q.npy")), values)


def test_bool_string_empty_complex(tmp_path: Path) -> None:
    b = numpy_helper.from_array(np.array([True, False, True, True]), "b")
    s_ = helper.make_tensor("s", TensorProto.STRING, [3], [b"ab", b"", b"xyz1"])
    e = numpy_helper.from_array(np.zeros((0, 4), np.float32), "e")
    c = numpy_helper.from_array(np.array([3 + 4j, 0j], np.complex64), "c")
    doc = _doc_with(b, s_, e, c)
    ws = {w.name: w for w in list_weights(doc)}
    sb = weight_stats(doc, ws["b"])
    assert (sb.min, sb.max, sb.mean, sb.zero_count) == (0, 1, 0.75, 1) and sb.histogram_counts == [1, 3]
    ss = weight_stats(doc, ws["s"])
    assert ss.count == 3 and ss.zero_count == 1 and (ss.min, ss.max) == (0, 4) and "string" in ss.note
    assert ws["s"].nbytes == 6
    se = weight_stats(doc, ws["e"])
    assert se.count == 0 and se.min is None and se.mean is None and se.histogram_counts == []
    sc = weight_stats(doc, ws["c"])
    assert (sc.min, sc.max, sc.mean) == (0.0, 5.0, 2.5) and "magnitude" in sc.note
    loaded = np.load(export_npy(doc, ws["s"], tmp_path / "s.npy"))
    assert loaded.tolist() == [b"ab", b"", b"xyz1"]
    assert np.load(export_npy(doc, ws["e"], tmp_path / "e.npy")).shape == (0, 4)


def test_sparse_stats_count_implicit_zeros(tmp_path: Path) -> None:
    values = numpy_helper.from_array(np.array([5.0, -1.0, 2.0], np.float32), "sp")
    indices = numpy_helper.from_array(np.array([[0, 1], [2, 3], [4, 0]], np.int64), "sp_idx")
    sparse = helper.make_sparse_tensor(values, indices, [5, 4])
    const = helper.make_node("Constant", [], ["k"], sparse_value=helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([7], np.int32), "k"),
        numpy_helper.from_array(np.array([3], np.int64), "ki"), [6]))
    doc = _doc_with(sparse=[sparse], constants=[const])
    ws = {w.name: w for w in list_weights(doc)}
    assert ws["sp"].source == "sparse" and ws["sp"].nnz == 3 and ws["sp"].elements == 20
    dense = np.zeros((5, 4), np.float32)
    dense[0, 1], dense[2, 3], dense[4, 0] = 5.0, -1.0, 2.0
    np.testing.assert_array_equal(weight_array(doc, ws["sp"]), dense)
    _assert_matches(weight_stats(doc, ws["sp"]), dense)
    k = ws["k"]
    assert k.source == "constant" and k.attr == "sparse_value" and k.elements == 6
    _assert_matches(weight_stats(doc, k), np.array([0, 0, 0, 7, 0, 0]))
    np.testing.assert_array_equal(np.load(export_npy(doc, ws["sp"], tmp_path / "d.npy")), dense)


def test_constant_literals() -> None:
    consts = [
        helper.make_node("Constant", [], ["f"], value_floats=[1.0, 2.0, 4.5]),
        helper.make_node("Constant", [], ["i"], value_int=-3),
        helper.make_node("Constant", [], ["ss"], value_strings=["a", "bcd"]),
    ]
    doc = _doc_with(constants=consts)
    ws = {w.name: w for w in list_weights(doc)}
    assert (ws["f"].dtype, ws["f"].shape, ws["f"].nbytes) == ("float32", (3,), 12)
    assert (ws["i"].dtype, ws["i"].shape, ws["i"].nbytes) == ("int64", (), 8)
    assert (ws["ss"].dtype, ws["ss"].nbytes) == ("string", 4)
    assert weight_stats(doc, ws["f"]).mean == pytest.approx(2.5)
    assert weight_stats(doc, ws["i"]).min == -3


def test_stale_weight_is_reported(tmp_path: Path) -> None:
    t = numpy_helper.from_array(np.ones(3, np.float32), "w")
    doc = Document(model_with([t]))
    (w,) = list_weights(doc)
    doc.execute(RemoveInitializer(doc.index.main, "w", force=True))
    with pytest.raises(StudioError, match="'w' is no longer in the model"):
        weight_stats(doc, w)


def test_export_large_external_in_chunks(tmp_path: Path) -> None:
    a = np.random.default_rng(3).standard_normal((1000, 300)).astype(ml_dtypes.bfloat16)
    t = numpy_to_tensor(a, "bf", elem_type=TensorProto.BFLOAT16)
    raw = t.raw_data
    (tmp_path / "bf.bin").write_bytes(raw)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "bf.bin"
    m = model_with([t], [helper.make_node("Identity", ["bf"], ["o"])], outputs=["o"])
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    doc = Document.open(tmp_path / "m.onnx")
    (w,) = list_weights(doc)
    out = export_npy(doc, w, tmp_path / "bf.npy")
    loaded = np.load(out)
    assert loaded.dtype == np.float32 and loaded.shape == (1000, 300)
    np.testing.assert_array_equal(loaded, a.astype(np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bf.bin", "bf.npy", "m.onnx"]  # no temp left
