"""Node edits of the :class:`~widgets.editing.controller.EditingController`: add, insert
on an edge, delete, rename (inline), op type, attributes, disconnect, the clipboard, and
the weights a node reads. Each pushes one command; a refusal is said in the status bar.

The registry entries that run them are declared in :mod:`widgets.editing.actions_nodes`."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit

from editor.commands import DeleteNodes, SetNodeField, SetNodeInput
from widgets.editing import clipboard
from widgets.editing.attributes import AttributeDialog
from widgets.editing.common import announce_with_undo, run_command
from widgets.editing.inline_edit import inline_editor
from widgets.editing.nodes import NodePalette, add_node_command, change_op_type_command, insert_on_edge_command
from widgets.editing.weights import find_weight
from widgets.common.selection import Target

SOURCE = "editing"
#: a keyboard delete of more nodes than this says how many, with an Undo button
HANDFUL = 5


class NodeEdits:
    """Mixin of the controller (``self.window``, ``self._tab()``, ``self.run_dialog`` ...)."""

    # -- nodes ----------------------------------------------------------------------------
    def add_node(self, *, after: int | None = None, choice=None) -> int | None:
        tab = self._tab()
        if tab is None:
            return None
        if choice is None:
            palette = NodePalette(tab.doc, self.window)
            if not self.run_dialog(palette):
                return None
            choice = palette.choice()
        if choice is None:
            return None
        domain, op, need = choice
        nodes = self.selected_nodes(tab)
        after = after if after is not None else (nodes[-1] if nodes else None)
        cmd = add_node_command(tab.doc, tab.scope_id, domain, op, need, after=after)
        if not run_command(self.window, tab.doc, cmd):
            return None
        add = cmd.parts[-1] if hasattr(cmd, "parts") else cmd
        self.select_after_layout(tab, [Target.of_node(tab.scope_id, add.node_id)])
        return add.node_id

    def insert_on_edge(self, *, choice=None) -> str | None:
        tab = self._tab()
        picked = self.selected_value(tab)
        if tab is None or picked is None:
            self._refuse("select an edge (a value) or a single-output node to insert after")
            return None
        sid, value = picked
        if choice is None:
            palette = NodePalette(tab.doc, self.window, title=f"Insert Node on {value!r}")
            if not self.run_dialog(palette):
                return None
            choice = palette.choice()
        if choice is None:
            return None
        cmd, out = insert_on_edge_command(tab.doc, sid, value, *choice)
        return out if run_command(self.window, tab.doc, cmd) else None

    def delete_selected(self, *, reconnect: bool = False, announce: bool = False) -> bool:
        """Delete the selected nodes; ``announce`` (the Delete action, keyboard or menu):
        a delete of more than a handful says how many in the status bar, with Undo."""
        tab = self._tab()
        nodes = self.selected_nodes(tab)
        if tab is None or not nodes:
            return False
        ok = run_command(self.window, tab.doc, DeleteNodes(nodes, reconnect=reconnect))
        if ok:
            tab.selection.clear(SOURCE)
            if announce and len(nodes) > HANDFUL:
                announce_with_undo(self.window, tab.doc, f"Deleted {len(nodes):,} nodes")
        return ok

    def rename_node(self, nid: int, name: str) -> bool:
        tab = self._tab()
        return tab is not None and run_command(self.window, tab.doc, SetNodeField(nid, "name", name))

    def rename_inline(self, nid: int | None = None) -> QLineEdit | None:
        """A line edit over the node's box; Enter renames (one command), Esc cancels."""
        tab = self._tab()
        if tab is None:
            return None
        nid = self._one_node(tab, nid, "rename")
        if nid is None:
            return None
        view = tab.canvas.view
        item = tab.canvas.scene.item_for(f"n:{nid}")
        anchor = view.mapFromScene(item.scene_rect()).boundingRect() if item is not None else None
        self._rename_editor = inline_editor(view, tab.doc.node(nid).name, anchor,
                                            lambda text: self.rename_node(nid, text))
        return self._rename_editor

    def change_op_type(self, *, choice=None) -> bool:
        tab = self._tab()
        nid = self._one_node(tab, None, "change its op type")
        if tab is None or nid is None:
            return False
        if choice is None:
            palette = NodePalette(tab.doc, self.window, title="Change Op Type")
            if not self.run_dialog(palette):
                return False
            choice = palette.choice()
        if choice is None:
            return False
        return run_command(self.window, tab.doc, change_op_type_command(tab.doc, nid, *choice))

    def edit_attributes(self, nid: int | None = None) -> AttributeDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        nid = self._one_node(tab, nid, "edit its attributes")
        if nid is None:
            return None
        dialog = AttributeDialog(tab.doc, nid, self.window, open_scope=tab.show_scope)
        self.run_dialog(dialog)
        return dialog

    def edit_from_properties(self, target: Target, what: str) -> None:
        """The properties panel asked to edit a node's name or attributes."""
        tab = self._tab()
        if tab is None or target.node is None or not tab.doc.has_node(target.node):
            return
        if what == "name":
            self.rename_inline(target.node)
        else:
            self.edit_attributes(target.node)

    def disconnect_input(self, nid: int, index: int) -> bool:
        tab = self._tab()
        return tab is not None and run_command(self.window, tab.doc, SetNodeInput(nid, index, ""))

    # -- clipboard --------------------------------------------------------------------------
    def copy(self) -> int:
        tab = self._tab()
        nodes = self.selected_nodes(tab)
        if tab is None or not nodes:
            return 0
        n = clipboard.copy_nodes(tab.doc, tab.scope_id, nodes)
        self.window.statusBar().showMessage(f"Copied {n} node{'s' if n != 1 else ''}", 3000)
        return n

    def cut(self) -> int:
        n = self.copy()
        if n:
            self.delete_selected()
        return n

    def paste(self) -> list[int]:
        tab = self._tab()
        model = clipboard.clipboard_model()
        if tab is None or model is None:
            return []
        cmd = clipboard.paste_command(tab.doc, tab.scope_id, model)
        if cmd is None or not run_command(self.window, tab.doc, cmd):
            return []
        ids = clipboard.pasted_node_ids(cmd)
        self.select_after_layout(tab, [Target.of_node(tab.scope_id, i) for i in ids])
        return ids

    def node_weights(self, tab, nid: int) -> list:
        doc = tab.doc
        node = doc.node(nid)
        sid = doc.index.node_scope[nid]
        out = []
        if node.op_type == "Constant" and node.output:
            w = find_weight(doc, sid, node.output[0], nid)
            if w is not None:
                out.append(w)
        inits = doc.scope(sid).initializer_names()
        for name in node.input:
            if name and name in inits:
                w = find_weight(doc, sid, name)
                if w is not None:
                    out.append(w)
            elif name:
                producer = doc.producer(sid, name)
                if producer is not None and doc.node(producer).op_type == "Constant":
                    w = find_weight(doc, sid, name, producer)
                    if w is not None:
                        out.append(w)
        return out
