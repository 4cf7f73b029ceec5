"""Find's query language (editor.find) and ``onnx-studio find``: op counts agree with onnx's
own listing, shape queries agree with ``shapes``, attribute predicates, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import onnx
import pytest

from editor.document import Document
from editor.find import QueryError, search
from editor.shapes import infer_model
from editor.shapes.declare import values_json
from tests.conftest import CORPUS, ROOT

REAL = sorted((CORPUS / "real").glob("*.onnx"))


def _all_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_op_counts_match_onnx_and_shape_queries_match_shapes(path) -> None:
    model = onnx.load(str(path))
    expected = Counter(n.op_type for n in _all_nodes(model.graph))
    expected.update(n.op_type for f in model.functions for n in f.node)
    doc = Document.open(path)
    for op, count in expected.items():
        hits = search(doc, f"op:{op}", limit=10**9)
        assert len(hits) == count and all(h.kind == "node" and h.op_type == op for h in hits), op
    main_values = [v for v in values_json(model, infer_model(model))["values"] if v["graph"] == (model.graph.name or "main")]
    rank4 = {v["name"] for v in main_values if v["shape"] is not None and len(v["shape"]) == 4}
    found = {h.name for h in search(doc, "rank:4", limit=10**9) if h.graph == "main"}
    assert found == rank4


def test_attribute_and_value_predicates() -> None:
    doc = Document.open(CORPUS / "real" / "ppocrv4_det.onnx")
    model = doc.model
    depthwise = [n.name for n in model.graph.node if n.op_type == "Conv"
                 and any(a.name == "group" and a.i > 1 for a in n.attribute)]
    assert depthwise and sorted(h.name for h in search(doc, "op:Conv attr:group>1")) == sorted(depthwise)
    threes = [n.name for n in model.graph.node if any(a.name == "kernel_shape" and list(a.ints) == [3, 3]
                                                      for a in n.attribute)]
    assert sorted(h.name for h in search(doc, "attr:kernel_shape=[3,3]")) == sorted(threes)
    assert all(h.kind == "node" for h in search(doc, "op:Resize attr:mode=nearest"))
    # a node predicate with a value predicate: Convs whose output has 96 channels
    convs96 = search(doc, "op:Conv shape:[*,96,*,*]")
    assert convs96 and all(h.op_type == "Conv" for h in convs96)
    assert len(search(doc, "dtype:float32 rank:0")) >= 0
    assert search(doc, "name:conv2d_1 rank:4") or search(doc, "conv2d")


@pytest.mark.parametrize("query", ["attr:=3", "rank:x", "shape:3", "op:"])
def test_bad_queries_raise(query) -> None:
    doc = Document.open(CORPUS / "real" / "fw_silero_vad_v6.onnx")
    with pytest.raises(QueryError):
        search(doc, query)


def test_cli_find_json_and_exit_codes() -> None:
    path = CORPUS / "real" / "fw_silero_vad_v6.onnx"

    def find(*args):
        return subprocess.run([sys.executable, "-m", "widgets", "find", str(path), *args],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)

    r = find("op:Conv", "--json")
    assert r.returncode == 0, r.stderr
    matches = json.loads(r.stdout)["matches"]
    assert matches and all({"kind", "name", "graph", "op_type"} <= m.keys() and m["op_type"] == "Conv" for m in matches)
    assert find("op:NoSuchOp").returncode == 1
    bad = find("attr:=3")
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr
