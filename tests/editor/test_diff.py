"""editor.diff: structural diff of two models (matching, reported edits, status maps)."""

from __future__ import annotations

import random
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.commands import AddNode, DeleteNodes, RenameValue, ReplaceInitializer, SetAttribute, SetNodeField
from editor.diff import diff_models
from editor.document import Document
from tests.conftest import CORPUS

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def small_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w")
    b = numpy_helper.from_array(np.ones(4, dtype=np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "b"], ["add"], name="add"),
        helper.make_node("Relu", ["add"], ["relu"], name="relu"),
        helper.make_node("LeakyRelu", ["add"], ["leaky"], name="leaky", alpha=0.1),
        helper.make_node("Mul", ["relu", "leaky"], ["y"], name="mul"),
    ]
    g = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def node_id(doc: Document, name: str) -> int:
    return next(nid for _, nid, n in doc.index.iter_nodes() if n.name == name)


def only_kinds(d, **expected: int) -> None:
    counts = d.counts()
    want = {k: 0 for k in counts if k != "nodes_same"}
    want.update(expected)
    got = {k: v for k, v in counts.items() if k != "nodes_same"}
    assert got == want, d.summary_lines()


def test_identical_models() -> None:
    a, b = Document(small_model()), Document(small_model())
    d = diff_models(a, b)
    assert d.identical and d.nodes_same == 5
    assert set(d.status_a.values()) == {"same"} and set(d.status_b.values()) == {"same"}
    assert d.pairs == {nid: nid for nid in a.main.node_ids}
    assert d.summary_lines() == ["identical (5 nodes)"]


def test_model_proto_and_document_inputs_agree() -> None:
    m = small_model()
    assert diff_models(m, Document(small_model())).identical


def test_rename_node() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(SetNodeField(node_id(doc, "relu"), "name", "relu_renamed"))
    d = diff_models(base, doc)
    only_kinds(d, nodes_changed=1)
    (ch,) = d.nodes_changed
    assert ch.kinds == ["renamed"] and ch.a.name == "relu" and ch.b.name == "relu_renamed"
    assert d.status_b[node_id(doc, "relu_renamed")] == "changed"
    assert d.status_a[node_id(base, "relu")] == "changed"
    assert sum(1 for s in d.status_a.values() if s == "same") == 4


def test_change_attribute() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(SetAttribute(node_id(doc, "leaky"), "alpha", 0.2))
    d = diff_models(base, doc)
    only_kinds(d, nodes_changed=1)
    (ch,) = d.nodes_changed
    assert ch.kinds == ["attributes"]
    (at,) = ch.attributes
    assert at.name == "alpha" and float(at.old) == pytest.approx(0.1) and float(at.new) == pytest.approx(0.2)


def test_add_node() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(AddNode(doc.index.main, "Sigmoid", name="extra", inputs=["add"], outputs=["sig"]))
    d = diff_models(base, doc)
    only_kinds(d, nodes_added=1)
    assert d.nodes_added[0].name == "extra" and d.nodes_added[0].op_type == "Sigmoid"
    assert d.status_b[node_id(doc, "extra")] == "added"


def test_delete_node() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(AddNode(doc.index.main, "Sigmoid", name="extra", inputs=["add"], outputs=["sig"]))
    edited = Document(onnx.ModelProto.FromString(doc.model.SerializeToString()))
    edited.execute(DeleteNodes([node_id(edited, "extra")]))
    d = diff_models(doc, edited)
    only_kinds(d, nodes_removed=1)
    assert d.nodes_removed[0].name == "extra"
    assert d.status_a[node_id(doc, "extra")] == "removed"
    assert diff_models(base, edited).identical


def test_delete_node_reconnect_reports_the_rewired_consumer() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(DeleteNodes([node_id(doc, "relu")], reconnect=True))
    d = diff_models(base, doc)
    only_kinds(d, nodes_removed=1, nodes_changed=1)
    assert d.nodes_removed[0].name == "relu"
    (ch,) = d.nodes_changed
    assert ch.a.name == "mul" and ch.kinds == ["inputs"]
    assert [(p.index, p.old, p.new) for p in ch.inputs] == [(0, "relu", "add")]


def test_replace_initializer_values_and_shape() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(ReplaceInitializer(doc.index.main, "b", np.array([1, 1, 5, 1], dtype=np.float32)))
    d = diff_models(base, doc)
    only_kinds(d, initializers_changed=1)
    (ic,) = d.initializers_changed
    assert ic.name == "b" and ic.kinds == ["values"] and ic.differing == 1 and ic.max_abs_diff == pytest.approx(4.0)
    doc.execute(ReplaceInitializer(doc.index.main, "b", np.ones((1, 4), dtype=np.float64)))
    (ic,) = diff_models(base, doc).initializers_changed
    assert ic.kinds == ["dtype", "shape"] and ic.old == "float32[4]" and ic.new == "float64[1,4]"


def test_initializer_tolerance() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(ReplaceInitializer(doc.index.main, "w", np.arange(12, dtype=np.float32).reshape(3, 4) * (1 + 1e-7)))
    assert diff_models(base, doc).identical  # within the default rtol
    d = diff_models(base, doc, rtol=0, atol=0)
    assert d.initializers_changed and d.initializers_changed[0].differing > 0


def test_rename_value() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(RenameValue(doc.index.main, "add", "sum"))
    d = diff_models(base, doc)
    only_kinds(d, values_renamed=1)
    assert (d.values_renamed[0].old, d.values_renamed[0].new) == ("add", "sum")


def test_rename_graph_input_and_initializer() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(RenameValue(doc.index.main, "x", "image"))
    doc.execute(RenameValue(doc.index.main, "w", "weight"))
    d = diff_models(base, doc)
    only_kinds(d, values_renamed=2)
    assert {(v.old, v.new) for v in d.values_renamed} == {("x", "image"), ("w", "weight")}


def test_all_edits_together_are_reported_exactly() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(SetNodeField(node_id(doc, "matmul"), "name", "mm0"))
    doc.execute(SetAttribute(node_id(doc, "leaky"), "alpha", 0.3))
    doc.execute(AddNode(doc.index.main, "Sigmoid", name="extra", inputs=["relu"], outputs=["sig"]))
    doc.execute(RenameValue(doc.index.main, "relu", "r"))
    doc.execute(ReplaceInitializer(doc.index.main, "b", np.zeros(4, dtype=np.float32)))
    d = diff_models(base, doc)
    only_kinds(d, nodes_changed=2, nodes_added=1, values_renamed=1, initializers_changed=1)
    assert {c.a.name: c.kinds for c in d.nodes_changed} == {"matmul": ["renamed"], "leaky": ["attributes"]}


def test_unnamed_nodes_matched_structurally() -> None:
    a = small_model()
    for n in a.graph.node:
        n.name = ""
    b = onnx.ModelProto.FromString(a.SerializeToString())
    b.graph.node[3].attribute[0].f = 0.5  # LeakyRelu alpha
    b.graph.node[2].op_type = "Sigmoid"  # Relu -> Sigmoid
    d = diff_models(a, b)
    only_kinds(d, nodes_changed=2)
    kinds = sorted(tuple(c.kinds) for c in d.nodes_changed)
    assert kinds == [("attributes",), ("op_type",)]


def test_reordered_graph_has_no_node_changes() -> None:
    m = onnx.load(SQUEEZENET)
    nodes = list(m.graph.node)
    prod = {o: i for i, n in enumerate(nodes) for o in n.output}
    deps = [{prod[x] for x in n.input if x in prod} for n in nodes]
    rng, done, order = random.Random(3), set(), []
    while len(order) < len(nodes):  # a different valid topological order
        i = rng.choice([k for k in range(len(nodes)) if k not in done and deps[k] <= done])
        done.add(i)
        order.append(i)
    assert order != list(range(len(nodes)))
    shuffled = onnx.ModelProto()
    shuffled.CopyFrom(m)
    del shuffled.graph.node[:]
    shuffled.graph.node.extend(nodes[i] for i in order)
    d = diff_models(m, shuffled)
    assert d.identical, d.summary_lines()
    assert len(d.pairs) == len(nodes)
    ia = Document(m)
    ib = Document(shuffled)
    # each node is paired with the node at its new position
    pairs = diff_models(ia, ib).pairs
    for pos_b, pos_a in enumerate(order):
        assert pairs[ia.main.node_ids[pos_a]] == ib.main.node_ids[pos_b]


def test_opset_converted_squeezenet() -> None:
    from onnx import version_converter

    m = onnx.load(SQUEEZENET)
    converted = version_converter.convert_version(m, 13)
    d = diff_models(m, converted)
    assert not d.identical
    assert any(c.field == "opset:ai.onnx" and c.old == 9 and c.new == 13 for c in d.model_changes)
    # the converted model keeps every compute node; only what the conversion touched differs
    assert d.nodes_removed == []
    assert {c.a.op_type for c in d.nodes_changed} <= {"Dropout", "Softmax"}
    assert d.nodes_same >= len(m.graph.node) - 2
    assert all(r.op_type in {"Constant", "Shape", "Flatten", "Reshape"} for r in d.nodes_added)


def test_io_type_and_metadata_changes() -> None:
    a = small_model()
    b = onnx.ModelProto.FromString(a.SerializeToString())
    b.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    b.producer_name = "other"
    helper.set_model_props(b, {"author": "me"})
    d = diff_models(a, b)
    assert [(c.kind, c.name, c.old, c.new) for c in d.io_changes] == [("input", "x", "float32[2,3]", "float32[N,3]")]
    assert {c.field for c in d.model_changes} == {"producer_name", "metadata:author"}
    assert d.nodes_changed == [] and d.nodes_added == [] and d.nodes_removed == []


def test_subgraph_change_marks_owner_and_inner_nodes() -> None:
    def model(alpha: float) -> onnx.ModelProto:
        then_g = helper.make_graph([helper.make_node("LeakyRelu", ["x"], ["t"], name="inner", alpha=alpha)], "then", [],
                                   [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
        else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="neg")], "else", [],
                                   [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
        g = helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)], "g",
            [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    a, b = Document(model(0.1)), Document(model(0.2))
    assert diff_models(a, Document(model(0.1))).identical
    d = diff_models(a, b)
    changed = {c.a.name: c for c in d.nodes_changed}
    assert set(changed) == {"if", "inner"}
    assert changed["if"].subgraphs == ["then_branch"] and changed["inner"].kinds == ["attributes"]
    assert d.status_b[node_id(b, "neg")] == "same" and d.status_b[node_id(b, "inner")] == "changed"


def test_status_maps_cover_every_node() -> None:
    a = Document(onnx.load(SQUEEZENET))
    b = Document(onnx.load(SQUEEZENET))
    first = b.main.node_ids[-1]
    b.execute(DeleteNodes([first]))
    d = diff_models(a, b)
    assert set(d.status_a) == set(a.index.nodes) and set(d.status_b) == set(b.index.nodes)
    assert list(d.status_a.values()).count("removed") == 1


def _chain(n: int, renamed: bool) -> onnx.ModelProto:
    rng = random.Random(0)
    vals, nodes = ["x"], []
    for i in range(n):
        op = ("Relu", "Sigmoid", "Add", "Mul")[i % 4]
        ins = [vals[-1]] if op in ("Relu", "Sigmoid") else [vals[-1], vals[rng.randrange(max(0, i - 20), i + 1)]]
        nodes.append(helper.make_node(op, ins, [f"v{i}"], name=("r" if renamed else "n") + str(i)))
        vals.append(f"v{i}")
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(vals[-1], TensorProto.FLOAT, [4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _renamed_pair(n: int) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """A chain of ``n`` nodes and the same chain with every node renamed, one op changed at 70%
    and its first half in reverse order (not topological any more: still matched)."""
    a, b = _chain(n, False), _chain(n, True)
    k = n * 7 // 10
    b.graph.node[k].op_type = "Tanh" if b.graph.node[k].op_type in ("Relu", "Sigmoid") else "Sub"
    nodes = list(b.graph.node)
    del b.graph.node[:]
    b.graph.node.extend(nodes[: n // 2][::-1] + nodes[n // 2 :])
    return a, b


def _cpu_seconds_to_diff(a: onnx.ModelProto, b: onnx.ModelProto, repeat: int) -> float:
    """The least CPU time (this process's, so a busy machine does not count) of ``repeat`` diffs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        diff_models(a, b)
        best = min(best, time.process_time() - start)
    return best


def test_large_generated_models_diff_quickly() -> None:
    """10,000 renamed nodes are matched, and the diff grows about linearly with the model: a
    ratio of CPU times in this process (four times the nodes: about 4-5x the time, measured;
    a quadratic matcher would take 16x), not a wall-clock bound that a shared machine breaks."""
    a, b = _renamed_pair(10_000)
    start = time.process_time()
    d = diff_models(a, b)
    first = time.process_time() - start
    assert d.nodes_added == [] and d.nodes_removed == [], (
        f"renamed nodes not matched: {len(d.nodes_added)} added, {len(d.nodes_removed)} removed")
    changed = [c for c in d.nodes_changed if "op_type" in c.kinds]
    assert len(changed) == 1, f"expected the one op_type change, saw {len(changed)}"
    big = min(first, _cpu_seconds_to_diff(a, b, repeat=1))
    small = _cpu_seconds_to_diff(*_renamed_pair(2_500), repeat=3)
    assert big < 10 * max(small, 0.01), (
        f"diffing 4x the nodes took {big / max(small, 0.01):.1f}x the CPU time ({big:.2f} s vs {small:.2f} s): "
        "expected about linear growth (< 10x)")


SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"


@pytest.mark.parametrize("seed", [0, 1])
def test_random_renames_on_a_model_with_subgraphs(seed: int) -> None:
    base, doc = Document.open(SILERO), Document.open(SILERO)
    rng = random.Random(seed)
    main = doc.main
    named = [nid for nid in main.node_ids if doc.node(nid).name]
    renamed_nodes = rng.sample(named, 5)
    for k, nid in enumerate(renamed_nodes):
        doc.execute(SetNodeField(nid, "name", f"renamed_{k}"))
    # values captured by If bodies included: the bodies change, but only by the rename
    captured = sorted({name for nid in main.node_ids for name in _captured_by(doc, nid)})
    plain = sorted(v for v in main.producers if v not in captured and v not in main.output_names())
    values = rng.sample(captured, 2) + rng.sample(plain, 2)
    for k, v in enumerate(values):
        doc.execute(RenameValue(main.id, v, f"value_{k}"))
    d = diff_models(base, doc)
    only_kinds(d, nodes_changed=5, values_renamed=4)
    assert all(c.kinds == ["renamed"] for c in d.nodes_changed)
    assert {c.b.name for c in d.nodes_changed} == {f"renamed_{k}" for k in range(5)}
    assert {(v.old, v.new) for v in d.values_renamed} == {(v, f"value_{k}") for k, v in enumerate(values)}


def _captured_by(doc: Document, nid: int) -> list[str]:
    from editor.passes.extract import captured_names

    node = doc.node(nid)
    return [n for a in node.attribute if a.HasField("g") for n in captured_names(a.g)]


def test_changed_if_body_and_added_inner_node() -> None:
    base, doc = Document.open(SILERO), Document.open(SILERO)
    if_id = next(nid for nid in doc.main.node_ids if doc.node(nid).op_type == "If")
    body = doc.index.children[if_id][0]
    inner = doc.index.scopes[body]
    first_out = inner.graph.node[0].output[0]
    doc.execute(AddNode(body, "Identity", name="probe", inputs=[first_out], outputs=["probe_out"]))
    d = diff_models(base, doc)
    only_kinds(d, nodes_changed=1, nodes_added=1)
    assert d.nodes_changed[0].b.id == if_id and d.nodes_changed[0].kinds == ["subgraph"]
    assert d.nodes_added[0].name == "probe" and "." in d.nodes_added[0].scope


def test_external_initializers_compared_in_chunks(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    import editor.diff.values as diff_module  # where tensors are compared chunk by chunk
    from tests.editor.test_summary_support import external_model

    monkeypatch.setattr(diff_module, "_CHUNK", 1000)  # several chunks for a 5,000-element tensor
    w = np.linspace(-1, 1, 5000, dtype=np.float32)
    w2 = w.copy()
    w2[[10, 2500, 4999]] += np.float32(0.5)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    pa = external_model(tmp_path / "a", {"w": w, "i": np.arange(7, dtype=np.int64)})
    pb = external_model(tmp_path / "b", {"w": w2, "i": np.array([0, 1, 2, 3, 4, 5, 9], np.int64)})
    pc = external_model(tmp_path / "c", {"w": w, "i": np.arange(7, dtype=np.int64)})
    docs = [Document.open(p) for p in (pa, pb, pc)]
    try:
        d = diff_models(docs[0], docs[1])
        by_name = {c.name: c for c in d.initializers_changed}
        assert set(by_name) == {"w", "i"}
        assert by_name["w"].differing == 3 and by_name["w"].max_abs_diff == pytest.approx(0.5)
        assert by_name["i"].differing == 1 and by_name["i"].max_abs_diff == 3
        assert diff_models(docs[0], docs[2]).identical
        # without data stores the values cannot be read: external tensors are compared by
        # reference (the same here), and a reference that differs gets a note, not a crash
        assert diff_models(docs[0].model, docs[1].model).identical
        moved = onnx.ModelProto.FromString(docs[1].model.SerializeToString())
        moved.graph.initializer[0].external_data[0].value = "elsewhere.bin"
        (c,) = diff_models(docs[0].model, moved).initializers_changed
        assert c.name == "w" and "values not compared" in c.note
    finally:
        for doc in docs:
            doc.store.close()


def test_replaced_node_with_stable_names_is_removed_and_added() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(DeleteNodes([node_id(doc, "relu")]))
    doc.execute(AddNode(doc.index.main, "Sigmoid", name="sig", inputs=["add"], outputs=["relu"]))
    d = diff_models(base, doc)
    only_kinds(d, nodes_removed=1, nodes_added=1)
    assert (d.nodes_removed[0].name, d.nodes_added[0].name) == ("relu", "sig")


def test_op_type_edit_keeps_the_pair() -> None:
    base, doc = Document(small_model()), Document(small_model())
    doc.execute(SetNodeField(node_id(doc, "relu"), "op_type", "Sigmoid"))
    d = diff_models(base, doc)
    only_kinds(d, nodes_changed=1)
    assert d.nodes_changed[0].kinds == ["op_type"]
