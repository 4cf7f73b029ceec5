"""Cut, copy and paste nodes, within a model and between open models.

Copy serializes the selected NodeProtos, the initializers they read and the model's opset
imports as an ONNX ModelProto under a custom MIME type (:data:`MIME`), so a paste into
another window or process works too. Paste adds them as one undo step: node names and
output names that collide with names in the target graph get a fresh suffix (and the
pasted nodes' uses follow the rename); inputs produced outside the copied nodes connect
by name when the target graph defines that name; copied initializers are added when the
target lacks them.
"""

from __future__ import annotations

import onnx
from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication

from editor.commands import AddInitializer, AddNode, CompositeCommand, DeleteNodes, SetOpsetImport
from widgets.editing.nodes import fresh

MIME = "application/x-onnx-studio-nodes"


def nodes_to_model(doc, sid: int, node_ids: list[int]) -> onnx.ModelProto:
    """The selected nodes of scope ``sid`` (in graph order) with the initializers they read."""
    scope = doc.scope(sid)
    order = sorted((n for n in node_ids if n in scope.node_ids), key=scope.position)
    graph = onnx.GraphProto(name="clipboard")
    inits = scope.initializer_names()
    needed: list[str] = []
    for nid in order:
        node = doc.node(nid)
        graph.node.add().CopyFrom(node)
        needed += [i for i in node.input if i in inits and i not in needed]
    for name in needed:
        found = doc.initializer(sid, name)
        if found is not None:
            graph.initializer.add().CopyFrom(found[1])
    model = onnx.ModelProto(ir_version=doc.model.ir_version, graph=graph)
    model.opset_import.extend(doc.model.opset_import)
    return model


def copy_nodes(doc, sid: int, node_ids: list[int]) -> int:
    model = nodes_to_model(doc, sid, node_ids)
    data = QMimeData()
    data.setData(MIME, model.SerializeToString())
    data.setText(f"{len(model.graph.node)} ONNX node(s)")
    QGuiApplication.clipboard().setMimeData(data)
    return len(model.graph.node)


def clipboard_model() -> onnx.ModelProto | None:
    data = QGuiApplication.clipboard().mimeData()
    if data is None or not data.hasFormat(MIME):
        return None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(bytes(data.data(MIME)))
    except Exception:  # noqa: BLE001 - foreign bytes under our MIME type: nothing to paste
        return None
    return model


def cut_command(doc, node_ids: list[int]):
    return DeleteNodes(node_ids)


def paste_command(doc, sid: int, model: onnx.ModelProto):
    """One command adding the clipboard's nodes to scope ``sid``; None when empty."""
    if not model.graph.node:
        return None
    scope = doc.scope(sid)
    taken = scope.defined_names() | set(scope.consumers) | set(scope.output_names())
    node_names = {n.name for _, _, n in doc.index.iter_nodes()}
    parts = []
    have = doc.opsets()
    for imp in model.opset_import:
        d = "" if imp.domain == "ai.onnx" else imp.domain
        used = any((n.domain or "") == d for n in model.graph.node)
        if used and d not in have and (d or "ai.onnx") not in have:
            parts.append(SetOpsetImport(d, imp.version))
    rename: dict[str, str] = {}
    existing_inits = scope.initializer_names()
    for init in model.graph.initializer:
        if init.name in existing_inits:
            continue  # same name already a weight here: connect to it
        if init.name in taken:
            new = fresh(init.name, taken)
            rename[init.name] = new
        else:
            new = init.name
        taken.add(new)
        t = onnx.TensorProto()
        t.CopyFrom(init)
        t.name = new
        parts.append(AddInitializer(sid, new, t))
    for node in model.graph.node:
        for o in node.output:
            if o and o in taken:
                rename[o] = fresh(o, taken)
                taken.add(rename[o])
            elif o:
                taken.add(o)
    for node in model.graph.node:
        name = node.name
        if name and name in node_names:
            name = fresh(name, node_names)
        node_names.add(name)
        parts.append(AddNode(sid, node.op_type, domain=node.domain, name=name,
                             inputs=[rename.get(i, i) for i in node.input],
                             outputs=[rename.get(o, o) for o in node.output],
                             attributes={a.name: a for a in node.attribute}))
    n = len(model.graph.node)
    return CompositeCommand(f"Paste {n} node{'s' if n != 1 else ''}", parts)


def pasted_node_ids(cmd) -> list[int]:
    return [p.node_id for p in getattr(cmd, "parts", []) if isinstance(p, AddNode) and p.node_id is not None]
