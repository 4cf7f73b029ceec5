"""Our errors are onnx's (or onnxruntime's) errors: no false alarms, no silent misses.

* ``check --full`` reports an *error* only where ``onnx.checker.check_model(full_check=True)``
  rejects the model or onnxruntime refuses to load it (warnings may be stricter).
* The live checks catch, by themselves, kinds of errors the full checker catches: axis
  attributes out of range for the input's rank, declared dims that are not valid sizes.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from editor.cli import main as cli_main
from editor.document import Document
from editor.validation import Validator, full_check
from tests.conftest import CORPUS, corpus_walk


def _load(path: Path) -> onnx.ModelProto:
    return onnx.load(str(path), load_external_data=False)


def _checker_accepts(model: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception:  # noqa: BLE001 - any rejection
        return False
    return True


def _onnxruntime_loads(model: onnx.ModelProto) -> bool:
    import onnxruntime as ort  # a core dependency: its absence is a failure, not a skip
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


def test_resampler_full_check_is_not_a_false_alarm() -> None:
    """A sinc resampler (Add broadcasting [160, 1] + [475] over computed values): onnx's data
    propagation fails on it, onnx.checker (full) passes and onnxruntime runs it."""
    path = CORPUS / "real" / "asr_prep_resample_44_16.onnx"
    model = _load(path)
    assert _checker_accepts(model) and _onnxruntime_loads(model)
    assert [p for p in full_check(model, Document(model)) if p.is_error] == []
    assert cli_main(["check", "--full", str(path)]) == 0


@pytest.mark.timeout(300)
def test_full_check_errors_only_where_onnx_or_onnxruntime_fails(corpus_dir: Path) -> None:
    """Over every corpus model (the fixed sample by default, every model under
    ``--corpus=all``): an error from the live checks or the full check means the checker
    rejects the model or onnxruntime will not load it."""
    false_alarms = []
    for path in corpus_walk():
        model = _load(path)
        doc = Document(model)
        errors = [p for p in Validator(doc, live=False).validate_all() + full_check(model, doc) if p.is_error]
        if not errors or not _checker_accepts(model):
            continue
        if _onnxruntime_loads(model):
            false_alarms.append(f"{path.relative_to(corpus_dir)}: {errors[0].code}: {errors[0].message}")
    assert false_alarms == [], "\n".join(false_alarms[:20])


# -- live checks catch what the full checker catches ------------------------------------

def _x(name: str = "x", elem: int = T.FLOAT, shape=(2, 3)) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, list(shape))


def _axis_case(op: str, attrs: dict, extra: list[tuple[str, int, tuple]] = (), n_out: int = 1) -> onnx.ModelProto:
    """``op`` over a declared rank-2 ``x`` and, for its other inputs, values computed by an
    Identity (undeclared: the op's own inference cannot run live on them)."""
    inputs = [_x()]
    nodes = []
    names = ["x"]
    for name, elem, shape in extra:
        inputs.append(_x(name + "_in", elem, shape))
        nodes.append(h.make_node("Identity", [name + "_in"], [name]))
        names.append(name)
    if op == "Concat":
        nodes.append(h.make_node("Identity", ["x"], ["x2"]))
        names = ["x2", "x"]
    outs = [f"y{k}" for k in range(n_out)]
    nodes.append(h.make_node(op, names, outs, name="subject", **attrs))
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info(o, T.UNDEFINED, None) for o in outs])
    for o in g.output:
        o.type.tensor_type.elem_type = T.FLOAT if op not in ("ArgMax", "ArgMin") else T.INT64
    return h.make_model(g, opset_imports=[h.make_opsetid("", 11)])


I64 = T.INT64
AXIS_CASES = {
    "Concat": _axis_case("Concat", {"axis": 3}),
    "Gather": _axis_case("Gather", {"axis": 2}, [("i", I64, (1,))]),
    "GatherElements": _axis_case("GatherElements", {"axis": -3}, [("i", I64, (2, 3))]),
    "ScatterElements": _axis_case("ScatterElements", {"axis": 2}, [("i", I64, (2, 3)), ("u", T.FLOAT, (2, 3))]),
    "Softmax": _axis_case("Softmax", {"axis": 2}),
    "LogSoftmax": _axis_case("LogSoftmax", {"axis": -3}),
    "Hardmax": _axis_case("Hardmax", {"axis": 5}),
    "Flatten": _axis_case("Flatten", {"axis": 3}),
    "Split": _axis_case("Split", {"axis": 2}, n_out=2),
    "Squeeze": _axis_case("Squeeze", {"axes": [2]}),
    "Unsqueeze": _axis_case("Unsqueeze", {"axes": [3]}),
    "ArgMax": _axis_case("ArgMax", {"axis": 2}),
    "ArgMin": _axis_case("ArgMin", {"axis": -3}),
    "TopK": _axis_case("TopK", {"axis": 2}, [("k", I64, (1,))], n_out=2),
    "Transpose": _axis_case("Transpose", {"perm": [0, 2]}),
    "ReduceSum": _axis_case("ReduceSum", {"axes": [2]}),
    "ReduceMean": _axis_case("ReduceMean", {"axes": [-3]}),
    "ReduceMax": _axis_case("ReduceMax", {"axes": [0, 2]}),
}


@pytest.mark.parametrize("op", sorted(AXIS_CASES))
def test_axis_out_of_range_for_the_input_rank_is_a_live_error(op: str) -> None:
    model = AXIS_CASES[op]
    assert not _checker_accepts(model), "onnx accepts it: the rule must not be an error"
    doc = Document(model)
    problems = Validator(doc, live=False).validate_all()
    subject = next(nid for _, nid, n in doc.index.iter_nodes() if n.name == "subject")
    assert any(p.is_error and p.node_id == subject and p.code == "attr-range" for p in problems), problems
    # the same node in range is fine
    fixed = onnx.ModelProto.FromString(model.SerializeToString())
    for a in fixed.graph.node[-1].attribute:
        if a.name in ("axis",):
            a.i = 0
        elif a.name == "axes":
            a.ints[:] = [0]
        elif a.name == "perm":
            a.ints[:] = [1, 0]
    assert not [p for p in Validator(Document(fixed), live=False).validate_all() if p.code == "attr-range"]


# -- declared dims ----------------------------------------------------------------------

def _dims_of(vi: onnx.ValueInfoProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in vi.type.tensor_type.shape.dim]


def test_a_batch_dim_the_model_fixes_is_a_warning_in_check(tmp_path: Path, capsys) -> None:
    """Making the batch dynamic on a CNN whose Reshape hard-codes 1: onnx accepts the model,
    but its output is never [batch, ...]: ``check`` (and --full) say so."""
    from editor.commands import SetValueType

    doc = Document.open(CORPUS / "onnx-backend" / "light" / "light_bvlc_alexnet.onnx")
    live = Validator(doc)  # what the Problems panel shows, updated after each edit
    assert live.validate_all() == []
    main = doc.index.main
    for vi in (doc.model.graph.input[0], doc.model.graph.output[0]):
        doc.execute(SetValueType(main, vi.name, vi.type.tensor_type.elem_type, ["batch", *_dims_of(vi)[1:]]))
    out_name = doc.model.graph.output[0].name
    (p,) = [p for p in live.problems if p.code == "declared-dim"]
    assert p.severity == "warning" and p.value == out_name and "'batch'" in p.message
    assert live.problems == Validator(doc, live=False).validate_all()
    doc.undo()
    assert [p for p in live.problems if p.code == "declared-dim"] == []
    doc.redo()
    path = tmp_path / "dynamic.onnx"
    onnx.save(doc.model, path)
    assert _checker_accepts(onnx.load(str(path)))
    for flags in ([], ["--full"]):
        assert cli_main(["check", *flags, str(path)]) == 0  # a warning, not an error
        text = capsys.readouterr().out
        line = next(ln for ln in text.splitlines() if "[declared-dim]" in ln)
        assert line.startswith("warning") and repr(out_name) in line and "'batch'" in line


def test_a_negative_declared_dim_is_a_live_warning() -> None:
    """ppocr's classifier declares its input's batch as dim_value -1 (onnx accepts that on a
    graph input); a value declared -1 where the op computes a size is refused by onnx's
    checker, run by onnxruntime: a warning."""
    from editor.commands import SetValueType

    doc = Document.open(CORPUS / "real" / "ppocr_mobile_v2_cls.onnx")
    live = Validator(doc)
    live.validate_all()
    (p,) = [p for p in live.problems if p.code == "declared-dim" and p.value == doc.model.graph.input[0].name]
    assert p.severity == "warning" and "-1" in p.message
    # -1 written as a fixed size on the output of a node whose inputs are declared (the
    # editor refuses to write it; a file from elsewhere can hold it)
    model = onnx.load(str(CORPUS / "onnx-backend" / "node" / "test_relu" / "model.onnx"))
    assert Validator(Document(model), live=False).validate_all() == []
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = -1
    assert not _checker_accepts(model)
    # onnxruntime runs it (it keeps the computed size): a warning that says which refuses
    # and which accepts, not an error (issue 32: errors where both runtimes refuse)
    problems = Validator(Document(model), live=False).validate_all()
    assert {(p.severity, p.code) for p in problems} == {("warning", "declared-dim")}, problems
    assert any("onnxruntime accepts" in p.message for p in problems), problems
