"""Commands on weights: initializers and Constant nodes.

Add, replace (from a numpy array), remove, cast dtype, and convert a Constant node to an
initializer and back. Renaming is :class:`~editor.commands.values.RenameValue`.
"""

from __future__ import annotations

import numpy as np
import onnx

from editor.commands.common import check_node, check_scope, describe, require
from editor.commands.tensors import array_to_tensor, tensor_to_array
from editor.commands.values import names_in_scope
from editor.document import Command, Document, NodeId, ScopeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, node_target, scope_target

T = onnx.TensorProto


def _graph_scope(doc: Document, sid: ScopeId) -> onnx.GraphProto:
    s = check_scope(doc, sid)
    require(isinstance(s.graph, onnx.GraphProto), "functions have no initializers: use a Constant node")
    return s.graph


def _find_initializer(doc: Document, sid: ScopeId, name: str) -> tuple[int, onnx.TensorProto]:
    found = doc.initializer(sid, name)
    require(found is not None, f"there is no initializer {describe(name)} in this graph")
    return found


def _tensor(value: np.ndarray | onnx.TensorProto, name: str, elem_type: int | None = None) -> onnx.TensorProto:
    if isinstance(value, onnx.TensorProto):
        t = T()
        t.CopyFrom(value)
        t.name = name
        return t
    return array_to_tensor(np.asarray(value), name, elem_type)


class AddInitializer(Command):
    def __init__(self, scope: ScopeId, name: str, value: np.ndarray | onnx.TensorProto,
                 elem_type: int | None = None) -> None:
        super().__init__()
        self.scope, self.name, self.value, self.elem_type = scope, name, value, elem_type
        self.label = f"Add initializer {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        g = _graph_scope(doc, self.scope)
        require(bool(self.name), "an initializer needs a name")
        s = doc.scope(self.scope)
        require(self.name not in s.producers and self.name not in s.initializer_names(),
                f"the name {describe(self.name)} is already defined in this graph")
        tensor = _tensor(self.value, self.name, self.elem_type)
        tx.apply(InsertItem(scope_target(self.scope), "initializer", len(g.initializer), tensor))


class ReplaceInitializer(Command):
    """Replace an initializer's tensor (shape and dtype may change); the name stays."""

    def __init__(self, scope: ScopeId, name: str, value: np.ndarray | onnx.TensorProto,
                 elem_type: int | None = None) -> None:
        super().__init__()
        self.scope, self.name, self.value, self.elem_type = scope, name, value, elem_type
        self.label = f"Replace initializer {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        _graph_scope(doc, self.scope)
        k, _ = _find_initializer(doc, self.scope, self.name)
        tensor = _tensor(self.value, self.name, self.elem_type)
        tx.apply(ReplaceItem(scope_target(self.scope), "initializer", k, tensor))


class RemoveInitializer(Command):
    """Remove an initializer; refused while nodes use it unless ``force``."""

    def __init__(self, scope: ScopeId, name: str, *, force: bool = False) -> None:
        super().__init__()
        self.scope, self.name, self.force = scope, name, force
        self.label = f"Remove initializer {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        _graph_scope(doc, self.scope)
        k, _ = _find_initializer(doc, self.scope, self.name)
        uses = doc.consumers(self.scope, self.name, nested=True)
        require(self.force or not uses,
                f"initializer {describe(self.name)} is used by {len(uses)} node(s); remove those uses first")
        tx.apply(RemoveItem(scope_target(self.scope), "initializer", k))


class CastInitializer(Command):
    """Convert an initializer's values to another element type (e.g. float32 -> float16)."""

    def __init__(self, scope: ScopeId, name: str, elem_type: int) -> None:
        super().__init__()
        self.scope, self.name, self.elem_type = scope, name, elem_type
        self.label = f"Cast initializer {name!r} to {T.DataType.Name(elem_type) if elem_type in T.DataType.values() else elem_type}"

    def run(self, doc: Document, tx: Transaction) -> None:
        _graph_scope(doc, self.scope)
        require(self.elem_type in T.DataType.values() and self.elem_type != T.UNDEFINED,
                f"unknown element type {describe(self.elem_type)}")
        k, tensor = _find_initializer(doc, self.scope, self.name)
        if tensor.data_type == self.elem_type:
            return
        # numbers have no one agreed text form (onnx.numpy_helper raises deep inside on
        # them): refuse up front instead of failing half way
        require((self.elem_type == T.STRING) == (tensor.data_type == T.STRING),
                f"cannot cast {T.DataType.Name(tensor.data_type)} initializer {describe(self.name)} to "
                f"{T.DataType.Name(self.elem_type)}: only numbers convert to numbers")
        array = tensor_to_array(tensor, doc.store)
        new = array_to_tensor(array, self.name, self.elem_type)
        tx.apply(ReplaceItem(scope_target(self.scope), "initializer", k, new))


_CONSTANT_VALUE_ATTRS = {
    "value_float": lambda a: np.array(a.f, dtype=np.float32),
    "value_floats": lambda a: np.array(list(a.floats), dtype=np.float32),
    "value_int": lambda a: np.array(a.i, dtype=np.int64),
    "value_ints": lambda a: np.array(list(a.ints), dtype=np.int64),
    "value_string": lambda a: np.array(a.s.decode("utf-8", "replace"), dtype=object),
    "value_strings": lambda a: np.array([s.decode("utf-8", "replace") for s in a.strings], dtype=object),
}


def constant_tensor(node: onnx.NodeProto, store=None) -> onnx.TensorProto:  # noqa: ANN001
    """The tensor a Constant node produces (any of its value_* forms), named as its output."""
    name = node.output[0] if node.output else ""
    for attr in node.attribute:
        if attr.name == "value":
            t = T()
            t.CopyFrom(attr.t)
            t.name = name
            return t
        if attr.name in _CONSTANT_VALUE_ATTRS:
            return array_to_tensor(_CONSTANT_VALUE_ATTRS[attr.name](attr), name)
    raise ValueError(f"Constant node {node.name!r} has no tensor value (sparse_value is not convertible)")


def _is_constant(node: onnx.NodeProto) -> bool:
    return node.op_type == "Constant" and node.domain in ("", "ai.onnx")


class ConstantToInitializer(Command):
    """Turn a Constant node into an initializer of the same name (the node goes)."""

    def __init__(self, node_id: NodeId) -> None:
        super().__init__()
        self.node_id = node_id
        self.label = "Convert Constant to initializer"

    def run(self, doc: Document, tx: Transaction) -> None:
        node = check_node(doc, self.node_id)
        require(_is_constant(node), f"node {describe(node.name or node.op_type)} is not a Constant")
        sid = doc.scope_of(self.node_id).id
        g = _graph_scope(doc, sid)
        require(len(node.output) == 1 and bool(node.output[0]), "the Constant has no output name")
        try:
            tensor = constant_tensor(node)
        except ValueError as exc:
            require(False, str(exc))
        self.label = f"Convert Constant {describe(node.output[0])} to initializer"
        tx.apply(RemoveItem(scope_target(sid), "node", doc.scope(sid).position(self.node_id)))
        tx.apply(InsertItem(scope_target(sid), "initializer", len(g.initializer), tensor))


class InitializerToConstant(Command):
    """Turn an initializer into a Constant node placed before its first consumer."""

    def __init__(self, scope: ScopeId, name: str) -> None:
        super().__init__()
        self.scope, self.name = scope, name
        self.label = f"Convert initializer {name!r} to Constant"
        self.node_id: NodeId | None = None

    def run(self, doc: Document, tx: Transaction) -> None:
        _graph_scope(doc, self.scope)
        k, tensor = _find_initializer(doc, self.scope, self.name)
        s = doc.scope(self.scope)
        require(self.name not in s.input_names(),
                f"{describe(self.name)} is also a graph input (a default value): remove the input first")
        value = T()
        if tensor.data_location == T.EXTERNAL:
            value.CopyFrom(array_to_tensor(tensor_to_array(tensor, doc.store), ""))
        else:
            value.CopyFrom(tensor)
            value.name = ""
        # before the first node that reads it, directly or through a body that captures it
        # (a use inside a body counts at the position of its top-level owner node)
        pos = min((s.position(_top_owner(doc, self.scope, n)) for n, _ in
                   doc.consumers(self.scope, self.name, nested=True)), default=0)
        taken = {n.name for _, _, n in doc.index.iter_nodes()}
        from editor.commands.common import fresh_name

        node = onnx.helper.make_node("Constant", [], [self.name], name=fresh_name(f"{self.name}_Constant", taken))
        attr = node.attribute.add()
        attr.name = "value"
        attr.type = onnx.AttributeProto.TENSOR
        attr.t.CopyFrom(value)
        tx.apply(RemoveItem(scope_target(self.scope), "initializer", k))
        tx.apply(InsertItem(scope_target(self.scope), "node", pos, node))
        self.node_id = doc.scope(self.scope).node_ids[pos]


def _top_owner(doc: Document, sid: ScopeId, nid: NodeId) -> NodeId:
    """The node of scope ``sid`` that is ``nid`` or holds it in a (nested) body."""
    while doc.scope_of(nid).id != sid:
        nid = doc.scope_of(nid).owner
    return nid


class SetConstantValue(Command):
    """Replace a Constant node's tensor (from a numpy array or TensorProto)."""

    def __init__(self, node_id: NodeId, value: np.ndarray | onnx.TensorProto, elem_type: int | None = None) -> None:
        super().__init__()
        self.node_id, self.value, self.elem_type = node_id, value, elem_type
        self.label = "Replace Constant value"

    def run(self, doc: Document, tx: Transaction) -> None:
        node = check_node(doc, self.node_id)
        require(_is_constant(node), f"node {describe(node.name or node.op_type)} is not a Constant")
        tensor = _tensor(self.value, "", self.elem_type)
        attr = onnx.AttributeProto()
        attr.name = "value"
        attr.type = onnx.AttributeProto.TENSOR
        attr.t.CopyFrom(tensor)
        # a Constant holds exactly one value attribute: replace whichever form it has
        for i, existing in enumerate(node.attribute):
            if existing.name == "value" or existing.name in _CONSTANT_VALUE_ATTRS or existing.name == "sparse_value":
                tx.apply(ReplaceItem(node_target(self.node_id), "attribute", i, attr))
                return
        tx.apply(InsertItem(node_target(self.node_id), "attribute", len(node.attribute), attr))


def unused_initializers(doc: Document, sid: ScopeId) -> list[str]:
    s = doc.scope(sid)
    used = set(s.output_names())
    return [n for n in s.initializer_names() if n not in used and not doc.consumers(sid, n, nested=True)]


__all__ = [
    "AddInitializer",
    "CastInitializer",
    "ConstantToInitializer",
    "InitializerToConstant",
    "RemoveInitializer",
    "ReplaceInitializer",
    "SetConstantValue",
    "constant_tensor",
    "names_in_scope",
    "unused_initializers",
]
