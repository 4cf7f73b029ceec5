"""``onnx-studio convert``: binary <-> text keeps the graph; inline <-> external keeps the bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.cli import main as cli_main
from editor.io import load_model, tensor_to_numpy, uses_external_data
from tests.conftest import CORPUS, corpus_models, real_models
from tests.editor.test_summary_support import external_model, model_with, run_cli



def _attr_value(a: onnx.AttributeProto):
    v = helper.get_attribute_value(a)
    if isinstance(v, TensorProto):
        return ("tensor", v.data_type, tuple(v.dims), numpy_helper.to_array(v).tobytes())
    if isinstance(v, onnx.GraphProto):
        return _graph_sig(v)
    if isinstance(v, list) and v and isinstance(v[0], onnx.GraphProto):
        return [_graph_sig(g) for g in v]
    if isinstance(v, list) and v and isinstance(v[0], TensorProto):
        return [numpy_helper.to_array(t).tobytes() for t in v]
    if isinstance(v, float):
        return np.float32(v).tobytes()
    if isinstance(v, list) and v and isinstance(v[0], float):
        return np.asarray(v, np.float32).tobytes()
    if isinstance(v, (onnx.TypeProto, onnx.SparseTensorProto)):
        return v.SerializeToString()
    return v


def _graph_sig(g: onnx.GraphProto) -> tuple:
    """What 'the same graph' means: nodes with their wiring and attributes, graph I/O with
    types, initializers by name, element type, shape and values."""
    nodes = [
        (n.op_type, n.domain or "", list(n.input), list(n.output),
         sorted((a.name, repr(_attr_value(a))) for a in n.attribute))
        for n in g.node
    ]
    io = [(v.name, v.type.SerializeToString()) for v in list(g.input) + list(g.output)]
    inits = sorted((t.name, t.data_type, tuple(t.dims), numpy_helper.to_array(t).tobytes()) for t in g.initializer)
    return nodes, io, inits


def _model_sig(m: onnx.ModelProto) -> tuple:
    opsets = sorted((o.domain or "ai.onnx", o.version) for o in m.opset_import)
    return m.ir_version, opsets, _graph_sig(m.graph)


def _text_cases() -> list:
    cases = []
    # ppocr's exports name Constant tensors like "batch_norm2d_0.b_0", which onnx's printer
    # quotes in a tensor literal where its parser cannot read a quoted name: they are in here
    for p in real_models() + corpus_models(real=False)[::97]:
        cases.append(pytest.param(p, id=p.parent.name if p.name == "model.onnx" else p.name))
    return cases


@pytest.mark.parametrize("path", _text_cases())
def test_binary_text_binary_keeps_the_graph(path: Path, tmp_path: Path) -> None:
    txt, back = tmp_path / "m.onnxtxt", tmp_path / "back.onnx"
    assert cli_main(["convert", str(path), str(txt)]) == 0
    assert txt.read_text().lstrip().startswith("<")
    assert cli_main(["convert", str(txt), str(back)]) == 0
    assert onnx.load(str(back)).SerializeToString()[:2] != b"<"  # binary again
    assert _model_sig(onnx.load(str(back))) == _model_sig(onnx.load(str(path)))
    # weights packed as the exporters pack them: not 2-5x bigger than the original
    assert back.stat().st_size <= 1.1 * path.stat().st_size + 1024


def test_text_that_does_not_read_back_is_an_error(tmp_path: Path, capsys) -> None:
    """onnx's printer writes a sparse Constant its parser cannot read (and drops sparse
    initializers): the text is written, the command says it does not read back as the same
    model and exits 1."""
    vals = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "sp")
    idx = numpy_helper.from_array(np.array([0, 3], np.int64), "")
    g = helper.make_graph([helper.make_node("Constant", [], ["y"], sparse_value=helper.make_sparse_tensor(
        vals, idx, [4]))], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        sparse_initializer=[helper.make_sparse_tensor(vals, idx, [4])])
    src = tmp_path / "sparse.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), src)
    out = tmp_path / "sparse.onnxtxt"
    assert cli_main(["convert", str(src), str(out)]) == 1
    err = capsys.readouterr().err
    assert "does not read back" in err and out.exists()
    # the comparison itself names what the text loses
    from editor.io.text import parse_model_text, serialize_model_text, text_differences

    m = onnx.load(str(src))
    del m.graph.node[:]
    m.graph.output[0].name = "sp"
    assert any("initializers" in d for d in text_differences(m, parse_model_text(serialize_model_text(m))))


def test_text_flag_with_onnx_suffix(tmp_path: Path) -> None:
    src = CORPUS / "real" / "asr_prep_resample_44_16.onnx"
    out = tmp_path / "out.onnx"
    assert cli_main(["convert", str(src), str(out), "--text"]) == 0
    assert out.read_bytes().lstrip().startswith(b"<")
    doc = load_model(out)
    assert doc.format == "text" and _model_sig(doc.model) == _model_sig(onnx.load(str(src)))


def _tensor_bytes(path: Path) -> dict[str, bytes]:
    loaded = load_model(path)
    try:
        return {t.name: np.ascontiguousarray(tensor_to_numpy(t, loaded.store)).tobytes()
                for t in loaded.model.graph.initializer}
    finally:
        loaded.close()


@pytest.mark.parametrize("name", ["silero_vad_16k_op15.onnx", "magika_standard_v3_3.onnx", "fw_silero_vad_v6.onnx"])
def test_inline_external_inline_keeps_tensor_bytes(name: str, tmp_path: Path, capsys) -> None:
    src = CORPUS / "real" / name
    ext, back = tmp_path / "ext" / "m.onnx", tmp_path / "back.onnx"
    ext.parent.mkdir()
    assert cli_main(["convert", str(src), str(ext), "--external-data", "w.bin", "--size-threshold", "256"]) == 0
    m = onnx.load(str(ext), load_external_data=False)
    moved = [t for t in m.graph.initializer if uses_external_data(t)]
    kept = [t for t in m.graph.initializer if not uses_external_data(t)]
    assert moved and all(int({e.key: e.value for e in t.external_data}["length"]) >= 256 for t in moved)
    assert all(numpy_helper.to_array(t).nbytes < 256 for t in kept if t.HasField("raw_data"))
    assert (tmp_path / "ext" / "w.bin").stat().st_size >= sum(
        int({e.key: e.value for e in t.external_data}["length"]) for t in moved)
    assert ext.stat().st_size < src.stat().st_size
    assert cli_main(["info", str(ext), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in info["external_data_files"]] == ["w.bin"]
    assert info["external_data_files"][0]["tensors"] == len(moved)

    assert cli_main(["convert", str(ext), str(back), "--inline"]) == 0
    assert not any(uses_external_data(t) for t in onnx.load(str(back), load_external_data=False).graph.initializer)
    original = _tensor_bytes(src)
    assert _tensor_bytes(ext) == original
    assert _tensor_bytes(back) == original
    assert _model_sig(onnx.load(str(back))) == _model_sig(onnx.load(str(src)))


def test_size_threshold_alone_names_the_data_file(tmp_path: Path) -> None:
    arrays = {"big": np.arange(4096, dtype=np.float32), "small": np.arange(4, dtype=np.float32)}
    src = tmp_path / "src.onnx"
    src.write_bytes(model_with([numpy_helper.from_array(a, n) for n, a in arrays.items()]).SerializeToString())
    out = tmp_path / "out.onnx"
    assert cli_main(["convert", str(src), str(out), "--size-threshold", "1000"]) == 0
    m = onnx.load(str(out), load_external_data=False)
    where = {t.name: uses_external_data(t) for t in m.graph.initializer}
    assert where == {"big": True, "small": False}
    assert (tmp_path / "out.onnx.data").exists()
    assert _tensor_bytes(out) == {n: a.tobytes() for n, a in arrays.items()}


def test_data_dir_and_preserve_copies_data(tmp_path: Path) -> None:
    model_dir, data_dir, out_dir = (tmp_path / d for d in ("models", "data", "out"))
    for d in (model_dir, data_dir, out_dir):
        d.mkdir()
    arrays = {"a": np.arange(300, dtype=np.int64)}
    made = external_model(data_dir, arrays, data="w.bin")
    (model_dir / "m.onnx").write_bytes(made.read_bytes())
    made.unlink()
    proc = run_cli("convert", str(model_dir / "m.onnx"), str(out_dir / "m.onnx"))
    assert proc.returncode == 2 and proc.stderr.startswith("error:") and "w.bin" in proc.stderr
    assert list(out_dir.iterdir()) == []
    assert cli_main(["convert", str(model_dir / "m.onnx"), str(out_dir / "m.onnx"), "--data-dir", str(data_dir)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["m.onnx", "w.bin"]
    assert _tensor_bytes(out_dir / "m.onnx") == {"a": arrays["a"].tobytes()}


def test_unchanged_binary_convert_is_byte_identical(tmp_path: Path) -> None:
    src = CORPUS / "real" / "magika_standard_v3_3.onnx"
    out = tmp_path / "copy.onnx"
    assert cli_main(["convert", str(src), str(out)]) == 0
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--text", "--external-data", "w.bin"], "as text with external data"),
        (["--inline", "--size-threshold", "10"], "--size-threshold applies to --external-data"),
        (["--size-threshold", "-1"], "--size-threshold -1 is negative"),
        (["--external-data", "../w.bin"], "leaves the data folder"),
        (["--external-data", "/tmp/w.bin"], "absolute path"),
    ],
)
def test_bad_flags_one_line_nothing_written(flags: list[str], message: str, tmp_path: Path) -> None:
    src = tmp_path / "src.onnx"
    src.write_bytes(model_with([numpy_helper.from_array(np.ones(2000, np.float32), "w")]).SerializeToString())
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    proc = run_cli("convert", str(src), str(out), *flags)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], proc.stderr
    assert list(out.parent.iterdir()) == []
    assert not (tmp_path / "w.bin").exists()


def test_output_folder_missing(tmp_path: Path) -> None:
    src = CORPUS / "real" / "asr_prep_kaldi.onnx"
    proc = run_cli("convert", str(src), str(tmp_path / "nowhere" / "m.onnx"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stderr.startswith("error:")
    assert not (tmp_path / "nowhere").exists()


def test_text_back_to_binary_packs_int8_weights(tmp_path: Path) -> None:
    """Silero VAD's weights quantized to int8 (the layout of quantized models): onnx's parser
    keeps each int8 in a varint of int32_data (up to 10 bytes each: 4x the file); a text
    round trip gives back packed raw_data, the original's size."""
    m = onnx.load(str(CORPUS / "real" / "fw_silero_vad_v6.onnx"))
    for k, t in enumerate(list(m.graph.initializer)):
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32 and a.size > 16:
            q = np.clip(np.round(a / (float(np.abs(a).max() or 1) / 127)), -128, 127).astype(np.int8)
            m.graph.initializer[k].CopyFrom(numpy_helper.from_array(q, t.name))
    src, txt, back = tmp_path / "q.onnx", tmp_path / "q.onnxtxt", tmp_path / "back.onnx"
    onnx.save(m, src)
    assert cli_main(["convert", str(src), str(txt), "--allow-invalid"]) == 0
    assert cli_main(["convert", str(txt), str(back), "--allow-invalid"]) == 0
    assert back.stat().st_size <= 1.05 * src.stat().st_size
    assert _model_sig(onnx.load(str(back))) == _model_sig(m)
