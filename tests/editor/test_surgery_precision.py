"""fp16/bf16 conversion: valid by construction on real models, options honoured, undo exact."""

from __future__ import annotations

import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto

from editor.cli import main as cli_main
from editor.document import Document
from editor.surgery.precision import ConvertPrecision, convert_precision
from editor.validation import Validator, count_errors
from tests.conftest import CORPUS

REAL = CORPUS / "real"
LIGHT = CORPUS / "onnx-backend" / "light"


def _valid(doc: Document) -> None:
    assert count_errors(Validator(doc, live=False).validate_all()) == 0
    onnx.checker.check_model(doc.model, full_check=True)
    ort.InferenceSession(doc.model.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("name", ["fw_silero_vad_v6.onnx", "silero_vad_16k_op15.onnx", "asr_prep_kaldi.onnx",
                                  "ppocrv4_det.onnx"])
def test_fp16_real_models_are_valid_and_undo_is_exact(name: str) -> None:
    doc = Document.open(REAL / name)
    before = doc.model.SerializeToString()
    cmd = ConvertPrecision("fp16")
    doc.execute(cmd)
    assert cmd.result is not None and cmd.result.converted, "something computes in fp16"
    _valid(doc)
    doc.undo()
    assert doc.model.SerializeToString() == before


def test_bodies_of_if_are_converted_inside() -> None:
    doc = Document.open(REAL / "silero_vad_16k_op15.onnx")
    doc.execute(ConvertPrecision("fp16"))
    bodies = [a.g for n in doc.model.graph.node if n.op_type == "If" for a in n.attribute if a.type == a.GRAPH]
    assert any(any(init.data_type == TensorProto.FLOAT16 for init in b.initializer) or
               any(n.op_type == "Cast" and n.attribute[0].i == TensorProto.FLOAT16 for n in b.node)
               for b in bodies)


def test_keep_io_types_and_keep_ops() -> None:
    model = onnx.load(str(LIGHT / "light_squeezenet.onnx"))
    res = convert_precision(model, keep_io_types=True, keep_ops=["Conv"])
    g = res.model.graph
    ins = {i.name: i.type.tensor_type.elem_type for i in g.input}
    assert ins["data_0"] == TensorProto.FLOAT
    assert all(o.type.tensor_type.elem_type == TensorProto.FLOAT for o in g.output)
    assert res.kept and all("Conv" not in c for c in res.converted)
    # a kept Conv reads fp32 values only: its data input is an fp32 value or a Cast to fp32
    producers = {o: n for n in g.node for o in n.output}
    for n in g.node:
        if n.op_type == "Conv":
            p = producers.get(n.input[0])
            assert p is None or p.op_type != "Cast" or p.attribute[0].i == TensorProto.FLOAT
    doc = Document(res.model)
    _valid(doc)


def test_weights_beyond_fp16_range_keep_their_reader_or_are_clamped() -> None:
    model = onnx.load(str(REAL / "ppocrv4_det.onnx"))
    kept = convert_precision(model)
    assert any("exceed fp16's range" in n for n in kept.notes)
    clamped = convert_precision(model, clamp=True)
    assert any("clamped" in n for n in clamped.notes)
    assert len(clamped.converted) > len(kept.converted)


def test_bf16_and_refusals() -> None:
    model = onnx.load(str(REAL / "fw_silero_vad_v6.onnx"))
    res = convert_precision(model, target=TensorProto.BFLOAT16)
    assert res.converted
    onnx.checker.check_model(res.model, full_check=True)
    with pytest.raises(Exception, match="no node of op type"):
        convert_precision(model, keep_ops=["NoSuchOp"])


@pytest.mark.timeout(120)
def test_cli_fp16_prints_error_per_output(tmp_path, capsys) -> None:
    out = tmp_path / "half.onnx"
    assert cli_main(["fp16", str(REAL / "fw_silero_vad_v6.onnx"), "-o", str(out), "--keep-io-types"]) == 0
    text = capsys.readouterr().out
    assert "max abs" in text and out.exists()
    assert cli_main(["fp16", str(REAL / "fw_silero_vad_v6.onnx"), "-o", str(out), "--keep-ops", "Nope"]) == 1
    assert "error:" in capsys.readouterr().err


@pytest.mark.timeout(180)
def test_cli_auto_mixed_brings_outputs_within_tolerance(tmp_path, capsys) -> None:
    # squeezenet in pure fp16 gives non-finite softmax values on random inputs
    out = tmp_path / "mixed.onnx"
    assert cli_main(["fp16", str(LIGHT / "light_squeezenet.onnx"), "-o", str(out), "--auto-mixed", "0.001"]) == 0
    text = capsys.readouterr().out
    assert "kept in fp32" in text and "non-finite" not in text


@pytest.mark.parametrize("case", ["test_loop11", "test_scan9_sum"])
def test_loop_and_scan_bodies_convert_and_still_compute(case: str) -> None:
    import glob

    import numpy as np
    from onnx import numpy_helper

    folder = CORPUS / "onnx-backend" / "node" / case
    res = convert_precision(onnx.load(str(folder / "model.onnx")), keep_io_types=True)
    assert res.converted
    onnx.checker.check_model(res.model, full_check=True)
    sess = ort.InferenceSession(res.model.SerializeToString(), providers=["CPUExecutionProvider"])
    load = lambda pat: [numpy_helper.to_array(onnx.load_tensor(f))  # noqa: E731
                        for f in sorted(glob.glob(str(folder / "test_data_set_0" / pat)))]
    got = sess.run(None, {i.name: v for i, v in zip(sess.get_inputs(), load("input_*.pb"))})
    for g, want in zip(got, load("output_*.pb")):
        np.testing.assert_allclose(g.astype(np.float64), want, rtol=1e-2, atol=1e-2)


@pytest.mark.timeout(120)
def test_cli_fp16_on_a_model_with_external_weights(tmp_path, capsys) -> None:
    src = tmp_path / "in"
    src.mkdir()
    onnx.save(onnx.load(str(REAL / "magika_standard_v3_3.onnx")), str(src / "m.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="m.data", size_threshold=1024)
    out = tmp_path / "out" / "half.onnx"
    out.parent.mkdir()
    assert cli_main(["fp16", str(src / "m.onnx"), "-o", str(out), "--keep-io-types"]) == 0
    text = capsys.readouterr().out
    assert "target_label: max abs" in text
    onnx.checker.check_model(str(out), full_check=True)  # the weights left outside resolve beside OUT
