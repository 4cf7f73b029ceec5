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
    return subprocess.run([sys.executable, "-m", "widgets", "shapes", *map(str, args)],
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


def test_render_labels_nearly_every_edge_of_the_paddle_detector(tmp_path) -> None:
    from editor.shapes import infer_model
    from editor.shapes.declare import label_value_info
    from editor.viewmodel import build_display_graph

    model = onnx.load(str(CORPUS / "real" / "ppocrv4_det.onnx"))
    graph = model.graph
    ids = list(range(len(graph.node)))
    opsets = {o.domain: o.version for o in model.opset_import}
    declared_only = build_display_graph(graph, ids, opsets=opsets)
    labelled = build_display_graph(graph, ids, opsets=opsets, value_info=label_value_info(graph, infer_model(model)))
    share = sum(1 for e in labelled.edges if e.label) / len(labelled.edges)
    assert share >= 0.95, share
    assert sum(1 for e in declared_only.edges if e.label) < 0.1 * len(declared_only.edges)  # the file declares few
    # labels stay short: long formulas read by their leading term
    assert max(len(e.label) for e in labelled.edges) < 60
    r = subprocess.run([sys.executable, "-m", "widgets", "render", str(CORPUS / "real" / "ppocrv4_det.onnx"),
                        "-o", str(tmp_path / "det.svg"), "--expanded"], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "~DD.1/" in (tmp_path / "det.svg").read_text(encoding="utf-8")


def test_short_dim_labels() -> None:
    from editor.shapes import symbolic as S
    from editor.shapes.declare import short_dim

    h = S.symbol("height")
    assert short_dim(S.add(S.floordiv(S.add(S.floordiv(S.add(h, 1), 2), 1), 2), 0)) == "~height/4"
    assert short_dim(S.mul(h, 3)) == "3*height" and short_dim(7) == "7" and short_dim(None) == "?"
    assert short_dim(S.symbol("p2o.DynamicDimension.1")) == "DD.1"
