"""Live validation: each kind of problem, incremental updates, the full check in the background."""

from __future__ import annotations

import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from editor.commands import (
    AddGraphValue,
    AddInitializer,
    AddNode,
    AddNodePort,
    DeleteNodes,
    RemoveAttribute,
    RemoveGraphValue,
    RenameValue,
    SetAttribute,
    SetNodeField,
    SetNodeInput,
    SetOpsetImport,
    SetValueType,
)
from editor.document import CompositeCommand, Document, FunctionCommand
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, node_target, scope_target
from editor.validation import BackgroundChecker, Problem, Validator, full_check
from editor.validation.full import classify, raw_full_check, to_problems


def small_model() -> onnx.ModelProto:
    """x -> Relu r1 -> a -> Transpose t1 -> b; If if1 (cond c) whose branches read b and a."""
    then_g = h.make_graph([h.make_node("Identity", ["b"], ["e"], name="inner")], "then", [],
                          [h.make_tensor_value_info("e", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Identity", ["a"], ["f"], name="inner2")], "else", [],
                          [h.make_tensor_value_info("f", T.FLOAT, None)])
    nodes = [
        h.make_node("Relu", ["x"], ["a"], name="r1"),
        h.make_node("Transpose", ["a"], ["b"], name="t1", perm=[1, 0]),
        h.make_node("If", ["c"], ["d"], name="if1", then_branch=then_g, else_branch=else_g),
    ]
    g = h.make_graph(
        nodes, "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3]), h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("d", T.FLOAT, [None, None])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def node_id(doc: Document, name: str) -> int:
    (nid,) = doc.find_nodes(name)
    return nid


def subjects(problems: list[Problem], severity: str | None = "error") -> set[tuple]:
    return {p.subject for p in problems if severity is None or p.severity == severity}


def assert_exact(v: Validator) -> None:
    """Incremental problems == a fresh full pass on the same document."""
    assert v.fallbacks == 0
    fresh = Validator(v.doc, live=False).validate_all()
    assert sorted(map(repr, v.problems)) == sorted(map(repr, fresh))


@pytest.fixture
def live() -> Validator:
    doc = Document(small_model())
    v = Validator(doc)
    assert v.validate_all() == []
    onnx.checker.check_model(doc.model, full_check=True)
    return v


def raw_set_output(nid: int, k: int, name: str) -> FunctionCommand:
    """An edit the commands refuse (a second producer), made with a primitive op."""
    return FunctionCommand("force output", lambda doc, tx: tx.apply(ReplaceItem(node_target(nid), "output", k, name)))


BREAKAGES = [
    # (id, make command(doc), expected code, node name or None, value)
    ("unknown-op", lambda d: SetNodeField(node_id(d, "r1"), "op_type", "Relux"), "unknown-op", "r1", None),
    ("unknown-domain", lambda d: SetNodeField(node_id(d, "r1"), "domain", "com.nowhere"), "unknown-domain", "r1", None),
    ("attr-type", lambda d: SetAttribute(node_id(d, "t1"), "perm", 1.0, onnx.AttributeProto.FLOAT, check_schema=False),
     "attr-type", "t1", "perm"),
    ("attr-unknown", lambda d: SetAttribute(node_id(d, "t1"), "foo", 1, check_schema=False), "attr-unknown", "t1", "foo"),
    ("attr-missing", lambda d: AddNode(d.index.main, "Cast", name="cast", inputs=["x"], outputs=["xc"]),
     "attr-missing", "cast", "to"),
    ("input-count", lambda d: AddNodePort(node_id(d, "r1"), "input", "x"), "input-count", "r1", None),
    ("missing-input", lambda d: SetNodeInput(node_id(d, "t1"), 0, ""), "missing-input", "t1", None),
    ("undefined-value", lambda d: SetNodeInput(node_id(d, "t1"), 0, "nope"), "undefined-value", "t1", "nope"),
    ("graph-order", lambda d: AddNode(d.index.main, "Relu", name="early", inputs=["b"], outputs=["g"], position=0),
     "graph-order", "early", "b"),
    ("ssa", lambda d: raw_set_output(node_id(d, "t1"), 0, "a"), "ssa", "t1", "a"),
    ("ssa-graph-input", lambda d: raw_set_output(node_id(d, "t1"), 0, "x"), "ssa", "t1", "x"),
    ("nested-order", lambda d: SetNodeInput(node_id(d, "inner"), 0, "d"), "graph-order", "inner", "d"),
    ("nested-undefined", lambda d: SetNodeInput(node_id(d, "inner2"), 0, "zzz"), "undefined-value", "inner2", "zzz"),
    ("nested-shadow", lambda d: raw_set_output(node_id(d, "inner"), 0, "a"), "ssa", "inner", "a"),
    ("deprecated", lambda d: AddNode(d.index.main, "Upsample", name="up", inputs=["x", "x"], outputs=["u"]),
     "deprecated-op", "up", None),
    # Gelu exists from opset 20; the model imports 17
    ("op-too-new", lambda d: SetNodeField(node_id(d, "r1"), "op_type", "Gelu"), "unknown-op", "r1", None),
    ("type-mismatch", lambda d: SetValueType(d.index.main, "a", T.INT64, [2, 3]), "type-mismatch", "r1", "a"),
    ("undefined-output", lambda d: DeleteNodes([node_id(d, "if1")]), "undefined-output", None, "d"),
    ("missing-type", lambda d: SetValueType(d.index.main, "d", T.FLOAT, None), "missing-type", None, "d"),
]


@pytest.mark.parametrize("case", BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_each_breakage_is_reported_live_and_undo_clears_it(live: Validator, case: tuple) -> None:
    _, make, code, node_name, value = case
    doc = live.doc
    seen: list[tuple[list, list]] = []
    live.problems_changed.connect(lambda added, removed: seen.append((added, removed)))
    doc.execute(make(doc))
    nid = node_id(doc, node_name) if node_name else None
    assert (code, nid, value) in subjects(live.problems), live.problems
    if nid is not None:
        assert code in {p.code for p in live.problems_for_node(nid)}
    assert seen and any(p.code == code for p in seen[-1][0])
    assert_exact(live)
    # the checker agrees something is wrong
    with pytest.raises((onnx.checker.ValidationError, onnx.shape_inference.InferenceError)):
        onnx.checker.check_model(doc.model, full_check=True)
    doc.undo()
    assert live.problems == []
    assert any(p.code == code for p in seen[-1][1])
    doc.redo()
    nid = node_id(doc, node_name) if node_name else None  # NOTE: redo of AddNode gives a new id
    assert (code, nid, value) in subjects(live.problems)
    assert_exact(live)


def test_problem_records_quote_names_and_paths(live: Validator) -> None:
    doc = live.doc
    doc.execute(SetNodeInput(node_id(doc, "inner"), 0, "d"))
    (p,) = live.problems
    assert p.severity == "error" and p.code == "graph-order"
    assert "'inner'" in p.message and "'d'" in p.message and "\n" not in p.message
    assert p.graph == "main/if1.then_branch"
    assert p.scope_id == doc.scope_of(node_id(doc, "inner")).id
    # renaming the owner renames the path of problems inside its bodies
    doc.execute(SetNodeField(node_id(doc, "if1"), "name", "branch"))
    (p,) = live.problems
    assert p.graph == "main/branch.then_branch"
    assert_exact(live)


def test_renaming_an_owner_checks_its_bodies_again_only_where_they_read_it(live: Validator, monkeypatch) -> None:
    """A rename leaves an If's bodies as they are: the nodes inside are not checked again
    (silero VAD's If holds 224 of its 227 nodes: each rename of it re-checked them all)."""
    doc = live.doc
    checked: list[int] = []
    real = Validator._check_node
    monkeypatch.setattr(Validator, "_check_node", lambda self, nid: checked.append(nid) or real(self, nid))
    doc.execute(SetNodeField(node_id(doc, "if1"), "name", "branch"))
    assert node_id(doc, "inner") not in checked and node_id(doc, "inner2") not in checked
    assert_exact(live)
    # an edit of its attributes (a body replaced) re-reads them
    checked.clear()
    body = h.make_graph([h.make_node("Identity", ["a"], ["e"], name="inner3")], "then", [],
                        [h.make_tensor_value_info("e", T.FLOAT, None)])
    doc.execute(SetAttribute(node_id(doc, "branch"), "then_branch", body))
    assert node_id(doc, "inner3") in checked
    assert_exact(live)


def test_deleting_a_node_clears_its_problems_and_rechecks_its_consumers(live: Validator) -> None:
    doc = live.doc
    r1, t1 = node_id(doc, "r1"), node_id(doc, "t1")
    doc.execute(SetNodeField(r1, "op_type", "Relux"))
    assert live.problems_for_node(r1)
    doc.execute(DeleteNodes([r1]))
    assert live.problems_for_node(r1) == []
    # t1 and the else branch read 'a', which nothing defines now
    assert ("undefined-value", t1, "a") in subjects(live.problems)
    assert ("undefined-value", node_id(doc, "inner2"), "a") in subjects(live.problems)
    assert_exact(live)
    # a new producer of 'a' fixes the consumers
    doc.execute(AddNode(doc.index.main, "Relu", name="r1b", inputs=["x"], outputs=["a"], position=0))
    assert live.problems == []
    assert_exact(live)


def test_reconnecting_delete_and_rename_value_stay_clean(live: Validator) -> None:
    doc = live.doc
    doc.execute(DeleteNodes([node_id(doc, "t1")], reconnect=True))
    assert live.problems == []
    doc.execute(RenameValue(doc.index.main, "a", "a_renamed"))
    assert live.problems == []
    assert_exact(live)
    doc.undo_all()
    assert live.problems == []


def test_graph_level_problems_follow_inputs_outputs_and_initializers(live: Validator) -> None:
    doc = live.doc
    main = doc.index.main
    doc.execute(AddInitializer(main, "w", np.ones((2, 3), np.float32)))
    assert live.problems == []
    # an initializer named like a node output: SSA on the producer
    doc.execute(RenameValue(main, "w", "w2"))
    doc.execute(FunctionCommand("dup init", lambda d, tx: tx.apply(
        InsertItem(scope_target(main), "initializer", 0, h.make_tensor("a", T.FLOAT, [1], [1.0])))))
    assert ("ssa", node_id(doc, "r1"), "a") in subjects(live.problems)
    assert_exact(live)
    doc.undo()
    assert live.problems == []
    doc.execute(RemoveGraphValue(main, "output", "d"))
    assert live.problems == []
    doc.execute(AddGraphValue(main, "output", "b", T.FLOAT, [3, 2]))
    assert live.problems == []
    doc.execute(SetNodeField(node_id(doc, "t1"), "name", "t1_renamed"))
    doc.execute(DeleteNodes([node_id(doc, "t1_renamed")]))
    assert ("undefined-output", None, "b") in subjects(live.problems)
    assert_exact(live)


def test_declared_types_are_checked_against_inference(live: Validator) -> None:
    doc = live.doc
    main = doc.index.main
    doc.execute(SetValueType(main, "a", T.FLOAT, [2, 3]))
    doc.execute(SetValueType(main, "b", T.FLOAT, [3, 2]))
    assert live.problems == []
    doc.execute(SetValueType(main, "b", T.FLOAT, [2, 3]))
    # a shape the op contradicts: onnx.checker refuses the model, onnxruntime runs it (it
    # keeps the computed shape), so it is a warning that says so, not an error (issue 32)
    (p,) = live.problems
    assert (p.severity, p.code, p.node_id, p.value) == ("warning", "declared-dim", node_id(doc, "t1"), "b"), p
    assert "float32[2,3]" in p.message and "float32[3,2]" in p.message and "onnxruntime accepts" in p.message
    # changing the producer's attribute fixes it
    doc.execute(SetAttribute(node_id(doc, "t1"), "perm", [0, 1]))
    assert live.problems == []
    # an element type the op contradicts: onnxruntime refuses it too, an error
    doc.execute(SetValueType(main, "b", T.INT64, [2, 3]))
    mine = [p for p in live.problems if p.node_id == node_id(doc, "t1")]
    assert [(p.severity, p.code, p.value) for p in mine] == [("error", "type-mismatch", "b")], mine
    doc.undo()
    # an input type the op does not accept
    doc.execute(SetValueType(main, "x", T.INT32, [2, 3]))
    assert {p.code for p in live.problems} == {"type-mismatch"}
    assert_exact(live)
    # a contradictory declaration: perm [0, 1] no longer fits the rank of its input
    doc.undo()
    doc.execute(SetValueType(main, "a", T.FLOAT, [2]))  # Transpose perm [0, 1] of a rank-1 value
    assert subjects(live.problems) == {("attr-range", node_id(doc, "t1"), None)}
    # and the rank of 'a' that Relu contradicts, which onnxruntime accepts: a warning
    assert subjects(live.problems, "warning") == {("declared-dim", node_id(doc, "r1"), "a")}
    assert_exact(live)


def test_custom_domains_are_notes_not_errors(live: Validator) -> None:
    doc = live.doc
    doc.execute(SetOpsetImport("com.example", 1))
    doc.execute(AddNode(doc.index.main, "Fancy", domain="com.example", name="fancy", inputs=["x"], outputs=["y"]))
    (p,) = live.problems
    assert (p.severity, p.code) == ("info", "custom-op")
    onnx.checker.check_model(doc.model)  # the checker accepts unknown custom domains too
    doc.execute(SetNodeField(node_id(doc, "fancy"), "domain", "com.other"))
    assert ("unknown-domain", node_id(doc, "fancy"), None) in subjects(live.problems)
    doc.execute(SetOpsetImport("com.other", 2))  # a full pass: now imported
    assert {p.code for p in live.problems} == {"custom-op"}
    assert_exact(live)


def test_opset_change_revalidates_everything(live: Validator) -> None:
    doc = live.doc
    doc.execute(SetOpsetImport("", 9))  # Transpose/If/Relu exist at 9, Relu-14 semantics aside
    assert_exact(live)
    doc.execute(SetOpsetImport("", 1))  # If appeared at opset 1, Identity 1, Relu 1: still known
    assert_exact(live)
    doc.undo_all()
    assert live.problems == []


def test_model_level_problems() -> None:
    m = small_model()
    m.metadata_props.add(key="k", value="1")
    m.metadata_props.add(key="k", value="2")
    m.ir_version = 0
    codes = {p.code for p in Validator(Document(m), live=False).validate_all()}
    assert {"metadata", "ir-version"} <= codes


def test_model_local_functions_are_checked_as_functions() -> None:
    text = """
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    main (float[2] x) => (float[2] y) {
        y = local.Double(x)
    }
    <domain: "local", opset_import: ["" : 17]>
    Double (a) => (b) {
        b = Add(a, a)
    }
    """
    m = onnx.parser.parse_model(text)
    onnx.checker.check_model(m, full_check=True)
    doc = Document(m)
    v = Validator(doc)
    assert v.validate_all() == []
    fn_scope = doc.index.function_scopes[0]
    (add,) = doc.scope(fn_scope).node_ids
    doc.execute(SetNodeInput(add, 1, "nope"))
    assert ("undefined-value", add, "nope") in subjects(v.problems)
    assert v.problems[0].graph == "fn:local.Double"
    doc.undo()
    (call,) = doc.main.node_ids
    doc.execute(AddNodePort(call, "input", "x"))  # the function takes one input
    assert {(p.severity, p.code) for p in v.problems} == {("warning", "input-count")}
    assert_exact(v)


def test_problems_changed_reports_added_and_removed(live: Validator) -> None:
    doc = live.doc
    events: list[tuple[list[Problem], list[Problem]]] = []
    live.problems_changed.connect(lambda a, r: events.append((a, r)))
    doc.execute(SetNodeField(node_id(doc, "r1"), "name", "relu"))  # no problem: no event
    assert events == []
    doc.execute(RemoveAttribute(node_id(doc, "t1"), "perm"))  # perm is optional: still fine
    assert events == []
    doc.execute(SetAttribute(node_id(doc, "t1"), "bogus", 3, check_schema=False))
    (added, removed), = events
    assert [p.code for p in added] == ["attr-unknown"] and removed == []
    doc.undo()
    assert [p.code for p in events[-1][1]] == ["attr-unknown"] and events[-1][0] == []


def test_validator_close_stops_following(live: Validator) -> None:
    live.close()
    live.doc.execute(SetNodeField(node_id(live.doc, "r1"), "op_type", "Relux"))
    assert live.problems == []


# -- the full check ---------------------------------------------------------------------

def test_full_check_maps_checker_messages_to_codes_and_nodes() -> None:
    m = small_model()
    m.graph.node[1].attribute.append(h.make_attribute("foo", 1))
    doc = Document(m)
    problems = full_check(m, doc)
    assert [(p.code, p.node_id, p.source) for p in problems] == [("attr-unknown", node_id(doc, "t1"), "full")]
    assert classify("Nodes in a graph must be topologically sorted, however input 'q'") == "graph-order"
    assert classify("[TypeInferenceError] Inferred elem type differs from existing elem type") == "type-mismatch"
    assert classify("something new") == "checker"


def test_full_check_accepts_paths_and_bytes(tmp_path) -> None:
    m = small_model()
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    assert raw_full_check(path) == []
    m.graph.node[0].op_type = "Relux"
    assert [r[0] for r in raw_full_check(m.SerializeToString())] == ["unknown-op"]
    # strict shape inference with data propagation finds what the checker alone does not
    m = small_model()
    m.graph.value_info.append(h.make_tensor_value_info("b", T.INT64, [3, 2]))
    onnx.checker.check_model(m)
    assert "type-mismatch" in {p.code for p in to_problems(raw_full_check(m))}
    # a shape alone: onnxruntime accepts it, so the checker's refusal is a warning saying so
    m = small_model()
    m.graph.value_info.append(h.make_tensor_value_info("b", T.FLOAT, [2, 3]))
    found = {(p.severity, p.code) for p in to_problems(raw_full_check(m))}
    assert found == {("warning", "declared-dim")}, found


def test_background_checker_merges_and_drops_stale_results(live: Validator) -> None:
    doc = live.doc
    checker = BackgroundChecker(live, processes=False)
    try:
        doc.execute(SetAttribute(node_id(doc, "t1"), "foo", 1, check_schema=False))
        done = threading.Event()
        checker.finished.connect(lambda problems: done.set())
        checker.submit()
        checker.wait(60)
        assert done.is_set()
        full = live.full_problems
        assert [p.code for p in full] == ["attr-unknown"]
        assert {p.source for p in live.problems_for_node(node_id(doc, "t1"))} == {"live", "full"}
        # an edit makes the background results stale: they go at once
        doc.undo()
        assert live.full_problems == [] and live.problems == []
        # a result for a snapshot the document moved past is dropped
        gate = threading.Event()
        slow = BackgroundChecker(live, processes=False)
        slow._executor.submit(gate.wait)  # noqa: SLF001 - hold the worker
        slow.submit()
        doc.execute(SetNodeField(node_id(doc, "r1"), "op_type", "Relux"))
        gate.set()
        slow.wait(60)
        assert slow.last_dropped and live.full_problems == []
        slow.shutdown()
    finally:
        checker.shutdown()


def test_background_checker_in_a_child_process(live: Validator, tmp_path) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    doc = live.doc
    doc.execute(SetNodeField(node_id(doc, "r1"), "op_type", "Relux"))
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    checker = BackgroundChecker(live, executor=pool)
    try:
        checker.submit()
        checker.wait(120)
        assert [(p.code, p.node_id) for p in live.full_problems] == [("unknown-op", node_id(doc, "r1"))]
        # external data is found next to the model, whatever the editor's working directory
        w = onnx.numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
        g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 64])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 64])], [w])
        path = tmp_path / "ext.onnx"
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path, save_as_external_data=True,
                  location="ext.data", size_threshold=0)
        ext_doc = Document(onnx.load(path, load_external_data=False), path=path)
        assert [r[0] for r in raw_full_check(ext_doc.serialize())] == ["checker"]  # bytes alone: data not found
        ext = Validator(ext_doc)
        ext.validate_all()
        ext_checker = BackgroundChecker(ext, executor=pool)
        ext_checker.submit()
        ext_checker.wait(120)
        assert not ext_checker.last_dropped and ext.full_problems == []
    finally:
        checker.shutdown()
        pool.shutdown()


def test_one_command_that_moves_a_node_or_edits_a_body_then_drops_it(live: Validator) -> None:
    doc = live.doc
    main = doc.index.main
    t1 = node_id(doc, "t1")

    def move_to_front(d: Document, tx) -> None:  # noqa: ANN001
        inv = tx.apply(RemoveItem(scope_target(main), "node", d.scope(main).position(t1)))
        tx.apply(InsertItem(scope_target(main), "node", 0, inv.value, inv.ids))

    doc.execute(FunctionCommand("move t1 first", move_to_front))
    assert subjects(live.problems) == {("graph-order", t1, "a")}
    assert_exact(live)
    doc.undo()
    assert live.problems == []
    inner, if1 = node_id(doc, "inner"), node_id(doc, "if1")
    doc.execute(CompositeCommand("edit then drop", [SetNodeInput(inner, 0, "zzz"), DeleteNodes([if1])]))
    assert subjects(live.problems) == {("undefined-output", None, "d")}
    assert_exact(live)
    doc.undo()
    assert live.problems == []
    assert_exact(live)


def test_a_failing_check_is_a_problem_not_a_broken_edit(live: Validator, monkeypatch) -> None:
    import editor.validation.validator as vmod

    doc = live.doc
    r1 = node_id(doc, "r1")
    real = vmod.check_node

    def flaky(v: Validator, nid: int) -> list[Problem]:
        if nid == r1:
            raise RuntimeError("boom")
        return real(v, nid)

    monkeypatch.setattr(vmod, "check_node", flaky)
    doc.execute(SetNodeField(r1, "name", "relu"))  # the edit goes through
    (p,) = live.problems
    assert (p.severity, p.code, p.node_id) == ("warning", "internal", r1) and "boom" in p.message
    assert live.fallbacks == 0


def test_inference_functions_that_raise_plain_errors(corpus_dir) -> None:
    doc = Document(onnx.load(str(corpus_dir / "real" / "ort_logreg_iris.onnx")))
    v = Validator(doc)
    assert v.validate_all() == []
    (zipmap,) = doc.find_nodes("ZipMap")
    doc.execute(SetNodeInput(zipmap, 0, "float_input"))  # a declared input: inference runs
    doc.execute(RemoveAttribute(zipmap, "classlabels_int64s"))  # its inference raises ValueError
    assert ("shape-inference", zipmap, None) in subjects(v.problems)
    assert_exact(v)


def test_first_pass_in_steps_ends_where_a_full_pass_would() -> None:
    """A big model's tab runs the first pass in steps after its first picture: between steps
    nothing is reported, an edit between steps starts the pass again, and the end is what
    validate_all finds (then edits are checked live, as after validate_all)."""
    doc = Document(small_model())
    doc.execute(SetNodeField(node_id(doc, "r1"), "op_type", "Relux"))
    v = Validator(doc)
    steps = v.first_pass_steps(nodes_per_step=1)
    next(steps)
    next(steps)
    assert not v.ready and v.problems == [], f"nothing is reported before the pass ends, saw {v.problems}"
    doc.execute(SetNodeInput(node_id(doc, "inner2"), 0, "zzz"))  # between steps: the pass starts again
    taken = 2 + sum(1 for _ in steps)
    assert taken > len(doc.index.nodes), f"expected a step per node and a restart, saw {taken} steps"
    assert v.ready and {p.code for p in v.errors} == {"unknown-op", "undefined-value"}, v.problems
    assert_exact(v)
    doc.execute(SetNodeInput(node_id(doc, "t1"), 0, "nope"))  # live from now on
    assert "nope" in {p.value for p in v.errors}, v.problems
    assert_exact(v)
    # a full pass run meanwhile (a save's gate) ends the steps
    other = Validator(doc)
    steps = other.first_pass_steps(nodes_per_step=1)
    next(steps)
    other.validate_all()
    assert list(steps) == [] and other.ready
    assert_exact(other)
