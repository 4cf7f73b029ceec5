"""External data: lazy loading, correct values, every save mode, atomicity, the 2 GB rule."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import editor.io.atomic as atomic
import editor.io.external as external_mod
import editor.io.save as save_mod
from editor.errors import SaveError
from editor.io import (
    ExternalDataStore,
    SaveOptions,
    load_model,
    save_model,
    tensor_nbytes,
    tensor_to_numpy,
    uses_external_data,
)
from tests.editor.test_io_support import entries, external_tensors, listing, make_model, weights, write_external


def values(loaded) -> dict[str, np.ndarray]:
    return {t.name: np.array(tensor_to_numpy(t, loaded.store)) for t in loaded.model.graph.initializer}


def assert_same_values(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert set(got) == set(want)
    for name, arr in want.items():
        assert got[name].dtype == arr.dtype, name
        np.testing.assert_array_equal(got[name], arr, err_msg=name)


@pytest.fixture
def one_file(tmp_path: Path) -> Path:
    d = tmp_path / "src"
    d.mkdir()
    return write_external(make_model(), d / "model.onnx")


# ----------------------------------------------------------------------------- loading


def test_open_reads_no_external_data(one_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = os.open

    def counting_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(external_mod.os, "open", counting_open)
    loaded = load_model(one_file)
    assert not any(p.endswith("weights.bin") for p in opened), opened
    assert loaded.store.mapped_files == []
    assert loaded.store.files() == [one_file.parent.resolve() / "weights.bin"]
    # the proto still says EXTERNAL, with onnx's entries untouched
    ext = external_tensors(loaded.model)
    assert {t.name for t in ext} == {"w_big", "w_mid", "w_half"}
    assert all("location" in entries(t) for t in ext)
    # reading one tensor maps the file, once
    arr = tensor_to_numpy(ext[0], loaded.store)
    assert loaded.store.mapped_files == [one_file.parent.resolve() / "weights.bin"]
    assert not arr.flags.owndata and not arr.flags.writeable  # a view over the map, no copy
    loaded.close()


def test_open_never_uses_onnx_load(one_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("onnx.load must not be used to open models")

    for name in ("load", "load_model", "load_external_data_for_model"):
        monkeypatch.setattr(onnx, name, refuse)
    monkeypatch.setattr(onnx.external_data_helper, "load_external_data_for_model", refuse)
    loaded = load_model(one_file)
    assert loaded.path == one_file.resolve()
    assert loaded.format == "binary"
    assert loaded.file_size == one_file.stat().st_size


def test_values_one_file(one_file: Path) -> None:
    loaded = load_model(one_file)
    assert_same_values(values(loaded), weights())
    # cross-check with onnx's reference reader
    ref = onnx.load(os.fspath(one_file), load_external_data=True)
    for t in ref.graph.initializer:
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(t), values(loaded)[t.name])


def test_values_many_files(tmp_path: Path) -> None:
    path = write_external(make_model(), tmp_path / "model.onnx", one_file=False)
    loaded = load_model(path)
    assert len(loaded.store.files()) == 3
    assert_same_values(values(loaded), weights())


def test_data_dir_elsewhere(tmp_path: Path) -> None:
    src = tmp_path / "model"
    src.mkdir()
    path = write_external(make_model(), src / "model.onnx")
    data = tmp_path / "data"
    data.mkdir()
    shutil.move(src / "weights.bin", data / "weights.bin")
    loaded = load_model(path, data_dir=data)
    assert loaded.store.base_dir == data.resolve()
    assert_same_values(values(loaded), weights())
    # save-as next to the model copies the data there, so the saved model stands alone
    out = tmp_path / "out"
    out.mkdir()
    save_model(loaded.model, out / "model.onnx", store=loaded.store)
    assert (out / "model.onnx").read_bytes() == path.read_bytes()
    assert_same_values(values(load_model(out / "model.onnx")), weights())


def test_tensor_nbytes_reads_nothing(one_file: Path) -> None:
    loaded = load_model(one_file)
    sizes = {t.name: tensor_nbytes(t) for t in loaded.model.graph.initializer}
    assert sizes == {n: a.nbytes for n, a in weights().items()}
    assert loaded.store.mapped_files == []


# ----------------------------------------------------------------------------- preserve


def test_preserve_same_path_is_byte_identical_and_leaves_data(one_file: Path) -> None:
    before = listing(one_file.parent)
    original = one_file.read_bytes()
    loaded = load_model(one_file)
    save_model(loaded.model, one_file, store=loaded.store)
    assert one_file.read_bytes() == original
    after = listing(one_file.parent)
    assert after["weights.bin"] == before["weights.bin"]  # same inode, size, mtime: untouched
    assert set(after) == set(before)  # no temp file left behind


def test_preserve_save_as_other_folder_copies_data(one_file: Path, tmp_path: Path) -> None:
    loaded = load_model(one_file)
    dest = tmp_path / "elsewhere"
    dest.mkdir()
    save_model(loaded.model, dest / "copy.onnx", store=loaded.store)
    assert (dest / "copy.onnx").read_bytes() == one_file.read_bytes()  # same entries, same bytes
    assert (dest / "weights.bin").read_bytes() == (one_file.parent / "weights.bin").read_bytes()
    assert_same_values(values(load_model(dest / "copy.onnx")), weights())


def test_preserve_many_files_in_subfolder(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "data").mkdir(parents=True)
    path = write_external(make_model(), src / "m.onnx", location="data/w.bin")
    loaded = load_model(path)
    dest = tmp_path / "dest"
    dest.mkdir()
    save_model(loaded.model, dest / "m.onnx", store=loaded.store)
    assert (dest / "data" / "w.bin").read_bytes() == (src / "data" / "w.bin").read_bytes()
    assert_same_values(values(load_model(dest / "m.onnx")), weights())


def test_preserve_rewrites_a_data_file_replaced_since_open(one_file: Path) -> None:
    loaded = load_model(one_file)
    loaded.store.pin()
    # someone (an earlier save) replaces weights.bin with other bytes of the same size
    data = one_file.parent / "weights.bin"
    new = data.with_name("new.bin")
    new.write_bytes(bytes(data.stat().st_size))
    os.replace(new, data)
    save_model(loaded.model, one_file, store=loaded.store)
    assert_same_values(values(load_model(one_file)), weights())  # the pinned bytes went back


# ----------------------------------------------------------------------------- inline / single-file


def test_inline_save(one_file: Path, tmp_path: Path) -> None:
    loaded = load_model(one_file)
    out = tmp_path / "inline.onnx"
    save_model(loaded.model, out, store=loaded.store, options=SaveOptions(external="inline"))
    saved = onnx.load(os.fspath(out), load_external_data=False)
    assert not any(uses_external_data(t) for t in saved.graph.initializer)
    onnx.checker.check_model(saved)
    assert_same_values(values(load_model(out)), weights())
    assert sorted(os.listdir(tmp_path)) == ["inline.onnx", "src"]


def test_single_file_save(tmp_path: Path) -> None:
    model = make_model(const=np.arange(1000, dtype=np.float32))
    out = tmp_path / "net.onnx"
    save_model(model, out, options=SaveOptions(external="single-file", size_threshold=1000))
    saved = load_model(out)
    ext = {t.name: entries(t) for t in external_tensors(saved.model)}
    assert set(ext) == {"w_big", "w_mid", "w_half"}  # w_small (24 B) stays inline
    assert {e["location"] for e in ext.values()} == {"net.onnx.data"}
    assert all(int(e["offset"]) % 4096 == 0 for e in ext.values())
    const = saved.model.graph.node[-1].attribute[0].t
    assert not uses_external_data(const)  # attribute tensors stay inline unless asked
    assert_same_values(values(saved), weights())
    ref = onnx.load(os.fspath(out), load_external_data=True)  # onnx agrees on the layout
    for t in ref.graph.initializer:
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(t), weights()[t.name])
    onnx.checker.check_model(os.fspath(out))


def test_single_file_with_nothing_big_writes_no_data_file(tmp_path: Path) -> None:
    out = tmp_path / "tiny.onnx"
    save_model(make_model({"w": np.ones(3, np.float32)}), out, options=SaveOptions(external="single-file"))
    assert os.listdir(tmp_path) == ["tiny.onnx"]


def test_single_file_moves_attribute_tensors_when_asked(tmp_path: Path) -> None:
    const = np.arange(1000, dtype=np.float32)
    out = tmp_path / "net.onnx"
    opts = SaveOptions(external="single-file", location="all.bin", convert_attributes=True)
    save_model(make_model(const=const), out, options=opts)
    saved = load_model(out)
    t = saved.model.graph.node[-1].attribute[0].t
    assert entries(t)["location"] == "all.bin"
    np.testing.assert_array_equal(tensor_to_numpy(t, saved.store), const)


def test_single_file_from_external_relocates_and_inlines_small(one_file: Path, tmp_path: Path) -> None:
    loaded = load_model(one_file)
    out = tmp_path / "re.onnx"
    save_model(loaded.model, out, store=loaded.store,
               options=SaveOptions(external="single-file", size_threshold=5000))
    saved = load_model(out)
    assert {t.name for t in external_tensors(saved.model)} == {"w_big", "w_mid"}  # w_half (3000 B) inline
    assert_same_values(values(saved), weights())


def test_save_over_same_path_while_reading(one_file: Path) -> None:
    loaded = load_model(one_file)
    t_big = next(t for t in loaded.model.graph.initializer if t.name == "w_big")
    view = tensor_to_numpy(t_big, loaded.store)  # maps weights.bin
    old_inode = (one_file.parent / "weights.bin").stat().st_ino
    # rewrite the same data file name with a different layout (aligned offsets, other order)
    opts = SaveOptions(external="single-file", location="weights.bin", size_threshold=2000)
    save_model(loaded.model, one_file, store=loaded.store, options=opts)
    np.testing.assert_array_equal(view, weights()["w_big"])  # the old map still holds old bytes
    assert_same_values(values(loaded), weights())  # the open document still reads correctly
    reloaded = load_model(one_file)
    assert (one_file.parent / "weights.bin").stat().st_ino != old_inode  # a new file took the name
    assert all(int(entries(t)["offset"]) % 4096 == 0 for t in external_tensors(reloaded.model))
    assert_same_values(values(reloaded), weights())
    # and the open (old) document can be saved again over it: its data is written back
    save_model(loaded.model, one_file, store=loaded.store)
    assert_same_values(values(load_model(one_file)), weights())


@pytest.mark.parametrize("mode", ["preserve", "inline", "single-file"])
def test_saving_never_mutates_the_model(one_file: Path, tmp_path: Path, mode: str) -> None:
    loaded = load_model(one_file)
    before = loaded.model.SerializeToString()
    save_model(loaded.model, tmp_path / f"{mode}.onnx", store=loaded.store,
               options=SaveOptions(external=mode, size_threshold=0))
    assert loaded.model.SerializeToString() == before
    inline = make_model()
    before = inline.SerializeToString()
    save_model(inline, tmp_path / f"inline-{mode}.onnx", options=SaveOptions(external=mode, size_threshold=0))
    assert inline.SerializeToString() == before


def test_external_model_without_store_is_refused(one_file: Path, tmp_path: Path) -> None:
    model = onnx.load(os.fspath(one_file), load_external_data=False)
    with pytest.raises(SaveError, match="no data store"):
        save_model(model, tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


# ----------------------------------------------------------------------------- atomicity


def _enospc_after(monkeypatch: pytest.MonkeyPatch, allowed_calls: int) -> None:
    real = atomic._write
    calls = {"n": 0}

    def write(fd, data):
        calls["n"] += 1
        if calls["n"] > allowed_calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(atomic, "_write", write)


@pytest.mark.parametrize("allowed_calls", [0, 1, 3])
def test_enospc_leaves_old_files(one_file: Path, monkeypatch: pytest.MonkeyPatch, allowed_calls: int) -> None:
    loaded = load_model(one_file)
    before = listing(one_file.parent)
    bytes_before = {p: (one_file.parent / p).read_bytes() for p in before}
    _enospc_after(monkeypatch, allowed_calls)
    opts = SaveOptions(external="single-file", location="weights.bin", size_threshold=0)
    with pytest.raises(SaveError, match="No space left on device"):
        save_model(loaded.model, one_file, store=loaded.store, options=opts)
    assert listing(one_file.parent) == before  # no temp files, nothing replaced
    assert {p: (one_file.parent / p).read_bytes() for p in before} == bytes_before


def test_fsync_failure_leaves_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.onnx"
    save_model(make_model(), path)
    before = path.read_bytes()

    def broken_fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(atomic, "_fsync", broken_fsync)
    with pytest.raises(SaveError, match="Input/output error"):
        save_model(make_model(weights(seed=1)), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.onnx"]


def test_failed_rename_rolls_back_data_file(one_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Data file renamed, model rename fails: the old data file is put back."""
    loaded = load_model(one_file)
    before = {p.name: p.read_bytes() for p in one_file.parent.iterdir()}
    real_replace = os.replace

    def replace(src, dst):
        if os.fspath(dst) == os.fspath(one_file.resolve()):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    opts = SaveOptions(external="single-file", location="weights.bin", size_threshold=0)
    with pytest.raises(SaveError):
        save_model(loaded.model, one_file, store=loaded.store, options=opts)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in one_file.parent.iterdir()} == before
    assert_same_values(values(load_model(one_file)), weights())


def test_file_modes_like_a_plain_write(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    path = tmp_path / "m.onnx"
    save_model(make_model(), path, options=SaveOptions(external="single-file"))
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "m.onnx.data").stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    save_model(make_model(), path)
    assert path.stat().st_mode & 0o777 == 0o640  # an existing file keeps its mode


def test_save_errors_are_save_errors(tmp_path: Path) -> None:
    with pytest.raises(SaveError, match="does not exist"):
        save_model(make_model(), tmp_path / "missing" / "m.onnx")
    with pytest.raises(SaveError, match="is a folder"):
        save_model(make_model(), tmp_path)
    with pytest.raises(SaveError, match="unknown external data mode"):
        save_model(make_model(), tmp_path / "m.onnx", options=SaveOptions(external="bogus"))  # type: ignore[arg-type]
    with pytest.raises(SaveError, match="leaves the data folder"):
        save_model(make_model(), tmp_path / "m.onnx",
                   options=SaveOptions(external="single-file", location="../escape.bin"))
    assert os.listdir(tmp_path) == []


# ----------------------------------------------------------------------------- the 2 GB rule


def test_over_limit_is_always_written_external(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(save_mod, "PROTOBUF_LIMIT", 20_000)  # the model holds ~28 kB of weights
    out = tmp_path / "big.onnx"
    save_model(make_model(), out)  # "preserve" asked
    saved = load_model(out)
    assert {t.name for t in external_tensors(saved.model)} == {"w_big", "w_mid", "w_half"}
    assert {entries(t)["location"] for t in external_tensors(saved.model)} == {"big.onnx.data"}
    assert out.stat().st_size < 20_000
    assert_same_values(values(saved), weights())


def test_near_limit_measures_exact_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Weights under the limit, but weights + many nodes over it: still goes external."""
    model = make_model({"w": np.zeros(2000, np.float32)})  # 8,000 bytes of weights
    for k in range(200):
        model.graph.node.add().CopyFrom(
            onnx.helper.make_node("Identity", ["w"], [f"long_output_name_number_{k}"], name=f"node_{k}")
        )
    size = model.ByteSize()
    assert 8000 < size
    monkeypatch.setattr(save_mod, "PROTOBUF_LIMIT", size - 1)
    out = tmp_path / "m.onnx"
    save_model(model, out)
    assert external_tensors(load_model(out).model)
    assert out.stat().st_size < size - 1


def test_inline_over_limit_is_refused(one_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(save_mod, "PROTOBUF_LIMIT", 20_000)
    loaded = load_model(one_file)
    with pytest.raises(SaveError, match="2 GB"):
        save_model(loaded.model, tmp_path / "in.onnx", store=loaded.store, options=SaveOptions(external="inline"))
    assert not (tmp_path / "in.onnx").exists()


def test_store_close_keeps_views_valid(one_file: Path) -> None:
    loaded = load_model(one_file)
    t = external_tensors(loaded.model)[0]
    arr = tensor_to_numpy(t, loaded.store)
    loaded.store.close()  # a view is alive: the map is left to the garbage collector
    np.testing.assert_array_equal(arr, weights()[t.name])
    with ExternalDataStore(one_file.parent) as store:
        assert store.base_dir == one_file.parent.resolve()
    assert t.data_location == TensorProto.EXTERNAL


def test_single_file_moves_typed_field_tensors(tmp_path) -> None:
    """Tensors written in float_data/int64_data (text syntax, make_tensor with lists) go to
    the data file too, in the raw layout, and read back equal."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    from editor.io import SaveOptions, load_model, save_model, tensor_to_numpy

    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], [float(i) for i in range(16)])
    k = helper.make_tensor("k", TensorProto.INT64, [8], list(range(8)))
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])], [w, k])
    model = helper.make_model(g)
    out = tmp_path / "m.onnx"
    save_model(model, out, options=SaveOptions(external="single-file", size_threshold=16))
    data = tmp_path / "m.onnx.data"
    assert data.stat().st_size >= 64 + 64
    loaded = load_model(out)
    for t in loaded.model.graph.initializer:
        assert t.data_location == TensorProto.EXTERNAL and not t.float_data and not t.int64_data
    got = {t.name: tensor_to_numpy(t, loaded.store) for t in loaded.model.graph.initializer}
    np.testing.assert_array_equal(got["w"], np.arange(16, dtype=np.float32).reshape(4, 4))
    np.testing.assert_array_equal(got["k"], np.arange(8, dtype=np.int64))
    loaded.close()
    assert onnx.load(str(out)).graph.initializer[0].raw_data  # onnx reads it back too
