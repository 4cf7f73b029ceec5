"""Copy a node's name, a value's name or a weight's shape to the clipboard.

Context-menu actions of the registry (``widgets.actions.context``): they run with what the
menu was opened on. A node box (context ``node``) offers its name and, when it has exactly
one output, that value's name; an edge (context ``edge``) and a graph input/output box
(context ``value``) their value's name; each weight of a node's Weights submenu (context ``weight``, bound to the weight)
its ``name: [dims]``.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from widgets.actions.registry import ActionSpec


def node_name(target) -> str | None:
    """The name of the node a context menu was opened on (its op type and id when unnamed)."""
    nid = getattr(target, "node_id", None)
    if nid is None or not target.tab.doc.has_node(nid):
        return None
    node = target.tab.doc.node(nid)
    return node.name or f"{node.op_type} #{nid}"


def value_name(target) -> str | None:
    """The value of an edge or a graph input/output box, or a node's only output."""
    if getattr(target, "value", None):
        return target.value
    nid = getattr(target, "node_id", None)
    if nid is not None and target.tab.doc.has_node(nid):
        outs = [o for o in target.tab.doc.node(nid).output if o]
        if len(outs) == 1:
            return outs[0]
    return None


def weight_shape(weight) -> str | None:
    """``name: [d0, d1, ...]`` of a weight (``editor.weights.WeightInfo``)."""
    if weight is None or not hasattr(weight, "shape"):
        return None
    return f"{weight.name}: [{', '.join(str(d) for d in weight.shape)}]"


def _copy(window, text: str | None, what: str) -> None:
    if not text:
        window.statusBar().showMessage(f"No {what} to copy", 3000)
        return
    QApplication.clipboard().setText(text)
    window.statusBar().showMessage(f"Copied {what}: {text}", 4000)


def install_copy_names(window) -> None:
    """Declare the copy actions (context menus only; Edit > Copy copies nodes)."""
    window.registry.add_all([
        ActionSpec(id="node.copy_name", title="Copy Node Name", contexts=("node",), section="7_copy",
                   takes_target=True, run=lambda t: _copy(window, node_name(t), "node name"),
                   visible_when=lambda t: node_name(t) is not None,
                   tip="Copy the node's name to the clipboard"),
        ActionSpec(id="value.copy_name", title="Copy Value Name", contexts=("node", "value", "edge"), section="7_copy",
                   takes_target=True, run=lambda t: _copy(window, value_name(t), "value name"),
                   visible_when=lambda t: value_name(t) is not None,
                   tip="Copy the tensor name (a graph input/output, or the node's only output)"),
        ActionSpec(id="weight.copy_shape", title="Copy Name and Shape", contexts=("weight",), section="7_copy",
                   takes_target=True, run=lambda w: _copy(window, weight_shape(w), "weight shape"),
                   tip="Copy the weight's name and shape"),
    ])
