"""The whole-model live check runs behind the edits: a deferred validator asks for the
declared-shape comparison instead of running it inside an edit, a worker brings the same
problems a fresh validation finds, stale findings are dropped, a rename asks for nothing,
and the live-size gate reads sizes the index keeps (never serializing the model)."""

from __future__ import annotations

import onnx
import pytest

from editor.commands import SetNodeField, SetValueType
from editor.document import Document
from editor.shapes.engine import structure_snapshot
from editor.validation import Validator
from editor.validation.declared import declared_dim_findings
from editor.validation.deferred import DeferredDeclared
from tests.conftest import CORPUS


def _dims_of(vi: onnx.ValueInfoProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in vi.type.tensor_type.shape.dim]


def _declared(problems) -> list:
    return [p for p in problems if p.code == "declared-dim"]


@pytest.fixture()
def alexnet() -> Document:
    return Document.open(CORPUS / "onnx-backend" / "light" / "light_bvlc_alexnet.onnx")


def test_deferred_comparison_brings_what_a_fresh_validation_finds(alexnet: Document) -> None:
    doc = alexnet
    live = Validator(doc)
    live.validate_all()
    live.defer_declared()
    due: list = []
    live.declared_due.connect(lambda: due.append(1))
    checks = DeferredDeclared(live)
    main = doc.index.main
    # a batch dim the model fixes at 1 (its Reshape hard-codes it): a declared-dim warning
    for vi in (doc.model.graph.input[0], doc.model.graph.output[0]):
        doc.execute(SetValueType(main, vi.name, vi.type.tensor_type.elem_type, ["batch", *_dims_of(vi)[1:]]))
    assert len(due) == 2, f"each edit that may change the comparison asks for it once, saw {len(due)}"
    assert _declared(live.problems) == [], "deferred: the edit itself does not infer the model"
    checks.request()
    assert checks.wait(60)
    assert len(_declared(live.problems)) == 1
    assert live.problems == Validator(doc, live=False).validate_all()
    # a rename cannot change the comparison: nothing is asked
    due.clear()
    doc.execute(SetNodeField(doc.main.node_ids[0], "name", "renamed"))
    assert due == []
    assert live.problems == Validator(doc, live=False).validate_all()
    # findings of a model an edit has moved past are dropped
    version = live.declared_version
    doc.undo()  # the rename: still the same comparison
    assert live.declared_version == version
    doc.undo()  # the output's batch: the comparison may change
    assert live.declared_version == version + 1
    assert not live.merge_declared([("declared-dim", "stale", doc.model.graph.output[0].name, "warning")], version)
    checks.request()
    assert checks.wait(60)
    assert _declared(live.problems) == [] and live.problems == Validator(doc, live=False).validate_all()
    checks.close()


def test_requests_while_one_runs_are_coalesced(alexnet: Document) -> None:
    import threading

    live = Validator(alexnet)
    live.validate_all()
    live.defer_declared()
    gate = threading.Event()
    queued: list = []
    checks = DeferredDeclared(live, deliver=lambda fn: (gate.wait(30), queued.append(fn)))
    checks.request()
    for _ in range(5):
        live.declared_version += 1  # five edits while the first comparison runs
        checks.request()
    gate.set()
    while checks.busy or queued:
        if queued:
            queued.pop(0)()
    assert checks.runs == 2, f"one run, then one more for everything that came meanwhile; saw {checks.runs}"
    assert checks.merged == 1
    checks.close()


def test_snapshot_compares_like_the_model_and_sizes_come_from_the_index() -> None:
    """The worker compares a structure snapshot (large tensors, Constant values included,
    as dims only): the same findings as on the whole model. The gate's weight bytes are
    kept by the index (from dims, not by serializing), cached across a rename."""
    for path in (CORPUS / "real" / "ppocr_mobile_v2_cls.onnx", CORPUS / "real" / "silero_vad_16k_op15.onnx",
                 CORPUS / "real" / "magika_standard_v3_3.onnx"):
        model = onnx.load(str(path))
        snapshot = structure_snapshot(model)
        assert snapshot.ByteSize() < model.ByteSize() / 4, f"{path.name}: the snapshot should leave weights out"
        assert declared_dim_findings(snapshot, negatives=False) == declared_dim_findings(model, negatives=False)
        doc = Document(model)
        weights = doc.index.weight_bytes()
        assert 0.9 * model.ByteSize() < weights <= model.ByteSize(), f"{path.name}: {weights} weight bytes"
        doc.execute(SetNodeField(doc.main.node_ids[0], "name", "x"))
        assert doc.index._weight_bytes == weights  # noqa: SLF001 - a rename keeps the cached figure
