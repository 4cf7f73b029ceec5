"""Property-based tests: random command sequences on real models keep the document sound.

A hypothesis state machine opens a model, then applies commands whose kinds and arguments
are drawn from the document's current state (node ids, value names, attributes, graph
inputs ...), including refused ones (bad ids, taken names, out-of-range positions, wrong
types). After every step:

* the index still describes the protobuf (``check_invariants``);
* a refused command changed nothing (same bytes, same index snapshot, same stack);
* an accepted command undoes to exactly the state before it and redoes to exactly the state
  after it (bytes and ids);

and at the end undo-all restores the original bytes and index, and redo-all followed by
undo-all does too.
"""

from __future__ import annotations

import os
from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

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
from editor.commands.values import names_in_scope
from editor.document import Document
from editor.errors import CommandError
from tests.editor.test_document_models import REAL, backend, function_model, nested_model

A = onnx.AttributeProto
T = onnx.TensorProto

SOURCES = {
    "silero": lambda: REAL / "silero_vad_16k_op15.onnx",
    "logreg": lambda: REAL / "ort_logreg_iris.onnx",
    "kaldi": lambda: REAL / "asr_prep_kaldi.onnx",
    "ppocr_cls": lambda: REAL / "ppocr_mobile_v2_cls.onnx",
    "loop11": lambda: backend("test_loop11"),
    "scan9": lambda: backend("test_scan9_sum"),
    "if_seq": lambda: backend("test_if_seq"),
    "functions": None,
    "nested": None,
}


@lru_cache(maxsize=None)
def model_bytes(key: str) -> bytes:
    if key == "functions":
        return function_model().SerializeToString()
    if key == "nested":
        return nested_model().SerializeToString()
    with open(SOURCES[key](), "rb") as f:
        return f.read()


def state(doc: Document) -> tuple[bytes, dict]:
    return doc.serialize(), doc.index.snapshot()


def node_bytes(doc: Document) -> dict[int, bytes]:
    return {nid: node.SerializeToString() for nid, node in doc.index.nodes.items()}


def check_changeset(doc: Document, before: dict[int, bytes], cs, what: str) -> None:  # noqa: ANN001
    """The ChangeSet of a step names exactly the nodes that came and went, and every node
    whose bytes changed (directly, or through a body it holds)."""
    after = node_bytes(doc)
    added, removed = after.keys() - before.keys(), before.keys() - after.keys()
    assert cs.nodes_added == added, f"{what}: nodes_added {sorted(cs.nodes_added)} != {sorted(added)}"
    assert cs.nodes_removed == removed, f"{what}: nodes_removed {sorted(cs.nodes_removed)} != {sorted(removed)}"
    assert cs.nodes_changed <= after.keys(), f"{what}: nodes_changed names nodes that are gone"
    for nid in before.keys() & after.keys():
        if before[nid] == after[nid] or nid in cs.nodes_changed:
            continue
        inner = set(doc.index.nested_node_ids(nid))
        assert inner & (cs.nodes_changed | cs.nodes_added) or inner_scopes(doc, nid) & cs.scopes, (
            f"{what}: node {nid} ({doc.node(nid).op_type}) changed but the ChangeSet does not say so")


def inner_scopes(doc: Document, nid: int) -> set[int]:
    out = set(doc.index.children.get(nid, ()))
    for sid in list(out):
        for inner in doc.scope(sid).node_ids:
            out |= inner_scopes(doc, inner)
    return out


NAMES = st.sampled_from(["x", "y", "new_value", "tmp", "w", "bias", "", "a b", "ü", "t"])
TEXT = st.text(alphabet="abcXYZ_09 .:/", max_size=8)
BAD_IDS = st.sampled_from([-1, 10**9, "0", None])
ELEM_TYPES = st.sampled_from([T.FLOAT, T.FLOAT16, T.BFLOAT16, T.INT64, T.INT32, T.INT8, T.BOOL, T.DOUBLE,
                              T.FLOAT8E4M3FN, T.UINT8, T.STRING, 0, 999])
DIMS = st.one_of(st.none(), st.integers(-2, 8), st.sampled_from(["N", "batch", "", " "]))
SMALL_ARRAYS = st.sampled_from([
    np.array([1.0, 2.0], np.float32),
    np.array(3, np.int64),
    np.zeros((2, 3), np.float16),
    np.array([True, False]),
    np.array(["a", "bc"], dtype=object),
    np.arange(6, dtype=np.int32).reshape(2, 3),
])


def attr_values() -> st.SearchStrategy:
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["gi"], ["go"], name="inner")], "g",
        [onnx.helper.make_tensor_value_info("gi", T.FLOAT, [1])],
        [onnx.helper.make_tensor_value_info("go", T.FLOAT, [1])],
    )
    sparse = onnx.helper.make_sparse_tensor(
        onnx.numpy_helper.from_array(np.array([5.0], np.float32), "v"),
        onnx.numpy_helper.from_array(np.array([1], np.int64), "i"), [3])
    tp = onnx.helper.make_tensor_type_proto(T.FLOAT, [2, "N"])
    return st.sampled_from([
        (1, None), (2.5, None), ("s", None), ([1, 2], None), ([1.5], None), (["a"], None),
        (np.array([1.0], np.float32), None), (graph, None), ([graph, graph], None), (sparse, None),
        ([sparse], None), (tp, None), ([tp], None), ([], None), ("x", A.INT), (3, A.FLOAT), (3, A.STRING),
        (1.5, A.INT), ([1, 2], A.INTS), ([], A.INTS), (2, A.GRAPH), ({"bad": 1}, None), (None, None),
        (7, 999),
    ])


class EditMachine(RuleBasedStateMachine):
    """Applies drawn commands to one model, checking exactness after every step."""

    key = "silero"

    @initialize()
    def open(self) -> None:
        self.doc = Document(onnx.load_from_string(model_bytes(self.key)))
        self.emitted: list = []
        self.doc.changed.connect(self.emitted.append)
        self.original = state(self.doc)
        self.applied = 0
        self.refused = 0

    # -- drawing arguments from the document ------------------------------------------------
    def _scope(self, data: st.DataObject) -> int:
        # half the edits go to the main graph (where weights and graph I/O live)
        if data.draw(st.booleans(), label="main?"):
            return self.doc.index.main
        return data.draw(st.sampled_from(sorted(self.doc.index.scopes)), label="scope")

    def _node(self, data: st.DataObject, bad: bool = True) -> object:
        ids = sorted(self.doc.index.nodes)
        if not ids or (bad and data.draw(st.integers(0, 15), label="bad?") == 0):
            return data.draw(BAD_IDS, label="bad id")
        return data.draw(st.sampled_from(ids), label="node")

    def _name(self, data: st.DataObject, sid: int) -> str:
        names = sorted(names_in_scope(self.doc, sid))
        if names and data.draw(st.booleans(), label="existing name?"):
            return data.draw(st.sampled_from(names), label="name")
        return data.draw(NAMES, label="other name")

    def _graph_value(self, data: st.DataObject, sid: int, kind: str) -> str:
        s = self.doc.scope(sid)
        names = s.input_names() if kind == "input" else s.output_names()
        if names and data.draw(st.booleans()):
            return data.draw(st.sampled_from(names))
        return data.draw(NAMES)

    def _initializer(self, data: st.DataObject, sid: int) -> str:
        names = self.doc.scope(sid).initializer_names()
        if names and data.draw(st.integers(0, 4)) > 0:
            return data.draw(st.sampled_from(names), label="initializer")
        return data.draw(NAMES)

    def _constant(self, data: st.DataObject) -> object:
        ids = [nid for _, nid, n in self.doc.index.iter_nodes() if n.op_type == "Constant"]
        if ids and data.draw(st.integers(0, 4)) > 0:
            return data.draw(st.sampled_from(sorted(ids)), label="constant")
        return self._node(data)

    def _command(self, data: st.DataObject):  # noqa: ANN202, C901 - one branch per command kind
        doc = self.doc
        kind = data.draw(st.sampled_from(COMMAND_KINDS), label="kind")
        if kind == "AddNode":
            sid = self._scope(data)
            op, domain = data.draw(st.sampled_from([
                ("Relu", ""), ("Add", ""), ("Identity", ""), ("Concat", ""), ("MyOp", "custom"),
                ("NoSuchOp", ""), ("bad op", ""), ("Cast", ""), ("AddRelu", "local"),
            ]), label="op")
            inputs = data.draw(st.one_of(st.none(), st.lists(st.just(None), max_size=3)))
            if inputs is not None:
                inputs = [self._name(data, sid) for _ in inputs]
            outputs = data.draw(st.one_of(st.none(), st.lists(st.just(None), min_size=1, max_size=2)))
            if outputs is not None:
                outputs = [self._name(data, sid) for _ in outputs]
            attrs = data.draw(st.sampled_from([None, {"axis": 0}, {"to": T.FLOAT16}, {"bogus": 1.5}]))
            return AddNode(sid, op, domain=domain, inputs=inputs, outputs=outputs, attributes=attrs,
                           position=data.draw(st.one_of(st.none(), st.integers(-1, 5))),
                           with_defaults=data.draw(st.booleans()),
                           name=data.draw(st.one_of(st.none(), TEXT)))
        if kind == "DeleteNodes":
            ids = [self._node(data) for _ in range(data.draw(st.integers(0, 3)))]
            return DeleteNodes(ids, reconnect=data.draw(st.booleans()))
        if kind == "SetNodeField":
            field = data.draw(st.sampled_from(["name", "name", "op_type", "domain", "doc_string", "overload", "input"]))
            return SetNodeField(self._node(data), field, data.draw(st.one_of(TEXT, st.sampled_from(["Relu", "Sub", 3]))))
        if kind == "SetNodeInput":
            nid = self._node(data)
            sid = doc.scope_of(nid).id if doc.has_node(nid) else 0
            return SetNodeInput(nid, data.draw(st.integers(-1, 3)), self._name(data, sid))
        if kind == "AddNodePort":
            nid = self._node(data)
            sid = doc.scope_of(nid).id if doc.has_node(nid) else 0
            return AddNodePort(nid, data.draw(st.sampled_from(["input", "output", "side"])), self._name(data, sid),
                               data.draw(st.one_of(st.none(), st.integers(-1, 3))))
        if kind == "RemoveNodePort":
            return RemoveNodePort(self._node(data), data.draw(st.sampled_from(["input", "output", "input", "x"])),
                                  data.draw(st.integers(-1, 2)))
        if kind == "SetAttribute":
            nid = self._node(data)
            names = ["alpha", "axis", "body", "value", "custom_attr", ""]
            if doc.has_node(nid):
                names += [a.name for a in doc.node(nid).attribute]
            value, attr_type = data.draw(attr_values(), label="attr value")
            return SetAttribute(nid, data.draw(st.sampled_from(names)), value, attr_type,
                                check_schema=data.draw(st.booleans()))
        if kind == "RemoveAttribute":
            nid = self._node(data)
            names = ["nope"] + ([a.name for a in doc.node(nid).attribute] if doc.has_node(nid) else [])
            return RemoveAttribute(nid, data.draw(st.sampled_from(names)))
        if kind == "RenameValue":
            sid = self._scope(data)
            return RenameValue(sid, self._name(data, sid), self._name(data, sid) + data.draw(st.sampled_from(["", "_r"])))
        if kind == "SetValueType":
            sid = self._scope(data)
            shape = data.draw(st.one_of(st.none(), st.lists(DIMS, max_size=3)))
            return SetValueType(sid, self._name(data, sid), data.draw(ELEM_TYPES), shape)
        if kind == "SetDimension":
            sid = self._scope(data)
            return SetDimension(sid, self._name(data, sid), data.draw(st.integers(-2, 3)), data.draw(DIMS))
        if kind in ("AddGraphValue", "RemoveGraphValue", "MoveGraphValue"):
            sid = self._scope(data)
            gkind = data.draw(st.sampled_from(["input", "output", "output", "both"]))
            if kind == "AddGraphValue":
                et = data.draw(st.one_of(st.none(), ELEM_TYPES))
                return AddGraphValue(sid, gkind, self._name(data, sid), et,
                                     data.draw(st.one_of(st.none(), st.lists(DIMS, max_size=2))),
                                     data.draw(st.one_of(st.none(), st.integers(-1, 3))))
            name = self._graph_value(data, sid, gkind)
            if kind == "RemoveGraphValue":
                return RemoveGraphValue(sid, gkind, name)
            return MoveGraphValue(sid, gkind, name, data.draw(st.integers(-1, 4)))
        if kind == "AddInitializer":
            sid = self._scope(data)
            return AddInitializer(sid, self._name(data, sid), data.draw(SMALL_ARRAYS))
        if kind == "ReplaceInitializer":
            sid = self._scope(data)
            return ReplaceInitializer(sid, self._initializer(data, sid), data.draw(SMALL_ARRAYS))
        if kind == "RemoveInitializer":
            sid = self._scope(data)
            return RemoveInitializer(sid, self._initializer(data, sid), force=data.draw(st.booleans()))
        if kind == "CastInitializer":
            sid = self._scope(data)
            return CastInitializer(sid, self._initializer(data, sid), data.draw(ELEM_TYPES))
        if kind == "ConstantToInitializer":
            return ConstantToInitializer(self._constant(data))
        if kind == "InitializerToConstant":
            sid = self._scope(data)
            return InitializerToConstant(sid, self._initializer(data, sid))
        if kind == "SetConstantValue":
            return SetConstantValue(self._constant(data), data.draw(SMALL_ARRAYS))
        if kind == "SetModelField":
            field, value = data.draw(st.sampled_from([
                ("producer_name", "me"), ("producer_version", ""), ("domain", "ai.x"), ("model_version", 3),
                ("doc_string", "doc"), ("ir_version", 8), ("ir_version", 0), ("ir_version", 99),
                ("model_version", "3"), ("bogus", 1), ("doc_string", ""), ("ir_version", True),
            ]))
            return SetModelField(field, value)
        if kind == "SetGraphField":
            return SetGraphField(self._scope(data), data.draw(st.sampled_from(["name", "doc_string", "node"])),
                                 data.draw(st.one_of(TEXT, st.just(1))))
        if kind == "SetMetadataProp":
            owner = data.draw(st.sampled_from(["model", "scope", "node", "bad"]))
            if owner == "model":
                owner_t: tuple = ("model",)
            elif owner == "scope":
                owner_t = ("scope", self._scope(data))
            elif owner == "node":
                owner_t = ("node", self._node(data))
            else:
                owner_t = ("nowhere", 1)
            return SetMetadataProp(data.draw(st.sampled_from(["k", "author", ""])),
                                   data.draw(st.one_of(st.none(), TEXT)), owner_t)
        if kind == "SetOpsetImport":
            return SetOpsetImport(data.draw(st.sampled_from(["", "ai.onnx", "ai.onnx.ml", "custom", "local"])),
                                  data.draw(st.one_of(st.none(), st.integers(-1, 21))))
        if kind == "Composite":
            parts = [self._command(data) for _ in range(data.draw(st.integers(1, 3)))]
            return CompositeCommand("Several edits", parts)
        raise AssertionError(kind)

    # -- rules ---------------------------------------------------------------------------------
    @rule(data=st.data())
    def edit(self, data: st.DataObject) -> None:
        doc = self.doc
        before = state(doc)
        depth, labels = doc.stack.index, doc.stack.labels()
        try:
            cmd = self._command(data)
        except CommandError:
            return  # some constructors validate eagerly; nothing was touched
        nodes_before = node_bytes(doc)
        self.emitted.clear()
        try:
            doc.execute(cmd)
        except CommandError:
            self.refused += 1
            STATS[(type(cmd).__name__, "refused")] += 1
            assert state(doc) == before, f"refused {type(cmd).__name__} changed the document"
            assert (doc.stack.index, doc.stack.labels()) == (depth, labels)
            return
        doc.check_invariants()
        after = state(doc)
        if doc.stack.index == depth and doc.stack.labels() == labels:
            assert after == before, f"{type(cmd).__name__} changed the model but left no undo step"
            return
        self.applied += 1
        STATS[(type(cmd).__name__, "applied")] += 1
        assert doc.stack.undo_label
        assert len(self.emitted) == 1, "one changed event per command"
        check_changeset(doc, nodes_before, self.emitted[0], cmd.label)
        # exact undo and redo of this one step (a merged step undoes further back: skip then)
        if doc.stack.index == depth + 1:
            nodes_after = node_bytes(doc)
            self.emitted.clear()
            doc.undo()
            assert state(doc) == before, f"undo of {cmd.label!r} is not exact"
            check_changeset(doc, nodes_after, self.emitted[-1], f"undo of {cmd.label}")
            doc.check_invariants()
            self.emitted.clear()
            doc.redo()
            assert state(doc) == after, f"redo of {cmd.label!r} is not exact"
            check_changeset(doc, nodes_before, self.emitted[-1], f"redo of {cmd.label}")
            doc.check_invariants()

    @rule()
    def undo(self) -> None:
        self.doc.undo()
        self.doc.check_invariants()

    @rule()
    def redo(self) -> None:
        self.doc.redo()
        self.doc.check_invariants()

    @precondition(lambda self: self.doc.stack.can_undo)
    @rule()
    def save_point(self) -> None:
        self.doc.stack.set_clean()
        assert not self.doc.is_modified

    @invariant()
    def stack_consistent(self) -> None:
        if hasattr(self, "doc"):
            s = self.doc.stack
            assert 0 <= s.index <= len(s.commands)

    def teardown(self) -> None:
        if not hasattr(self, "doc"):
            return
        doc = self.doc
        doc.undo_all()
        assert state(doc) == self.original, "undo-all did not restore the original model and ids"
        doc.check_invariants()
        while doc.redo():
            pass
        doc.check_invariants()
        doc.undo_all()
        assert state(doc) == self.original, "redo-all + undo-all did not restore the original"


COMMAND_KINDS = [
    "AddNode", "DeleteNodes", "SetNodeField", "SetNodeInput", "AddNodePort", "RemoveNodePort",
    "SetAttribute", "RemoveAttribute", "RenameValue", "RenameValue", "SetValueType", "SetDimension",
    "AddGraphValue", "RemoveGraphValue", "MoveGraphValue", "AddInitializer", "ReplaceInitializer",
    "RemoveInitializer", "CastInitializer", "ConstantToInitializer", "InitializerToConstant",
    "SetConstantValue", "SetModelField", "SetGraphField", "SetMetadataProp", "SetOpsetImport", "Composite",
]

# the coverage test at the end counts what the random runs before it did: one process for all
pytestmark = pytest.mark.one_process

#: how often each command kind was accepted / refused (read by the coverage test below)
STATS: Counter = Counter()
RAN: set[str] = set()

# ONNX_STUDIO_HYPOTHESIS_SCALE=10 explores ten times longer with fresh random seeds
SCALE = float(os.environ.get("ONNX_STUDIO_HYPOTHESIS_SCALE", "1"))

# examples per model: sized so the whole file runs in well under a minute on a busy machine
PLAN = {
    "silero": 25, "logreg": 20, "kaldi": 20, "ppocr_cls": 12, "loop11": 25, "scan9": 25, "if_seq": 20,
    "functions": 35, "nested": 35,
}


@pytest.mark.parametrize("key", sorted(PLAN))
def test_random_edit_sequences(key: str) -> None:
    machine = type(f"Edit_{key}", (EditMachine,), {"key": key})
    machine.TestCase.settings = settings(
        max_examples=max(1, int(PLAN[key] * SCALE)),
        stateful_step_count=30,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=SCALE == 1,
    )
    machine.TestCase().runTest()
    RAN.add(key)


def test_every_command_kind_was_exercised() -> None:
    """The random runs above must have applied and refused every kind of command (guards
    against a strategy that silently only produces refusals). They run in this process: the
    module is marked ``one_process`` (tests/conftest.py schedules it where pytest-xdist does
    not split it)."""
    if not RAN:
        pytest.skip("selected without test_random_edit_sequences: nothing to count")
    assert RAN == set(PLAN), f"only {sorted(RAN)} of {sorted(PLAN)} ran in this process: the module was split"
    kinds = {k for k in COMMAND_KINDS if k != "Composite"} | {"CompositeCommand"}
    applied = {k for (k, what) in STATS if what == "applied"}
    refused = {k for (k, what) in STATS if what == "refused"}
    assert kinds - applied == set(), f"never applied: {sorted(kinds - applied)}; stats {dict(STATS)}"
    assert kinds - refused == set(), f"never refused: {sorted(kinds - refused)}"
