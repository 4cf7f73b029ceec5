"""A model file read ahead at start-up (editor.io.prefetch) is used only while it is the file
the loader opens: same path, same device, inode, size and modification time; once."""

from __future__ import annotations

import os
from pathlib import Path

from onnx import TensorProto, helper

from editor.io import load_model
from editor.io import prefetch as pf


def _model(path: Path, name: str) -> bytes:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name=name)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    path.write_bytes(data)
    return data


def test_the_prefetched_bytes_are_taken_once(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    data = _model(path, "first")
    pf.prefetch(path)
    taken = pf.take(path, os.stat(path))
    assert taken is not None and taken.data == data, "the prefetched bytes are the file's"
    assert pf.take(path, os.stat(path)) is None, "handed out once: the loader owns them then"


def test_the_loader_takes_the_prefetch_of_its_file(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    _model(path, "first")
    pf.prefetch(tmp_path / "." / "m.onnx")  # another spelling of the same path
    loaded = load_model(path)
    assert loaded.model.graph.node[0].name == "first"
    assert pf.take(path, os.stat(path)) is None, "the loader took the prefetch (nothing left behind)"


def test_a_file_changed_after_the_prefetch_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    _model(path, "first")
    pf.prefetch(path)
    pf._reads[os.path.realpath(path)].done.wait()
    # rewritten in place with content of the same size: only the modification time says so
    _model(path, "other")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert load_model(path).model.graph.node[0].name == "other", "a stale prefetch was used"
    # replaced by another file (a new inode) under the same name
    pf.prefetch(path)
    pf._reads[os.path.realpath(path)].done.wait()
    replacement = tmp_path / "new.onnx"
    _model(replacement, "third")
    os.replace(replacement, path)
    assert load_model(path).model.graph.node[0].name == "third", "the prefetch of a replaced file was used"


def test_what_cannot_be_read_is_left_to_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    _model(path, "x")
    for unreadable in (tmp_path, tmp_path / "missing.onnx"):  # a folder, no file
        pf.prefetch(unreadable)
        assert pf.take(unreadable, os.stat(path)) is None, f"a prefetch of {unreadable.name!r} gave bytes"
    assert not pf._reads, f"prefetches left behind: {list(pf._reads)}"
