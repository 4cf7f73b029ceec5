"""The open model: ModelProto (source of truth) + index + undo stack + change events.

NOTE: why the ModelProto and not onnx-ir? Measured on 1,965 models, a protobuf parse and
re-serialize gives back the same bytes for all of them, an onnx-ir round trip for about 70%
(it adds and reorders value_info), and onnx-ir loads an 11,812-node graph 2.6x slower than
``onnx.load``. So the protobuf stays the truth, untouched parts stay byte-identical, and our
own :class:`~editor.document.index.ModelIndex` answers graph questions quickly. onnx-ir and
the onnx utilities are used on *copies* where their passes help.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnx
from psygnal import Signal

from editor.document.changes import ChangeBatch, ChangeSet
from editor.document.history import Command, Transaction, UndoStack, now
from editor.document.index import ModelIndex, NodeId, Scope, ScopeId, iter_graph_attributes
from editor.errors import CommandError

if TYPE_CHECKING:
    from editor.io import ExternalDataStore, SaveOptions


class Document:
    """One open model. Change it only with :meth:`execute` (commands); read it freely."""

    #: one ChangeSet per do / undo / redo
    changed = Signal(object)
    node_added = Signal(int)
    node_removed = Signal(int)
    node_changed = Signal(int)
    value_renamed = Signal(int, str, str)  # scope id, old name, new name
    graph_io_changed = Signal(int, str)  # scope id, "input"|"output"|"initializer"|"value_info"|...
    metadata_changed = Signal(str)  # model field name
    structure_changed = Signal()  # subgraph or function scopes appeared / disappeared
    #: the undo stack moved (labels, can undo/redo) and whether the model matches the file
    history_changed = Signal()
    clean_changed = Signal(bool)
    path_changed = Signal(str)
    #: a save wrote the model to this path (file watchers take it as read again)
    saved = Signal(str)

    def __init__(
        self,
        model: onnx.ModelProto,
        *,
        path: str | os.PathLike | None = None,
        store: ExternalDataStore | None = None,
        format: str = "binary",
        file_size: int = 0,
        raw_names: list | None = None,
    ) -> None:
        self.model = model
        self.path: Path | None = Path(path) if path is not None else None
        self.store = store
        self.format = format
        self.file_size = file_size
        #: names that were not UTF-8 in the file (shown repaired, saved as read: editor.io.names)
        self.raw_names = list(raw_names or [])
        self.index = ModelIndex(model)
        self.stack = UndoStack()
        self._was_clean = True
        self._batch_depth = 0
        self._batch: ChangeBatch | None = None
        # identity of the file whose bytes equal the model at the clean state (see save)
        self._clean_file = _file_identity(self.path) if format == "binary" else None

    # -- construction --------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike, *, data_dir: str | os.PathLike | None = None) -> Document:
        """Open a model file (binary or text syntax); external weights stay on disk."""
        from editor.io import load_model

        loaded = load_model(path, data_dir=data_dir)
        return cls(
            loaded.model,
            path=loaded.path,
            store=loaded.store,
            format=loaded.format,
            file_size=loaded.file_size,
            raw_names=loaded.raw_names,
        )

    @classmethod
    def new(cls, *, opset: int | None = None, graph_name: str = "main") -> Document:
        """A new, empty model at the newest opset onnx knows (or ``opset``)."""
        version = opset or onnx.defs.onnx_opset_version()
        opsets = [onnx.helper.make_opsetid("", version)]
        model = onnx.helper.make_model(
            onnx.helper.make_graph([], graph_name, [], []),
            opset_imports=opsets,
            producer_name="onnx-studio",
            # the oldest IR that can express this opset: runtimes accept it most widely
            ir_version=onnx.helper.find_min_ir_version_for(opsets),
        )
        return cls(model)

    # -- reading -------------------------------------------------------------------------
    @property
    def main(self) -> Scope:
        return self.index.scopes[self.index.main]

    def scope(self, sid: ScopeId) -> Scope:
        return self.index.scopes[sid]

    def node(self, nid: NodeId) -> onnx.NodeProto:
        return self.index.nodes[nid]

    def has_node(self, nid: NodeId) -> bool:
        return nid in self.index.nodes

    def scope_of(self, nid: NodeId) -> Scope:
        return self.index.scope_of(nid)

    def opset(self, domain: str = "") -> int | None:
        """The model's opset version for ``domain`` ("" and "ai.onnx" are the same)."""
        domain = "" if domain == "ai.onnx" else domain
        for imp in self.model.opset_import:
            if (imp.domain if imp.domain != "ai.onnx" else "") == domain:
                return imp.version
        return None

    def opsets(self) -> dict[str, int]:
        return {("" if i.domain == "ai.onnx" else i.domain): i.version for i in self.model.opset_import}

    def find_nodes(self, name: str, scope: ScopeId | None = None) -> list[NodeId]:
        """Ids of nodes with this name (names need not be unique)."""
        return [
            nid
            for s, nid, node in self.index.iter_nodes()
            if node.name == name and (scope is None or s.id == scope)
        ]

    def node_id_at(self, scope: ScopeId, position: int) -> NodeId:
        return self.index.scopes[scope].node_ids[position]

    def producer(self, scope: ScopeId, name: str) -> NodeId | None:
        return self.index.scopes[scope].producers.get(name)

    def consumers(self, scope: ScopeId, name: str, *, nested: bool = False) -> list[tuple[NodeId, int]]:
        """Uses of ``name`` in ``scope`` as (node id, input index), in graph order.

        With ``nested``, also uses inside subgraphs that capture the name from this scope.
        """
        s = self.index.scopes[scope]
        uses = sorted(s.consumers.get(name, ()), key=lambda u: (s.position(u[0]), u[1]))
        if nested:
            for sub in self._bodies(scope):
                uses += self._captured_uses(sub, name)
        return uses

    def _bodies(self, sid: ScopeId) -> list[ScopeId]:
        """Bodies directly inside scope ``sid``, in graph order (O(scopes), not O(nodes))."""
        s = self.index.scopes[sid]
        found = [b for b in self.index.scopes.values() if b.parent == sid and b.kind == "subgraph"]
        found.sort(key=lambda b: (s.position(b.owner), self.index.children[b.owner].index(b.id)))
        return [b.id for b in found]

    def _captured_uses(self, sid: ScopeId, name: str) -> list[tuple[NodeId, int]]:
        s = self.index.scopes[sid]
        if s.defines(name):
            return []  # shadowed: the body defines its own value of that name
        uses = sorted(s.consumers.get(name, ()), key=lambda u: (s.position(u[0]), u[1]))
        for sub in self._bodies(sid):
            uses += self._captured_uses(sub, name)
        return uses

    def initializer(self, scope: ScopeId, name: str) -> tuple[int, onnx.TensorProto] | None:
        """(position, tensor) of the initializer ``name`` in ``scope``, if any (O(1))."""
        s = self.index.scopes[scope]
        pos = s.initializer_position(name)
        return None if pos is None else (pos, s.graph.initializer[pos])

    def value_info(self, scope: ScopeId, name: str) -> onnx.ValueInfoProto | None:
        """Declared type of a value: graph input/output or value_info entry, if any (O(1))."""
        return self.index.scopes[scope].declared(name)

    def resolve_value(self, scope: ScopeId, name: str) -> ScopeId | None:
        """The scope (this one or an enclosing one) where ``name`` is defined, if any."""
        for s in self.index.scope_chain(scope):
            if s.defines(name):
                return s.id
        return None

    def value_id(self, scope: ScopeId, name: str) -> int:
        """Stable id of a value; it follows the value through renames."""
        return self.index.value_id(scope, name)

    # -- editing -------------------------------------------------------------------------
    def execute(self, cmd: Command) -> Command:
        """Run ``cmd``; on refusal (:class:`CommandError`) nothing has changed.

        Any other exception inside a command is a bug; the transaction is rolled back all
        the same and the error is reported as a CommandError with the traceback as details.
        """
        tx = Transaction(self)
        try:
            cmd.run(self, tx)
        except CommandError:
            tx.rollback()
            raise
        except Exception as exc:  # noqa: BLE001 - reported, never half-applied
            tx.rollback()
            raise CommandError(
                f"{cmd.label} failed: {exc}", details=traceback.format_exc()
            ) from exc
        if not tx.forward:
            return cmd  # a no-op edit does not pollute the history
        cmd._forward, cmd._inverse = tx.forward, tx.inverse
        cmd.timestamp = now()
        self.stack.push(cmd)
        self._emit(tx.changes.finalize())
        return cmd

    def undo(self) -> bool:
        if not self.stack.can_undo:
            return False
        cmd = self.stack.commands[self.stack.index - 1]
        changes = cmd.undo(self)
        self.stack.index -= 1
        self.stack.break_merge()
        self._emit(changes)
        return True

    def redo(self) -> bool:
        if not self.stack.can_redo:
            return False
        cmd = self.stack.commands[self.stack.index]
        changes = cmd.redo(self)
        self.stack.index += 1
        self.stack.break_merge()
        self._emit(changes)
        return True

    def undo_all(self) -> None:
        with self.batch():
            while self.undo():
                pass

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Tell listeners about every step done inside as one change (a History jump of
        many undos): one ChangeSet (:class:`~editor.document.changes.ChangeBatch`) and one
        of each signal when the block ends, instead of one per step. The model changes
        step by step as always; only the telling waits.

        NOTE: per step, every view did its own update (a rename relabelled its box, the
        validator re-checked the node ...); 2,000 undos on a 102-node model took 455 s in
        the window. Told once per batch, each view does the union once."""
        self._batch_depth += 1
        try:
            yield
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0 and self._batch is not None:
                batch, self._batch = self._batch, None
                self._emit(batch.result(self.index.nodes))

    @property
    def is_modified(self) -> bool:
        return not self.stack.clean

    def _emit(self, changes: ChangeSet) -> None:
        if self._batch_depth:
            if self._batch is None:
                self._batch = ChangeBatch()
            self._batch.add(changes)
            return
        for nid in sorted(changes.nodes_removed):
            self.node_removed.emit(nid)
        for nid in sorted(changes.nodes_added):
            self.node_added.emit(nid)
        for nid in sorted(changes.nodes_changed):
            self.node_changed.emit(nid)
        for sid, old, new in changes.values_renamed:
            self.value_renamed.emit(sid, old, new)
        for sid, field in sorted(changes.scope_fields):
            if field != "node":
                self.graph_io_changed.emit(sid, field)
        for field in sorted(changes.model_fields):
            self.metadata_changed.emit(field)
        if changes.structure:
            self.structure_changed.emit()
        self.changed.emit(changes)
        self.history_changed.emit()
        clean = self.stack.clean
        if clean != self._was_clean:
            self._was_clean = clean
            self.clean_changed.emit(clean)

    # -- saving --------------------------------------------------------------------------
    def serialize(self) -> bytes:
        return self.model.SerializeToString()

    def save(self, path: str | os.PathLike | None = None, *, options: SaveOptions | None = None) -> Path:
        """Write the model (atomically) to ``path`` or to where it came from.

        Saving does not change the document; afterwards it is clean and, for save-as, its
        path is the new one.
        """
        from editor.io import SaveOptions, save_model

        target = Path(path) if path is not None else self.path
        if target is None:
            from editor.errors import SaveError

            raise SaveError("this model has no file yet: choose where to save it")
        options = options or SaveOptions()
        save_model(self.model, target, store=self.store, options=options, serialized=self._clean_bytes(options),
                   source=self.path, raw_names=self.raw_names)
        preserved = options.external == "preserve" and options.format in ("auto", "binary") and \
            target.suffix.lower() not in (".onnxtxt", ".txt")
        self._clean_file = _file_identity(target) if preserved else None
        if target != self.path:
            self.path = target
            self.path_changed.emit(str(target))
        self.stack.set_clean()
        if not self._was_clean:
            self._was_clean = True
            self.clean_changed.emit(True)
        self.history_changed.emit()
        self.saved.emit(str(target))
        return target

    def _clean_bytes(self, options: SaveOptions) -> bytes | None:
        """The file's own bytes when the model is exactly what that file holds.

        NOTE: an unchanged save must give back the same bytes; re-reading the file we opened
        (page-cached) is several times cheaper than serializing a large model again. Only
        used at the clean state, for a binary "preserve" save, and only while the file is
        still the one we read (same inode, size and modification time).
        """
        if not self.stack.clean or self._clean_file is None or options.external != "preserve":
            return None
        if options.format == "text" or self.path is None or _file_identity(self.path) != self._clean_file:
            return None
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    # -- invariants ----------------------------------------------------------------------
    def check_invariants(self) -> None:
        """Assert that the index describes the protobuf exactly (used by tests)."""
        idx = self.index
        seen_nodes: set[NodeId] = set()
        for sid, scope in idx.scopes.items():
            g = scope.graph
            assert len(scope.node_ids) == len(g.node), f"scope {sid}: node count"
            assert len(set(scope.node_ids)) == len(scope.node_ids), f"scope {sid}: duplicate ids"
            producers: dict[str, list[NodeId]] = {}
            consumers: dict[str, set[tuple[NodeId, int]]] = {}
            for i, nid in enumerate(scope.node_ids):
                node = g.node[i]
                assert idx.nodes[nid] is node, f"node {nid}: index holds a stale message"
                assert idx.node_scope[nid] == sid, f"node {nid}: wrong scope"
                assert nid not in seen_nodes
                seen_nodes.add(nid)
                for k, name in enumerate(node.input):
                    if name:
                        consumers.setdefault(name, set()).add((nid, k))
                for name in node.output:
                    if name:
                        producers.setdefault(name, []).append(nid)
                subs = idx.children.get(nid, [])
                bodies = list(iter_graph_attributes(node))
                assert len(subs) == len(bodies), f"node {nid}: subgraph scopes"
                for sub_id, (_, _, body) in zip(subs, bodies):
                    assert idx.scopes[sub_id].graph is body, f"node {nid}: stale subgraph"
                    assert idx.scopes[sub_id].parent == sid
            assert set(producers) == set(scope.producers), f"scope {sid}: produced names differ"
            for name, nids in producers.items():  # with SSA violations any producer will do
                assert scope.producers[name] in nids, f"scope {sid}: producer of {name!r}"
            assert consumers == scope.consumers, f"scope {sid}: consumers differ"
            if scope.kind == "main":
                assert g is self.model.graph
            # the name lookups must agree with the lists they cache
            for f, table in scope._names.items():
                items = getattr(g, f)
                fresh: dict[str, list[int]] = {}
                for i, item in enumerate(items):
                    fresh.setdefault(item if isinstance(item, str) else item.name, []).append(i)
                assert table == fresh, f"scope {sid}: stale {f} lookup"
            dups: dict[str, list[NodeId]] = {}
            for name, nids in producers.items():
                if len(set(nids)) > 1:
                    dups[name] = nids
            assert {k: sorted(set(v)) for k, v in dups.items()} == \
                {k: sorted(v) for k, v in scope.duplicates.items()}, f"scope {sid}: duplicate producers"
        assert seen_nodes == set(idx.nodes), "index has nodes that are in no scope"
        # every scope is reachable: the main graph, a function, or a body of a live node
        assert set(idx.children) <= set(idx.nodes), "children recorded for a removed node"
        bodies = [sid for subs in idx.children.values() for sid in subs]
        assert len(bodies) == len(set(bodies)), "a body is claimed by two nodes"
        expected = {idx.main, *idx.function_scopes, *bodies}
        assert set(idx.scopes) == expected, f"scopes no graph holds: {sorted(set(idx.scopes) - expected)}"
        for sid in bodies:
            scope = idx.scopes[sid]
            assert scope.kind == "subgraph" and sid in idx.children[scope.owner], f"scope {sid}: owner"
        assert len(idx.function_scopes) == len(self.model.functions)
        for sid, fn in zip(idx.function_scopes, self.model.functions):
            assert idx.scopes[sid].graph is fn


def _file_identity(path: Path | None) -> tuple[int, int, int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def describe(value: Any) -> str:
    """Short quoting of a value for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
