"""Commands on node attributes: set (add or change, any type), change type, remove."""

from __future__ import annotations

from typing import Any

import onnx

from editor.commands.common import check_node, describe, make_attribute, require
from editor.document import Command, Document, NodeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, node_target
from editor.errors import CommandError
from editor.schema import attribute_specs, get_schema


def _declared_type(doc: Document, node: onnx.NodeProto, name: str) -> int | None:
    schema = get_schema(node.op_type, node.domain, doc.opset(node.domain))
    if schema is None:
        return None
    spec = attribute_specs(schema).get(name)
    return spec.type if spec else None


class SetAttribute(Command):
    """Add or change attribute ``name`` of a node.

    ``attr_type`` (an ``AttributeProto.AttributeType``) forces the stored type ("change
    type"); otherwise the schema's declared type is used and a value that does not fit it
    is refused; for ops without a schema the type follows the Python value.
    """

    def __init__(self, node_id: NodeId, name: str, value: Any, attr_type: int | None = None,
                 *, check_schema: bool = True) -> None:
        super().__init__()
        self.node_id, self.name, self.value, self.attr_type = node_id, name, value, attr_type
        self.check_schema = check_schema
        self.merge_key = ("attr", node_id, name)
        self.label = f"Set attribute {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        node = check_node(doc, self.node_id)
        require(bool(self.name), "an attribute needs a name")
        declared = _declared_type(doc, node, self.name) if self.check_schema else None
        schema = get_schema(node.op_type, node.domain, doc.opset(node.domain)) if self.check_schema else None
        if schema is not None and self.name not in schema.attributes and not schema.attributes.get(self.name):
            raise CommandError(
                f"{node.op_type} has no attribute {self.name!r} at opset {doc.opset(node.domain)}"
            )
        if self.attr_type is not None and declared is not None and self.attr_type != declared:
            raise CommandError(
                f"attribute {self.name!r} of {node.op_type} must be "
                f"{onnx.AttributeProto.AttributeType.Name(declared)}, not "
                f"{onnx.AttributeProto.AttributeType.Name(self.attr_type)}"
            )
        attr = make_attribute(self.name, self.value, self.attr_type or declared)
        self.label = f"Set {node.op_type}.{self.name} of {describe(node.name or node.op_type)}"
        for i, existing in enumerate(node.attribute):
            if existing.name == self.name:
                if existing.SerializeToString() == attr.SerializeToString():
                    return
                tx.apply(ReplaceItem(node_target(self.node_id), "attribute", i, attr))
                return
        tx.apply(InsertItem(node_target(self.node_id), "attribute", len(node.attribute), attr))

class RemoveAttribute(Command):
    def __init__(self, node_id: NodeId, name: str) -> None:
        super().__init__()
        self.node_id, self.name = node_id, name
        self.label = f"Remove attribute {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        node = check_node(doc, self.node_id)
        for i, existing in enumerate(node.attribute):
            if existing.name == self.name:
                tx.apply(RemoveItem(node_target(self.node_id), "attribute", i))
                return
        raise CommandError(f"node {describe(node.name or node.op_type)} has no attribute {self.name!r}")
