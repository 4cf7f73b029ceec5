"""The bodies a whole-model picture opens: every If/Loop/Scan body, at every depth.

The window opens a control-flow node's bodies one at a time, on request (the ``"@<node
id>"`` paths of :func:`editor.viewmodel.body_key` in the controller's expanded set).
``render --bodies`` wants the picture with all of them open at once; the view model draws
a body only while its owner is drawn, so a nested body opens when its own owner's does.

A body's name-scope groups are paths under its sub-frame, ``"@<node id>/<attribute>"``
followed by the group path (``"@12/then_branch/model/decoder"``): the same paths the
window's controller holds when a user opens a group inside a body.
"""

from __future__ import annotations

from typing import Any

__all__ = ["all_body_paths"]


def all_body_paths(doc: Any, *, groups: str = "default") -> set[str]:
    """``"@<node id>"`` of every node that owns a subgraph (main graph and bodies), and the
    groups to open inside each body: ``groups="all"`` every one (a flat picture),
    ``"default"`` those :func:`editor.viewmodel.default_expanded` opens for a first view,
    ``"none"`` none."""
    from editor.viewmodel import body_key, default_expanded, group_tree

    out: set[str] = set()
    for nid, scopes in doc.index.children.items():
        if not scopes:
            continue
        out.add(body_key(nid))
        if groups == "none":
            continue
        for sid in scopes:
            scope = doc.scope(sid)
            prefix = f"{body_key(nid)}/{scope.attr}"
            if groups == "all":
                opened = set(group_tree(scope.graph).parent)
            else:
                opened = default_expanded(scope.graph)
            out |= {prefix + g for g in opened}
    return out

