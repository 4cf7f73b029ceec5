"""Computing a model diff off the GUI thread, in terms of the open documents' node ids.

The diff reads two whole models; the user may keep editing the current one meanwhile.
So the GUI thread hands the worker a *snapshot* (a copy of the ModelProto, taken in one
go between commands) and the worker builds a throw-away Document over it.

# NOTE: node ids. A snapshot Document numbers its nodes afresh, while the live document
# keeps the ids it had (deleted ids leave gaps, new nodes get new ids). Ids are translated
# through a structural key that both agree on: the node's position in its graph, prefixed
# by the key of the graph (for a subgraph: the owner node's key, the attribute name and
# its index in a GRAPHS list; for a function: its name). Names are not used: they may be
# empty or repeated. :class:`SideMap` holds one document's key -> id table; the diff is
# translated into the live ids of A when it comes back, and into the ids of B's tab
# whenever that tab appears (it may be opened after the diff, or already be open).
"""

from __future__ import annotations

import dataclasses
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import onnx
import shiboken6
from PySide6.QtCore import QObject, QRunnable, Signal

from editor.errors import LoadError, StudioError

NodeKey = tuple


def scope_key(index, sid: int) -> tuple:
    """Structural key of graph scope ``sid`` of a ModelIndex (see module NOTE)."""
    scope = index.scopes[sid]
    if scope.kind == "main":
        return ("main",)
    if scope.kind == "function":
        return ("fn", scope.title)
    owner = scope.owner
    parent = index.scopes[index.node_scope[owner]]
    return scope_key(index, parent.id) + (parent.position(owner), scope.attr, scope.attr_index)


def node_keys(index) -> dict[int, NodeKey]:
    """Node id -> structural key, for every node of every scope."""
    out: dict[int, NodeKey] = {}
    for sid, scope in index.scopes.items():
        base = scope_key(index, sid)
        for pos, nid in enumerate(scope.node_ids):
            out[nid] = base + (pos,)
    return out


@dataclass
class SideMap:
    """One live document's structural key -> node id table."""

    ids: dict[NodeKey, int] = field(default_factory=dict)

    @classmethod
    def of(cls, doc) -> SideMap:
        return cls({key: nid for nid, key in node_keys(doc.index).items()})


@dataclass
class DiffOutcome:
    """What the worker sends back: the diff in *snapshot* ids and the keys of those ids."""

    diff: object  # editor.diff.ModelDiff
    keys_a: dict[int, NodeKey]
    keys_b: dict[int, NodeKey]
    seconds: float = 0.0


def snapshot(doc) -> onnx.ModelProto:
    """A private copy of ``doc``'s model (GUI thread, between commands)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(doc.model)
    return copy


def translate(outcome: DiffOutcome, map_a: SideMap, map_b: SideMap | None):
    """A copy of the outcome's diff with node ids of the live documents.

    A ids (``status_a``, ``pairs`` keys, ``nodes_removed``, ``NodeChange.a``) go through
    ``map_a``; B ids through ``map_b`` (left as they are without one: B is the file as
    loaded, whose ids equal a fresh load's). Ids that do not translate (the document
    changed meanwhile) are dropped from the maps and kept as -1 in records."""
    d = outcome.diff

    def ta(i: int) -> int:
        return map_a.ids.get(outcome.keys_a.get(i), -1)

    def tb(i: int) -> int:
        if map_b is None:
            return i
        return map_b.ids.get(outcome.keys_b.get(i), -1)

    def ref(r, f):
        return dataclasses.replace(r, id=f(r.id))

    status_a = {ta(k): v for k, v in d.status_a.items()}
    status_b = {tb(k): v for k, v in d.status_b.items()}
    status_a.pop(-1, None)
    status_b.pop(-1, None)
    pairs = {ta(k): tb(v) for k, v in d.pairs.items()}
    pairs = {k: v for k, v in pairs.items() if k >= 0 and v >= 0}
    return dataclasses.replace(
        d,
        nodes_added=[ref(r, tb) for r in d.nodes_added],
        nodes_removed=[ref(r, ta) for r in d.nodes_removed],
        nodes_changed=[dataclasses.replace(c, a=ref(c.a, ta), b=ref(c.b, tb)) for c in d.nodes_changed],
        rewrites=[dataclasses.replace(rw, a=[ref(r, ta) for r in rw.a], b=[ref(r, tb) for r in rw.b]) for rw in d.rewrites],
        status_a=status_a,
        status_b=status_b,
        pairs=pairs,
    )


class _Relay(QObject):
    """Lives on the GUI thread; the worker emits through it (queued)."""

    done = Signal(int, object)
    failed = Signal(int, object)


class DiffTask(QRunnable):
    """Loads B (when given a path), indexes both snapshots, runs :func:`editor.diff.diff_models`."""

    def __init__(self, ticket: int, relay: _Relay, model_a: onnx.ModelProto, store_a,
                 model_b: onnx.ModelProto | None, store_b, path_b: Path | None) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._ticket = ticket
        self._relay = relay
        self._a = (model_a, store_a)
        self._b = (model_b, store_b)
        self._path_b = path_b

    def run(self) -> None:
        import time

        from editor.diff import diff_models
        from editor.document import Document

        try:
            start = time.perf_counter()
            doc_a = Document(self._a[0], store=self._a[1])
            if self._b[0] is not None:
                doc_b = Document(self._b[0], store=self._b[1])
            else:
                doc_b = Document.open(self._path_b)
            diff = diff_models(doc_a, doc_b)
            outcome = DiffOutcome(diff, node_keys(doc_a.index), node_keys(doc_b.index),
                                  time.perf_counter() - start)
        except StudioError as exc:
            self._emit(self._relay.failed, exc)
            return
        except BaseException as exc:  # noqa: BLE001 - a worker must never take the app down
            self._emit(self._relay.failed, LoadError(
                f"cannot compare: {type(exc).__name__}: {exc}", details=traceback.format_exc()))
            return
        self._emit(self._relay.done, outcome)

    def _emit(self, signal, payload) -> None:
        # the window (and the relay with it) may have closed while we worked
        if shiboken6.isValid(self._relay):
            try:
                signal.emit(self._ticket, payload)
            except RuntimeError:
                pass
