"""``onnx-studio extract``: writes a checkable model; one ``error:`` line and exit codes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from editor.cli import main as cli_main
from editor.io.tensors import uses_external_data
from tests.conftest import CORPUS
from tests.editor.test_summary_support import external_model

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def test_extract_by_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "part.onnx"
    assert cli_main(["extract", str(SQUEEZENET), "-o", str(out), "--inputs", "r14", "r13", "--outputs", "r39"]) == 0
    assert "wrote" in capsys.readouterr().out
    m = onnx.load(out)
    onnx.checker.check_model(m, full_check=True)
    assert [o.name for o in m.graph.output] == ["r39"]


def test_extract_by_node_names(tmp_path: Path) -> None:
    m = onnx.load(SQUEEZENET)
    names = [n.name for n in m.graph.node if n.op_type in ("Conv", "Relu")][4:8]
    out = tmp_path / "part.onnx"
    assert cli_main(["extract", str(SQUEEZENET), "-o", str(out), "--nodes", *names, "-q"]) == 0
    part = onnx.load(out)
    onnx.checker.check_model(part, full_check=True)
    assert [n.name for n in part.graph.node] == names


def _named_model(path: Path) -> Path:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Neg", ["a"], ["b"], name="neg"),
             helper.make_node("Abs", ["b"], ["y"], name="abs"),
             helper.make_node("Abs", ["b"], ["y2"], name="dup"),
             helper.make_node("Abs", ["b"], ["y3"], name="dup")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("y", "y2", "y3")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=10), path)
    return path


def test_nodes_and_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _named_model(tmp_path / "m.onnx")
    out = tmp_path / "part.onnx"
    assert cli_main(["extract", str(src), "-o", str(out), "--nodes", "neg", "#2"]) == 0
    text = capsys.readouterr().out
    assert "2 nodes; inputs: a; outputs: b, y" in text
    m = onnx.load(out)
    assert [n.name for n in m.graph.node] == ["neg", "abs"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--nodes", "missing"], 1, "error: no node named 'missing'"),
        (["--nodes", "dup"], 1, "error: 2 nodes are named 'dup'"),
        (["--nodes", "#99"], 1, "error: no node with id '#99'"),
        (["--inputs", "a", "--outputs", "nope"], 1, "error: value 'nope' does not exist"),
        (["--inputs", "b", "--outputs", "a"], 1, "error: output 'a' depends on graph input 'x'"),
        (["--inputs", "a"], 1, "error: give --nodes"),
        (["--nodes", "neg", "--inputs", "a", "--outputs", "b"], 1, "error: give --nodes, or --inputs"),
    ],
)
def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str) -> None:
    src = _named_model(tmp_path / "m.onnx")
    out = tmp_path / "part.onnx"
    assert cli_main(["extract", str(src), "-o", str(out), *args]) == code
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not out.exists()


def test_unreadable_model_and_bad_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00not a model")
    assert cli_main(["extract", str(bad), "-o", str(tmp_path / "o.onnx"), "--nodes", "x"]) == 2
    src = _named_model(tmp_path / "m.onnx")
    assert cli_main(["extract", str(src), "-o", str(tmp_path / "no" / "o.onnx"), "--nodes", "neg"]) == 2
    assert capsys.readouterr().err.count("error:") == 2


def test_external_weights_written_beside_output(tmp_path: Path) -> None:
    arrays = {"w": np.arange(1200, dtype=np.float32).reshape(40, 30), "unused": np.zeros(5000, np.float32)}
    path = external_model(tmp_path, arrays)
    m = onnx.load(path, load_external_data=False)
    m.graph.node.append(helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"))
    m.graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 40]))
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 30]))
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("", 17))
    onnx.save(m, path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "part.onnx"
    assert cli_main(["extract", str(path), "-o", str(out), "--nodes", "mm", "-q"]) == 0
    part = onnx.load(out, load_external_data=False)
    (w,) = part.graph.initializer
    assert uses_external_data(w)
    data = out_dir / "part.onnx.data"
    assert data.exists() and data.stat().st_size < 20000  # only the weight the extract uses
    loaded = onnx.load(out)
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(loaded.graph.initializer[0]), arrays["w"])
