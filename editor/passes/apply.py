"""Apply a transformed copy of the model to the document as one undoable command.

Tools such as ``onnx.version_converter`` or shape inference work on whole ModelProtos. To
bring their result into the document we diff it against the current model and apply only
the differences as primitive ops: unchanged nodes keep their ids (so the canvas does not
jump and selections survive), and undo restores everything exactly.

The diff is per list (nodes, initializers, inputs, outputs, value_info of the main graph;
opset imports, metadata and functions of the model), aligned with difflib on the
serialized elements.
"""

from __future__ import annotations

import difflib
import hashlib

import onnx

from editor.document import Command, Document, Transaction
from editor.document.ops import MODEL, InsertItem, RemoveItem, SetField, scope_target

GRAPH_LISTS = ("node", "initializer", "sparse_initializer", "input", "output", "value_info")
MODEL_LISTS = ("opset_import", "metadata_props", "functions")
MODEL_SCALARS = ("ir_version", "producer_name", "producer_version", "domain", "model_version", "doc_string")


def _key(msg) -> bytes:  # noqa: ANN001
    return hashlib.blake2b(msg.SerializeToString(deterministic=True), digest_size=16).digest()


def _sync_list(tx: Transaction, target: tuple, field: str, old: list, new: list) -> int:
    """Make ``old`` (live repeated field) equal ``new`` with minimal insert/remove ops."""
    a = [_key(m) for m in old]
    b = [_key(m) for m in new]
    if a == b:
        return 0
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    count = 0
    # apply from the end so earlier positions stay valid
    for tag, i1, i2, j1, j2 in reversed(ops):
        if tag == "equal":
            continue
        for pos in range(i2 - 1, i1 - 1, -1):
            tx.apply(RemoveItem(target, field, pos))
            count += 1
        for k, j in enumerate(range(j1, j2)):
            tx.apply(InsertItem(target, field, i1 + k, new[j]))
            count += 1
    return count


class ApplyModel(Command):
    """Make the document's model equal ``new`` (main graph, model fields, functions)."""

    def __init__(self, new: onnx.ModelProto, label: str) -> None:
        super().__init__()
        self.new = new
        self.label = label
        self.changed_items = 0

    def run(self, doc: Document, tx: Transaction) -> None:
        model, new = doc.model, self.new
        for field in MODEL_SCALARS:
            if getattr(model, field) != getattr(new, field) or model.HasField(field) != new.HasField(field):
                tx.apply(SetField(MODEL, field, getattr(new, field), new.HasField(field)))
                self.changed_items += 1
        for field in MODEL_LISTS:
            self.changed_items += _sync_list(tx, MODEL, field, list(getattr(model, field)), list(getattr(new, field)))
        g, ng = model.graph, new.graph
        target = scope_target(doc.index.main)
        for field in ("name", "doc_string"):
            if getattr(g, field) != getattr(ng, field):
                tx.apply(SetField(target, field, getattr(ng, field), ng.HasField(field)))
                self.changed_items += 1
        for field in GRAPH_LISTS:
            self.changed_items += _sync_list(tx, target, field, list(getattr(g, field)), list(getattr(ng, field)))
