"""Commands on model-level data: producer, versions, doc strings, metadata_props, opsets."""

from __future__ import annotations

from typing import Any

import onnx

from editor.commands.common import check_node, check_scope, describe, require
from editor.document import Command, Document, Transaction
from editor.document.ops import MODEL, InsertItem, RemoveItem, ReplaceItem, SetField

MODEL_FIELDS = {
    "producer_name": str,
    "producer_version": str,
    "domain": str,
    "model_version": int,
    "doc_string": str,
    "ir_version": int,
}


class SetModelField(Command):
    """Set producer name/version, domain, model_version, doc_string or IR version."""

    def __init__(self, field: str, value: Any) -> None:
        super().__init__()
        self.field, self.value = field, value
        self.label = f"Set model {field.replace('_', ' ')}"
        self.merge_key = ("model-field", field)

    def run(self, doc: Document, tx: Transaction) -> None:
        kind = MODEL_FIELDS.get(self.field)
        require(kind is not None, f"the model has no editable field {describe(self.field)}")
        require(isinstance(self.value, kind) and not isinstance(self.value, bool),
                f"{self.field} must be {kind.__name__}, not {describe(self.value)}")
        if self.field == "ir_version":
            require(1 <= self.value <= onnx.IR_VERSION,
                    f"IR version {self.value} is not one onnx {onnx.__version__} knows (1..{onnx.IR_VERSION})")
        if getattr(doc.model, self.field) == self.value and doc.model.HasField(self.field):
            return
        tx.apply(SetField(MODEL, self.field, self.value))


class SetGraphField(Command):
    """Set a graph's name or doc string."""

    def __init__(self, scope: int, field: str, value: str) -> None:
        super().__init__()
        self.scope, self.field, self.value = scope, field, value
        self.label = f"Set graph {field.replace('_', ' ')}"
        self.merge_key = ("graph-field", scope, field)

    def run(self, doc: Document, tx: Transaction) -> None:
        check_scope(doc, self.scope)
        require(self.field in ("name", "doc_string"), f"graphs have no editable field {describe(self.field)}")
        require(isinstance(self.value, str), f"{self.field} must be text")
        if getattr(doc.scope(self.scope).graph, self.field) == self.value:
            return
        tx.apply(SetField(("scope", self.scope), self.field, self.value, bool(self.value)))


def _props_target(doc: Document, owner: tuple) -> tuple:
    """metadata_props live on the model, a graph, a node or a function."""
    kind = owner[0]
    if kind == "model":
        return MODEL
    if kind == "scope":
        check_scope(doc, owner[1])
        return owner
    if kind == "node":
        check_node(doc, owner[1])
        return owner
    require(False, f"no metadata_props on {describe(owner)}")
    return owner


class SetMetadataProp(Command):
    """Add, change (``value`` str) or remove (``value`` None) a metadata_props entry of the
    model (``owner=("model",)``), a graph (``("scope", id)``) or a node (``("node", id)``)."""

    def __init__(self, key: str, value: str | None, owner: tuple = ("model",)) -> None:
        super().__init__()
        self.key, self.value, self.owner = key, value, owner
        self.label = f"Remove metadata {key!r}" if value is None else f"Set metadata {key!r}"
        self.merge_key = ("metadata", owner, key)

    def run(self, doc: Document, tx: Transaction) -> None:
        target = _props_target(doc, self.owner)
        require(bool(self.key), "a metadata entry needs a key")
        require(self.value is None or isinstance(self.value, str), "metadata values are text")
        from editor.document.ops import resolve

        props = resolve(doc.index, target).metadata_props
        for i, p in enumerate(props):
            if p.key == self.key:
                if self.value is None:
                    tx.apply(RemoveItem(target, "metadata_props", i))
                elif p.value != self.value:
                    tx.apply(ReplaceItem(target, "metadata_props", i, onnx.StringStringEntryProto(key=self.key, value=self.value)))
                return
        require(self.value is not None, f"there is no metadata entry {describe(self.key)}")
        tx.apply(InsertItem(target, "metadata_props", len(props),
                            onnx.StringStringEntryProto(key=self.key, value=self.value)))


class SetOpsetImport(Command):
    """Add or change (``version`` int) or remove (None) the model's import of a domain."""

    def __init__(self, domain: str, version: int | None) -> None:
        super().__init__()
        self.domain, self.version = ("" if domain == "ai.onnx" else domain), version
        shown = self.domain or "ai.onnx"
        self.label = f"Remove opset import {shown}" if version is None else f"Set opset {shown} to {version}"

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.version is None or (isinstance(self.version, int) and self.version >= 1),
                f"opset version must be a positive integer, not {describe(self.version)}")
        for i, imp in enumerate(doc.model.opset_import):
            if (imp.domain if imp.domain != "ai.onnx" else "") == self.domain:
                if self.version is None:
                    used = [n for _, _, n in doc.index.iter_nodes() if (n.domain if n.domain != "ai.onnx" else "") == self.domain]
                    require(not used, f"{len(used)} node(s) still use domain {describe(self.domain or 'ai.onnx')}")
                    tx.apply(RemoveItem(MODEL, "opset_import", i))
                elif imp.version != self.version:
                    tx.apply(ReplaceItem(MODEL, "opset_import", i, onnx.helper.make_opsetid(imp.domain, self.version)))
                return
        require(self.version is not None, f"the model does not import {describe(self.domain or 'ai.onnx')}")
        tx.apply(InsertItem(MODEL, "opset_import", len(doc.model.opset_import),
                            onnx.helper.make_opsetid(self.domain, self.version)))
