"""Incrementality is exact: after any sequence of commands (and undos and redos) on real
models, the live problems equal what a fresh ``Validator(doc).validate_all()`` reports."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import onnx
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from editor.commands import (
    AddGraphValue,
    AddInitializer,
    AddNode,
    AddNodePort,
    DeleteNodes,
    RemoveAttribute,
    RemoveGraphValue,
    RemoveInitializer,
    RemoveNodePort,
    RenameValue,
    SetAttribute,
    SetDimension,
    SetNodeField,
    SetNodeInput,
    SetOpsetImport,
    SetValueType,
)
from editor.document import Document, FunctionCommand
from editor.document.ops import ReplaceItem, node_target
from editor.errors import CommandError
from editor.validation import Validator
from tests.conftest import CORPUS

T = onnx.TensorProto

MODELS = [
    "real/fw_silero_vad_v6.onnx",
    "real/asr_prep_kaldi.onnx",
    "real/silero_vad_half.onnx",  # If nodes with subgraphs
    "real/ort_logreg_iris.onnx",  # ai.onnx.ml only
    "onnx-backend/node/test_if/model.onnx",
    "onnx-backend/node/test_loop11/model.onnx",
    "onnx-backend/node/test_scan9_sum/model.onnx",
    "onnx-backend/light/light_squeezenet.onnx",
    "generated:if-captures",  # bodies read values of the enclosing graph
    "generated:local-function",  # a model-local function called from the main graph
]

FUNCTION_MODEL = """
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
main (float[2] x) => (float[2] y) {
    t = Relu(x)
    y = local.Double(t)
}
<domain: "local", opset_import: ["" : 17]>
Double (a) => (b) {
    c = Add(a, a)
    b = Identity(c)
}
"""


@lru_cache(maxsize=None)
def model_bytes(rel: str) -> bytes:
    if rel == "generated:if-captures":
        from tests.editor.test_validation import small_model

        return small_model().SerializeToString()
    if rel == "generated:local-function":
        return onnx.parser.parse_model(FUNCTION_MODEL).SerializeToString()
    return (Path(CORPUS) / rel).read_bytes()


def _names(doc: Document, sid: int) -> list[str]:
    s = doc.scope(sid)
    names = sorted(s.defined_names() | set(s.consumers) | set(s.output_names()))
    return names or ["x"]


def draw_command(data: st.DataObject, doc: Document):  # noqa: ANN201 - a Command or None
    """One random edit of a random node / value / graph (valid or not: both are interesting)."""
    sids = sorted(doc.index.scopes)
    sid = data.draw(st.sampled_from(sids), label="scope")
    scope = doc.scope(sid)
    nids = scope.node_ids
    names = _names(doc, sid)
    name = data.draw(st.sampled_from(names + ["__junk__"]), label="name")
    kind = data.draw(st.sampled_from([
        "rename-node", "op-type", "rewire", "add-node", "delete", "delete-reconnect", "remove-attr",
        "set-attr", "bad-attr", "rename-value", "set-type", "set-dim", "add-output", "remove-output",
        "add-port", "remove-port", "dup-output", "add-init", "remove-init", "opset", "undo", "redo",
    ]), label="kind")
    nid = data.draw(st.sampled_from(nids), label="node") if nids else None
    node = doc.node(nid) if nid is not None else None
    if kind == "undo" or kind == "redo":
        return kind
    if kind == "add-node":
        op = data.draw(st.sampled_from(["Relu", "Identity", "Cast", "Add", "NoSuchOp"]), label="op")
        n_in = {"Add": 2}.get(op, 1)
        pos = data.draw(st.integers(0, len(nids)), label="pos")
        return AddNode(sid, op, inputs=[name] * n_in, outputs=[f"new_{len(doc.index.nodes)}_{pos}"], position=pos)
    if kind == "rename-value":
        return RenameValue(sid, name, name + "_r")
    if kind == "set-type":
        elem = data.draw(st.sampled_from([T.FLOAT, T.INT64, T.FLOAT16]), label="elem")
        shape = data.draw(st.one_of(st.none(), st.lists(st.one_of(st.integers(1, 4), st.just("N"), st.none()),
                                                        max_size=3)), label="shape")
        return SetValueType(sid, name, elem, shape)
    if kind == "set-dim":
        return SetDimension(sid, name, 0, data.draw(st.sampled_from([1, 3, "batch", None]), label="dim"))
    if kind == "add-output":
        return AddGraphValue(sid, "output", name)
    if kind == "remove-output":
        outs = scope.output_names()
        return RemoveGraphValue(sid, "output", outs[0]) if outs else None
    if kind == "add-init":
        import numpy as np

        return AddInitializer(sid, name if name == "__junk__" else name + "_w", np.zeros((2,), np.float32))
    if kind == "remove-init":
        inits = scope.initializer_names()
        return RemoveInitializer(sid, inits[-1], force=True) if inits else None
    if kind == "opset":
        return SetOpsetImport("", data.draw(st.sampled_from([11, 13, 17, 21]), label="opset"))
    if node is None:
        return None
    if kind == "rename-node":
        return SetNodeField(nid, "name", (node.name or "n") + "_x")
    if kind == "op-type":
        return SetNodeField(nid, "op_type", data.draw(st.sampled_from(["Relu", "Identity", "NoSuchOp", "Add"])))
    if kind == "rewire":
        if not node.input:
            return None
        k = data.draw(st.integers(0, len(node.input) - 1), label="input")
        return SetNodeInput(nid, k, name)
    if kind in ("delete", "delete-reconnect"):
        return DeleteNodes([nid], reconnect=kind == "delete-reconnect")
    if kind == "remove-attr":
        return RemoveAttribute(nid, node.attribute[0].name) if node.attribute else None
    if kind == "set-attr":
        return SetAttribute(nid, "alpha", 0.5, check_schema=False)
    if kind == "bad-attr":
        if not node.attribute:
            return None
        a = node.attribute[0]
        wrong = onnx.AttributeProto.FLOAT if a.type != onnx.AttributeProto.FLOAT else onnx.AttributeProto.INT
        return SetAttribute(nid, a.name, 1, wrong, check_schema=False)
    if kind == "add-port":
        return AddNodePort(nid, data.draw(st.sampled_from(["input", "output"])), name if name != "__junk__" else "")
    if kind == "remove-port":
        return RemoveNodePort(nid, "input", 0) if node.input else None
    if kind == "dup-output":
        if not node.output:
            return None
        return FunctionCommand("dup", lambda d, tx: tx.apply(ReplaceItem(node_target(nid), "output", 0, name)))
    return None


def _picture(v: Validator) -> list[str]:
    return sorted(repr(p) for p in v.problems)


#: more examples locally: ONNX_STUDIO_VALIDATION_EXAMPLES=1000
EXAMPLES = int(os.environ.get("ONNX_STUDIO_VALIDATION_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rel=st.sampled_from(MODELS), data=st.data())
def test_incremental_problems_equal_a_fresh_pass(rel: str, data: st.DataObject) -> None:
    doc = Document(onnx.ModelProto.FromString(model_bytes(rel)))
    v = Validator(doc)
    v.validate_all()
    steps = data.draw(st.integers(1, 12), label="steps")
    for _ in range(steps):
        cmd = draw_command(data, doc)
        if cmd is None:
            continue
        if cmd == "undo":
            doc.undo()
        elif cmd == "redo":
            doc.redo()
        else:
            try:
                doc.execute(cmd)
            except CommandError:
                continue
            event(f"ran {type(cmd).__name__}")
        fresh = Validator(doc, live=False).validate_all()
        assert _picture(v) == sorted(repr(p) for p in fresh), f"after {getattr(cmd, 'label', cmd)}"
    doc.undo_all()
    fresh = Validator(doc, live=False).validate_all()
    assert _picture(v) == sorted(repr(p) for p in fresh)
    assert v.fallbacks == 0


@settings(max_examples=max(10, EXAMPLES // 3), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rel=st.sampled_from(MODELS), data=st.data())
def test_a_batched_jump_is_exact(rel: str, data: st.DataObject) -> None:
    """Undos and redos told as one change (Document.batch, a History jump): the live
    problems still equal a fresh pass, and listeners hear of the jump once."""
    doc = Document(onnx.ModelProto.FromString(model_bytes(rel)))
    v = Validator(doc)
    v.validate_all()
    for _ in range(data.draw(st.integers(2, 10), label="steps")):
        cmd = draw_command(data, doc)
        if cmd is None or cmd in ("undo", "redo"):
            continue
        try:
            doc.execute(cmd)
        except CommandError:
            continue
    heard: list = []
    doc.changed.connect(heard.append)
    # a jump back, then part of the way forward again, in one batch
    back = data.draw(st.integers(0, doc.stack.index), label="back")
    forward = data.draw(st.integers(0, back), label="forward")
    with doc.batch():
        for _ in range(back):
            doc.undo()
        for _ in range(forward):
            doc.redo()
    assert len(heard) == (1 if back else 0), f"{back} undos and {forward} redos told {len(heard)} times"
    assert _picture(v) == sorted(repr(p) for p in Validator(doc, live=False).validate_all())
    assert v.fallbacks == 0
