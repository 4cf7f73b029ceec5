"""Where a shape fact comes from (editor.shapes.facts), and declared shapes the engine
contradicts reported as problems where onnx's own inference cannot tell."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from editor.shapes import infer_model
from editor.shapes.engine import ValueShape
from editor.shapes.facts import conflict, graph_conflicts, observed_value_info, value_fact
from editor.shapes.symbolic import symbol
from editor.validation.declared import declared_dim_findings


def _model(declared_y: list | None) -> onnx.ModelProto:
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Reshape", ["x", "s"], ["y"]),
             h.make_node("Relu", ["y"], ["z"])]
    vis = [h.make_tensor_value_info("y", T.FLOAT, declared_y)] if declared_y is not None else []
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                     [h.make_tensor_value_info("z", T.FLOAT, None)], value_info=vis)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_conflicts_are_stated_only_when_certain() -> None:
    n = symbol("n")
    assert conflict(ValueShape(T.FLOAT, (n, 4)), ValueShape(T.FLOAT, (n, 4))) is None
    assert conflict(ValueShape(T.FLOAT, (n, None)), ValueShape(T.FLOAT, (n, 4))) is None  # unknown: no claim
    assert conflict(ValueShape(T.FLOAT, (n, 4)), ValueShape(T.FLOAT, (None, None))) is None  # engine knows less
    assert conflict(ValueShape(T.FLOAT, (1, 4)), ValueShape(T.FLOAT, (n, 4))) is None  # a symbol may be 1
    assert "rank" in conflict(ValueShape(T.FLOAT, (n, 4, 1)), ValueShape(T.FLOAT, (n, 4)))
    assert "dim 1" in conflict(ValueShape(T.FLOAT, (n, 5)), ValueShape(T.FLOAT, (n, 4)))
    assert "varies" in conflict(ValueShape(T.FLOAT, (n, symbol("w"))), ValueShape(T.FLOAT, (n, 4)))
    assert "float16" in conflict(ValueShape(T.FLOAT16, (n, 4)), ValueShape(T.FLOAT, (n, 4)))


def test_value_fact_names_each_source() -> None:
    model = _model(["n", 4])
    table = infer_model(model)
    fact = value_fact("y", model.graph, table, {"y": ("float32", (2, 4))})
    assert fact.declared == "float32 [n, 4]" and fact.inferred == "float32 [n, 4]"
    assert fact.observed == "float32 [2, 4]" and fact.conflict is None
    z = value_fact("z", model.graph, table)
    assert z.declared == "float32 [?]" and z.inferred == "float32 [n, 4]" and z.observed is None
    vi = observed_value_info({"y": ("float32", (2, 4)), "seq": (None, None)})
    assert list(vi) == ["y"] and [d.dim_value for d in vi["y"].type.tensor_type.shape.dim] == [2, 4]


def test_a_stale_declaration_onnx_cannot_judge_is_a_warning() -> None:
    fresh, stale = _model(["n", 4]), _model(["n", 4, 1])
    assert graph_conflicts(fresh.graph, infer_model(fresh)) == {}
    assert set(graph_conflicts(stale.graph, infer_model(stale))) == {"y"}
    findings = declared_dim_findings(stale)
    assert [(code, name) for code, _msg, name, _sev in findings] == [("declared-dim", "y")]
    assert declared_dim_findings(fresh) == []


def test_refresh_shapes_from_a_script_is_one_step_with_its_own_history_line(tmp_path) -> None:
    from editor.document import Document
    from editor.scripting import history_script, run_script_source

    path = tmp_path / "m.onnx"
    onnx.save(_model(["n", 4, 1]), str(path))  # a stale declaration of y
    doc = Document.open(path)
    run_script_source("doc.refresh_shapes()", doc)
    vis = {vi.name: vi for vi in doc.model.graph.value_info}
    assert [d.dim_param or d.dim_value for d in vis["y"].type.tensor_type.shape.dim] == ["n", 4]
    assert "commands.RefreshShapes('update')" in history_script(doc)
    doc.undo()
    assert len(doc.model.graph.value_info) == 1 and doc.model.graph.value_info[0].name == "y"
