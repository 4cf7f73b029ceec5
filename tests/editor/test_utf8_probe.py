"""The start-up's UTF-8 probe (editor.io.utf8_probe) lets the loader skip its walk of the
names only when every string field of the very file it loads is UTF-8.

A wrong "clean" would hand ``bytes`` names to every view, so the probe is held to the walk
it replaces: for each kind of string field of a model that uses them all (the fields of
test_name_repair_fields), one bad byte makes the probe say "not clean"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.io import load_model
from editor.io import names
from editor.io import prefetch as pf
from editor.io import utf8_probe
from tests.editor.test_name_repair_fields import DATA, TOKENS


def _bad(token: bytes) -> bytes:
    return DATA.replace(token, token[:2] + b"\xff" + token[3:])


def test_the_probe_judges_every_string_field(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(DATA)
    before, after, ok = utf8_probe._judge(str(path))
    assert ok is True and before == after == utf8_probe.identity(os.stat(path)), (
        f"a clean model: {before}, {after}, {ok}")
    missed = []
    for token in TOKENS:
        path.write_bytes(_bad(token))
        if utf8_probe._judge(str(path))[2] is not False:
            missed.append(token)
    assert not missed, f"a bad byte in these fields was not seen: {missed}"
    path.write_bytes(DATA[: len(DATA) // 2])
    assert utf8_probe._judge(str(path))[2] is None, "bytes that do not parse get no verdict"


def _padded_model(path: Path, name: str) -> None:
    """A model over the probe's size threshold (a 2 MB weight) with one node named ``name``."""
    w = numpy_helper.from_array(np.zeros(pf.PROBE_MIN_BYTES // 2, np.float32), "w")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name=name)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])], initializer=[w])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    path.write_bytes(data.replace(b"QQ", b"Q\xff") if name == "QQ" else data)


def _skip_without_probe(probe: utf8_probe.Probe | None) -> utf8_probe.Probe:
    """``probe``, or a skip where ``utf8_probe.start`` starts none by design: a single core
    (see its docstring; CI's machines have two). Anywhere else a missing probe fails."""
    if probe is None and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("utf8_probe.start starts no probe on a single core")
    assert probe is not None, "utf8_probe.start started no probe on a machine with two cores or more"
    return probe


def _probe_of(path: Path) -> utf8_probe.Probe:
    return _skip_without_probe(pf._reads[os.path.realpath(path)].probe)


def test_a_clean_file_is_not_walked_and_a_bad_one_is_repaired(tmp_path: Path, monkeypatch) -> None:
    walked = []
    real_check = names._has_raw
    monkeypatch.setattr(names, "_has_raw", lambda *a: walked.append(1) or real_check(*a))
    clean = tmp_path / "clean.onnx"
    _padded_model(clean, "fine")
    pf.prefetch(clean)
    _probe_of(clean).process.wait(timeout=60)  # its verdict is in when the loader asks
    assert load_model(clean).model.graph.node[0].name == "fine"
    assert walked == [], "the probe said the file is clean, yet the loader walked its names"

    bad = tmp_path / "bad.onnx"
    _padded_model(bad, "QQ")
    pf.prefetch(bad)
    _probe_of(bad).process.wait(timeout=60)
    loaded = load_model(bad)
    assert walked, "the loader did not walk the names of a file the probe found bad"
    assert loaded.model.graph.node[0].name == "Q\ufffd" and [r.raw for r in loaded.raw_names] == [b"Q\xff"], (
        f"the bad name was not repaired: {loaded.model.graph.node[0].name!r}")


def _many_nodes(count: int) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"n{i}") for i in range(count)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(f"v{count}", TensorProto.FLOAT, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_walk_stops_once_the_probe_says_clean() -> None:
    """A verdict that comes while the loader walks the names ends the walk there."""
    asked = []
    assert names.repair_names(_many_nodes(3000), lambda: asked.append(1) or len(asked) >= 3) == []
    assert len(asked) == 3, f"the walk went on after the verdict came, or never asked: {len(asked)} questions"


def test_a_walk_without_a_verdict_still_repairs() -> None:
    model = _many_nodes(1000)
    data = model.SerializeToString().replace(b"n999", b"n\xff99")
    broken = onnx.ModelProto()
    broken.ParseFromString(data)
    found = names.repair_names(broken, lambda: False)
    assert [r.raw for r in found] == [b"n\xff99"], f"with no verdict the walk must find the bad name: {found}"


def test_a_probe_of_another_version_of_the_file_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    _padded_model(path, "fine")
    probe = _skip_without_probe(utf8_probe.start(str(path)))
    probe.process.wait(timeout=60)  # it judged this version
    first = os.stat(path).st_mtime_ns
    _padded_model(path, "other")  # rewritten, clean too, with a new modification time
    os.utime(path, ns=(first + 10**9, first + 10**9))
    assert probe.verdict(utf8_probe.identity(os.stat(path)), timeout=60) is False, (
        "the verdict on the file before it was rewritten was applied to the new one")
    same = utf8_probe.start(str(path))
    assert same is not None and same.verdict(utf8_probe.identity(os.stat(path)), timeout=60) is True


def test_a_probe_at_work_gives_no_verdict_and_can_be_stopped(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(DATA)
    probe = _skip_without_probe(utf8_probe.start(str(path)))
    ident = utf8_probe.identity(os.stat(path))
    assert probe.verdict(ident) is None, "a child that has not even started Python gave a verdict"
    probe.cancel()
    assert probe.process.poll() is not None, "the probe was left running"
    assert probe.verdict(ident) is False, "a stopped probe's verdict must be 'not known clean'"


def test_the_child_runs_without_the_application(tmp_path: Path) -> None:
    """The probe must cost less than the walk: it imports protobuf and ONNX's schema, not
    this application, nor the onnx package (numpy, the C++ checker)."""
    path = tmp_path / "m.onnx"
    path.write_bytes(DATA)
    run = subprocess.run([sys.executable, "-I", "-X", "importtime", utf8_probe.__file__, str(path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and utf8_probe._TAG in run.stdout, f"no verdict: {run.stdout} {run.stderr[-2000:]}"
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if m.split(".")[0] in ("editor", "widgets", "numpy", "onnx")
                   and m != "onnx.onnx_ml_pb2")
    assert not heavy, f"the probe imported {heavy}"


def _encode_varint(value: int) -> bytes:
    return utf8_probe._encode_varint(value)


def _tensor_bytes(name: bytes, raw: bytes, raw_first: bool) -> bytes:
    """A TensorProto on the wire (dims, data_type, name, raw_data), raw_data first if asked."""
    dims = b"\x08" + _encode_varint(len(raw) // 4)
    dtype = b"\x10\x01"
    name_f = b"\x42" + _encode_varint(len(name)) + name
    raw_f = b"\x4a" + _encode_varint(len(raw)) + raw
    return dims + dtype + (raw_f + name_f if raw_first else name_f + raw_f)


def _model_with_tensor(tensor: bytes) -> bytes:
    graph = b"\x2a" + _encode_varint(len(tensor)) + tensor + b"\x12\x01g"
    return b"\x08\x08" + b"\x3a" + _encode_varint(len(graph)) + graph + b"\x42\x02\x10\x11"


@pytest.mark.parametrize("raw_first", [False, True])
def test_weights_are_left_out_but_never_their_names(tmp_path: Path, raw_first: bool) -> None:
    """The probe skips the main graph's weight bytes (never text), in any field order, and
    still reads every string around them."""
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()  # bytes that are not UTF-8
    path = tmp_path / "m.onnx"
    for name, expected in ((b"weight", True), (b"we\xffght", False)):
        data = _model_with_tensor(_tensor_bytes(name, raw, raw_first))
        model = onnx.ModelProto()
        model.ParseFromString(data)  # what the loader sees: a valid model
        assert bytes(model.graph.initializer[0].raw_data) == raw
        path.write_bytes(data)
        assert utf8_probe._judge(str(path))[2] is expected, f"name {name!r}, raw_data first: {raw_first}"


def test_a_file_cut_short_gets_no_verdict(tmp_path: Path) -> None:
    data = _model_with_tensor(_tensor_bytes(b"weight", b"\x00" * 4096, False))
    path = tmp_path / "m.onnx"
    for cut in (len(data) - 1, len(data) // 2, 3):
        path.write_bytes(data[:cut])
        assert utf8_probe._judge(str(path))[2] is not True, f"a file cut at byte {cut} was judged clean"
    path.write_bytes(b"")
    assert utf8_probe._judge(str(path))[2] is None, "an empty file was judged"
