"""Unit tests of every command: the edit itself, its refusals, exact undo/redo, its label.

Each edit is checked in the main graph, in subgraph bodies (If/Loop/Scan) and in
model-local functions. ``apply`` runs a command and then proves that undo gives back the
exact bytes and index (ids included) and that redo gives back the exact edited state;
``refuse`` proves that a refused command changed nothing at all.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from editor.commands import (
    AddGraphValue,
    AddInitializer,
    AddNode,
    AddNodePort,
    CastInitializer,
    CompositeCommand,
    ConstantToInitializer,
    DeleteNodes,
    InitializerToConstant,
    MoveGraphValue,
    RemoveAttribute,
    RemoveGraphValue,
    RemoveInitializer,
    RemoveNodePort,
    RenameValue,
    ReplaceInitializer,
    SetAttribute,
    SetConstantValue,
    SetDimension,
    SetGraphField,
    SetMetadataProp,
    SetModelField,
    SetNodeField,
    SetNodeInput,
    SetOpsetImport,
    SetValueType,
)
from editor.document import Command, Document
from editor.errors import CommandError
from tests.editor.test_document_models import REAL, backend, function_model, load, nested_model

A = onnx.AttributeProto
T = onnx.TensorProto


# -- harness ------------------------------------------------------------------------------------
def state(doc: Document) -> tuple[bytes, dict]:
    return doc.serialize(), doc.index.snapshot()


def apply(doc: Document, cmd: Command) -> Command:
    """Execute ``cmd`` and prove undo and redo exact (bytes and ids); leave it applied."""
    before = state(doc)
    depth = doc.stack.index
    doc.execute(cmd)
    doc.check_invariants()
    after = state(doc)
    assert after != before, f"{cmd.label!r} changed nothing"
    assert doc.stack.index == depth + 1 and doc.stack.undo_label == cmd.label
    doc.undo()
    assert state(doc) == before, f"undo of {cmd.label!r} is not exact"
    doc.check_invariants()
    doc.redo()
    assert state(doc) == after, f"redo of {cmd.label!r} is not exact"
    doc.check_invariants()
    return cmd


def refuse(doc: Document, cmd: Command, match: str) -> CommandError:
    before = state(doc)
    depth, labels = doc.stack.index, doc.stack.labels()
    with pytest.raises(CommandError, match=match) as info:
        doc.execute(cmd)
    assert state(doc) == before, f"refused {type(cmd).__name__} changed the document"
    assert (doc.stack.index, doc.stack.labels()) == (depth, labels)
    assert "\n" not in str(info.value)
    return info.value


def open_doc(path) -> Document:  # noqa: ANN001
    return Document(load(path), path=path)


def by_name(doc: Document, name: str) -> int:
    (nid,) = doc.find_nodes(name)
    return nid


def first(doc: Document, op_type: str, scope: int | None = None) -> int:
    for s, nid, node in doc.index.iter_nodes():
        if node.op_type == op_type and (scope is None or s.id == scope):
            return nid
    raise AssertionError(f"no {op_type}")


def scope_where(doc: Document, attr: str) -> int:
    for sid, s in doc.index.scopes.items():
        if s.kind == "subgraph" and s.attr == attr:
            return sid
    raise AssertionError(attr)


def fn_scope(doc: Document, name: str) -> int:
    for sid in doc.index.function_scopes:
        if doc.scope(sid).graph.name == name:
            return sid
    raise AssertionError(name)


@pytest.fixture
def silero() -> Document:
    return open_doc(REAL / "silero_vad_16k_op15.onnx")


@pytest.fixture
def nested() -> Document:
    return Document(nested_model())


@pytest.fixture
def fdoc() -> Document:
    return Document(function_model())


@pytest.fixture(params=["main", "if", "loop", "scan", "function"])
def anywhere(request) -> tuple[Document, int]:  # noqa: ANN001
    """A document and a scope of each kind that holds at least one node."""
    kind = request.param
    if kind == "main":
        doc = open_doc(REAL / "silero_vad_16k_op15.onnx")
        return doc, doc.index.main
    if kind == "if":
        doc = open_doc(REAL / "silero_vad_16k_op15.onnx")
        return doc, scope_where(doc, "then_branch")
    if kind == "loop":
        doc = open_doc(backend("test_loop11"))
        return doc, scope_where(doc, "body")
    if kind == "scan":
        doc = open_doc(backend("test_scan9_sum"))
        return doc, scope_where(doc, "body")
    doc = Document(function_model())
    return doc, fn_scope(doc, "AddRelu")


# -- nodes --------------------------------------------------------------------------------------
def test_add_node_anywhere(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    scope = doc.scope(sid)
    value = scope.node_ids and doc.node(scope.node_ids[0]).output[0]
    cmd = apply(doc, AddNode(sid, "Relu", inputs=[value], name="added_relu"))
    assert cmd.label == "Add Relu node"
    node = doc.node(cmd.node_id)
    assert doc.scope_of(cmd.node_id).id == sid and node.op_type == "Relu" and node.name == "added_relu"
    assert list(node.input) == [value] and node.output[0].startswith("added_relu_")
    assert doc.producer(sid, node.output[0]) == cmd.node_id
    assert (cmd.node_id, 0) in doc.consumers(sid, value)
    # position: insert at the front
    cmd2 = apply(doc, AddNode(sid, "Identity", position=0))
    assert doc.scope(sid).node_ids[0] == cmd2.node_id


def test_add_node_schema_defaults_and_domains() -> None:
    doc = Document.new(opset=17)
    cmd = apply(doc, AddNode(0, "LeakyRelu", with_defaults=True))
    (attr,) = doc.node(cmd.node_id).attribute
    assert attr.name == "alpha" and attr.f == pytest.approx(0.01)
    assert list(doc.node(cmd.node_id).input) == [""]  # unconnected formal input
    cmd = apply(doc, AddNode(0, "Conv", attributes={"kernel_shape": [3, 3]}))
    assert [a.name for a in doc.node(cmd.node_id).attribute] == ["kernel_shape"]
    assert doc.node(cmd.node_id).attribute[0].type == A.INTS
    refuse(doc, AddNode(0, "MyOp", domain="custom"), "not imported")
    apply(doc, SetOpsetImport("custom", 1))
    cmd = apply(doc, AddNode(0, "MyOp", domain="custom", attributes={"gain": 2.0}))
    assert doc.node(cmd.node_id).domain == "custom"
    refuse(doc, AddNode(0, "NoSuchOp"), "no operator 'NoSuchOp'")
    refuse(doc, AddNode(0, "not an op"), "not a valid identifier")
    refuse(doc, AddNode(0, "Relu", position=99), "outside the graph")
    refuse(doc, AddNode(99, "Relu"), "no graph with id 99")
    refuse(doc, AddNode(0, "Conv", attributes={"kernel_shape": "wide"}), "kernel_shape")
    refuse(doc, AddNode(0, "Relu", attributes={"alpha": 0.5}), "Relu has no attribute 'alpha' at opset 17")
    out = doc.node(cmd.node_id).output[0]
    refuse(doc, AddNode(0, "Relu", outputs=[out]), "already has a producer")
    refuse(doc, AddNode(0, "Relu", outputs=["a", "a"]), "given twice")
    refuse(doc, AddNode(0, "Relu", inputs=["loop"], outputs=["loop"]), "own output")
    # ai.onnx.ml is imported by the logistic regression model
    ml = open_doc(REAL / "ort_logreg_iris.onnx")
    cmd = apply(ml, AddNode(0, "Normalizer", domain="ai.onnx.ml", with_defaults=True))
    assert ml.node(cmd.node_id).attribute[0].s == b"MAX"


def test_add_node_calling_a_local_function(fdoc: Document) -> None:
    cmd = apply(fdoc, AddNode(0, "AddRelu", domain="local", inputs=["x", "z"]))
    assert fdoc.node(cmd.node_id).domain == "local"
    # inside a function, the function's own opset import is used
    sid = fn_scope(fdoc, "AddRelu")
    cmd = apply(fdoc, AddNode(sid, "Abs", inputs=["c"], outputs=["abs_c"]))
    assert fdoc.scope_of(cmd.node_id).id == sid


def test_delete_nodes_dangling_anywhere(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    nid = doc.scope(sid).node_ids[-1]
    node = onnx.NodeProto()
    node.CopyFrom(doc.node(nid))
    cmd = apply(doc, DeleteNodes([nid]))
    assert cmd.label == f"Delete node {node.name or node.op_type!r}"
    assert not doc.has_node(nid) and nid not in doc.scope(sid).node_ids
    assert len(doc.scope(sid).graph.node) == len(doc.scope(sid).node_ids)
    doc.undo()
    assert doc.node(nid).SerializeToString() == node.SerializeToString()


def test_delete_nodes_with_subgraphs_restores_every_id(silero: Document) -> None:
    ifs = [nid for _, nid, n in silero.index.iter_nodes() if n.op_type == "If"][:3]
    before = silero.index.snapshot()
    cmd = apply(silero, DeleteNodes(ifs))
    assert cmd.label == "Delete 3 nodes"
    assert len(silero.index.scopes) < len(before)
    silero.undo()
    assert silero.index.snapshot() == before


def test_delete_with_reconnect(nested: Document) -> None:
    relu = by_name(nested, "relu")
    # "h" is used by Mul in the main graph and captured by the else branch
    apply(nested, DeleteNodes([relu], reconnect=True))
    mul = by_name(nested, "mul")
    assert list(nested.node(mul).input) == ["y", "x"]
    assert list(nested.node(by_name(nested, "else_id")).input) == ["x"]
    nested.check_invariants()


def test_delete_with_reconnect_of_a_graph_output(nested: Document) -> None:
    # Mul produces graph output "z": with reconnect, the output keeps its name (the model's
    # interface) and Mul's first input "y" is renamed "z" instead
    y_producer = nested.producer(0, "y")
    apply(nested, DeleteNodes([by_name(nested, "mul")], reconnect=True))
    assert nested.scope(0).output_names() == ["z"]
    assert nested.producer(0, "z") == y_producer and "y" not in nested.scope(0).defined_names()
    assert nested.model.graph.output[0].type.tensor_type.elem_type == T.FLOAT
    # the Loop body has its own "acc_in"; a captured use of h there cannot become "acc_in"
    doc2 = Document(nested_model())
    body = scope_where(doc2, "body")
    doc2.execute(AddNodePort(by_name(doc2, "body_cond"), "input", "h"))
    doc2.execute(AddNode(0, "Identity", inputs=["x"], outputs=["acc_in"], position=0))
    doc2.execute(SetNodeInput(by_name(doc2, "relu"), 0, "acc_in"))
    refuse(doc2, DeleteNodes([by_name(doc2, "relu")], reconnect=True), "then_loop.body has its own 'acc_in'")
    assert body in doc2.index.scopes
    # a body output cannot name a value the body captures
    refuse(nested, DeleteNodes([by_name(nested, "else_id")], reconnect=True), "which this graph does not define")
    # a body output cannot become an alias of another body output
    doc = open_doc(backend("test_scan9_sum"))
    body = scope_where(doc, "body")
    refuse(doc, DeleteNodes([first(doc, "Identity", body)], reconnect=True), "would alias 'sum_out'")


def test_delete_refusals(silero: Document, fdoc: Document) -> None:
    refuse(silero, DeleteNodes([]), "nothing to delete")
    refuse(silero, DeleteNodes([10**6]), "no node with id 1000000")
    const = first(silero, "Constant")
    refuse(silero, DeleteNodes([const], reconnect=True), "no single pass-through")
    refuse(silero, DeleteNodes([first(silero, "Shape"), 10**6]), "no node with id")
    # inside a function: Relu then reads the function input directly
    s = fn_scope(fdoc, "AddRelu")
    add, relu = fdoc.scope(s).node_ids
    apply(fdoc, DeleteNodes([add], reconnect=True))
    assert list(fdoc.node(relu).input) == ["a"]
    refuse(fdoc, DeleteNodes([relu], reconnect=True), "graph output 'c' would alias 'a'")


def test_rename_node_label_and_typing_merges(silero: Document) -> None:
    nid = first(silero, "Conv")
    old = silero.node(nid).name
    original = state(silero)
    for k in range(1, 5):
        silero.execute(SetNodeField(nid, "name", old + "xyzw"[:k]))
    assert silero.node(nid).name == old + "xyzw"
    assert silero.stack.labels() == [f"Rename node {old!r} → {old + 'xyzw'!r}"]
    silero.undo()
    assert state(silero) == original
    silero.redo()
    assert silero.node(nid).name == old + "xyzw"
    # a save breaks the merge: the next keystroke is a new undo step
    silero.stack.set_clean()
    silero.execute(SetNodeField(nid, "name", "conv1"))
    assert silero.stack.labels() == [f"Rename node {old!r} → {old + 'xyzw'!r}", f"Rename node {old + 'xyzw'!r} → 'conv1'"]
    silero.execute(SetNodeField(nid, "name", "conv12"))
    assert silero.stack.undo_label == f"Rename node {old + 'xyzw'!r} → 'conv12'"
    assert len(silero.stack.labels()) == 2
    # an undo breaks it too
    silero.undo()
    silero.execute(SetNodeField(nid, "name", "again"))
    silero.execute(SetNodeField(nid, "name", "again2"))
    assert len(silero.stack.labels()) == 2
    # another field or another node does not merge
    silero.execute(SetNodeField(nid, "doc_string", "d"))
    silero.execute(SetNodeField(first(silero, "Shape"), "name", "s"))
    assert len(silero.stack.labels()) == 4
    silero.undo_all()
    assert state(silero) == original


def test_set_node_fields(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    nid = doc.scope(sid).node_ids[0]
    node = doc.node(nid)
    cmd = apply(doc, SetNodeField(nid, "name", "conv1"))
    assert node.name == "conv1"
    cmd = apply(doc, SetNodeField(nid, "name", ""))  # clearing restores "not set" on undo
    assert not node.HasField("name")
    apply(doc, SetNodeField(nid, "op_type", "Sub"))
    assert doc.node(nid).op_type == "Sub"
    cmd = apply(doc, SetNodeField(nid, "domain", "custom"))
    assert cmd.label == "Change domain"
    apply(doc, SetNodeField(nid, "doc_string", "why this node is here"))
    apply(doc, SetNodeField(nid, "overload", "v2"))
    refuse(doc, SetNodeField(nid, "input", "x"), "no editable field 'input'")
    refuse(doc, SetNodeField(nid, "op_type", "not valid"), "not a valid identifier")
    refuse(doc, SetNodeField(nid, "name", 3), "must be text")
    refuse(doc, SetNodeField(-5, "name", "x"), "no node with id -5")


def test_rename_label_quotes_the_old_and_new_names() -> None:
    doc = Document.new()
    cmd = doc.execute(AddNode(0, "Relu", name="conv1"))
    assert doc.execute(SetNodeField(cmd.node_id, "name", "conv2")).label == "Rename node 'conv1' → 'conv2'"
    assert doc.stack.undo_label == "Rename node 'conv1' → 'conv2'"
    label = doc.execute(SetNodeField(cmd.node_id, "op_type", "Sigmoid")).label
    assert label == "Change op type of 'conv2' to Sigmoid"


def test_set_node_input_and_ports(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    scope = doc.scope(sid)
    nid = next(n for n in scope.node_ids if len(doc.node(n).input) >= 1)
    node = doc.node(nid)
    apply(doc, SetNodeInput(nid, 0, "elsewhere"))
    assert node.input[0] == "elsewhere" and (nid, 0) in doc.consumers(sid, "elsewhere")
    apply(doc, SetNodeInput(nid, 0, ""))
    refuse(doc, SetNodeInput(nid, len(node.input), "x"), "has no input")
    refuse(doc, SetNodeInput(nid, 0, node.output[0]), "own output")
    apply(doc, AddNodePort(nid, "input", "extra"))
    assert node.input[-1] == "extra"
    apply(doc, AddNodePort(nid, "output", "extra_out", 0))
    assert node.output[0] == "extra_out" and doc.producer(sid, "extra_out") == nid
    refuse(doc, AddNodePort(nid, "output", "extra_out"), "already has a producer")
    refuse(doc, AddNodePort(nid, "side", "q"), "input or output")
    refuse(doc, AddNodePort(nid, "input", "q", 99), "outside")
    apply(doc, RemoveNodePort(nid, "output", 0))
    apply(doc, RemoveNodePort(nid, "input", len(node.input) - 1))
    refuse(doc, RemoveNodePort(nid, "input", 99), "has no input 99")


def test_rewire_refuses_cycles_through_bodies(nested: Document) -> None:
    # the If's else branch captures "h": Relu (producing h) must not read the If's output
    relu = by_name(nested, "relu")
    refuse(nested, SetNodeInput(relu, 0, "y"), "would make a cycle")
    refuse(nested, AddNodePort(relu, "input", "y"), "would make a cycle")
    apply(nested, SetNodeInput(by_name(nested, "mul"), 1, "x"))


def test_rewire_refuses_cycles() -> None:
    doc = open_doc(backend("test_scan9_sum"))
    body = scope_where(doc, "body")
    add = first(doc, "Add", body)
    ident = first(doc, "Identity", body)
    refuse(doc, SetNodeInput(add, 0, doc.node(ident).output[0]), "would make a cycle")
    refuse(doc, AddNodePort(add, "input", "scan_out"), "would make a cycle")


# -- attributes -----------------------------------------------------------------------------------
def _graph() -> onnx.GraphProto:
    return helper.make_graph(
        [helper.make_node("Identity", ["gi"], ["go"], name="inner")], "g",
        [helper.make_tensor_value_info("gi", T.FLOAT, [1])],
        [helper.make_tensor_value_info("go", T.FLOAT, [1])],
    )


def _sparse() -> onnx.SparseTensorProto:
    return helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([5.0], np.float32), "v"),
        numpy_helper.from_array(np.array([1], np.int64), "i"), [3])


ATTRIBUTE_VALUES = [
    (A.FLOAT, 0.5, lambda a: a.f == 0.5),
    (A.INT, 7, lambda a: a.i == 7),
    (A.STRING, "same", lambda a: a.s == b"same"),
    (A.TENSOR, np.arange(4, dtype=np.float32), lambda a: numpy_helper.to_array(a.t).tolist() == [0, 1, 2, 3]),
    (A.GRAPH, _graph(), lambda a: a.g.node[0].name == "inner"),
    (A.SPARSE_TENSOR, _sparse(), lambda a: list(a.sparse_tensor.dims) == [3]),
    (A.TYPE_PROTO, helper.make_tensor_type_proto(T.FLOAT, [2, "N"]), lambda a: a.tp.tensor_type.elem_type == T.FLOAT),
    (A.FLOATS, [0.5, 1.5], lambda a: list(a.floats) == [0.5, 1.5]),
    (A.INTS, [1, 2, 3], lambda a: list(a.ints) == [1, 2, 3]),
    (A.STRINGS, ["a", "b"], lambda a: list(a.strings) == [b"a", b"b"]),
    (A.TENSORS, [numpy_helper.from_array(np.ones(2, np.int64))], lambda a: len(a.tensors) == 1),
    (A.GRAPHS, [_graph(), _graph()], lambda a: len(a.graphs) == 2),
    (A.SPARSE_TENSORS, [_sparse()], lambda a: len(a.sparse_tensors) == 1),
    (A.TYPE_PROTOS, [helper.make_tensor_type_proto(T.INT8, [1])], lambda a: len(a.type_protos) == 1),
]


@pytest.mark.parametrize("attr_type,value,check", ATTRIBUTE_VALUES, ids=[A.AttributeType.Name(t) for t, _, _ in ATTRIBUTE_VALUES])
@pytest.mark.parametrize("where", ["main", "subgraph", "function"])
def test_every_attribute_type_set_retype_remove(attr_type, value, check, where) -> None:  # noqa: ANN001
    doc = Document(function_model())
    apply(doc, SetOpsetImport("custom", 1))
    if where == "main":
        sid = doc.index.main
    elif where == "function":
        sid = fn_scope(doc, "Scale")
    else:
        holder = apply(doc, AddNode(0, "Holder", domain="custom", attributes={"body": _graph()}))
        sid = doc.index.children[holder.node_id][0]
    nid = apply(doc, AddNode(sid, "Custom", domain="custom", inputs=["gi"], outputs=["co"])).node_id
    scopes = len(doc.index.scopes)
    cmd = apply(doc, SetAttribute(nid, "v", value))
    (attr,) = doc.node(nid).attribute
    assert attr.type == attr_type and check(attr)
    assert cmd.label == "Set Custom.v of 'Custom'"
    holds_graphs = attr_type in (A.GRAPH, A.GRAPHS)
    assert len(doc.index.scopes) == scopes + (len(value) if attr_type == A.GRAPHS else int(holds_graphs))
    # change its type: the same name now holds an int, then the original again
    apply(doc, SetAttribute(nid, "v", 3, A.INT))
    assert doc.node(nid).attribute[0].type == A.INT and len(doc.index.scopes) == scopes
    apply(doc, SetAttribute(nid, "v", value, attr_type))
    assert check(doc.node(nid).attribute[0])
    apply(doc, RemoveAttribute(nid, "v"))
    assert len(doc.node(nid).attribute) == 0 and len(doc.index.scopes) == scopes
    refuse(doc, SetAttribute(nid, "v", []), "cannot store")  # no schema, no type: ambiguous
    refuse(doc, SetAttribute(nid, "v", {"a": 1}), "cannot store")


def test_attribute_refusals_and_schema(silero: Document) -> None:
    conv = first(silero, "Conv")
    apply(silero, SetAttribute(conv, "group", 2))
    apply(silero, SetAttribute(conv, "dilations", [2]))
    apply(silero, SetAttribute(conv, "auto_pad", "VALID"))
    refuse(silero, SetAttribute(conv, "group", "many"), "must be INT")
    refuse(silero, SetAttribute(conv, "group", 1.5), "must be INT")
    refuse(silero, SetAttribute(conv, "group", 2.0, A.FLOAT), "must be INT, not FLOAT")
    refuse(silero, SetAttribute(conv, "bogus", 1), "Conv has no attribute 'bogus'")
    refuse(silero, SetAttribute(conv, "", 1), "needs a name")
    refuse(silero, SetAttribute(conv, "dilations", ["a"]), "must be INTS")
    apply(silero, SetAttribute(conv, "dilations", []))  # an empty list is a valid INTS
    refuse(silero, RemoveAttribute(conv, "bogus"), "has no attribute 'bogus'")
    refuse(silero, SetAttribute(10**6, "group", 1), "no node")
    # without the schema check any type goes (a "change type" for experts)
    apply(silero, SetAttribute(conv, "group", 2.0, A.FLOAT, check_schema=False))
    # an attribute that references a function attribute (ref_attr_name) is kept as given
    fdoc = Document(function_model())
    k = first(fdoc, "Constant", fn_scope(fdoc, "Scale"))
    ref = onnx.AttributeProto(name="value_float", type=A.FLOAT, ref_attr_name="beta")
    apply(fdoc, SetAttribute(k, "value_float", ref))
    assert fdoc.node(k).attribute[0].ref_attr_name == "beta"


def test_attribute_edits_merge_per_attribute(silero: Document) -> None:
    conv = first(silero, "Conv")
    original = state(silero)
    for g in (2, 3, 4):
        silero.execute(SetAttribute(conv, "group", g))
    silero.execute(SetAttribute(conv, "dilations", [2]))
    silero.execute(SetAttribute(conv, "dilations", [3]))
    assert len(silero.stack.labels()) == 2
    silero.undo()
    silero.undo()
    assert state(silero) == original


def test_graph_attribute_replacement_keeps_other_bodies_ids(silero: Document) -> None:
    if_nid = first(silero, "If")
    then_sid, else_sid = silero.index.children[if_nid][0], silero.index.children[if_nid][1]
    attr_of = {silero.scope(s).attr: s for s in (then_sid, else_sid)}
    keep = attr_of["then_branch"]
    keep_ids = list(silero.scope(keep).node_ids)
    new_else = onnx.GraphProto()
    new_else.CopyFrom(silero.scope(attr_of["else_branch"]).graph)
    new_else.name = "replaced"
    apply(silero, SetAttribute(if_nid, "else_branch", new_else))
    assert silero.scope(keep).node_ids == keep_ids


# -- values -----------------------------------------------------------------------------------------
def test_rename_value_follows_every_use(nested: Document) -> None:
    # "w": an initializer, used by Neg in the then-branch and captured by the Loop body
    cmd = apply(nested, RenameValue(0, "w", "weights"))
    assert cmd.label == "Rename value 'w' → 'weights'"
    assert nested.scope(0).initializer_names()[0] == "weights"
    assert list(nested.node(by_name(nested, "then_neg")).input) == ["weights"]
    assert list(nested.node(by_name(nested, "body_add")).input) == ["acc_in", "weights"]
    # graph input and output names follow too
    apply(nested, RenameValue(0, "x", "input"))
    assert nested.scope(0).input_names()[0] == "input"
    assert list(nested.node(by_name(nested, "relu")).input) == ["input"]
    assert list(nested.node(by_name(nested, "then_loop")).input)[2] == "input"
    apply(nested, RenameValue(0, "z", "result"))
    assert nested.scope(0).output_names() == ["result"]
    assert nested.producer(0, "result") == by_name(nested, "mul")
    # a value of a body: producer and body output follow, the outer graph is untouched
    then = scope_where(nested, "then_branch")
    apply(nested, RenameValue(then, "looped", "loop_result"))
    assert nested.scope(then).output_names() == ["loop_result"]
    onnx.checker.check_model(nested.model, full_check=True)


def test_rename_value_keeps_value_id(nested: Document) -> None:
    vid = nested.value_id(0, "h")
    nested.execute(RenameValue(0, "h", "hidden"))
    assert nested.value_id(0, "hidden") == vid
    nested.undo()
    assert nested.value_id(0, "h") == vid


def test_rename_value_of_a_captured_value_from_inside_a_body(nested: Document) -> None:
    """Renaming, inside a body, a value the body captures renames it where it is defined."""
    body = scope_where(nested, "body")
    apply(nested, RenameValue(body, "w", "weights"))
    assert nested.scope(0).initializer_names()[0] == "weights"
    assert list(nested.node(by_name(nested, "then_neg")).input) == ["weights"]
    onnx.checker.check_model(nested.model, full_check=True)


def test_rename_value_refusals(nested: Document) -> None:
    refuse(nested, RenameValue(0, "nope", "b"), "no value 'nope'")
    refuse(nested, RenameValue(0, "x", "h"), "already used")
    refuse(nested, RenameValue(0, "x", ""), "needs a name")
    then = scope_where(nested, "then_branch")
    refuse(nested, RenameValue(then, "bias", "c"), "enclosing graph")
    # "acc_out" is a name of the Loop body, which captures "w": renaming w to it would
    # make the body read its own value instead of the weights
    refuse(nested, RenameValue(0, "w", "acc_out"),
           "'acc_out' is already used in main/branch.then_branch/then_loop.body, a graph nested in this one")
    # even for a value the body does not use: names must stay unique across nested scopes
    refuse(nested, RenameValue(0, "c", "acc_out"), "already used in main/branch.then_branch/then_loop.body")
    refuse(nested, RenameValue(42, "x", "y2"), "no graph with id 42")


def test_rename_value_in_functions(fdoc: Document) -> None:
    sid = fn_scope(fdoc, "AddRelu")
    apply(fdoc, RenameValue(sid, "a", "lhs"))
    assert list(fdoc.scope(sid).graph.input) == ["lhs", "b"]
    assert list(fdoc.node(fdoc.scope(sid).node_ids[0]).input) == ["lhs", "b"]
    apply(fdoc, RenameValue(sid, "c", "out"))
    assert list(fdoc.scope(sid).graph.output) == ["out"]
    onnx.checker.check_model(fdoc.model)


def test_value_types_and_dims(silero: Document) -> None:
    doc = silero
    cmd = apply(doc, SetValueType(0, "input", T.FLOAT16, ["batch", 512]))

    def tt() -> onnx.TypeProto.Tensor:
        return doc.model.graph.input[0].type.tensor_type

    assert tt().elem_type == T.FLOAT16 and tt().shape.dim[0].dim_param == "batch" and tt().shape.dim[1].dim_value == 512
    assert cmd.label == "Set type of 'input'"
    apply(doc, SetDimension(0, "input", 0, 1))
    assert tt().shape.dim[0].dim_value == 1
    apply(doc, SetDimension(0, "input", -1, "samples"))
    assert tt().shape.dim[1].dim_param == "samples"
    apply(doc, SetDimension(0, "input", 1, None))
    assert not tt().shape.dim[1].HasField("dim_value") and not tt().shape.dim[1].HasField("dim_param")
    apply(doc, SetValueType(0, "input", T.FLOAT, None))  # unranked
    assert not doc.model.graph.input[0].type.tensor_type.HasField("shape")
    refuse(doc, SetDimension(0, "input", 0, 3), "no known shape")
    # an intermediate value without a declared type gets a value_info entry
    inner = doc.node(first(doc, "Conv")).output[0]
    n_vi = len(doc.model.graph.value_info)
    apply(doc, SetValueType(0, inner, T.FLOAT, [1, "C", 7]))
    assert len(doc.model.graph.value_info) == n_vi + 1
    refuse(doc, SetValueType(0, inner, T.FLOAT, [-3]), "negative")
    refuse(doc, SetValueType(0, inner, 12345, [1]), "unknown element type")
    refuse(doc, SetValueType(0, inner, T.UNDEFINED, [1]), "unknown element type 0")
    refuse(doc, AddGraphValue(0, "input", "q", T.UNDEFINED), "unknown element type 0")
    refuse(doc, SetValueType(0, inner, T.FLOAT, [1.5]), "neither a size nor a name")
    refuse(doc, SetValueType(0, inner, T.FLOAT, [" "]), "needs a name")
    refuse(doc, SetValueType(0, "nope", T.FLOAT, [1]), "no value 'nope'")
    weight = doc.scope(0).initializer_names()[0]
    refuse(doc, SetValueType(0, weight, T.FLOAT, [1]), "is an initializer")
    refuse(doc, SetDimension(0, inner, 5, 1), "outside rank 3")


def test_value_types_in_bodies_and_functions(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    name = doc.node(doc.scope(sid).node_ids[0]).output[0]
    apply(doc, SetValueType(sid, name, T.INT64, ["k", 2]))
    apply(doc, SetDimension(sid, name, 0, 4))


# -- graph inputs and outputs -------------------------------------------------------------------------
def test_graph_inputs_outputs(silero: Document) -> None:
    doc = silero
    cmd = apply(doc, AddGraphValue(0, "input", "extra", T.FLOAT, ["N", 3]))
    assert cmd.label == "Add graph input 'extra'"
    assert doc.scope(0).input_names()[-1] == "extra"
    value = doc.node(first(doc, "Conv")).output[0]
    apply(doc, AddGraphValue(0, "output", value, position=0))
    assert doc.scope(0).output_names()[0] == value
    apply(doc, MoveGraphValue(0, "input", "extra", 0))
    assert doc.scope(0).input_names()[0] == "extra"
    apply(doc, MoveGraphValue(0, "output", "stateN", 0))
    assert doc.scope(0).output_names()[0] == "stateN"
    apply(doc, SetValueType(0, "extra", T.INT32, [2]))
    apply(doc, RemoveGraphValue(0, "input", "sr"))
    assert "sr" not in doc.scope(0).input_names()
    apply(doc, RemoveGraphValue(0, "output", "output"))
    refuse(doc, AddGraphValue(0, "input", "extra"), "already a graph input")
    refuse(doc, AddGraphValue(0, "input", value), "produced by a node")
    refuse(doc, AddGraphValue(0, "output", "nothing_here"), "no value 'nothing_here'")
    then = scope_where(doc, "then_branch")
    captured = next(n for n in doc.scope(then).consumers if n not in doc.scope(then).defined_names())
    refuse(doc, AddGraphValue(then, "output", captured), "no value")
    refuse(doc, AddGraphValue(0, "middle", "q"), "input or output")
    refuse(doc, AddGraphValue(0, "input", "q", position=99), "outside")
    refuse(doc, RemoveGraphValue(0, "input", "nope"), "not a graph input")
    refuse(doc, MoveGraphValue(0, "input", "extra", 99), "outside")
    refuse(doc, MoveGraphValue(0, "output", "nope", 0), "not a graph output")


def test_graph_io_in_bodies_and_functions(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    scope = doc.scope(sid)
    apply(doc, AddGraphValue(sid, "input", "fresh_in", T.FLOAT, [1]))
    value = doc.node(scope.node_ids[0]).output[0]
    if value not in scope.output_names():
        apply(doc, AddGraphValue(sid, "output", value))
    if scope.input_names()[0] != "fresh_in":
        apply(doc, MoveGraphValue(sid, "input", "fresh_in", 0))
    apply(doc, RemoveGraphValue(sid, "input", "fresh_in"))
    outs = scope.output_names()
    apply(doc, RemoveGraphValue(sid, "output", outs[-1]))


# -- initializers and constants --------------------------------------------------------------------------
def test_initializer_add_replace_remove(silero: Document) -> None:
    doc = silero
    cmd = apply(doc, AddInitializer(0, "new_w", np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert cmd.label == "Add initializer 'new_w'"
    pos, t = doc.initializer(0, "new_w")
    assert numpy_helper.to_array(t).shape == (2, 3)
    apply(doc, ReplaceInitializer(0, "new_w", np.array([1, 2], np.int64)))
    assert numpy_helper.to_array(doc.initializer(0, "new_w")[1]).tolist() == [1, 2]
    apply(doc, RenameValue(0, "new_w", "renamed_w"))
    assert doc.initializer(0, "renamed_w")[0] == pos
    apply(doc, RemoveInitializer(0, "renamed_w"))
    assert doc.initializer(0, "renamed_w") is None
    used = doc.scope(0).initializer_names()[1]
    refuse(doc, RemoveInitializer(0, used), "is used by")
    apply(doc, RemoveInitializer(0, used, force=True))
    taken = doc.scope(0).initializer_names()[0]
    refuse(doc, AddInitializer(0, taken, np.ones(1)), "already defined")
    refuse(doc, AddInitializer(0, doc.node(first(doc, "Conv")).output[0], np.ones(1)), "already defined")
    refuse(doc, AddInitializer(0, "", np.ones(1)), "needs a name")
    refuse(doc, ReplaceInitializer(0, "nope", np.ones(1)), "no initializer 'nope'")
    fdoc = Document(function_model())
    refuse(fdoc, AddInitializer(fn_scope(fdoc, "AddRelu"), "w", np.ones(1)), "functions have no initializers")


@pytest.mark.parametrize("value", [np.array([1, 2], dtype=object), None, np.array(["a", 3], dtype=object)],
                         ids=["boxed-ints", "none", "mixed"])
def test_arrays_that_are_not_tensors_are_refused(value) -> None:  # noqa: ANN001
    doc = Document.new(opset=17)
    const = doc.execute(AddNode(0, "Constant", outputs=["k"], attributes={"value_int": 1})).node_id
    for cmd in (AddInitializer(0, "w", value), SetConstantValue(const, value)):
        err = refuse(doc, cmd, "cannot make a tensor")
        assert err.details is None


def test_initializers_in_subgraphs(silero: Document) -> None:
    sid = scope_where(silero, "then_branch")
    apply(silero, AddInitializer(sid, "body_w", np.ones(3, np.float32)))
    apply(silero, CastInitializer(sid, "body_w", T.FLOAT16))
    apply(silero, InitializerToConstant(sid, "body_w"))


@pytest.mark.parametrize("elem_type,np_type", [
    (T.FLOAT16, np.float16), (T.BFLOAT16, ml_dtypes.bfloat16), (T.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    (T.DOUBLE, np.float64), (T.INT32, np.int32), (T.INT8, np.int8),
])
def test_cast_initializer(silero: Document, elem_type: int, np_type) -> None:  # noqa: ANN001
    name = silero.scope(0).initializer_names()[1]
    original = numpy_helper.to_array(silero.initializer(0, name)[1])
    assert original.dtype == np.float32
    cmd = apply(silero, CastInitializer(0, name, elem_type))
    assert cmd.label == f"Cast initializer {name!r} to {T.DataType.Name(elem_type)}"
    t = silero.initializer(0, name)[1]
    assert t.data_type == elem_type and list(t.dims) == list(original.shape)
    got = numpy_helper.to_array(t)
    np.testing.assert_array_equal(got.astype(np.float64), original.astype(np_type).astype(np.float64))


def test_cast_refusals(silero: Document) -> None:
    name = silero.scope(0).initializer_names()[1]
    refuse(silero, CastInitializer(0, name, 999), "unknown element type")
    refuse(silero, CastInitializer(0, name, T.UNDEFINED), "unknown element type")
    refuse(silero, CastInitializer(0, "nope", T.FLOAT16), "no initializer 'nope'")
    silero.execute(CastInitializer(0, name, T.FLOAT))  # already float: no-op, no undo step
    assert not silero.stack.can_undo
    err = refuse(silero, CastInitializer(0, name, T.STRING), "cannot cast FLOAT initializer .* to STRING")
    assert err.details is None  # a clean refusal, not a crash inside the command
    apply(silero, AddInitializer(0, "words", np.array(["a", "b"], dtype=object)))
    refuse(silero, CastInitializer(0, "words", T.FLOAT), "cannot cast STRING initializer 'words' to FLOAT")


def test_cast_initializer_to_every_numeric_type() -> None:
    doc = Document.new(opset=21)
    doc.execute(AddInitializer(0, "w", np.array([1.5, -2.0, 3.0], np.float32)))
    raw = doc.serialize()
    for elem_type in T.DataType.values():
        if elem_type in (T.UNDEFINED, T.STRING):
            continue
        doc.execute(CastInitializer(0, "w", elem_type))
        t = doc.initializer(0, "w")[1]
        assert t.data_type == elem_type and list(t.dims) == [3]
        assert numpy_helper.to_array(t).shape == (3,)
        doc.check_invariants()
        while doc.stack.index > 1:
            doc.undo()
        assert doc.serialize() == raw


def _text(v):  # noqa: ANN001, ANN202 - string tensors come back as str or bytes
    if isinstance(v, list):
        return [_text(x) for x in v]
    return v.decode() if isinstance(v, bytes) else v


CONSTANT_FORMS = [
    ("value", numpy_helper.from_array(np.array([[1.5, 2.5]], np.float32)), [[1.5, 2.5]], T.FLOAT),
    ("value_float", 2.5, 2.5, T.FLOAT),
    ("value_floats", [1.0, 2.0], [1.0, 2.0], T.FLOAT),
    ("value_int", 7, 7, T.INT64),
    ("value_ints", [3, 4], [3, 4], T.INT64),
    ("value_string", "hi", b"hi", T.STRING),
    ("value_strings", ["a", "b"], [b"a", b"b"], T.STRING),
]


@pytest.mark.parametrize("attr,value,expected,elem_type", CONSTANT_FORMS, ids=[c[0] for c in CONSTANT_FORMS])
def test_constant_to_initializer_and_back(attr, value, expected, elem_type) -> None:  # noqa: ANN001
    doc = Document.new(opset=17)
    const = doc.execute(AddNode(0, "Constant", outputs=["k"], attributes={attr: value})).node_id
    ident = doc.execute(AddNode(0, "Identity", inputs=["k"], outputs=["out"])).node_id
    cmd = apply(doc, ConstantToInitializer(const))
    assert cmd.label == "Convert Constant 'k' to initializer"
    _, t = doc.initializer(0, "k")
    assert t.data_type == elem_type
    got = numpy_helper.to_array(t)
    assert _text(got.tolist()) == _text(expected)
    cmd = apply(doc, InitializerToConstant(0, "k"))
    node = doc.node(cmd.node_id)
    assert node.op_type == "Constant" and list(node.output) == ["k"]
    assert doc.scope(0).position(cmd.node_id) < doc.scope(0).position(ident)
    np.testing.assert_array_equal(numpy_helper.to_array(node.attribute[0].t), got)


def test_constant_conversion_in_real_models_and_refusals(silero: Document) -> None:
    const = first(silero, "Constant")
    out = silero.node(const).output[0]
    apply(silero, ConstantToInitializer(const))
    assert silero.initializer(0, out) is not None
    sub = scope_where(silero, "then_branch")
    body_const = first(silero, "Constant", sub)
    apply(silero, ConstantToInitializer(body_const))
    refuse(silero, ConstantToInitializer(first(silero, "Conv")), "is not a Constant")
    refuse(silero, InitializerToConstant(0, "nope"), "no initializer 'nope'")
    apply(silero, AddGraphValue(0, "input", out, T.INT64, [1]))
    refuse(silero, InitializerToConstant(0, out), "also a graph input")
    fdoc = Document(function_model())
    k = first(fdoc, "Constant", fn_scope(fdoc, "Scale"))
    refuse(fdoc, ConstantToInitializer(k), "functions have no initializers")
    sparse = Document.new(opset=17)
    nid = sparse.execute(AddNode(0, "Constant", outputs=["s"], attributes={"sparse_value": _sparse()})).node_id
    refuse(sparse, ConstantToInitializer(nid), "sparse_value")


def test_initializer_to_constant_goes_before_nested_uses(nested: Document) -> None:
    """'w' is used inside the If branches and by a node after the If: the Constant must
    come before the If, not just before the first direct use."""
    nested.execute(AddNode(0, "Identity", inputs=["w"], outputs=["w_copy"]))
    cmd = apply(nested, InitializerToConstant(0, "w"))
    assert nested.scope(0).position(cmd.node_id) < nested.scope(0).position(by_name(nested, "branch"))
    onnx.checker.check_model(nested.model, full_check=True)


def test_set_constant_value(silero: Document) -> None:
    const = first(silero, "Constant")
    cmd = apply(silero, SetConstantValue(const, np.array([1, 2, 3], np.int64)))
    assert cmd.label == "Replace Constant value"
    assert numpy_helper.to_array(silero.node(const).attribute[0].t).tolist() == [1, 2, 3]
    doc = Document.new(opset=17)
    nid = doc.execute(AddNode(0, "Constant", outputs=["k"], attributes={"value_int": 3})).node_id
    apply(doc, SetConstantValue(nid, np.float32(2.0)))
    assert [a.name for a in doc.node(nid).attribute] == ["value"]
    refuse(silero, SetConstantValue(first(silero, "Conv"), np.ones(1)), "not a Constant")


# -- metadata -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [
    ("producer_name", "studio"), ("producer_version", "9.9"), ("domain", "ai.example"),
    ("model_version", 42), ("doc_string", "what this model does"), ("ir_version", 9),
])
def test_model_fields(silero: Document, field: str, value) -> None:  # noqa: ANN001
    cmd = apply(silero, SetModelField(field, value))
    assert getattr(silero.model, field) == value
    assert cmd.label == f"Set model {field.replace('_', ' ')}"


def test_model_field_refusals_and_unset_fields(silero: Document) -> None:
    refuse(silero, SetModelField("graph", 1), "no editable field 'graph'")
    refuse(silero, SetModelField("model_version", "3"), "must be int")
    refuse(silero, SetModelField("ir_version", True), "must be int")
    refuse(silero, SetModelField("ir_version", 0), "IR version 0")
    refuse(silero, SetModelField("ir_version", onnx.IR_VERSION + 1), "IR version")
    assert not silero.model.HasField("domain")
    apply(silero, SetModelField("domain", ""))  # setting an unset field to "" is an edit (presence)
    silero.undo()
    assert not silero.model.HasField("domain")


@pytest.mark.parametrize("owner", ["model", "main", "subgraph", "node", "function"])
def test_metadata_props(owner: str) -> None:
    doc = Document(function_model())
    holder = doc.execute(AddNode(0, "If", inputs=["c"], outputs=["o"],
                                 attributes={"then_branch": _graph(), "else_branch": _graph()}))
    target = {
        "model": ("model",), "main": ("scope", 0),
        "subgraph": ("scope", doc.index.children[holder.node_id][0]),
        "node": ("node", holder.node_id), "function": ("scope", fn_scope(doc, "Scale")),
    }[owner]
    cmd = apply(doc, SetMetadataProp("author", "me", target))
    assert cmd.label == "Set metadata 'author'"
    from editor.document.ops import resolve

    props = resolve(doc.index, target).metadata_props
    assert [(p.key, p.value) for p in props] == [("author", "me")]
    apply(doc, SetMetadataProp("license", "MIT", target))
    apply(doc, SetMetadataProp("author", "you", target))
    assert [(p.key, p.value) for p in props] == [("author", "you"), ("license", "MIT")]
    cmd = apply(doc, SetMetadataProp("author", None, target))
    assert cmd.label == "Remove metadata 'author'"
    assert [p.key for p in props] == ["license"]
    refuse(doc, SetMetadataProp("nope", None, target), "no metadata entry 'nope'")
    refuse(doc, SetMetadataProp("", "x", target), "needs a key")
    refuse(doc, SetMetadataProp("k", 3, target), "metadata values are text")


def test_metadata_prop_bad_owner(silero: Document) -> None:
    refuse(silero, SetMetadataProp("k", "v", ("node", 10**6)), "no node")
    refuse(silero, SetMetadataProp("k", "v", ("scope", 10**6)), "no graph")
    refuse(silero, SetMetadataProp("k", "v", ("wire", 1)), "no metadata_props")


def test_opset_imports(silero: Document) -> None:
    cmd = apply(silero, SetOpsetImport("ai.onnx", 17))
    assert silero.opset("") == 17 and cmd.label == "Set opset ai.onnx to 17"
    apply(silero, SetOpsetImport("com.example", 2))
    assert silero.opsets()["com.example"] == 2
    cmd = apply(silero, SetOpsetImport("com.example", None))
    assert cmd.label == "Remove opset import com.example"
    refuse(silero, SetOpsetImport("", None), "still use domain 'ai.onnx'")
    refuse(silero, SetOpsetImport("nowhere", None), "does not import 'nowhere'")
    refuse(silero, SetOpsetImport("x", 0), "positive integer")


def test_graph_fields(anywhere) -> None:  # noqa: ANN001
    doc, sid = anywhere
    apply(doc, SetGraphField(sid, "doc_string", "the body"))
    apply(doc, SetGraphField(sid, "doc_string", ""))
    refuse(doc, SetGraphField(sid, "node", "x"), "no editable field 'node'")
    refuse(doc, SetGraphField(sid, "name", 5), "must be text")
    if doc.scope(sid).kind != "function":
        apply(doc, SetGraphField(sid, "name", "renamed_graph"))


# -- composites ------------------------------------------------------------------------------------------------
def test_composite_is_one_step_and_refusal_rolls_back_all_parts(silero: Document) -> None:
    conv = first(silero, "Conv")
    good = CompositeCommand("Tidy", [SetNodeField(conv, "name", "c1"), SetAttribute(conv, "group", 1)])
    apply(silero, good)
    assert silero.stack.labels() == ["Tidy"]
    bad = CompositeCommand("Broken", [SetNodeField(conv, "name", "c2"), DeleteNodes([10**6])])
    refuse(silero, bad, "no node with id")


def test_unexpected_errors_roll_back_and_become_command_errors(silero: Document) -> None:
    from editor.commands import FunctionCommand
    from editor.document.ops import SetField

    def boom(doc: Document, tx) -> None:  # noqa: ANN001
        tx.apply(SetField(("model",), "producer_name", "half-done"))
        raise RuntimeError("bug")

    err = refuse(silero, FunctionCommand("Boom", boom), "Boom failed: bug")
    assert "RuntimeError" in err.details


def test_rename_a_sparse_initializer_and_value_info() -> None:
    sparse = _sparse()
    sparse.values.name = "sp"
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "sp"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", T.FLOAT, [3])],
        [helper.make_tensor_value_info("y", T.FLOAT, [3])],
        sparse_initializer=[sparse],
        value_info=[helper.make_tensor_value_info("sp", T.FLOAT, [3])],
    )
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    apply(doc, RenameValue(0, "sp", "dense_soon"))
    g = doc.model.graph
    assert g.sparse_initializer[0].values.name == "dense_soon" and g.value_info[0].name == "dense_soon"
    assert list(g.node[0].input) == ["x", "dense_soon"]
    onnx.checker.check_model(doc.model)
    refuse(doc, AddInitializer(0, "dense_soon", np.ones(3, np.float32)), "already defined")


def test_labels_read_well(nested: Document) -> None:
    doc = nested
    relu, mul = by_name(doc, "relu"), by_name(doc, "mul")
    cases = [
        (AddNode(0, "Sigmoid", inputs=["x"]), "Add Sigmoid node"),
        (SetNodeField(relu, "name", "act"), "Rename node 'relu' → 'act'"),
        (SetNodeField(relu, "op_type", "Elu"), "Change op type of 'act' to Elu"),
        (SetNodeInput(mul, 1, "x"), "Connect input"),
        (SetNodeInput(mul, 1, ""), "Disconnect input"),
        (AddNodePort(mul, "output", "extra"), "Add node output"),
        (RemoveNodePort(mul, "output", 1), "Remove node output"),
        (SetAttribute(relu, "alpha", 0.5), "Set Elu.alpha of 'act'"),
        (RemoveAttribute(relu, "alpha"), "Remove attribute 'alpha'"),
        (RenameValue(0, "h", "hidden"), "Rename value 'h' → 'hidden'"),
        (SetValueType(0, "hidden", T.FLOAT, ["N"]), "Set type of 'hidden'"),
        (SetDimension(0, "hidden", 0, 4), "Set dimension 0 of 'hidden'"),
        (AddGraphValue(0, "output", "hidden"), "Add graph output 'hidden'"),
        (MoveGraphValue(0, "output", "hidden", 0), "Move graph output 'hidden'"),
        (RemoveGraphValue(0, "output", "hidden"), "Remove graph output 'hidden'"),
        (AddInitializer(0, "k", np.ones(2, np.float32)), "Add initializer 'k'"),
        (ReplaceInitializer(0, "k", np.zeros(2, np.float32)), "Replace initializer 'k'"),
        (CastInitializer(0, "k", T.FLOAT16), "Cast initializer 'k' to FLOAT16"),
        (InitializerToConstant(0, "k"), "Convert initializer 'k' to Constant"),
        (RemoveInitializer(0, "trip", force=True), "Remove initializer 'trip'"),
        (SetModelField("producer_name", "me"), "Set model producer name"),
        (SetGraphField(0, "doc_string", "d"), "Set graph doc string"),
        (SetMetadataProp("k", "v"), "Set metadata 'k'"),
        (SetOpsetImport("ai.onnx.ml", 3), "Set opset ai.onnx.ml to 3"),
        (DeleteNodes([by_name(doc, "then_neg")]), "Delete node 'then_neg'"),
        (DeleteNodes([by_name(doc, "mul")], reconnect=True), "Delete node 'mul' and reconnect"),
    ]
    for cmd, label in cases:
        doc.execute(cmd)
        assert doc.stack.undo_label == label
    k = next(nid for _, nid, n in doc.index.iter_nodes() if n.op_type == "Constant")
    doc.execute(ConstantToInitializer(k))
    assert doc.stack.undo_label == "Convert Constant 'k' to initializer"
    labels = doc.stack.labels()
    doc.undo_all()
    assert doc.stack.labels() == labels and doc.stack.redo_label == "Add Sigmoid node"


def test_wrong_typed_arguments_never_change_the_document() -> None:
    """Every command, every argument replaced by a value of the wrong type: execute either
    applies it or refuses with a CommandError, and a refusal leaves the document as it was.
    (Constructors may reject nonsense eagerly with a TypeError-like error: nothing ran.)"""
    import inspect

    import editor.commands as commands

    weird = [None, 3, "x", -1, 1.5, [], {}, b"x", "", ("model",), 10**9]
    good = {"scope": 0, "node_id": 0, "node_ids": [0], "op_type": "Relu", "field": "name", "value": "v",
            "index": 0, "name": "x", "kind": "input", "old": "x", "new": "x2", "elem_type": 1, "shape": [1],
            "axis": 0, "dim": 1, "key": "k", "owner": ("model",), "domain": "", "version": 3}
    raw = nested_model().SerializeToString()
    doc = Document(onnx.load_from_string(raw))
    snapshot = doc.index.snapshot()
    for cname in commands.__all__:
        cls = getattr(commands, cname)
        if cname in ("CompositeCommand", "FunctionCommand"):
            continue
        params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
        for p in params:
            for w in weird:
                args = {q.name: good.get(q.name, q.default if q.default is not inspect.Parameter.empty else "x")
                        for q in params}
                args[p.name] = w
                pos = [args[q.name] for q in params if q.kind == q.POSITIONAL_OR_KEYWORD]
                kw = {q.name: args[q.name] for q in params if q.kind == q.KEYWORD_ONLY}
                try:
                    cmd = cls(*pos, **kw)
                except (CommandError, TypeError, ValueError, AttributeError):
                    continue
                try:
                    doc.execute(cmd)
                except CommandError:
                    assert doc.serialize() == raw and doc.index.snapshot() == snapshot, f"{cname}({p.name}={w!r})"
                    continue
                doc.check_invariants()
                doc.undo_all()
                assert doc.serialize() == raw and doc.index.snapshot() == snapshot, f"undo {cname}({p.name}={w!r})"
