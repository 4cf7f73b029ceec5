"""Extract the selected nodes of a tab into a new, untitled model in a tab of its own.

Which nodes: the node targets of the tab's selection in the graph scope it shows, plus
the nodes inside any selected (collapsed) group box. :func:`editor.passes.extract_model`
makes the model (the document is not changed); a refused cut comes back as a
:class:`~editor.errors.CommandError` whose one-line message the caller shows.
"""

from __future__ import annotations

from editor.errors import CommandError


def selected_node_ids(tab) -> list[int]:
    """Node ids selected in ``tab`` within the scope it shows, in graph order."""
    doc = tab.doc
    sid = tab.scope_id
    scope = doc.scope(sid)
    wanted: set[int] = set()
    groups: list[str] = []
    for t in tab.selection.targets:
        if t.kind == "node" and t.node is not None and doc.has_node(t.node):
            if doc.index.node_scope[t.node] == sid:
                wanted.add(t.node)
        elif t.kind == "group" and t.scope == sid and t.name:
            groups.append(t.name.rstrip("/") + "/")
    if groups:
        for nid in scope.node_ids:
            name = doc.node(nid).name
            if any(name.startswith(g) for g in groups):
                wanted.add(nid)
    return [nid for nid in scope.node_ids if nid in wanted]


def extract_selection(tab):
    """The ModelProto of the selection of ``tab`` (raises CommandError when refused)."""
    from editor.passes.extract import extract_model

    ids = selected_node_ids(tab)
    if not ids:
        raise CommandError("select one or more nodes to extract")
    return extract_model(tab.doc, node_ids=ids, scope=tab.scope_id)


def open_new_document(window, model):
    """Show ``model`` as a new, untitled document in a tab of ``window``; returns the Document."""
    from editor.document import Document
    from editor.validation import Validator

    doc = Document(model)
    try:
        validator = Validator(doc)
        validator.validate_all()
    except Exception:  # noqa: BLE001 - problems are a view, never a reason to refuse
        validator = None
    window.add_document(doc, validator)
    return doc
