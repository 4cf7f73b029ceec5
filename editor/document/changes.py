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
