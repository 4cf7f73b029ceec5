"""Node edits as registry actions: add, insert, rename, op type, attributes, delete,
disconnect an input, the clipboard, and the weights of a node (its context menu's
Weights ▸ <name> ▸ Edit Values…, Replace…, Cast…, Convert…, Rename…).

The work is done by the :class:`~widgets.editing.controller.EditingController` methods
named here; this module declares what the user sees, where, and with which key."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from widgets.actions.registry import ActionSpec

K = QKeySequence.StandardKey


def register(window, ctl) -> None:
    has_tab = lambda: window.current_tab() is not None  # noqa: E731

    def node(t):
        return t.tab.doc.node(t.node_id)

    def reconnectable(t) -> bool:
        n = node(t)
        return len([i for i in n.input if i]) >= 1 and len([o for o in n.output if o]) == 1

    def inputs(t) -> list:
        return [(f"{k}: {name}", (t.node_id, k)) for k, name in enumerate(node(t).input) if name]

    def outputs(t) -> list:
        sid = t.tab.doc.index.node_scope[t.node_id]
        return [(o, (sid, o)) for o in node(t).output if o]

    window.registry.add_all([
        ActionSpec("node.add", "&Add Node…", ctl.add_node, "Ctrl+Shift+A", "Node", "1_add", enabled_when=has_tab,
                   tip="Add an operator after the selection", keywords="new operator palette"),
        ActionSpec("node.add_here", "Add Node Here…", ctl.add_node, contexts=("canvas",), section="1_add"),
        ActionSpec("node.insert", "&Insert Node on Edge…", ctl.insert_on_edge, "Ctrl+Shift+I", "Node", "1_add",
                   enabled_when=has_tab),
        ActionSpec("node.rename", "Re&name Node", ctl.rename_inline, menu="Node", section="2_change",
                   enabled_when=has_tab, contexts=("node",), context_section="1_edit",
                   tip="Rename the selected node (F2 renames whatever is selected)"),
        ActionSpec("node.attributes", "Edit A&ttributes…", ctl.edit_attributes, "Ctrl+E", "Node", "2_change",
                   enabled_when=has_tab, contexts=("node",), context_section="1_edit"),
        ActionSpec("node.op_type", "Change Op &Type…", ctl.change_op_type, menu="Node", section="2_change",
                   enabled_when=has_tab, contexts=("node",), context_section="1_edit"),
        ActionSpec("node.delete", "&Delete", lambda: ctl.delete_selected(announce=True), K.Delete, "Node",
                   "3_delete", enabled_when=has_tab, contexts=("node",), context_section="2_node"),
        ActionSpec("node.delete_reconnect", "Delete and &Reconnect Through",
                   lambda: ctl.delete_selected(reconnect=True, announce=True), "Shift+Del", "Node", "3_delete",
                   enabled_when=has_tab, contexts=("node",), context_section="2_node", visible_when=reconnectable),
        ActionSpec("edit.cut", "Cu&t", ctl.cut, "Ctrl+X", "Edit", "2_clipboard", enabled_when=has_tab,
                   contexts=("node",), context_section="2_node"),
        ActionSpec("edit.copy", "&Copy", ctl.copy, K.Copy, "Edit", "2_clipboard", enabled_when=has_tab,
                   contexts=("node",), context_section="2_node"),
        ActionSpec("edit.paste", "&Paste", ctl.paste, K.Paste, "Edit", "2_clipboard", enabled_when=has_tab,
                   contexts=("node", "canvas"), context_section="2_node"),
        ActionSpec("node.disconnect_input", "Disconnect Input", lambda a: ctl.disconnect_input(*a),
                   contexts=("node",), context_section="2_node", choices=inputs),
        ActionSpec("node.make_output", "Make Graph Output", ctl.make_output, contexts=("node",),
                   context_section="2_node", choices=outputs),
        ActionSpec("node.insert_after", "Insert Node After…", lambda _t: ctl.insert_on_edge(), contexts=("node",),
                   context_section="2_node", takes_target=True),
        ActionSpec("node.weights", "Weights", lambda _w: None, contexts=("node",), context_section="2_node",
                   choices=lambda t: [(w.name, w) for w in ctl.node_weights(t.tab, t.node_id)],
                   submenu_context="weight"),
        ActionSpec("weight.edit_values", "Edit Values…", ctl.edit_weight_grid, contexts=("weight",),
                   takes_target=True, enabled_for=lambda w: w.elements <= 10_000 and not w.external),
        ActionSpec("weight.replace", "Replace from .npy…", ctl.replace_weight, contexts=("weight",),
                   takes_target=True),
        ActionSpec("weight.cast", "Cast…", ctl.cast_weight, contexts=("weight",), takes_target=True),
        ActionSpec("weight.convert", "Convert to Initializer", ctl.convert_weight, contexts=("weight",),
                   choices=lambda w: [("Convert to Initializer" if w.source == "constant" else "Convert to Constant",
                                       w)], inline=True),
        ActionSpec("weight.rename", "Rename…", ctl.rename_weight, contexts=("weight",), takes_target=True),
    ])
