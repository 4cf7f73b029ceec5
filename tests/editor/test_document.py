"""The document itself: construction, the undo stack and clean state, change events."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from editor.commands import (
    AddGraphValue,
    AddInitializer,
    AddNode,
    DeleteNodes,
    RenameValue,
    SetAttribute,
    SetMetadataProp,
    SetModelField,
    SetNodeField,
    SetNodeInput,
)
from editor.document import ChangeSet, Document
from editor.errors import CommandError
from tests.editor.test_document_models import REAL, load, nested_model


class Recorder:
    """Connects to every signal of a document and records what fired."""

    SIGNALS = ("changed", "node_added", "node_removed", "node_changed", "value_renamed", "graph_io_changed",
               "metadata_changed", "structure_changed", "history_changed", "clean_changed", "path_changed")

    def __init__(self, doc: Document) -> None:
        self.events: list[tuple] = []
        for name in self.SIGNALS:
            getattr(doc, name).connect(self._make(name))

    def _make(self, name: str):  # noqa: ANN202
        def slot(*args) -> None:  # noqa: ANN002
            self.events.append((name, *args))
        return slot

    def of(self, name: str) -> list[tuple]:
        return [e[1:] for e in self.events if e[0] == name]

    def changes(self) -> list[ChangeSet]:
        return [e[0] for e in self.of("changed")]

    def clear(self) -> None:
        self.events.clear()


# -- construction ------------------------------------------------------------------------------
def test_new_document_is_an_empty_valid_model() -> None:
    doc = Document.new()
    onnx.checker.check_model(doc.model)
    assert doc.opset("") == onnx.defs.onnx_opset_version()
    assert doc.model.producer_name == "onnx-studio"
    assert list(doc.index.scopes) == [0] and not doc.index.nodes
    assert not doc.is_modified and not doc.stack.can_undo and doc.path is None
    doc.check_invariants()
    assert Document.new(opset=13).opset("ai.onnx") == 13


def test_new_document_can_be_built_into_a_runnable_model() -> None:
    import onnx.reference

    doc = Document.new(opset=17)
    doc.execute(AddGraphValue(0, "input", "x", onnx.TensorProto.FLOAT, ["N"]))
    doc.execute(AddInitializer(0, "k", np.array([2.0], np.float32)))
    doc.execute(AddNode(0, "Mul", inputs=["x", "k"], outputs=["y"]))
    doc.execute(AddGraphValue(0, "output", "y", onnx.TensorProto.FLOAT, ["N"]))
    onnx.checker.check_model(doc.model, full_check=True)
    (y,) = onnx.reference.ReferenceEvaluator(doc.model).run(None, {"x": np.array([1.0, 3.0], np.float32)})
    np.testing.assert_allclose(y, [2.0, 6.0])
    doc.undo_all()
    assert doc.serialize() == Document.new(opset=17).serialize()


def test_index_ids_are_stable_and_scopes_cover_every_graph() -> None:
    doc = Document(load(REAL / "silero_vad_16k_op15.onnx"))
    total = sum(len(s.graph.node) for s in doc.index.scopes.values())
    assert total == 350 == len(doc.index.nodes)  # README: 121 top-level / 350 with subgraphs
    assert sum(1 for s in doc.index.scopes.values() if s.kind == "subgraph") == 24
    assert doc.index.path(doc.scope(1).id).startswith("main/")
    doc.check_invariants()


def test_queries(nested_doc: Document) -> None:
    doc = nested_doc
    relu = doc.find_nodes("relu")[0]
    assert doc.producer(0, "h") == relu
    assert [doc.node(n).name for n, _ in doc.consumers(0, "h")] == ["mul"]
    assert [doc.node(n).name for n, _ in doc.consumers(0, "h", nested=True)] == ["mul", "else_id"]
    body = next(s.id for s in doc.index.scopes.values() if s.attr == "body")
    assert doc.resolve_value(body, "w") == 0 and doc.resolve_value(body, "acc_in") == body
    assert doc.resolve_value(body, "nowhere") is None
    assert doc.initializer(0, "w")[0] == 0 and doc.initializer(0, "x") is None
    assert doc.value_info(0, "x").type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert doc.index.path(body) == "main/branch.then_branch/then_loop.body"


@pytest.fixture
def nested_doc() -> Document:
    return Document(nested_model())


# -- stack ------------------------------------------------------------------------------------------
def test_stack_labels_clean_state_and_branching() -> None:
    doc = Document.new()
    rec = Recorder(doc)
    a = doc.execute(AddNode(0, "Relu", name="conv1")).node_id
    assert doc.is_modified and rec.of("clean_changed") == [(False,)]
    doc.execute(SetNodeField(a, "name", "conv2"))
    assert doc.stack.labels() == ["Add Relu node", "Rename node 'conv1' → 'conv2'"]
    assert doc.stack.undo_label == "Rename node 'conv1' → 'conv2'" and doc.stack.redo_label == ""
    doc.stack.set_clean()
    doc.undo()
    assert doc.is_modified and doc.stack.redo_label == "Rename node 'conv1' → 'conv2'"
    doc.redo()
    assert not doc.is_modified and rec.of("clean_changed")[-1] == (True,)
    doc.undo()
    # a new edit drops the redo branch, and the saved state can no longer be reached
    doc.execute(SetNodeField(a, "doc_string", "d"))
    assert doc.stack.labels() == ["Add Relu node", "Edit node doc string"]
    assert doc.stack.clean_index is None
    doc.undo_all()
    assert doc.is_modified  # the file on disk has the rename; the empty model is not it
    assert not doc.undo() and doc.redo()


def test_noop_edits_leave_no_undo_step() -> None:
    doc = Document(load(REAL / "silero_vad_16k_op15.onnx"))
    rec = Recorder(doc)
    conv = doc.find_nodes("/model/stft/Conv")[0]
    doc.execute(SetNodeField(conv, "name", "/model/stft/Conv"))
    doc.execute(RenameValue(0, "input", "input"))
    doc.execute(SetModelField("producer_name", doc.model.producer_name))
    assert not doc.stack.can_undo and rec.events == [] and not doc.is_modified


def test_merge_stops_at_a_save_and_at_undo() -> None:
    doc = Document(load(REAL / "ort_logreg_iris.onnx"))
    for text in ("a", "ab", "abc"):
        doc.execute(SetModelField("doc_string", text))
    assert doc.stack.labels() == ["Set model doc string"]
    doc.stack.set_clean()  # what a save does
    assert not doc.is_modified
    doc.execute(SetModelField("doc_string", "abcd"))
    doc.execute(SetModelField("doc_string", "abcde"))
    assert len(doc.stack.labels()) == 2 and doc.is_modified
    doc.undo()
    assert not doc.is_modified and doc.model.doc_string == "abc"
    doc.execute(SetModelField("doc_string", "x"))
    doc.execute(SetModelField("doc_string", "xy"))  # merges with "x", not across the save
    assert doc.stack.labels() == ["Set model doc string"] * 2 and doc.is_modified
    doc.undo()
    assert doc.model.doc_string == "abc" and not doc.is_modified


def test_refused_commands_emit_nothing() -> None:
    doc = Document.new()
    rec = Recorder(doc)
    with pytest.raises(CommandError):
        doc.execute(DeleteNodes([12]))
    assert rec.events == []


# -- events ---------------------------------------------------------------------------------------------
def test_events_for_node_edits(nested_doc: Document) -> None:
    doc = nested_doc
    rec = Recorder(doc)
    cmd = doc.execute(AddNode(0, "Relu", inputs=["x"], outputs=["r"]))
    (cs,) = rec.changes()
    assert cs.nodes_added == {cmd.node_id} and not cs.nodes_removed and not cs.nodes_changed
    assert cs.scopes == {0} and (0, "node") in cs.scope_fields and not cs.structure
    assert rec.of("node_added") == [(cmd.node_id,)] and rec.of("history_changed") == [()]
    assert rec.of("graph_io_changed") == []  # the node list is not graph I/O
    rec.clear()
    doc.undo()
    (cs,) = rec.changes()
    assert cs.nodes_removed == {cmd.node_id} and rec.of("node_removed") == [(cmd.node_id,)]
    rec.clear()
    relu = doc.find_nodes("relu")[0]
    doc.execute(SetAttribute(relu, "studio", 1, check_schema=False))
    (cs,) = rec.changes()
    assert cs.nodes_changed == {relu} and rec.of("node_changed") == [(relu,)]


def test_events_for_subgraph_structure(nested_doc: Document) -> None:
    doc = nested_doc
    rec = Recorder(doc)
    branch = doc.find_nodes("branch")[0]
    inner = {n for s, n, _ in doc.index.iter_nodes() if s.id != 0}
    doc.execute(DeleteNodes([branch]))
    (cs,) = rec.changes()
    assert cs.structure and rec.of("structure_changed") == [()]
    # the subgraph nodes disappear with their owner
    assert cs.nodes_removed == {branch} | inner
    rec.clear()
    doc.undo()
    (cs,) = rec.changes()
    assert cs.structure and cs.nodes_added == {branch} | inner
    rec.clear()
    # replacing a body: its nodes go, the new body's nodes come, the other branch is untouched
    then_nodes = {n for n in inner if doc.scope_of(n).attr == "then_branch" or doc.scope_of(n).attr == "body"}
    else_sid = next(s for s in doc.index.children[branch] if doc.scope(s).attr == "else_branch")
    doc.execute(SetAttribute(branch, "then_branch", doc.scope(else_sid).graph))
    (cs,) = rec.changes()
    assert cs.nodes_removed == then_nodes and len(cs.nodes_added) == 1 and cs.nodes_changed == {branch}


def test_events_for_values_and_graph_io(nested_doc: Document) -> None:
    doc = nested_doc
    rec = Recorder(doc)
    doc.execute(RenameValue(0, "w", "weights"))
    (cs,) = rec.changes()
    assert cs.values_renamed == [(0, "w", "weights")]
    assert rec.of("value_renamed") == [(0, "w", "weights")]
    users = {n for n, _ in doc.consumers(0, "weights", nested=True)}
    assert users <= cs.nodes_changed and (0, "initializer") in cs.scope_fields
    assert ("graph_io_changed" , 0, "initializer") in rec.events
    rec.clear()
    doc.undo()
    assert rec.of("value_renamed") == [(0, "weights", "w")]
    rec.clear()
    doc.execute(AddGraphValue(0, "output", "h"))
    assert rec.of("graph_io_changed") == [(0, "output")]


def test_events_for_metadata() -> None:
    doc = Document.new()
    rec = Recorder(doc)
    doc.execute(SetModelField("producer_version", "1.0"))
    assert rec.of("metadata_changed") == [("producer_version",)]
    rec.clear()
    doc.execute(SetMetadataProp("k", "v"))
    (cs,) = rec.changes()
    assert cs.model_fields == {"metadata_props"} and rec.of("metadata_changed") == [("metadata_props",)]
    rec.clear()
    doc.execute(SetMetadataProp("k", "v", ("scope", 0)))
    assert rec.of("graph_io_changed") == [(0, "metadata_props")]


def test_save_emits_path_and_clean(tmp_path) -> None:  # noqa: ANN001
    doc = Document.new()
    rec = Recorder(doc)
    doc.execute(SetModelField("doc_string", "x"))
    target = doc.save(tmp_path / "new.onnx")
    assert rec.of("path_changed") == [(str(target),)] and rec.of("clean_changed")[-1] == (True,)
    assert onnx.load(str(target)).doc_string == "x"


def test_graph_attributes_referencing_function_attributes_have_no_scope() -> None:
    from onnx import helper

    node = helper.make_node("If", ["c"], ["o"], name="choose")
    for name, ref in (("then_branch", "tb"), ("else_branch", "eb")):
        attr = node.attribute.add()
        attr.name, attr.type, attr.ref_attr_name = name, onnx.AttributeProto.GRAPH, ref
    fn = helper.make_function("local", "Choose", ["c"], ["o"], [node], [helper.make_opsetid("", 17)],
                              attributes=["tb", "eb"])
    model = helper.make_model(helper.make_graph([], "g", [], []), functions=[fn],
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    raw = model.SerializeToString()
    doc = Document(onnx.load_from_string(raw))
    assert [s.kind for s in doc.index.scopes.values()] == ["main", "function"]
    nid = doc.find_nodes("choose")[0]
    assert doc.index.children[nid] == []
    doc.execute(SetNodeField(nid, "name", "pick"))
    doc.check_invariants()
    doc.undo_all()
    assert doc.serialize() == raw


def test_redo_gives_back_the_same_ids_so_later_commands_redo() -> None:
    """Regression: redo used to re-add nodes (and bodies) under fresh ids, so redoing a
    later command that targets the added node raised KeyError."""
    from onnx import helper

    doc = Document.new(opset=17)
    body = helper.make_graph([helper.make_node("Identity", ["a"], ["b"], name="inner")], "b",
                             [], [helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, [1])])
    nid = doc.execute(AddNode(0, "If", inputs=["c"], outputs=["o"], name="choose",
                              attributes={"then_branch": body, "else_branch": body})).node_id
    inner = doc.index.nested_node_ids(nid)
    doc.execute(SetNodeField(nid, "name", "pick"))
    doc.execute(SetNodeField(inner[0], "name", "inner2"))
    doc.execute(SetAttribute(nid, "then_branch", body))  # replaces a body: new ids for it
    after = (doc.serialize(), doc.index.snapshot())
    for _ in range(3):
        doc.undo_all()
        assert doc.serialize() == Document.new(opset=17).serialize()
        while doc.redo():
            pass
        assert (doc.serialize(), doc.index.snapshot()) == after
        doc.check_invariants()


def _edits_from_an_open(doc: Document) -> list:
    """Edits of every kind that change links, made on a freshly opened document."""
    main = doc.index.scopes[doc.index.main]
    first, last = main.node_ids[0], main.node_ids[-1]
    node = doc.index.nodes[first]
    value = next(v for v in node.output if v)
    return [
        lambda: doc.execute(SetNodeInput(last, 0, value)),
        lambda: doc.execute(AddNode(doc.index.main, "Relu", inputs=[value], outputs=["fresh_out"], position=0)),
        lambda: doc.execute(RenameValue(doc.index.main, value, value + "_renamed")),
        lambda: doc.execute(DeleteNodes([first])),
    ]


@pytest.mark.parametrize("kind", range(4))
def test_links_made_on_first_use_are_exact_after_an_edit_made_before(kind: int) -> None:
    """An open registers the nodes and links them (who makes and who uses each value) only
    when first asked (issue 35: 0.08 s of the export's start-up). An edit made before
    anyone asked must leave the links exact, and undo and redo too."""
    for doc in (Document(nested_model()), Document(load(REAL / "ppocr_mobile_v2_cls.onnx"))):
        main = doc.index.scopes[doc.index.main]
        assert main._unlinked is not None, "the open linked every node before anything asked"
        _edits_from_an_open(doc)[kind]()
        doc.check_invariants()
        doc.undo()
        doc.check_invariants()
        doc.redo()
        doc.check_invariants()


def test_links_made_in_steps_are_exact_whenever_an_edit_comes() -> None:
    """The window links an opened model's nodes a few thousand per pass of its event loop
    (``ModelIndex.link_some``); an edit in between links the rest first, in order."""
    for stop_after in (1, 3):
        doc = Document(load(REAL / "ppocr_mobile_v2_cls.onnx"))
        for _ in range(stop_after):
            assert doc.index.link_some(5), "the nodes ran out after a few steps of five"
        _edits_from_an_open(doc)[3]()
        doc.check_invariants()
    doc = Document(load(REAL / "ppocr_mobile_v2_cls.onnx"))
    while doc.index.link_some(7):
        pass
    assert not any(s._unlinked for s in doc.index.scopes.values())
    doc.check_invariants()
