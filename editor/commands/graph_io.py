"""Commands on a graph's inputs and outputs: add, remove, reorder."""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from editor.commands.common import check_scope, describe, require
from editor.commands.values import Dim, make_type, value_type
from editor.document import Command, Document, ScopeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, scope_target

KINDS = ("input", "output")


def _entry(g: onnx.GraphProto | onnx.FunctionProto, name: str, tp: onnx.TypeProto | None):  # noqa: ANN202
    if isinstance(g, onnx.FunctionProto):
        return name
    vi = onnx.ValueInfoProto()
    vi.name = name
    if tp is not None:
        vi.type.CopyFrom(tp)
    return vi


class AddGraphValue(Command):
    """Add a graph input or output.

    Inputs need a new name (or an existing name nothing produces, e.g. a dangling use);
    outputs name an existing value ("make this value a graph output"). The type comes
    from ``elem_type``/``shape`` if given, else from what the model already declares.
    """

    def __init__(self, scope: ScopeId, kind: str, name: str, elem_type: int | None = None,
                 shape: Sequence[Dim] | None = None, position: int | None = None) -> None:
        super().__init__()
        self.scope, self.kind, self.name = scope, kind, name
        self.elem_type, self.shape, self.position = elem_type, shape, position
        self.label = f"Add graph {kind} {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.kind in KINDS, f"kind must be input or output, not {describe(self.kind)}")
        s = check_scope(doc, self.scope)
        require(bool(self.name), "a graph value needs a name")
        g = s.graph
        existing = s.input_names() if self.kind == "input" else s.output_names()
        require(self.name not in existing, f"{describe(self.name)} is already a graph {self.kind}")
        if self.kind == "input":
            require(self.name not in s.producers, f"{describe(self.name)} is produced by a node: it cannot be an input")
        else:
            # NOTE: only a value this graph defines: a body cannot output a value it captures
            # from outside, nor may any graph output a name nothing defines (onnx.checker:
            # "Graph output ... is not an output of any node")
            require(self.name in s.defined_names(),
                    f"there is no value {describe(self.name)} in this graph to make an output")
        tp = None
        if self.elem_type is not None:
            tp = make_type(self.elem_type, self.shape)
        elif not isinstance(g, onnx.FunctionProto):
            tp = value_type(doc, self.scope, self.name)
        pos = len(existing) if self.position is None else self.position
        require(0 <= pos <= len(existing), f"position {pos} is outside the graph's {self.kind}s")
        tx.apply(InsertItem(scope_target(self.scope), self.kind, pos, _entry(g, self.name, tp)))

class RemoveGraphValue(Command):
    """Remove a graph input or output entry (the value itself stays in the graph)."""

    def __init__(self, scope: ScopeId, kind: str, name: str) -> None:
        super().__init__()
        self.scope, self.kind, self.name = scope, kind, name
        self.label = f"Remove graph {kind} {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.kind in KINDS, f"kind must be input or output, not {describe(self.kind)}")
        s = check_scope(doc, self.scope)
        names = s.input_names() if self.kind == "input" else s.output_names()
        require(self.name in names, f"{describe(self.name)} is not a graph {self.kind}")
        tx.apply(RemoveItem(scope_target(self.scope), self.kind, names.index(self.name)))

class MoveGraphValue(Command):
    """Reorder: move graph input/output ``name`` to position ``index``."""

    def __init__(self, scope: ScopeId, kind: str, name: str, index: int) -> None:
        super().__init__()
        self.scope, self.kind, self.name, self.index = scope, kind, name, index
        self.label = f"Move graph {kind} {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.kind in KINDS, f"kind must be input or output, not {describe(self.kind)}")
        s = check_scope(doc, self.scope)
        names = s.input_names() if self.kind == "input" else s.output_names()
        require(self.name in names, f"{describe(self.name)} is not a graph {self.kind}")
        require(0 <= self.index < len(names), f"position {self.index} is outside the graph's {self.kind}s")
        old = names.index(self.name)
        if old == self.index:
            return
        seq = getattr(s.graph, self.kind)
        item = seq[old]
        if not isinstance(item, str):
            dup = type(item)()
            dup.CopyFrom(item)
            item = dup
        tx.apply(RemoveItem(scope_target(self.scope), self.kind, old))
        tx.apply(InsertItem(scope_target(self.scope), self.kind, self.index, item))
