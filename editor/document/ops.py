"""Primitive edits of the ModelProto, each with an exact inverse.

Every command is a sequence of these ops; nothing else writes to the protobuf. Each op

* changes one field or one element of a repeated field of one message (the model, a graph
  or function, or a node),
* keeps the :class:`~editor.document.index.ModelIndex` current, and records what it touched
  in a :class:`~editor.document.changes.ChangeSet`,
* returns the op that undoes it. Undo is therefore exact by construction: positions in
  lists, names, ids and even subgraph ids come back as they were.

Targets are addressed by stable ids, never by Python object identity:
``("model",)``, ``("scope", scope_id)``, ``("node", node_id)``, and
``("item", scope_id, field, position, *sub_fields)`` for one element of a graph's list
(an initializer's name can change without copying its weights).

NOTE: removed messages are kept as the detached protobuf objects that ``del`` leaves behind
(upb keeps their contents) and re-inserting copies them, so an op can be replayed by redo
any number of times without aliasing the live model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import onnx

from editor.document.index import IdTree, NodeId, ScopeId, tree_node_ids

if TYPE_CHECKING:
    from editor.document.changes import ChangeSet
    from editor.document.index import ModelIndex

Target = tuple


def _copy(msg: Any) -> Any:
    if isinstance(msg, (str, bytes, int, float)):
        return msg
    dup = type(msg)()
    dup.CopyFrom(msg)
    return dup


def resolve(index: ModelIndex, target: Target) -> Any:
    kind = target[0]
    if kind == "model":
        return index.model
    if kind == "scope":
        return index.scopes[target[1]].graph
    if kind == "node":
        return index.nodes[target[1]]
    if kind == "item":  # ("item", scope_id, field, position, *singular sub-fields)
        msg = getattr(index.scopes[target[1]].graph, target[2])[target[3]]
        for sub in target[4:]:
            msg = getattr(msg, sub)
        return msg
    raise ValueError(f"unknown op target {target!r}")


#: fields whose edits can change the model's weight bytes (ModelIndex.weight_bytes)
_SIZE_FIELDS = frozenset({"initializer", "sparse_initializer", "node", "attribute", "graph", "functions"})


def _touch(
    index: ModelIndex,
    changes: ChangeSet,
    target: Target,
    field: str,
    *,
    position: int | None = None,
    reshaped: bool = False,
    names_kept: bool = False,
) -> None:
    """Record what an op touched. For a graph's lists, also which element changed in place
    (``position``) or that elements were inserted or removed (``reshaped``)."""
    kind = target[0]
    if field in _SIZE_FIELDS or (kind == "item" and target[2] in _SIZE_FIELDS):
        index.sizes_changed()
    if kind == "model":
        if field == "graph":
            changes.graph_replaced = True
        else:
            changes.model_fields.add(field)
    elif kind == "scope":
        if not names_kept:
            index.scopes[target[1]].invalidate_lists(field)
        changes.scopes.add(target[1])
        changes.scope_fields.add((target[1], field))
        if reshaped:
            changes.lists_reshaped.add((target[1], field))
        elif position is not None:
            changes.items.add((target[1], field, position))
    elif kind == "node":
        changes.nodes_changed.add(target[1])
        changes.node_fields.add((target[1], field))
        changes.scopes.add(index.node_scope[target[1]])
    elif kind == "item":
        # NOTE: an item changed in place keeps its position; only its name matters to the
        # scope's name lookup, and SetField keeps that exact (Scope.item_renamed)
        changes.scopes.add(target[1])
        changes.scope_fields.add((target[1], target[2]))
        changes.items.add((target[1], target[2], target[3]))


class Op:
    """A primitive edit. ``apply`` performs it and returns its inverse."""

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class SetField(Op):
    """Set a singular scalar field (``name``, ``op_type``, ``producer_name`` ...)."""

    target: Target
    field: str
    value: Any
    present: bool = True  # False: clear the field (restores "not set" exactly)

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:
        msg = resolve(index, self.target)
        had = _has(msg, self.field)
        old = getattr(msg, self.field)
        if self.present:
            setattr(msg, self.field, self.value)
        else:
            msg.ClearField(self.field)
        if self.target[0] == "item" and self.field == "name" and len(self.target) == 4:
            # a graph input/output/value_info/initializer renamed in place: keep the name lookup
            index.scopes[self.target[1]].item_renamed(self.target[2], self.target[3], old, getattr(msg, "name"))
        _touch(index, changes, self.target, self.field)
        return SetField(self.target, self.field, old, had)


def _has(msg: Any, field: str) -> bool:
    try:
        return msg.HasField(field)
    except ValueError:  # proto3-style scalar without presence: treat "set" as "non-default"
        return bool(getattr(msg, field))


@dataclass
class SetMessage(Op):
    """Replace a singular message field (e.g. a value_info's ``type``) or clear it."""

    target: Target
    field: str
    value: Any | None  # None: clear

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:
        msg = resolve(index, self.target)
        old = _copy(getattr(msg, self.field)) if msg.HasField(self.field) else None
        if self.value is None:
            msg.ClearField(self.field)
        else:
            getattr(msg, self.field).CopyFrom(self.value)
        _touch(index, changes, self.target, self.field)
        return SetMessage(self.target, self.field, old)


@dataclass
class InsertItem(Op):
    """Insert ``value`` at ``position`` of a repeated field (scalar or message).

    ``ids`` re-uses an id tree for nodes (``("scope", s).node``) and functions
    (``("model",).functions``) so undo of a removal restores the exact ids.
    """

    target: Target
    field: str
    position: int
    value: Any
    ids: IdTree | None = None

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:
        msg = resolve(index, self.target)
        seq = getattr(msg, self.field)
        pos = len(seq) if self.position < 0 else self.position
        is_node_list = self.target[0] == "scope" and self.field == "node"
        if self.target[0] == "node" and self.field in ("input", "output"):
            index.relink(self.target[1], lambda: seq.insert(pos, self.value))
        elif self.target[0] == "node" and self.field == "attribute":
            _attr_edit(index, self.target[1], changes, lambda: seq.insert(pos, self.value), None, self.ids)
        else:
            seq.insert(pos, self.value)
        kept = _names_appended(index, self.target, self.field, pos, len(seq), self.value)
        _touch(index, changes, self.target, self.field, reshaped=True, names_kept=kept)
        if is_node_list:
            scope = index.scopes[self.target[1]]
            nid = index._register_node(scope, pos, seq[pos], self.ids)
            # the nodes of its bodies appear with it (views index them by id too)
            changes.structure = changes.structure or bool(index.children.get(nid))
            for added in [nid, *index.nested_node_ids(nid)]:
                changes.nodes_added.add(added)
                changes.nodes_removed.discard(added)
        elif self.target == ("model",) and self.field == "functions":
            index.insert_function_scope(pos, seq[pos], self.ids)
            index.rebind_function_scopes()
            changes.structure = True
        return RemoveItem(self.target, self.field, pos)


@dataclass
class RemoveItem(Op):
    """Remove the element at ``position`` of a repeated field."""

    target: Target
    field: str
    position: int

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:
        msg = resolve(index, self.target)
        seq = getattr(msg, self.field)
        pos = self.position
        ids: IdTree | None = None
        if self.target[0] == "scope" and self.field == "node":
            scope = index.scopes[self.target[1]]
            nid = scope.node_ids[pos]
            ids = index.unregister_node(nid)
            # NOTE: the nodes of its bodies go with it: views and selections hold their ids
            for removed in tree_node_ids(ids):
                changes.nodes_removed.add(removed)
                changes.nodes_added.discard(removed)
                changes.nodes_changed.discard(removed)
            changes.structure = changes.structure or bool(ids[1])
        elif self.target == ("model",) and self.field == "functions":
            ids = index.remove_function_scope(pos)
            changes.structure = True
        old = seq[pos]
        if self.target[0] == "node" and self.field in ("input", "output"):
            index.relink(self.target[1], lambda: seq.__delitem__(pos))
        elif self.target[0] == "node" and self.field == "attribute":
            ids = _attr_edit(index, self.target[1], changes, lambda: seq.__delitem__(pos), old.name, None)
        else:
            del seq[pos]
        if self.target == ("model",) and self.field == "functions":
            index.rebind_function_scopes()
        kept = _names_popped(index, self.target, self.field, pos, len(seq), old)
        _touch(index, changes, self.target, self.field, reshaped=True, names_kept=kept)
        return InsertItem(self.target, self.field, pos, old, ids)


@dataclass
class ReplaceItem(Op):
    """Replace the element at ``position`` of a repeated field with ``value``.

    For node attributes holding subgraphs, ``ids`` (the id tree of the new attribute's
    bodies) lets undo/redo give subgraph nodes back their ids.
    """

    target: Target
    field: str
    position: int
    value: Any
    ids: tuple | None = None

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:
        if (self.target[0], self.field) in (("scope", "node"), ("model", "functions")):
            raise ValueError(f"replace {self.field} by remove + insert, not ReplaceItem")
        msg = resolve(index, self.target)
        seq = getattr(msg, self.field)
        pos = self.position
        old = seq[pos]
        old_ids = None
        if isinstance(old, (str, bytes, int, float)):
            if self.target[0] == "node" and self.field in ("input", "output"):
                index.relink(self.target[1], lambda: seq.__setitem__(pos, self.value))
            else:
                seq[pos] = self.value
            undo_value = old
        else:
            undo_value = _copy(old)
            if self.target[0] == "node" and self.field == "attribute":
                old_ids = _attr_edit(
                    index, self.target[1], changes, lambda: old.CopyFrom(self.value), undo_value.name, self.ids
                )
            else:
                old.CopyFrom(self.value)
        kept = False
        if self.target[0] == "scope":
            scope = index.scopes[self.target[1]]
            before, after = _item_name(undo_value), _item_name(self.value)
            if before is not None and after is not None:
                if before != after:
                    scope.item_renamed(self.field, pos, before, after)
                kept = True
        _touch(index, changes, self.target, self.field, position=pos, names_kept=kept)
        return ReplaceItem(self.target, self.field, pos, undo_value, old_ids)


# NOTE: a scope's name lookups (Scope.name_table) follow the common list edits exactly — an
# item replaced in place, appended at the end, or removed from the end — so adding a
# value_info entry or retyping a value does not rebuild a 10,000-entry table; an insertion or
# removal in the middle shifts positions and drops the table instead.
def _item_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    name = getattr(item, "name", None)
    return name if isinstance(name, str) else None


def _names_appended(index: ModelIndex, target: Target, field: str, pos: int, length: int, item: Any) -> bool:
    name = _item_name(item)
    if target[0] != "scope" or field == "node" or name is None or pos != length - 1:
        return False
    index.scopes[target[1]].item_appended(field, pos, name)
    return True


def _names_popped(index: ModelIndex, target: Target, field: str, pos: int, length: int, item: Any) -> bool:
    name = _item_name(item)
    if target[0] != "scope" or field == "node" or name is None or pos != length:
        return False
    index.scopes[target[1]].item_popped(field, pos, name)
    return True


def _attr_edit(
    index: ModelIndex,
    nid: NodeId,
    changes: ChangeSet,
    edit: Any,
    name_out: str | None,
    ids_in: tuple | None,
) -> tuple | None:
    """Run ``edit()`` on node ``nid``'s attribute list with its subgraph scopes kept current.

    Bodies of attributes the edit does not touch keep their scope and node ids (matched by
    attribute name); ``ids_in`` gives ids to the bodies of the attribute being (re)inserted;
    the return value holds the ids of attribute ``name_out``'s old bodies, for the inverse op.
    """
    inner_before = set(index.nested_node_ids(nid))
    trees = dict(index.unregister_subgraphs(nid))
    removed = trees.pop(name_out, None) if name_out else None
    edit()
    if ids_in:
        trees.update(dict(ids_in))
    index.register_subgraphs(nid, tuple(trees.items()))
    if removed or index.children.get(nid):
        changes.structure = True
    # nodes of bodies that went or came with the attribute (untouched bodies keep their ids)
    inner_after = set(index.nested_node_ids(nid))
    changes.nodes_removed |= inner_before - inner_after
    changes.nodes_added |= inner_after - inner_before
    return ((name_out, removed),) if removed else None


@dataclass
class MoveValueId(Op):
    """Carry a value's stable id from one name to another (used by renames)."""

    scope: ScopeId
    old: str
    new: str

    def apply(self, index: ModelIndex, changes: ChangeSet) -> Op:
        ids = index.scopes[self.scope].value_ids
        if self.old in ids:
            ids[self.new] = ids.pop(self.old)
        changes.values_renamed.append((self.scope, self.old, self.new))
        return MoveValueId(self.scope, self.new, self.old)


def node_target(nid: NodeId) -> Target:
    return ("node", nid)


def scope_target(sid: ScopeId) -> Target:
    return ("scope", sid)


MODEL: Target = ("model",)


def is_graph_proto(msg: Any) -> bool:
    return isinstance(msg, onnx.GraphProto)
