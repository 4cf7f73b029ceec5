"""Every corpus model survives a handful of edits and their undo byte for byte (the corpus's
fixed sample by default, every model under ``--corpus=all``: tests/conftest.py).

For each model the edits are chosen deterministically from what it has: rename a node,
rename a value (with its uses in nested bodies), set an attribute, add a node, delete a node
(with reconnect when it has a pass-through input), change metadata, add a graph output.
After undoing them all, ``serialize()`` must equal the file's bytes and the index must be
the one the file gave (ids included). Failures are collected and reported together.
"""

from __future__ import annotations

import onnx
import pytest

from editor.commands import (
    AddGraphValue,
    AddNode,
    DeleteNodes,
    RenameValue,
    SetAttribute,
    SetMetadataProp,
    SetModelField,
    SetNodeField,
)
from editor.document import Command, Document
from editor.errors import CommandError
from tests.conftest import CORPUS, corpus_models, corpus_walk


def _edits(doc: Document) -> list[Command]:
    """A few edits that fit this model (computed lazily from the current state)."""
    main = doc.main
    edits: list = [lambda: SetModelField("producer_name", "onnx-studio-test"),
                   lambda: SetMetadataProp("studio.test", "1")]
    nodes = list(doc.index.iter_nodes())
    if nodes:
        scope, nid, node = nodes[len(nodes) // 2]
        edits.append(lambda: SetNodeField(nid, "name", (node.name or node.op_type) + "_renamed"))
        edits.append(lambda: SetAttribute(nid, "studio_note", "x", onnx.AttributeProto.STRING, check_schema=False))
        # rename a value that the deepest scope available uses (captures included)
        deepest = max(doc.index.scopes.values(), key=lambda s: len(doc.index.scope_chain(s.id)))
        used = sorted(n for n in deepest.consumers if n)
        if used:
            edits.append(lambda: RenameValue(deepest.id, used[0], used[0] + "__renamed"))
        value = next((o for o in node.output if o), None)
        if value is not None:
            edits.append(lambda: AddNode(scope.id, "Identity", inputs=[value], outputs=[value + "__copy"],
                                         name="studio_added"))
            if scope.kind != "function" and value not in scope.output_names():
                edits.append(lambda: AddGraphValue(scope.id, "output", value))
        # delete the last node of the main graph, reconnecting when it is a pass-through
        if main.node_ids:
            last = main.node_ids[-1]
            n = doc.node(last)
            reconnect = len([i for i in n.input if i]) >= 1 and len([o for o in n.output if o]) == 1
            edits.append(lambda: DeleteNodes([last], reconnect=reconnect))
    return edits


def _roundtrip(path) -> str | None:  # noqa: ANN001
    raw = path.read_bytes()
    doc = Document(onnx.load_from_string(raw))
    snapshot = doc.index.snapshot()
    applied = 0
    for make in _edits(doc):
        cmd = make()
        try:
            doc.execute(cmd)
            applied += 1
        except CommandError as exc:
            if exc.details:  # an unexpected exception inside a command: a bug
                return f"{type(cmd).__name__} crashed: {exc.details.splitlines()[-1]}"
            if type(cmd).__name__ == "DeleteNodes":
                doc.execute(DeleteNodes(cmd.node_ids))  # no pass-through: leave it dangling
                applied += 1
    try:
        doc.check_invariants()
    except AssertionError as exc:
        return f"invariants after edits: {exc}"
    if applied < 3:
        return f"only {applied} edits applied"
    doc.undo_all()
    if doc.serialize() != raw:
        return "undo-all does not give back the file's bytes"
    if doc.index.snapshot() != snapshot:
        return "undo-all does not give back the index (ids)"
    try:
        doc.check_invariants()
    except AssertionError as exc:
        return f"invariants after undo: {exc}"
    return None


@pytest.mark.slow
def test_every_corpus_model_survives_edits_and_undo(corpus_dir) -> None:  # noqa: ANN001
    whole = corpus_models()
    assert len(whole) > 1900, f"corpus looks incomplete: {len(whole)} models"
    models = corpus_walk()
    failures = []
    for path in models:
        try:
            problem = _roundtrip(path)
        except Exception as exc:  # noqa: BLE001 - collect every failure, report together
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            failures.append(f"{path.relative_to(corpus_dir)}: {problem}")
    assert not failures, f"{len(failures)} of {len(models)} models failed:\n" + "\n".join(failures[:50])


@pytest.mark.parametrize("name", ["ppocrv4_det.onnx", "ppocr_mobile_v2_cls.onnx"])
def test_delete_with_reconnect_before_a_graph_output_keeps_its_name(name: str) -> None:
    """Deleting the last node (ppocr's Sigmoid / Identity) with reconnect: the graph output
    names are the model's interface and stay; the model stays valid and undo is exact."""
    from editor.commands import DeleteNodes
    from editor.validation import Validator

    doc = Document.open(CORPUS / "real" / name)
    before = doc.serialize()
    outputs = doc.scope(doc.index.main).output_names()
    last = doc.producer(doc.index.main, outputs[0])
    errors_before = [p for p in Validator(doc, live=False).validate_all() if p.is_error]
    doc.execute(DeleteNodes([last], reconnect=True))
    assert doc.scope(doc.index.main).output_names() == outputs
    assert doc.producer(doc.index.main, outputs[0]) is not None
    assert [p for p in Validator(doc, live=False).validate_all() if p.is_error] == errors_before
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo()
    assert doc.serialize() == before
