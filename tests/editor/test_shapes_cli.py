"""``onnx-studio shapes``: the JSON contract, --dim, and the Refresh Shapes command (-o)
with exact undo on real models."""

from __future__ import annotations

import json
import subprocess
import sys

import onnx
import pytest

from editor.commands.shapes import RefreshShapes
from editor.document import Document
from tests.conftest import CORPUS, ROOT

REAL = sorted((CORPUS / "real").glob("*.onnx"))


def shapes(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "editor.cli", "shapes", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_json_contract_symbolic_then_fixed() -> None:
    path = CORPUS / "real" / "ppocrv4_det.onnx"
    r = shapes(path, "--json")
    assert r.returncode == 0, r.stderr
    values = json.loads(r.stdout)["values"]
    assert {"name", "graph", "dtype", "shape", "source"} <= values[0].keys()
    model = onnx.load(str(path))
    produced = {o for n in model.graph.node for o in n.output if o}
    assert produced <= {v["name"] for v in values}
    out = next(v for v in values if v["name"] == model.graph.output[0].name)
    assert out["dtype"] == "float32" and out["source"] == "declared"
    assert out["shape"][1] == 1 and isinstance(out["shape"][2], str) and "p2o.DynamicDimension.1" in out["shape"][2]
    fixed = json.loads(shapes(path, "--json", "--dim", "p2o.DynamicDimension.0=1", "--dim", "p2o.DynamicDimension.1=96",
                              "--dim", "p2o.DynamicDimension.2=64").stdout)["values"]
    out = next(v for v in fixed if v["name"] == model.graph.output[0].name)
    assert out["shape"] == [1, 1, 96, 64]
    assert sum(v["source"] == "inferred" for v in fixed) > 600


def test_bad_dim_is_one_error_line() -> None:
    r = shapes(CORPUS / "real" / "ppocrv4_det.onnx", "--dim", "x=abc")
    assert r.returncode != 0 and r.stderr.startswith("error:") and "Traceback" not in r.stderr


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_refresh_shapes_is_valid_and_undoes_exactly(path) -> None:
    doc = Document.open(path)
    original = doc.serialize()
    for mode in ("update", "strip", "add"):
        doc.execute(RefreshShapes(mode))
        onnx.checker.check_model(onnx.ModelProto.FromString(doc.serialize()), full_check=True)
        doc.check_invariants()
        if mode == "strip":
            assert len(doc.model.graph.value_info) == 0
        doc.undo()
        assert doc.serialize() == original


def test_cli_writes_refreshed_model(tmp_path) -> None:
    out = tmp_path / "det.onnx"
    r = shapes(CORPUS / "real" / "ppocrv4_det.onnx", "-o", out)
    assert r.returncode == 0, r.stderr
    m = onnx.load(str(out))
    produced = {o for n in m.graph.node for o in n.output if o} - {o.name for o in m.graph.output}
    assert produced <= {vi.name for vi in m.graph.value_info}
    onnx.checker.check_model(m, full_check=True)
