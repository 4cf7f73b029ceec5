"""``onnx-studio optimize``, ``set-dim`` and ``convert --opset``; the run-based safety check
(child process) finds a changed output and proves an unchanged one; dims made symbolic
really follow."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from editor.cli import main
from editor.passes.dims import DimSpec, plan_dims
from editor.passes.safety import check_equivalence
from editor.runtime import Runner
from tests.conftest import CORPUS

REAL = CORPUS / "real"
rng = np.random.default_rng(1)


@pytest.fixture(scope="module")
def runner():  # noqa: ANN201
    r = Runner()
    yield r
    r.close()


def test_optimize_prints_the_table_checks_and_writes(tmp_path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "o.onnx"
    code = main(["optimize", str(REAL / "ppocr_mobile_v2_cls.onnx"), "-o", str(out), "--check"])
    text = capsys.readouterr().out
    assert code == 0 and out.is_file()
    assert "op type" in text and "total" in text and "size:" in text
    assert "check: outputs equal" in text
    before = len(onnx.load(REAL / "ppocr_mobile_v2_cls.onnx").graph.node)
    assert len(onnx.load(out).graph.node) < before


def test_optimize_with_named_passes_and_bad_arguments(tmp_path, capsys) -> None:  # noqa: ANN001
    src = str(REAL / "magika_standard_v3_3.onnx")
    out = tmp_path / "o.onnx"
    assert main(["optimize", src, "-o", str(out), "--passes", "fuse-matmul-add-into-gemm"]) == 0
    assert any(n.op_type == "Gemm" for n in onnx.load(out).graph.node)
    capsys.readouterr()
    for bad in (["--passes", "no-such-pass"], ["--input-shape", "nope:1,2"], ["--input-shape", "x"],
                ["--size-limit", "-1"]):
        code = main(["optimize", src, "-o", str(tmp_path / "bad.onnx"), *bad])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: ") and "Traceback" not in err, bad
    assert not (tmp_path / "bad.onnx").exists()
    assert main(["optimize", "--list"]) == 0
    assert "fold-constants" in capsys.readouterr().out


def test_safety_check_finds_a_changed_output(runner) -> None:  # noqa: ANN001
    model = onnx.load(REAL / "ppocr_mobile_v2_cls.onnx")
    same = check_equivalence(model, model, runner=runner)
    assert same.ok and same.compared and same.max_abs == 0
    broken = onnx.ModelProto()
    broken.CopyFrom(model)
    conv = next(n for n in broken.graph.node if n.op_type == "Conv")
    conv.attribute.append(helper.make_attribute("dilations", [2, 2]))
    for a in conv.attribute:
        if a.name == "pads":
            a.ints[:] = [2] * len(a.ints)
    result = check_equivalence(model, broken, runner=runner)
    assert result.status == "different" and result.problems


def pinned_model(extra_pin: bool = False) -> onnx.ModelProto:
    """A batch-1 model whose Reshape pins the batch: x[1,8,4] -> [1,32] -> MatMul."""
    w = numpy_helper.from_array(rng.normal(size=(32, 5)).astype(np.float32), "W")
    shape = numpy_helper.from_array(np.array([1, 32], dtype=np.int64), "shape")
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["flat"]), helper.make_node("MatMul", ["flat", "W"], ["mm"])]
    inits = [w, shape]
    if extra_pin:
        cshape = numpy_helper.from_array(np.array([1, 5], dtype=np.int64), "cshape")
        inits.append(cshape)
        nodes += [helper.make_node("ConstantOfShape", ["cshape"], ["bias"],
                                   value=numpy_helper.from_array(np.array([0.5], np.float32))),
                  helper.make_node("Add", ["mm", "bias"], ["y"])]
    else:
        nodes[-1].output[0] = "y"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [1, 8, 4])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1, 5])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_making_the_batch_symbolic_rewrites_the_reshape_and_follows(tmp_path, capsys) -> None:  # noqa: ANN001
    src, out = tmp_path / "pinned.onnx", tmp_path / "dyn.onnx"
    onnx.save(pinned_model(), src)
    assert main(["set-dim", str(src), "-o", str(out), "x:0=N", "y:0=N"]) == 0
    text = capsys.readouterr().out
    assert "Reshape" in text and "check: outputs follow" in text
    import onnxruntime as ort

    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": np.zeros((3, 8, 4), np.float32)})[0].shape == (3, 5)


def test_a_pin_it_cannot_rewrite_is_listed_and_refused(tmp_path, capsys) -> None:  # noqa: ANN001
    plan = plan_dims(pinned_model(extra_pin=True), [DimSpec("x", 0, "N"), DimSpec("y", 0, "N")])
    assert plan.rewritten and any("ConstantOfShape" in u for u in plan.unresolved)
    src, out = tmp_path / "pinned.onnx", tmp_path / "dyn.onnx"
    onnx.save(pinned_model(extra_pin=True), src)
    assert main(["set-dim", str(src), "-o", str(out), "x:0=N", "y:0=N"]) == 1
    assert "ConstantOfShape" in capsys.readouterr().out and not out.exists()
    assert main(["set-dim", str(src), "-o", str(out), "x:0=N", "bad-spec"]) == 2


def test_convert_opset(tmp_path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "c.onnx"
    assert main(["convert", str(REAL / "ppocr_mobile_v2_cls.onnx"), str(out), "--opset", "17"]) == 0
    assert {o.domain: o.version for o in onnx.load(out).opset_import}[""] == 17
    assert main(["convert", str(REAL / "ppocr_mobile_v2_cls.onnx"), str(tmp_path / "x.onnx"), "--opset", "999"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_shufflenet_batch_becomes_dynamic_through_every_reshape() -> None:
    """A real batch-1 export: 33 Reshapes (channel shuffles) pin the batch; all follow."""
    import onnxruntime as ort

    model = onnx.load(CORPUS / "onnx-backend" / "light" / "light_shufflenet.onnx")
    plan = plan_dims(model, [DimSpec("gpu_0/data_0", 0, "N"), DimSpec("gpu_0/softmax_1", 0, "N")])
    assert not plan.unresolved and len(plan.rewritten) >= 30
    onnx.checker.check_model(plan.model)
    sess = ort.InferenceSession(plan.model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = rng.normal(size=(3, 3, 224, 224)).astype(np.float32)
    (y,) = sess.run(None, {"gpu_0/data_0": x})
    assert y.shape[0] == 3
    before = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(y[1:2], before.run(None, {"gpu_0/data_0": x[1:2]})[0], rtol=1e-5, atol=1e-6)


def test_check_each_proves_every_pass_and_stops_at_a_bad_one(runner, monkeypatch) -> None:  # noqa: ANN001
    from editor.passes.manager import REGISTRY, OptimizeOptions, PassInfo
    from editor.passes.safety import optimize_checking_each_pass

    model = onnx.load(REAL / "ppocr_mobile_v2_cls.onnx")
    out, checks = optimize_checking_each_pass(model, OptimizeOptions(), runner=runner)
    assert len(checks) >= 5 and all(c.result.ok for c in checks)
    assert {"fuse-bn-into-conv", "constant-to-initializer"} <= {c.name for c in checks}
    assert len(out.graph.node) < len(model.graph.node)

    def widen_first_relu(view, ctx):  # noqa: ANN001, ANN202 - a wrong "optimization"
        relu = next((n for n in view.graph.node if n.op_type == "Relu"), None)
        if relu is None or view.parent is not None:
            return 0
        relu.op_type = "Abs"
        return 1

    monkeypatch.setitem(REGISTRY, "break-relu", PassInfo("break-relu", "wrong on purpose", "manual", widen_first_relu))
    kept, checks = optimize_checking_each_pass(model, OptimizeOptions(passes=["eliminate-identity", "break-relu"]),
                                               runner=runner)
    assert checks[-1].name == "break-relu" and checks[-1].result.status == "different"
    assert not any(n.op_type == "Abs" for n in kept.graph.node)
