"""``onnx-studio run`` (editor.cli.run): outputs, files, JSON, exit codes, one-line errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from editor.cli.run import add_parser, main, run, safe_file_name
from tests.conftest import CORPUS
from tests.editor.test_runtime_models import chain_model, hang_model, int4_model


@pytest.fixture()
def chain_path(tmp_path: Path) -> Path:
    model = chain_model()
    # names with characters a file system dislikes, to check sanitising
    for node in model.graph.node:
        node.output[:] = [{"a": "/blk/relu:0", "b": "/blk/mul:0", "c": "cast"}.get(o, o) for o in node.output]
        node.input[:] = [{"a": "/blk/relu:0", "b": "/blk/mul:0", "c": "cast"}.get(i, i) for i in node.input]
    path = tmp_path / "chain.onnx"
    onnx.save(model, str(path))
    return path


def _single_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "Traceback" not in err
    return lines[0]


def test_add_parser_registers_run() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd")
    add_parser(sub)
    args = parser.parse_args(["run", "m.onnx", "--random", "--backend", "reference", "--outputs", "a", "b"])
    assert args.cmd == "run" and args.outputs == ["a", "b"] and args.backend == "reference"


def test_input_file_summary_and_save(chain_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    code = main([str(chain_path), "--input", f"x={tmp_path / 'x.npy'}", "--all-intermediates", "--save", str(out_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0].startswith("backend: ort")
    assert "y  int64 [1, 3] min=-9 max=0" in out.replace("       ", "  ") or "int64 [1, 3] min=-9 max=0" in out
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == ["blk_mul_0.npy", "blk_relu_0.npy", "cast.npy", "inputs.npz", "y.npy"]
    with np.load(out_dir / "inputs.npz") as saved:  # the inputs go with the outputs
        np.testing.assert_array_equal(saved["x"], x)
    np.testing.assert_array_equal(np.load(out_dir / "blk_relu_0.npy"), np.maximum(x, 0))
    np.testing.assert_array_equal(np.load(out_dir / "y.npy"), [[-1, 0, -9]])


def test_json_output(chain_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(chain_path), "--random", "--json", "--outputs", "/blk/mul:0", "y"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "ok" and data["backend"] == "ort"
    names = [o["name"] for o in data["outputs"]]
    assert names == ["/blk/mul:0", "y"]
    assert data["outputs"][0]["role"] == "intermediate" and data["outputs"][0]["stats"]["dtype"] == "float32"


def test_sequence_of_maps_saved_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(CORPUS / "real" / "ort_logreg_iris.onnx"), "--random", "--save", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "sequence of 3 (map)" in out
    saved = json.loads((tmp_path / "probabilities.json").read_text())
    assert saved["kind"] == "sequence" and len(saved["value"]) == 3 and set(saved["value"][0]) == {"0", "1", "2"}


def test_fallback_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "int4.onnx"
    onnx.save(int4_model(), str(path))
    code = main([str(path), "--random"])
    out = capsys.readouterr().out
    assert code == 0
    assert "backend: reference" in out and "passed over ort: value 'x' is tensor(int4)" in out


def test_missing_input_is_one_error_line(chain_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(chain_path)])
    line = _single_error_line(capsys.readouterr().err)
    assert code == 1 and "input 'x'" in line and "--random" in line


def test_missing_model_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(tmp_path / "nope.onnx"), "--random"])
    assert code == 2 and "no such file" in _single_error_line(capsys.readouterr().err)


def test_corrupt_model_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff\x00not a model" * 10)
    assert main([str(bad), "--random"]) == 2
    _single_error_line(capsys.readouterr().err)


def test_timeout_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "hang.onnx"
    onnx.save(hang_model(), str(path))
    code = main([str(path), "--random", "--timeout", "1"])
    assert code == 1 and "time limit" in _single_error_line(capsys.readouterr().err)


def test_unknown_provider_exit_1(chain_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(chain_path), "--random", "--providers", "NoSuchExecutionProvider"])
    assert code == 1 and "NoSuchExecutionProvider" in _single_error_line(capsys.readouterr().err)


def test_unknown_output_exit_1(chain_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(chain_path), "--random", "--outputs", "nope"])
    assert code == 1 and "no value named 'nope'" in _single_error_line(capsys.readouterr().err)


def test_run_takes_a_namespace(chain_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    assert run(parser.parse_args(["run", str(chain_path), "--random", "--backend", "reference"])) == 0


def test_safe_file_name() -> None:
    taken: set[str] = set()
    assert safe_file_name("/a/b:0", taken) == "a_b_0"
    assert safe_file_name("a_b_0", taken) == "a_b_0_2"
    assert safe_file_name("..", taken) == "value"
    assert safe_file_name("../../etc/passwd", taken) == "etc_passwd"
