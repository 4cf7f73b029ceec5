"""``onnx-studio diff``: summary or JSON; exit 0 same, 1 different, 2 unreadable."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from editor.cli import main as cli_main
from tests.conftest import CORPUS

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def test_identical(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["diff", str(SQUEEZENET), str(SQUEEZENET)]) == 0
    assert capsys.readouterr().out.strip() == "identical (105 nodes)"


def _edited(tmp_path: Path) -> Path:
    m = onnx.load(SQUEEZENET)
    relu = next(n for n in m.graph.node if n.op_type == "Relu")
    relu.name = "renamed_relu"
    m.producer_name = "someone"
    out = tmp_path / "edited.onnx"
    onnx.save(m, out)
    return out


def test_different_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["diff", str(SQUEEZENET), str(_edited(tmp_path))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "nodes: 104 same, 1 changed, 0 added, 0 removed"
    assert "~ producer_name: 'onnx-caffe2' -> 'someone'" in out
    assert any(line.startswith("~ node ") and "(Relu): renamed to 'renamed_relu'" in line for line in out)


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["diff", str(SQUEEZENET), str(_edited(tmp_path)), "--json", "--status"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["identical"] is False and data["counts"]["nodes_changed"] == 1
    assert data["nodes_changed"][0]["kinds"] == ["renamed"]
    assert sorted(set(data["status_a"].values())) == ["changed", "same"]
    assert cli_main(["diff", str(SQUEEZENET), str(SQUEEZENET), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["identical"] is True and "status_a" not in data


def test_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    assert cli_main(["diff", str(SQUEEZENET), str(bad)]) == 2
    assert cli_main(["diff", str(tmp_path / "missing.onnx"), str(SQUEEZENET)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)
    assert cli_main(["diff", str(SQUEEZENET), str(SQUEEZENET), "--rtol", "-1"]) == 2
