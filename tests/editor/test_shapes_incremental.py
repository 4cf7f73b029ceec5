"""The incremental shape engine (editor.shapes.incremental): after any edit, the table it
keeps equals a whole-model pass, and an edit that changes nothing downstream costs a few
steps, not the graph."""

from __future__ import annotations

import random

import pytest

from editor.commands import DeleteNodes, SetAttribute, SetNodeField, SetNodeInput
from editor.commands.values import RenameValue, SetDimension, SetValueType
from editor.document import Document
from editor.shapes import infer_model
from editor.shapes.incremental import LiveShapes
from tests.conftest import CORPUS

MODELS = [
    CORPUS / "real" / "ppocrv4_det.onnx",
    CORPUS / "real" / "silero_vad_16k_op15.onnx",
    CORPUS / "real" / "asr_prep_nemo128.onnx",
    CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx",
]


def _same(live: LiveShapes, doc: Document) -> None:
    from editor.shapes.declare import graph_values

    full = infer_model(doc.model)
    # every value of every graph (bodies by their own values: a body's table also holds a
    # copy of the outer values it may read, which is not part of the promise)
    ours = [(g, n, vs) for g, n, vs, _src in graph_values(doc.model.graph, live.table, "main")]
    theirs = [(g, n, vs) for g, n, vs, _src in graph_values(doc.model.graph, full, "main")]
    assert ours == theirs


def _edits(doc: Document, rng: random.Random):
    """A stream of random edits of kinds a user makes (each a command that may be refused)."""
    main = doc.index.main
    while True:
        scope = doc.scope(main)
        nid = rng.choice(scope.node_ids)
        node = doc.node(nid)
        kind = rng.randrange(6)
        if kind == 0 and node.op_type == "Conv":
            yield SetAttribute(nid, "strides", [rng.choice([1, 2])] * 2)
        elif kind == 1:
            yield SetNodeField(nid, "name", f"{node.name}_x")
        elif kind == 2 and node.output and node.output[0]:
            yield RenameValue(main, node.output[0], node.output[0] + "_r")
        elif kind == 3 and len(node.input) >= 1 and node.input[0]:
            other = doc.node(rng.choice(scope.node_ids))
            if other.output and other.output[0] and scope.position(other_id := scope.producers.get(
                    other.output[0], -1)) < scope.position(nid) if other.output[0] in scope.producers else False:
                yield SetNodeInput(nid, 0, other.output[0])
        elif kind == 4:
            vis = [vi.name for vi in doc.model.graph.value_info]
            if vis:
                yield SetValueType(main, rng.choice(vis), 1, None)
        elif kind == 5 and node.op_type in ("Relu", "Identity", "Cast", "Sigmoid", "Mul", "Add"):
            yield DeleteNodes([nid], reconnect=True)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
@pytest.mark.timeout(120)
def test_incremental_table_equals_a_whole_pass_after_each_edit(path) -> None:
    from editor.errors import StudioError

    doc = Document.open(path)
    live = LiveShapes(doc)
    doc.changed.connect(lambda changes: live.update(changes))
    rng = random.Random(7)
    done = 0
    for cmd in _edits(doc, rng):
        try:
            doc.execute(cmd)
        except StudioError:
            continue
        done += 1
        _same(live, doc)
        if done % 4 == 0:
            doc.undo()
            _same(live, doc)
        if done >= 12:
            break


def test_an_edit_that_changes_no_shape_stops_at_once() -> None:
    doc = Document.open(CORPUS / "real" / "ppocrv4_det.onnx")
    live = LiveShapes(doc)
    stats = []
    doc.changed.connect(lambda changes: stats.append(live.update(changes)))
    scope = doc.scope(doc.index.main)
    first_conv = next(nid for nid in scope.node_ids if doc.node(nid).op_type == "Conv")
    doc.execute(SetNodeField(first_conv, "name", "renamed"))
    assert not stats[-1].full and stats[-1].steps == 1 and not stats[-1].changed
    # a stride change flows down the whole network, and only then
    doc.execute(SetAttribute(first_conv, "strides", [1, 1]))
    assert not stats[-1].full and stats[-1].steps > 100 and stats[-1].changed
    _same(live, doc)
    doc.execute(SetDimension(doc.index.main, doc.model.graph.input[0].name, 0, 1))
    assert stats[-1].full
    _same(live, doc)


def test_a_batched_jump_updates_the_table_once_and_exactly() -> None:
    """A History jump (Document.batch): many undos and redos told as one change; the
    incremental table follows it in one update and equals a whole pass."""
    from editor.errors import StudioError

    doc = Document.open(CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    live = LiveShapes(doc)
    heard: list = []
    doc.changed.connect(heard.append)
    doc.changed.connect(lambda changes: live.update(changes))
    rng = random.Random(11)
    done = 0
    for cmd in _edits(doc, rng):
        try:
            doc.execute(cmd)
        except StudioError:
            continue
        done += 1
        if done >= 16:
            break
    heard.clear()
    with doc.batch():
        for _ in range(12):
            doc.undo()
        for _ in range(5):
            doc.redo()
    assert len(heard) == 1
    _same(live, doc)
    with doc.batch():
        doc.undo_all()
    assert len(heard) == 2
    _same(live, doc)
