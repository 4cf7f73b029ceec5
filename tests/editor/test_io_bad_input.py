"""Bad input: every case raises LoadError / ExternalDataError with one clear line, writes nothing."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from editor.errors import ExternalDataError, LoadError
from editor.io import load_model, load_model_from_bytes, tensor_to_numpy
from tests.conftest import CORPUS
from tests.editor.test_io_support import listing, make_model, write_external

SMALL_REAL = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def expect_load_error(path: Path, match: str, *, cls: type[LoadError] = LoadError, **kwargs) -> LoadError:
    folder = path.parent if path.parent.exists() else None
    before = listing(folder) if folder else None
    with pytest.raises(LoadError) as info:
        load_model(path, **kwargs)
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    assert "\n" not in str(err)
    assert match in str(err), str(err)
    if folder:
        assert listing(folder) == before  # nothing written, nothing renamed
    return err


# ----------------------------------------------------------------------------- the file itself


def test_missing_file(tmp_path: Path) -> None:
    expect_load_error(tmp_path / "nope.onnx", "no such file: '")


def test_directory(tmp_path: Path) -> None:
    expect_load_error(tmp_path, "is a folder")


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.onnx"
    p.write_bytes(b"")
    expect_load_error(p, "empty")


@pytest.mark.parametrize("seed", range(12))
def test_random_bytes(tmp_path: Path, seed: int) -> None:
    p = tmp_path / f"random{seed}.onnx"
    p.write_bytes(np.random.default_rng(seed).bytes(1000 + 997 * seed))
    expect_load_error(p, str(p))


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes(3 * 4) for _ in range(4))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_png(tmp_path: Path) -> None:
    p = tmp_path / "image.onnx"
    p.write_bytes(_png())
    expect_load_error(p, "is not an ONNX model")


def test_json(tmp_path: Path) -> None:
    p = tmp_path / "config.onnx"
    p.write_text(json.dumps({"ir_version": 8, "graph": {"node": []}}))
    expect_load_error(p, "is not an ONNX model")


def test_unknown_fields_only(tmp_path: Path) -> None:
    p = tmp_path / "unknown.onnx"
    p.write_bytes(b"\xa0\x06\x05\xaa\x06\x03abc")  # fields 100 and 101: parses, means nothing
    assert onnx.ModelProto.FromString(p.read_bytes()).ir_version == 0
    expect_load_error(p, "no ir_version")


def test_absurd_ir_version(tmp_path: Path) -> None:
    p = tmp_path / "ir.onnx"
    m = make_model()
    m.ir_version = 123456
    p.write_bytes(m.SerializeToString())
    expect_load_error(p, "ir_version 123456")


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_truncated(tmp_path: Path, fraction: float) -> None:
    data = SMALL_REAL.read_bytes()
    p = tmp_path / "cut.onnx"
    p.write_bytes(data[: int(len(data) * fraction)])
    expect_load_error(p, "cut.onnx")


def test_corrupt_length_prefix(tmp_path: Path) -> None:
    data = bytearray(make_model().SerializeToString())
    k = data.index(0x3A)  # the graph field's tag (field 7, wire type 2); its length follows
    data[k + 1 : k + 3] = b"\xff\xff"  # claims far more bytes than there are
    p = tmp_path / "corrupt.onnx"
    p.write_bytes(bytes(data))
    expect_load_error(p, "protobuf parse failed")


def test_bytes_api_errors() -> None:
    with pytest.raises(LoadError, match="empty"):
        load_model_from_bytes(b"")
    with pytest.raises(LoadError, match="not an ONNX model"):
        load_model_from_bytes(_png())
    m = make_model()
    assert load_model_from_bytes(m.SerializeToString()).model == m


def test_external_without_folder_from_bytes(tmp_path: Path) -> None:
    path = write_external(make_model(), tmp_path / "m.onnx")
    with pytest.raises(ExternalDataError, match="has no folder"):
        load_model_from_bytes(path.read_bytes())
    assert load_model_from_bytes(path.read_bytes(), base_dir=tmp_path).store.files()


# ----------------------------------------------------------------------------- tensors


def _with_tensor(tmp_path: Path, tensor: TensorProto) -> Path:
    graph = helper.make_graph([], "g", [], [], initializer=[tensor])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    p = tmp_path / "t.onnx"
    p.write_bytes(m.SerializeToString())
    return p


def test_negative_dims(tmp_path: Path) -> None:
    t = TensorProto(name="neg", data_type=TensorProto.FLOAT, dims=[2, -3], raw_data=bytes(24))
    expect_load_error(_with_tensor(tmp_path, t), "negative dim -3")


def test_dims_overflow(tmp_path: Path) -> None:
    t = TensorProto(name="huge", data_type=TensorProto.FLOAT, dims=[2**40, 2**40], raw_data=bytes(4))
    expect_load_error(_with_tensor(tmp_path, t), "absurd dims")


def test_dims_much_larger_than_file(tmp_path: Path) -> None:
    t = TensorProto(name="liar", data_type=TensorProto.FLOAT, dims=[1000, 1000], raw_data=bytes(16))
    expect_load_error(_with_tensor(tmp_path, t), "'liar'")


def test_raw_size_mismatch_on_read(tmp_path: Path) -> None:
    # (the doc string makes the file longer than 64 bytes, past the cheap check at open)
    t = TensorProto(name="short", data_type=TensorProto.FLOAT, dims=[4, 4], raw_data=bytes(12), doc_string="x" * 100)
    loaded = load_model(_with_tensor(tmp_path, t))
    with pytest.raises(LoadError, match="'short': raw_data has 12 bytes but dims \\[4, 4\\] of FLOAT need 64"):
        tensor_to_numpy(loaded.model.graph.initializer[0])


def test_typed_count_mismatch_on_read(tmp_path: Path) -> None:
    t = TensorProto(name="few", data_type=TensorProto.FLOAT, dims=[3], float_data=[1.0])
    loaded = load_model(_with_tensor(tmp_path, t))
    with pytest.raises(LoadError, match="'few'"):
        tensor_to_numpy(loaded.model.graph.initializer[0])


# ----------------------------------------------------------------------------- external data


def _external(tmp_path: Path, **entries: str) -> Path:
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 4], data_location=TensorProto.EXTERNAL)
    for k, v in entries.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    return _with_tensor(tmp_path, t)


def test_missing_data_file(tmp_path: Path) -> None:
    expect_load_error(_external(tmp_path, location="w.bin"), "w.bin' does not exist", cls=ExternalDataError)


def test_short_data_file(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(60))
    expect_load_error(_external(tmp_path, location="w.bin"), "too short", cls=ExternalDataError)


def test_offset_beyond_file(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(100))
    expect_load_error(_external(tmp_path, location="w.bin", offset="50", length="64"), "needs bytes 50..114",
                      cls=ExternalDataError)


def test_length_not_matching_dims(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(100))
    expect_load_error(_external(tmp_path, location="w.bin", length="60"), "external length 60", cls=ExternalDataError)


def test_non_integer_offset(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(100))
    expect_load_error(_external(tmp_path, location="w.bin", offset="-4"), "offset '-4'", cls=ExternalDataError)


def test_no_location(tmp_path: Path) -> None:
    expect_load_error(_external(tmp_path, offset="0"), "no 'location'", cls=ExternalDataError)


def test_dotdot(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(64))
    sub = tmp_path / "model"
    sub.mkdir()
    expect_load_error(_external(sub, location="../w.bin"), "'../w.bin'", cls=ExternalDataError)
    expect_load_error(_external(sub, location="a/../../w.bin"), "through '..'", cls=ExternalDataError)


def test_absolute(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(64))
    expect_load_error(_external(tmp_path, location=str(tmp_path / "w.bin")), "absolute path", cls=ExternalDataError)


def test_symlink_file(tmp_path: Path) -> None:
    (tmp_path / "real.bin").write_bytes(bytes(64))
    os.symlink(tmp_path / "real.bin", tmp_path / "w.bin")
    expect_load_error(_external(tmp_path, location="w.bin"), "symlink", cls=ExternalDataError)


def test_symlink_folder_component(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "w.bin").write_bytes(bytes(64))
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    os.symlink(outside, model_dir / "data")
    expect_load_error(_external(model_dir, location="data/w.bin"), "symlink", cls=ExternalDataError)


def test_hard_link(tmp_path: Path) -> None:
    (tmp_path / "other.bin").write_bytes(bytes(64))
    os.link(tmp_path / "other.bin", tmp_path / "w.bin")
    expect_load_error(_external(tmp_path, location="w.bin"), "2 hard links", cls=ExternalDataError)


def test_data_file_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "w.bin").mkdir()
    expect_load_error(_external(tmp_path, location="w.bin"), "not a regular file", cls=ExternalDataError)


def test_missing_data_dir(tmp_path: Path) -> None:
    path = write_external(make_model(), tmp_path / "m.onnx")
    expect_load_error(path, "is not a folder", data_dir=tmp_path / "nowhere")


def test_data_file_changed_after_open(tmp_path: Path) -> None:
    path = write_external(make_model(), tmp_path / "m.onnx")
    loaded = load_model(path)
    data = tmp_path / "weights.bin"
    data.write_bytes(data.read_bytes()[:-4])  # shrink it before anything was read
    t = next(t for t in loaded.model.graph.initializer if t.data_location == TensorProto.EXTERNAL)
    with pytest.raises(ExternalDataError, match="changed since the model was opened"):
        tensor_to_numpy(t, loaded.store)


def test_external_in_subgraph_is_validated(tmp_path: Path) -> None:
    t = TensorProto(name="inner", data_type=TensorProto.FLOAT, dims=[2], data_location=TensorProto.EXTERNAL)
    e = t.external_data.add()
    e.key, e.value = "location", "../escape.bin"
    body = helper.make_graph([helper.make_node("Constant", [], ["y"], value=t)], "body", [],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    p = tmp_path / "if.onnx"
    p.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString())
    expect_load_error(p, "'../escape.bin'", cls=ExternalDataError)
