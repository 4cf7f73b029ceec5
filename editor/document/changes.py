"""What one command changed: the unit of change notification.

Views and the incremental validator subscribe to :attr:`Document.changed` and receive one
:class:`ChangeSet` per do/undo/redo, naming exactly the nodes, scopes, values and model
fields that were touched, so each can update only what it must.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from editor.document.index import NodeId, ScopeId


@dataclass
class ChangeSet:
    nodes_added: set[NodeId] = field(default_factory=set)
    nodes_removed: set[NodeId] = field(default_factory=set)
    nodes_changed: set[NodeId] = field(default_factory=set)
    #: which fields of the changed nodes were edited in place: (node id, "name" | "input" |
    #: "attribute" | ...). A view that shows none of them has nothing to redo for the edit.
    node_fields: set[tuple[NodeId, str]] = field(default_factory=set)
    scopes: set[ScopeId] = field(default_factory=set)  # graphs whose lists/fields changed
    scope_fields: set[tuple[ScopeId, str]] = field(default_factory=set)  # (scope, "input"|"initializer"|...)
    #: graph-list elements edited in place: (scope, "input"|"output"|"value_info"|"initializer"..., position)
    items: set[tuple[ScopeId, str, int]] = field(default_factory=set)
    #: graph lists that had elements inserted or removed (positions in ``items`` may be stale)
    lists_reshaped: set[tuple[ScopeId, str]] = field(default_factory=set)
    values_renamed: list[tuple[ScopeId, str, str]] = field(default_factory=list)
    model_fields: set[str] = field(default_factory=set)  # producer_name, metadata_props, opset_import ...
    structure: bool = False  # scopes appeared or disappeared (subgraphs, functions)
    graph_replaced: bool = False

    def merge(self, other: ChangeSet) -> None:
        self.nodes_added |= other.nodes_added
        self.nodes_removed |= other.nodes_removed
        self.nodes_changed |= other.nodes_changed
        self.node_fields |= other.node_fields
        self.scopes |= other.scopes
        self.scope_fields |= other.scope_fields
        self.items |= other.items
        self.lists_reshaped |= other.lists_reshaped
        self.values_renamed += other.values_renamed
        self.model_fields |= other.model_fields
        self.structure |= other.structure
        self.graph_replaced |= other.graph_replaced

    def finalize(self) -> ChangeSet:
        """Drop contradictions a sequence of ops can leave (a node added then removed ...)."""
        both = self.nodes_added & self.nodes_removed
        self.nodes_added -= both
        self.nodes_removed -= both
        self.nodes_changed -= self.nodes_added | self.nodes_removed
        self.node_fields = {(nid, f) for nid, f in self.node_fields if nid in self.nodes_changed}
        return self

    def only_node_fields(self, fields: Collection[str]) -> bool:
        """True when the change is nothing but in-place edits of ``fields`` of existing nodes
        (a node rename: ``{"name"}``): no node came or went, no value, graph list or model
        field changed. Views that show none of ``fields`` keep what they show."""
        if not self.nodes_changed or self.nodes_added or self.nodes_removed or self.values_renamed:
            return False
        if self.scope_fields or self.items or self.lists_reshaped or self.model_fields:
            return False
        if self.structure or self.graph_replaced:
            return False
        edited = {nid for nid, _f in self.node_fields}
        return edited == self.nodes_changed and all(f in fields for _nid, f in self.node_fields)

    @property
    def empty(self) -> bool:
        return not (
            self.nodes_added
            or self.nodes_removed
            or self.nodes_changed
            or self.scopes
            or self.values_renamed
            or self.model_fields
            or self.structure
            or self.graph_replaced
        )


class ChangeBatch:
    """The changes of several steps (undo or redo through a History jump) told as one.

    Each step's ChangeSet is net within the step; across steps a node may come, go and
    come back. What the batch says of a node depends only on whether it existed before the
    first step and after the last: ``added`` when it did not and does, ``removed`` when it
    did and does not, ``changed`` when it existed throughout and was only edited, ``added``
    again when it existed throughout but was removed and inserted in between (listeners
    read it afresh), nothing when it came and went in between. Everything else is the union
    of the steps (renames in order)."""

    def __init__(self) -> None:
        self.total = ChangeSet()
        self._existed: dict[NodeId, bool] = {}
        self._churned: set[NodeId] = set()
        self.steps = 0

    def add(self, cs: ChangeSet) -> None:
        self.steps += 1
        existed = self._existed
        for nid in cs.nodes_added:
            existed.setdefault(nid, False)
            self._churned.add(nid)
        for nid in cs.nodes_removed:
            existed.setdefault(nid, True)
            self._churned.add(nid)
        for nid in cs.nodes_changed:
            existed.setdefault(nid, True)
        t = self.total
        t.node_fields |= cs.node_fields
        t.scopes |= cs.scopes
        t.scope_fields |= cs.scope_fields
        t.items |= cs.items
        t.lists_reshaped |= cs.lists_reshaped
        t.values_renamed += cs.values_renamed
        t.model_fields |= cs.model_fields
        t.structure |= cs.structure
        t.graph_replaced |= cs.graph_replaced

    def result(self, exists: Collection[NodeId]) -> ChangeSet:
        """The batch as one ChangeSet; ``exists``: the node ids after the last step."""
        t = self.total
        for nid, before in self._existed.items():
            now = nid in exists
            if before and now:
                (t.nodes_added if nid in self._churned else t.nodes_changed).add(nid)
            elif before:
                t.nodes_removed.add(nid)
            elif now:
                t.nodes_added.add(nid)
        t.node_fields = {(nid, f) for nid, f in t.node_fields if nid in t.nodes_changed}
        return t
