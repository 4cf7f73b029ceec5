"""Refresh shapes: rewrite a graph's value_info from the shape engine, as one undoable step.

Modes: ``"update"`` adds an entry for every value the engine knows and the file does not
declare, and corrects declared entries whose fully known inferred type differs (stale after
an edit or an export bug); ``"add"`` only adds missing ones; ``"strip"`` removes every
value_info entry (graph inputs and outputs, the model's interface, are never touched).
Bodies of If/Loop/Scan are refreshed with their graphs.
"""

from __future__ import annotations

import onnx

from editor.commands.common import require
from editor.document import Command, Document, ScopeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, scope_target
from editor.shapes import ShapeTable, infer_model
from editor.shapes.declare import type_proto

__all__ = ["RefreshShapes", "MODES"]

MODES = ("update", "add", "strip")


class RefreshShapes(Command):
    """``table`` (optional): the engine's table of the document as it is now, computed by
    the caller (the window does it off the GUI thread on a snapshot, and runs the command
    only if the document did not change meanwhile); None: computed here."""

    def __init__(self, mode: str = "update", dims: dict[str, int] | None = None, *,
                 table: ShapeTable | None = None) -> None:
        super().__init__()
        self.mode, self.dims = mode, dict(dims or {})
        self._table = table
        # a script line re-does the refresh on its own (the table is an optimisation, not an argument)
        self._ctor = (type(self).__name__, (mode,), {"dims": self.dims} if self.dims else {})
        self.label = {"update": "Refresh shapes", "add": "Add missing shapes", "strip": "Strip shapes"}.get(
            mode, "Refresh shapes")

    def run(self, doc: Document, tx: Transaction) -> None:
        require(self.mode in MODES, f"unknown refresh mode {self.mode!r} (one of {', '.join(MODES)})")
        table = None if self.mode == "strip" else (self._table or infer_model(doc.model, self.dims))
        self._table = None  # a redo after other edits recomputes
        self._refresh(doc, tx, doc.index.main, table)

    def _refresh(self, doc: Document, tx: Transaction, sid: ScopeId, table: ShapeTable | None) -> None:
        scope = doc.scope(sid)
        g = scope.graph
        if isinstance(g, onnx.FunctionProto):
            return
        if table is None:
            for k in range(len(g.value_info) - 1, -1, -1):
                tx.apply(RemoveItem(scope_target(sid), "value_info", k))
        else:
            interface = {vi.name for vi in list(g.input) + list(g.output)} | {t.name for t in g.initializer}
            position = {vi.name: k for k, vi in enumerate(g.value_info)}
            for node in list(g.node):
                for name in node.output:
                    if not name or name in interface:
                        continue
                    tp = type_proto(table.get(name))
                    if tp is None:
                        continue
                    if name not in position:
                        vi = onnx.helper.make_value_info(name, tp)
                        position[name] = len(g.value_info)
                        tx.apply(InsertItem(scope_target(sid), "value_info", len(g.value_info), vi))
                    elif self.mode == "update" and _fully_known(tp):
                        old = g.value_info[position[name]]
                        if old.type.SerializeToString() != tp.SerializeToString():
                            new = onnx.ValueInfoProto()
                            new.CopyFrom(old)
                            new.type.CopyFrom(tp)
                            tx.apply(ReplaceItem(scope_target(sid), "value_info", position[name], new))
        for k, nid in enumerate(scope.node_ids):
            for child in doc.index.children.get(nid, ()):
                sub = doc.scope(child)
                body_table = None if table is None else table.bodies.get((k, sub.attr))
                if table is None or body_table is not None:
                    self._refresh(doc, tx, child, body_table)


def _fully_known(tp: onnx.TypeProto) -> bool:
    tt = tp.tensor_type
    return tt.HasField("shape") and all(d.HasField("dim_value") or d.HasField("dim_param") for d in tt.shape.dim)
