"""Graph and model edits of the :class:`~widgets.editing.controller.EditingController`:
graph inputs and outputs, dimensions, weights (grid, .npy, cast, convert, rename, unused),
model properties, opset conversion and the clean-up passes.

The registry entries that run them are declared in :mod:`widgets.editing.actions_graph`
and :mod:`widgets.editing.actions_nodes` (the weights of a node's context menu)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QFileDialog, QInputDialog

from editor.commands import AddGraphValue, RemoveGraphValue
from editor.errors import StudioError
from widgets.editing.common import ELEM_TYPES, run_command
from widgets.editing.graph_io import DimensionDialog, GraphValueDialog, value_type
from widgets.view.shape_labels import shown_type
from widgets.editing.model import MetadataDialog, OpsetDialog, PassPreviewDialog
from widgets.editing.weights import (
    TensorGridDialog,
    cast_command,
    convert_command,
    delete_unused_command,
    find_weight,
    rename_command,
    replace_command,
)
from widgets.common.selection import Target


class GraphEdits:
    """Mixin of the controller (``self.window``, ``self._tab()``, ``self.run_dialog`` ...)."""

    # -- graph inputs / outputs -------------------------------------------------------------
    def add_graph_value(self, kind: str) -> GraphValueDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = GraphValueDialog(tab.doc, tab.scope_id, kind, None, self.window)
        self.run_dialog(dialog)
        return dialog

    def _graph_value(self, tab) -> tuple[int, str, str] | None:
        picked = self.selected_value(tab)
        if picked is None:
            return None
        sid, name = picked
        scope = tab.doc.scope(sid)
        if name in scope.input_names():
            return sid, name, "input"
        if name in scope.output_names():
            return sid, name, "output"
        return None

    def edit_graph_value(self) -> GraphValueDialog | None:
        tab = self._tab()
        found = self._graph_value(tab) if tab is not None else None
        if found is None:
            self._refuse("select a graph input or output")
            return None
        sid, name, kind = found
        dialog = GraphValueDialog(tab.doc, sid, kind, name, self.window)
        self.run_dialog(dialog)
        return dialog

    def remove_graph_value(self) -> bool:
        tab = self._tab()
        found = self._graph_value(tab) if tab is not None else None
        if found is None:
            self._refuse("select a graph input or output")
            return False
        sid, name, kind = found
        return run_command(self.window, tab.doc, RemoveGraphValue(sid, kind, name))

    def make_output(self, value: tuple[int, str] | None = None) -> bool:
        tab = self._tab()
        picked = value or self.selected_value(tab)
        if tab is None or picked is None:
            self._refuse("select a value to make it a graph output")
            return False
        sid, name = picked
        # the shape engine's type where the file declares none (the schema's alone left
        # [1,24,64,?] where the engine knows the last dim), else the schema's
        tp, _inferred = shown_type(tab, sid, name)
        tp = tp or value_type(tab.doc, sid, name)
        elem, shape = None, None
        if tp is not None and tp.HasField("tensor_type"):
            tt = tp.tensor_type
            elem = tt.elem_type or None
            if tt.HasField("shape"):
                shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]
        return run_command(self.window, tab.doc, AddGraphValue(sid, "output", name, elem, shape))

    def set_dimension(self, axis: int = 0) -> DimensionDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        # NOTE: only a value the user selected itself (a graph input or output pill, an edge)
        # is pre-ticked: a selected node stands for its output elsewhere, and here it put the
        # node's output among the "inputs to change", ticked
        picked = next(((t.scope, t.name) for t in tab.selection.targets if t.kind in ("value", "tensor")), None)
        scope = tab.doc.scope(picked[0]) if picked is not None else None
        name = picked[1] if scope is not None and (picked[1] in scope.input_names()
                                                  or picked[1] in scope.output_names()) else None
        dialog = DimensionDialog(tab.doc, tab.scope_id, name, axis, self.window, across=name is None,
                                 type_of=lambda s, n: shown_type(tab, s, n))
        self.run_dialog(dialog)
        return dialog

    def set_batch_size(self) -> DimensionDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = DimensionDialog(tab.doc, tab.doc.index.main, None, 0, self.window, across=True,
                                 type_of=lambda s, n: shown_type(tab, s, n))
        self.run_dialog(dialog)
        return dialog

    # -- weights ----------------------------------------------------------------------------
    def _weight(self, tab, target: Target | None = None):
        t = target
        if t is None:
            for cand in tab.selection.targets:
                if cand.kind == "tensor":
                    t = cand
                    break
        if t is None:
            nodes = self.selected_nodes(tab)
            if len(nodes) == 1 and tab.doc.node(nodes[0]).op_type == "Constant":
                out = tab.doc.node(nodes[0]).output[0]
                return find_weight(tab.doc, tab.doc.index.node_scope[nodes[0]], out, nodes[0])
            return None
        return find_weight(tab.doc, t.scope, t.name, t.node)

    def edit_weight_grid(self, w) -> TensorGridDialog | None:
        tab = self._tab()
        if tab is None or w is None:
            return None
        if w.elements > 10_000:
            self._refuse(f"{w.name!r} has {w.elements:,} elements: too big for the grid (replace it from .npy)")
            return None
        dialog = TensorGridDialog(tab.doc, w, self.window)
        self.run_dialog(dialog)
        return dialog

    def replace_weight(self, w, path: str | None = None) -> bool:
        tab = self._tab()
        if tab is None or w is None:
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.window, f"Replace {w.name} from .npy", "", "NumPy arrays (*.npy)")
            if not path:
                return False
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            self._refuse(f"cannot read {path!r}: {exc}")
            return False
        return run_command(self.window, tab.doc, replace_command(tab.doc, w, array))

    def cast_weight(self, w, elem_type: int | None = None) -> bool:
        tab = self._tab()
        if tab is None or w is None:
            return False
        if elem_type is None:
            names = [n for n, _ in ELEM_TYPES]
            name, ok = QInputDialog.getItem(self.window, "Cast", f"Cast {w.name} to", names, 0, False)
            if not ok:
                return False
            elem_type = dict(ELEM_TYPES)[name]
        try:
            cmd = cast_command(tab.doc, w, elem_type)
        except (StudioError, ValueError, TypeError) as exc:
            self._refuse(getattr(exc, "message", str(exc)))
            return False
        return run_command(self.window, tab.doc, cmd)

    def convert_weight(self, w) -> bool:
        tab = self._tab()
        return tab is not None and w is not None and run_command(self.window, tab.doc, convert_command(tab.doc, w))

    def rename_weight(self, w, new: str | None = None) -> bool:
        tab = self._tab()
        if tab is None or w is None:
            return False
        if new is None:
            new, ok = QInputDialog.getText(self.window, "Rename", f"New name for {w.name}", text=w.name)
            if not ok:
                return False
        return run_command(self.window, tab.doc, rename_command(tab.doc, w, new))

    def delete_unused(self) -> bool:
        tab = self._tab()
        if tab is None:
            return False
        cmd = delete_unused_command(tab.doc)
        if cmd is None:
            self.window.statusBar().showMessage("No unused initializers", 3000)
            return False
        return run_command(self.window, tab.doc, cmd)

    # -- model ------------------------------------------------------------------------------
    def edit_metadata(self) -> MetadataDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = MetadataDialog(tab.doc, self.window)
        self.run_dialog(dialog)
        return dialog

    def convert_opset(self) -> OpsetDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = OpsetDialog(tab.doc, self.window)
        self.run_dialog(dialog)
        return dialog

    def cleanup(self, key: str | None = None) -> PassPreviewDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = PassPreviewDialog(tab.doc, key, self.window)
        self.run_dialog(dialog)
        return dialog
