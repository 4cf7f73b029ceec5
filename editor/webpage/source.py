"""What one pane of a web page draws: a graph scope and the settings its display models are
built with, the same ones the window's canvas controller holds.

A :class:`ViewSource` builds the display model (:func:`editor.viewmodel.build_display_graph`)
for any set of open groups and bodies, exactly as the canvas would for that set; the page
needs several (the view the sender saw, the views a click reaches, and the view with
everything open that says what can be opened: :mod:`editor.webpage.views`).

Paths, as the controller's expanded set spells them: a name-scope group ``/model/layers.3``,
the bodies of control-flow node 12 ``@12``, a group inside one of its bodies
``@12/then_branch/model/x`` (:mod:`editor.viewmodel.bodies`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import onnx

from editor.viewmodel import DisplayGraph, body_key, build_display_graph, group_tree

if TYPE_CHECKING:
    from editor.document import Document

__all__ = ["BodyScope", "ViewSource", "source_of_document"]

#: ``bodies(node_id) -> [(attribute, body graph, body node ids), ...]`` (editor.viewmodel.document_bodies)
Bodies = Callable[[int], Sequence[tuple[str, onnx.GraphProto, Sequence[int]]]]


@dataclass(frozen=True)
class BodyScope:
    """One If/Loop/Scan body reachable from the pane's graph."""

    owner: int        # node id of the control-flow node
    attr: str         # "then_branch", "body", ...
    graph: onnx.GraphProto
    node_ids: tuple[int, ...]
    depth: int        # 0: its owner lies in the pane's graph; 1: in a body of depth 0 ...

    @property
    def prefix(self) -> str:
        """The frame path of this body (``@12/then_branch``); its groups are below it."""
        return f"{body_key(self.owner)}/{self.attr}"


@dataclass
class ViewSource:
    """A graph scope and the display settings of one canvas (see module docstring)."""

    graph: onnx.GraphProto
    node_ids: Sequence[int]
    opsets: Mapping[str, int]
    value_info: Mapping[str, onnx.ValueInfoProto] | None = None
    bodies: Bodies | None = None
    unfold: Collection[int] = ()
    show_plumbing: bool = False
    #: the window's View > Boxes Show filter (``DisplayGraph -> DisplayGraph``), if any
    display_filter: Callable[[DisplayGraph], DisplayGraph] | None = None
    _bodies_cache: list[BodyScope] | None = field(default=None, repr=False)

    def build(self, expanded: Collection[str] | None) -> DisplayGraph:
        """The display model with ``expanded`` open (None: the flat view), as the canvas builds it."""
        display = build_display_graph(self.graph, list(self.node_ids), opsets=self.opsets,
                                      value_info=self.value_info, expanded=expanded, bodies=self.bodies,
                                      unfold=self.unfold, show_plumbing=self.show_plumbing)
        return self.display_filter(display) if self.display_filter is not None else display

    def groups(self) -> set[str]:
        """Every name-scope group of the pane's own graph."""
        return set(group_tree(self.graph).parent)

    def body_scopes(self) -> list[BodyScope]:
        """Every body reachable from the graph, at every depth, parents before children."""
        if self._bodies_cache is not None:
            return self._bodies_cache
        out: list[BodyScope] = []
        if self.bodies is not None:
            todo: list[tuple[onnx.GraphProto, Sequence[int], int]] = [(self.graph, self.node_ids, 0)]
            while todo:
                graph, ids, depth = todo.pop(0)
                for node, nid in zip(graph.node, ids):
                    if not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                               for a in node.attribute):
                        continue
                    for attr, body, body_ids in self.bodies(nid):
                        out.append(BodyScope(nid, attr, body, tuple(body_ids), depth))
                        todo.append((body, body_ids, depth + 1))
        self._bodies_cache = out
        return out

    def body_paths(self) -> set[str]:
        """``@<owner>`` of every body with every group inside it."""
        out: set[str] = set()
        for b in self.body_scopes():
            out.add(body_key(b.owner))
            out |= {b.prefix + g for g in group_tree(b.graph).parent}
        return out

    def everything(self) -> set[str]:
        """The expanded set with every group and every body open."""
        return self.groups() | self.body_paths()


def source_of_document(doc: Document, *, inferred_shapes: bool = True, show_plumbing: bool = False,
                       unfold: Collection[int] = ()) -> ViewSource:
    """The main graph of ``doc`` as ``onnx-studio render`` draws it: edges labelled with the
    file's shapes, else the shape engine's (``inferred_shapes``), bodies openable."""
    from editor.viewmodel import document_bodies

    graph = doc.main.graph
    value_info: dict[str, Any] | None = None
    if inferred_shapes:
        from editor.shapes import infer_model
        from editor.shapes.declare import label_value_info

        value_info = label_value_info(graph, infer_model(doc.model), bodies=True)
    return ViewSource(graph, list(doc.main.node_ids), doc.opsets(), value_info, document_bodies(doc),
                      tuple(unfold), show_plumbing)
