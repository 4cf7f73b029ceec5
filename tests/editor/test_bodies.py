"""Values inside If bodies are compared and reduced (editor.debug.bodies): each If a run
decides is inlined into its taken branch, so a change planted inside a body is located
inside the body, by compare and by reduce, with default options."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from editor.debug import ModelDiffCheck, RunSpec, compare_runs, reduce_model
from editor.debug.bodies import inline_by_running
from editor.runtime import Runner
from tests.conftest import CORPUS

VAD16 = CORPUS / "real" / "silero_vad_16k_op15.onnx"  # 12 If nodes, nested, the LSTM inside one


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def _branch(name: str, op: str, const: float, inner: onnx.NodeProto | None = None) -> onnx.GraphProto:
    k = numpy_helper.from_array(np.array(const, np.float32), f"{name}_k")
    nodes = [h.make_node(op, ["x", f"{name}_k"], [f"{name}_v"], name=f"{name}_op")]
    if inner is not None:
        nodes += [inner]
        out = inner.output[0]
    else:
        out = f"{name}_v"
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(out, T.FLOAT, [2, 3])], [k])


def _nested_if_model() -> onnx.ModelProto:
    """y = x*2 (then) or x+1 (else) on ``c``; inside the then branch, another If on ``d``."""
    inner = h.make_node("If", ["d"], ["t_inner"], name="inner_if",
                        then_branch=_branch("tt", "Sub", 3.0), else_branch=_branch("te", "Div", 4.0))
    then = _branch("t", "Mul", 2.0)
    then.node.append(inner)
    del then.output[:]
    then.output.append(h.make_tensor_value_info("t_inner", T.FLOAT, [2, 3]))
    g = h.make_graph([h.make_node("Greater", ["s", "zero"], ["c"], name="cond"),
                      h.make_node("Less", ["s", "zero"], ["d"], name="cond_inner"),
                      h.make_node("If", ["c"], ["y"], name="outer_if", then_branch=then,
                                  else_branch=_branch("e", "Add", 1.0))],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3]), h.make_tensor_value_info("s", T.FLOAT, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [numpy_helper.from_array(np.array(0, np.float32), "zero")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_inlined_model_computes_the_same_and_names_its_bodies(runner: Runner) -> None:
    model = _nested_if_model()
    onnx.checker.check_model(model)
    for s in (1.0, -1.0):
        feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "s": np.array(s, np.float32)}

        def conditions_of(m: onnx.ModelProto, names: list[str]) -> dict:
            r = runner.run(m, feeds, outputs=names, backend="ort")
            assert r.ok, r.error
            return {k: v.value for k, v in r.outputs.items()}

        inlined = inline_by_running(model, conditions_of)
        assert not [n for n in inlined.model.graph.node if n.op_type == "If"], "every decided If is inlined"
        onnx.checker.check_model(inlined.model)
        a, b = runner.run(model, feeds, backend="ort"), runner.run(inlined.model, feeds, backend="ort")
        np.testing.assert_array_equal(a.value("y"), b.value("y"), err_msg=f"s={s}: the inlined copy computes y differently")
        taken = inlined.taken  # c = s > 0 decides the outer If, d = s < 0 the one inside its then branch
        assert taken["outer_if"] == ("then_branch" if s > 0 else "else_branch"), taken
        if s > 0:
            assert taken["inner_if"] == "else_branch" and inlined.scope["te_op"] == \
                "If 'outer_if' then_branch > If 'inner_if' else_branch", inlined.scope


def _plant_in_body(tmp_path: Path) -> tuple[Path, str]:
    """The VAD with a weight scaled by 1.05 inside both branches of the If around its LSTM
    (a Mul before the Unsqueeze that feeds the LSTM its input weights)."""
    model = onnx.load(VAD16)
    outer = next(n for n in model.graph.node if n.op_type == "If" and any(
        x.op_type == "LSTM" for a in n.attribute if a.type == onnx.AttributeProto.GRAPH for x in a.g.node))
    for attr in outer.attribute:
        g = attr.g
        lstm = next(x for x in g.node if x.op_type == "LSTM")
        feed = next(x for x in g.node if x.output[0] == lstm.input[1])
        src = feed.input[0]
        k = h.make_node("Constant", [], [src + "_k"], value=numpy_helper.from_array(np.array(1.05, np.float32)))
        mul = h.make_node("Mul", [src, src + "_k"], [src + "_scaled"], name=src + "_scaled")
        feed.input[0] = src + "_scaled"
        at = list(g.node).index(feed)
        g.node.insert(at, mul)
        g.node.insert(at, k)
    path = tmp_path / "vad_body.onnx"
    onnx.save(model, path)
    return path, outer.name


def test_a_change_inside_an_if_body_is_located_inside_the_body(tmp_path: Path, runner: Runner) -> None:
    bad, outer = _plant_in_body(tmp_path)
    c = compare_runs(RunSpec(VAD16), RunSpec(bad), runner=runner)
    fd = c.first_divergence
    assert c.verdict == "differ" and fd is not None, c.summary()
    assert fd.scope and repr(outer) in fd.scope and fd.op_type != "If", \
        f"the first divergence must be a node inside {outer!r}, got {fd.node!r} ({fd.op_type}) in {fd.scope!r}"
    assert any("inlined" in n for n in c.notes), c.notes
    # and reduce cuts inside the body: the culprit alone, a node of the If's branch
    result = reduce_model(onnx.load(VAD16), ModelDiffCheck(bad), runner=runner)
    assert len(result.nodes) == 1 and repr(outer) in result.scopes.get(result.nodes[0], ""), \
        f"reduced to {result.nodes} with scopes {result.scopes}"
