"""The live, incremental validator of a :class:`~editor.document.Document`.

``Validator(doc)`` checks the whole model once (:meth:`Validator.validate_all`), then
listens to ``doc.changed`` and re-checks only what each command touched: the touched
nodes, and every node and graph whose result can depend on a name the command defined,
removed, retyped or moved (its producers, its consumers here and in subgraphs that capture
it). Problems are kept per subject (a node, a graph, the model, the background full check),
so an update replaces exactly the entries it recomputed, and ``problems_changed`` says
what appeared and what went away.

NOTE: exactness is the contract: after any sequence of commands, the live problems equal
what a fresh ``Validator(doc).validate_all()`` reports (a hypothesis test holds us to it).
Each check is a pure function of the document and reads only things whose changes the
dirty-set computation below tracks; a change the validator cannot attribute precisely
(opset imports, IR version, functions, a replaced graph) triggers a full pass instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import onnx
from psygnal import Signal

from editor.document import ChangeSet, Document, NodeId, ScopeId
from editor.validation.checks import check_graph, check_model, check_node
from editor.validation.declared import declared_dim_findings
from editor.validation.problems import ERROR, WARNING, Problem, sort_key
from editor.validation.state import (
    LIST_FIELDS,
    NodeShadow,
    ScopeShadow,
    build_node,
    build_scope,
    descendants_in_index,
    read_entry,
    read_list,
)

log = logging.getLogger(__name__)

Subject = tuple
MODEL: Subject = ("model",)
FULL: Subject = ("full",)
DECLARED: Subject = ("declared",)

#: the whole-model comparison of declared and inferred shapes runs live (after every edit)
#: only below these sizes, where onnx's inference takes milliseconds (it holds the GIL and
#: serializes the model, weights included); above them ``check`` and the full check say it.
#: The bytes are the index's weight bytes (from dims: nothing is serialized to know them).
DECLARED_LIVE_MAX_NODES = 1000
DECLARED_LIVE_MAX_BYTES = 8 << 20
#: node fields no check reads but the node's own (a rename): the whole-model checks skip them
_NAME_FIELDS = ("name", "doc_string")
#: nodes checked per step of a stepped first pass (a check is ~0.1 ms: a step stays far
#: below a frame)
FIRST_PASS_STEP = 64

#: model fields whose change can alter any node's check: re-check everything
_GLOBAL_MODEL_FIELDS = frozenset({"opset_import", "ir_version", "functions", "graph"})
#: function-scope fields that change the function's signature (its call sites' checks)
_FUNCTION_SIGNATURE_FIELDS = frozenset(
    {"input", "output", "attribute", "attribute_proto", "name", "domain", "overload", "opset_import"}
)
#: graph fields the graph-level check reads
_GRAPH_CHECK_FIELDS = frozenset({"name", "input", "output", "value_info", "initializer", "sparse_initializer"})


@dataclass
class ModelInfo:
    """Model-wide facts every node check reads; rebuilt on a full pass."""

    ir_version: int = 0
    opsets: dict[str, int] = field(default_factory=dict)
    opset_map: dict[str, int] = field(default_factory=dict)  # for onnx's inference (raw domains)
    functions: dict[tuple[str, str, str], onnx.FunctionProto] = field(default_factory=dict)
    function_opsets: dict[ScopeId, dict[str, int]] = field(default_factory=dict)

    def scope_opsets(self, root: ScopeId) -> dict[str, int]:
        return self.function_opsets.get(root, self.opsets)


def _opsets(imports) -> dict[str, int]:  # noqa: ANN001 - repeated OperatorSetIdProto
    return {("" if i.domain == "ai.onnx" else i.domain): i.version for i in imports}


class Validator:
    """Live problems of one document. ``live=False`` checks only on request."""

    #: (added: list[Problem], removed: list[Problem]) after each update that changed anything
    problems_changed = Signal(object, object)
    #: with :meth:`defer_declared`: the declared-shape comparison is out of date (whoever
    #: listens runs it elsewhere and calls :meth:`merge_declared`)
    declared_due = Signal()

    def __init__(self, doc: Document, *, live: bool = True, infer_types: bool = True) -> None:
        self.doc = doc
        self.infer_types = infer_types
        self.info = ModelInfo()
        self.nodes: dict[NodeId, NodeShadow] = {}
        self.scopes: dict[ScopeId, ScopeShadow] = {}
        self._store: dict[Subject, tuple[Problem, ...]] = {}
        self._cache: list[Problem] | None = None
        self._paths: dict[ScopeId, str] = {}
        self._lock = threading.RLock()
        #: bumped on every document change; background results carry the version they saw
        self.version = 0
        self._ready = False
        #: incremental updates that failed and were replaced by a full pass (a bug if > 0)
        self.fallbacks = 0
        #: bumped whenever the declared-shape comparison may have changed (not on a rename)
        self.declared_version = 0
        self._defer_declared = False
        self._live = live
        if live:
            doc.changed.connect(self._on_changed)

    def close(self) -> None:
        """Stop following the document."""
        if self._live:
            self.doc.changed.disconnect(self._on_changed)
            self._live = False

    # -- reading -------------------------------------------------------------------------
    @property
    def problems(self) -> list[Problem]:
        """Every problem (live and background), errors first."""
        with self._lock:
            if self._cache is None:
                self._cache = sorted((p for ps in self._store.values() for p in ps), key=sort_key)
            return list(self._cache)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == ERROR]

    def problems_for_node(self, nid: NodeId) -> list[Problem]:
        with self._lock:
            own = list(self._store.get(("node", nid), ()))
            return own + [p for p in self._store.get(FULL, ()) if p.node_id == nid]

    def problems_for_scope(self, sid: ScopeId) -> list[Problem]:
        return [p for p in self.problems if p.scope_id == sid]

    def problems_for_value(self, sid: ScopeId, name: str) -> list[Problem]:
        return [p for p in self.problems if p.value == name and p.scope_id == sid]

    def path(self, sid: ScopeId) -> str:
        p = self._paths.get(sid)
        if p is None:
            p = self._paths[sid] = self.doc.index.path(sid)
        return p

    # -- checks, fenced: a bug in one check costs one problem record, not the whole pass ----
    def _check_node(self, nid: NodeId) -> tuple[Problem, ...]:
        try:
            return tuple(check_node(self, nid))
        except Exception as exc:  # noqa: BLE001
            log.exception("checking node %s failed", nid)
            sid = self.nodes[nid].sid
            return (Problem(WARNING, "internal", f"the live checks failed on this node ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''}); run the full check", nid, None,
                            sid, self.path(sid)),)

    def _check_graph(self, sid: ScopeId) -> tuple[Problem, ...]:
        try:
            return tuple(check_graph(self, sid))
        except Exception as exc:  # noqa: BLE001
            log.exception("checking graph %s failed", sid)
            return (Problem(WARNING, "internal", f"the live checks failed on this graph ({type(exc).__name__})",
                            None, None, sid, self.path(sid)),)

    # -- the declared-shape comparison: whole-model, so it may run elsewhere -----------------
    def declared_live(self) -> bool:
        """Whether the model is small enough to compare declared shapes after every edit
        (sizes the index knows: the main graph's node count, the weight bytes)."""
        index = self.doc.index
        return (self.infer_types and len(index.scopes[index.main].node_ids) <= DECLARED_LIVE_MAX_NODES
                and index.weight_bytes() <= DECLARED_LIVE_MAX_BYTES)

    def defer_declared(self) -> None:
        """Stop comparing declared shapes inside edits: after an edit that can change the
        comparison, emit ``declared_due`` instead; the listener runs
        :func:`~editor.validation.declared.declared_dim_findings` (``negatives=False``) on a
        snapshot, off this thread, and hands the findings to :meth:`merge_declared`
        (:class:`editor.validation.deferred.DeferredDeclared` does both). The window does
        this: the comparison infers the whole model, which no edit should wait for."""
        self._defer_declared = True
        self.declared_due.emit()

    def merge_declared(self, findings: list, version: int) -> bool:
        """Take the findings of a comparison made at ``declared_version`` ``version``
        (dropped, False, when an edit since may have changed them)."""
        with self._lock:
            if version != self.declared_version:
                return False
            self._apply({DECLARED: self._declared_problems(findings)})
            return True

    def _declared_stale(self) -> tuple[Problem, ...] | None:
        """After a change that may alter the comparison: its new problems, or None when they
        will come through :meth:`merge_declared` (deferred)."""
        self.declared_version += 1
        if self._defer_declared:
            self.declared_due.emit()
            return None
        return self._check_declared()

    def _check_declared(self) -> tuple[Problem, ...]:
        """Main-graph declarations the model contradicts (a symbolic batch it fixes at 1):
        warnings, for models small enough to infer after every edit."""
        if not self.declared_live():
            return ()
        try:
            findings = declared_dim_findings(self.doc.model, negatives=False)
        except Exception:  # noqa: BLE001 - a failing comparison costs its warnings, never the pass
            log.exception("comparing declared shapes failed")
            return ()
        return self._declared_problems(findings)

    def _declared_problems(self, findings: list) -> tuple[Problem, ...]:
        if not findings:
            return ()
        index = self.doc.index
        main = index.main
        graph = self.path(main)
        scope = index.scopes[main]
        out = []
        for code, message, value, severity in findings:
            nid = scope.producers.get(value)
            out.append(Problem(severity, code, message, nid, value, main, graph))
        return tuple(out)

    # -- full pass -----------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        """Whether a full pass has run: before it, :attr:`problems` is empty and edits are
        not checked (the pass that comes sees them)."""
        return self._ready

    def validate_all(self) -> list[Problem]:
        """Check the whole model from scratch; returns :attr:`problems`."""
        with self._lock:
            for _ in self._full_pass(None):
                pass
        return self.problems

    def first_pass_steps(self, nodes_per_step: int = FIRST_PASS_STEP) -> Iterator[None]:
        """The first full pass in steps of about ``nodes_per_step`` nodes: a generator to
        advance between other work (the window runs a step per event-loop turn, after the
        model's first picture). Each step runs under the lock and leaves the document
        untouched; the document may change between steps (the edits go unchecked while no
        pass is done, as before the first one), and then the pass starts again, so its
        result is exactly :meth:`validate_all`'s on the document it ends on. Ends at once
        when a pass is done already (:meth:`validate_all` ran meanwhile).

        NOTE: the window used to run the first pass on the loader's worker before the model
        was shown: 1.6 s CPU on the 11.8k-node export, all of it before the first paint
        (one GIL: no other thread can use it). A worker after the paint would race with
        edits on the GUI thread; steps on the GUI thread cannot."""
        while not self._ready:
            version = self.version
            steps = self._full_pass(nodes_per_step)
            while True:
                with self._lock:
                    if self._ready or self.version != version:
                        break  # a pass ran meanwhile, or the document changed: see the loop
                    try:
                        next(steps)
                    except StopIteration:
                        return
                yield
            steps.close()

    def _full_pass(self, nodes_per_step: int | None) -> Iterator[None]:
        """validate_all's work, yielding every ``nodes_per_step`` nodes (never when None);
        the caller holds the lock through each step."""
        yield from self._rebuild(nodes_per_step)
        new: dict[Subject, tuple[Problem, ...]] = {}
        for k, nid in enumerate(self.nodes, 1):
            ps = self._check_node(nid)
            if ps:
                new[("node", nid)] = ps
            if nodes_per_step and k % nodes_per_step == 0:
                yield
        for sid in self.scopes:
            ps = self._check_graph(sid)
            if ps:
                new[("graph", sid)] = ps
        ps = check_model(self)
        if ps:
            new[MODEL] = tuple(ps)
        ps = self._declared_stale()
        if ps is None:  # deferred: the last comparison stands until the next one arrives
            ps = self._store.get(DECLARED, ())
        if ps:
            new[DECLARED] = ps
        if FULL in self._store:
            new[FULL] = self._store[FULL]
        changes = {s: new.get(s, ()) for s in set(self._store) | set(new)}
        self._ready = True
        self._apply(changes)

    def _rebuild(self, nodes_per_step: int | None = None) -> Iterator[None]:
        doc = self.doc
        m = doc.model
        info = ModelInfo(ir_version=m.ir_version, opsets=_opsets(m.opset_import))
        info.opset_map = {i.domain: i.version for i in m.opset_import}
        for sid, fn in zip(doc.index.function_scopes, m.functions):
            key = ("" if fn.domain == "ai.onnx" else fn.domain, fn.name, getattr(fn, "overload", ""))
            info.functions.setdefault(key, fn)
            # NOTE: a function body resolves domains with its own opset imports; domains it
            # does not import fall back to the model's, as runtimes do.
            info.function_opsets[sid] = {**info.opsets, **_opsets(fn.opset_import)}
        self.info = info
        self._paths.clear()
        self.scopes = {}
        # parents before children: scope ids grow with nesting, but sort by depth to be safe
        for sid in sorted(doc.index.scopes, key=lambda s: len(doc.index.scope_chain(s))):
            self.scopes[sid] = build_scope(doc, sid)
        if nodes_per_step:
            yield
        self.nodes = {}
        for k, (_scope, nid, _) in enumerate(doc.index.iter_nodes(), 1):
            self._add_node_shadow(nid)
            if nodes_per_step and k % (4 * nodes_per_step) == 0:  # a shadow costs ~1/4 of a check
                yield

    def _add_node_shadow(self, nid: NodeId) -> NodeShadow:
        sh = build_node(self.doc, nid)
        self.nodes[nid] = sh
        ss = self.scopes[sh.sid]
        for name in sh.outputs:
            if name:
                ss.producers.setdefault(name, set()).add(nid)
        if sh.kids:
            ss.owners.add(nid)
        return sh

    def _drop_node_shadow(self, nid: NodeId) -> NodeShadow | None:
        sh = self.nodes.pop(nid, None)
        if sh is None:
            return None
        ss = self.scopes.get(sh.sid)
        if ss is not None:
            for name in sh.outputs:
                prods = ss.producers.get(name)
                if prods is not None:
                    prods.discard(nid)
                    if not prods:
                        del ss.producers[name]
            ss.owners.discard(nid)
        return sh

    # -- incremental ---------------------------------------------------------------------
    def _on_changed(self, cs: ChangeSet) -> None:
        with self._lock:
            self.version += 1
            if not self._ready:
                return
            if FULL in self._store:  # background results describe an older model now
                self._apply({FULL: ()})
            if cs.empty and not cs.scope_fields:
                return
            try:
                if self._needs_full_pass(cs):
                    self.validate_all()
                else:
                    self._update(cs)
            except Exception:  # noqa: BLE001 - a validator bug must never break editing
                # NOTE: counted so tests can insist on zero; the user still gets exact problems
                log.exception("incremental validation failed; checking the whole model instead")
                self.fallbacks += 1
                try:
                    self.validate_all()
                except Exception:  # noqa: BLE001
                    log.exception("validation failed")

    def _needs_full_pass(self, cs: ChangeSet) -> bool:
        if cs.graph_replaced or cs.model_fields & _GLOBAL_MODEL_FIELDS:
            return True
        for sid, f in cs.scope_fields:
            ss = self.scopes.get(sid)
            if ss is not None and ss.kind == "function" and f in _FUNCTION_SIGNATURE_FIELDS:
                return True
        return False

    def _update(self, cs: ChangeSet) -> None:
        doc = self.doc
        index = doc.index
        touched: set[tuple[ScopeId, str]] = set()
        dirty_nodes: set[NodeId] = set()
        dirty_graphs: set[ScopeId] = set()

        # 1. which nodes (and nested bodies) went, came, or changed
        removed: set[NodeId] = set()
        added: set[NodeId] = set()
        gone_scopes: set[ScopeId] = set()
        new_scopes: list[ScopeId] = []

        def shadow_descendants(nid: NodeId) -> None:
            sh = self.nodes.get(nid)
            if sh is None:
                return
            for sid in sh.kids:
                gone_scopes.add(sid)
                for sub, s in list(self.nodes.items()):
                    if s.sid == sid and sub not in removed:
                        removed.add(sub)
                        shadow_descendants(sub)

        def index_descendants(nid: NodeId) -> None:
            scopes, nodes = descendants_in_index(doc, nid)
            new_scopes.extend(scopes)
            added.update(nodes)

        for nid in cs.nodes_removed:
            removed.add(nid)
            shadow_descendants(nid)
        for nid in cs.nodes_added:
            added.add(nid)
            index_descendants(nid)
        changed = set(cs.nodes_changed) - set(cs.nodes_removed) - set(cs.nodes_added)
        # nodes whose bodies cannot have changed: only their name or doc string was edited
        # (re-reading the bodies of silero VAD's If on its rename re-checked all 227 nodes)
        fields: dict[NodeId, set[str]] = {}
        for nid, f in cs.node_fields:
            fields.setdefault(nid, set()).add(f)
        renamed_owners: list[NodeId] = []
        for nid in list(changed):
            if nid not in self.nodes:  # not seen before: treat as new
                changed.discard(nid)
                added.add(nid)
                index_descendants(nid)
                continue
            if not (self.nodes[nid].kids or index.children.get(nid)):
                continue
            if fields.get(nid, {"?"}) <= set(_NAME_FIELDS):
                renamed_owners.append(nid)  # the same bodies; only their paths name it
            else:
                # its bodies may have changed wholesale: re-read them, and their paths
                shadow_descendants(nid)
                index_descendants(nid)

        # a node edited and then dropped with its owner in one command is not in the index
        changed = {n for n in changed if n in index.nodes and n not in added}

        # 2. drop what went
        for nid in removed:
            sh = self._drop_node_shadow(nid)
            if sh is not None and sh.sid not in gone_scopes:
                touched.update((sh.sid, o) for o in sh.outputs if o)
        for sid in gone_scopes:
            self.scopes.pop(sid, None)
            self._paths.pop(sid, None)
        # 3. add what came (scopes first, parents before children)
        for sid in sorted(set(new_scopes), key=lambda s: len(index.scope_chain(s))):
            if sid in index.scopes:
                self.scopes[sid] = build_scope(doc, sid)
                self._paths.pop(sid, None)
                dirty_graphs.add(sid)
        for nid in added:
            old = self._drop_node_shadow(nid)  # re-inserted under its old id (a move)
            if old is not None and old.sid in self.scopes:
                touched.update((old.sid, o) for o in old.outputs if o)
            if nid in index.nodes:
                sh = self._add_node_shadow(nid)
                touched.update((sh.sid, o) for o in sh.outputs if o)
                dirty_nodes.add(nid)
        # 4. nodes that changed in place
        for nid in changed:
            old = self._drop_node_shadow(nid)
            new = self._add_node_shadow(nid)
            dirty_nodes.add(nid)
            # NOTE: every output, not only renamed ones: a consumer's check can read the
            # node itself (a Constant's value gives its output's type and rank)
            touched.update((new.sid, o) for o in new.outputs if o)
            if old is not None:
                touched.update((new.sid, o) for o in set(old.outputs) ^ set(new.outputs) if o)
            if new.kids or (old is not None and old.kids):
                self._paths.clear()  # nested graphs' paths name their owner

        # 5. graph-level lists: what each name resolves to before and after. Elements
        # edited in place are re-read one by one; a list that grew or shrank is re-read.
        items = getattr(cs, "items", None)
        reshaped = getattr(cs, "lists_reshaped", None)
        in_place: dict[tuple[ScopeId, str], list[int]] = {}
        for sid, f, k in items or ():
            in_place.setdefault((sid, f), []).append(k)
        for sid, f in cs.scope_fields:
            ss = self.scopes.get(sid)
            if ss is None or sid in new_scopes:
                continue
            if f in _GRAPH_CHECK_FIELDS:
                dirty_graphs.add(sid)
            if f == "name":
                self._paths.clear()  # nothing else reads a graph's name
                continue
            if f not in LIST_FIELDS:
                continue
            lst = ss.lists[f]
            g = index.scopes[sid].graph
            if items is None or reshaped is None or (sid, f) in reshaped or (sid, f) not in in_place:
                before = lst.by_name()
                lst.load(read_list(g, f))
                after = lst.by_name()
                touched.update((sid, n) for n in _diff_names(before, after))
                continue
            for k in in_place[(sid, f)]:
                old_entry = lst.entries[k]
                new_entry = read_entry(g, f, k)
                if new_entry != old_entry:
                    lst.set(k, new_entry)
                    touched.add((sid, old_entry[0]))
                    touched.add((sid, new_entry[0]))
        for sid, old_name, new_name in cs.values_renamed:
            if sid in self.scopes:
                touched.add((sid, old_name))
                touched.add((sid, new_name))

        # 6. who can see a touched name: its producers and consumers, here and below
        for sid, name in touched:
            ss = self.scopes.get(sid)
            if ss is None:
                continue
            for d in self._scope_and_descendants(sid):
                dss = self.scopes[d]
                dirty_nodes.update(dss.producers.get(name, ()))
                dirty_nodes.update(n for n, _ in index.scopes[d].consumers.get(name, ()))
                # the graph check reads producers only for the graph's outputs
                if name in dss.lists["output"].pos:
                    dirty_graphs.add(d)

        # 7. recompute (the problems inside a renamed owner's bodies only get its new name
        # in their path; what is checked again below gets it anyway)
        updates: dict[Subject, tuple[Problem, ...]] = self._repathed(renamed_owners)
        for nid in removed - added:
            updates[("node", nid)] = ()
        for sid in gone_scopes - set(self.scopes):
            updates[("graph", sid)] = ()
        for nid in dirty_nodes:
            if nid in self.nodes and nid in index.nodes:
                updates[("node", nid)] = self._check_node(nid)
        for sid in dirty_graphs:
            if sid in self.scopes:
                updates[("graph", sid)] = self._check_graph(sid)
        if cs.model_fields:
            updates[MODEL] = tuple(check_model(self))
        # NOTE: what a graph output computes can change with any edit upstream: recomputed
        # every time (it is a pure function of the model, so exactness holds), but for
        # renames: node names are not part of it
        if not cs.only_node_fields(_NAME_FIELDS):
            declared = self._declared_stale()
            if declared is not None:
                updates[DECLARED] = declared
        self._apply(updates)
        # NOTE: a cheap guard against a change the ChangeSet did not describe: if the shadows
        # no longer cover the index, fall back to a full pass rather than drift.
        if len(self.nodes) != len(index.nodes) or len(self.scopes) != len(index.scopes):
            self.validate_all()

    def _repathed(self, owners: list[NodeId]) -> dict[Subject, tuple[Problem, ...]]:
        """The stored problems inside the bodies of ``owners`` with their paths as they are
        now (after an owner's rename; ``_paths`` cleared)."""
        inside: set[ScopeId] = set()
        for nid in owners:
            sh = self.nodes.get(nid)
            for kid in sh.kids if sh is not None else ():
                if kid in self.scopes:
                    inside.update(self._scope_and_descendants(kid))
        out: dict[Subject, tuple[Problem, ...]] = {}
        if not inside:
            return out
        for subject, problems in self._store.items():
            if any(p.scope_id in inside for p in problems):
                out[subject] = tuple(replace(p, graph=self.path(p.scope_id)) if p.scope_id in inside else p
                                     for p in problems)
        return out

    def _scope_and_descendants(self, sid: ScopeId) -> list[ScopeId]:
        out = [sid]
        stack = [sid]
        while stack:
            cur = self.scopes.get(stack.pop())
            if cur is None:
                continue
            for owner in cur.owners:
                for kid in self.nodes[owner].kids:
                    if kid in self.scopes:
                        out.append(kid)
                        stack.append(kid)
        return out

    # -- the store -----------------------------------------------------------------------
    def _apply(self, updates: dict[Subject, tuple[Problem, ...]]) -> None:
        """Replace the given subjects' problems; emit what appeared and what went."""
        added: list[Problem] = []
        removed: list[Problem] = []
        for subject, new in updates.items():
            old = self._store.get(subject, ())
            if old == new:
                continue
            old_set, new_set = set(old), set(new)
            removed.extend(p for p in old if p not in new_set)
            added.extend(p for p in new if p not in old_set)
            if new:
                self._store[subject] = new
            else:
                self._store.pop(subject, None)
        if added or removed:
            self._cache = None
            self.problems_changed.emit(added, removed)

    def merge_full(self, problems: list[Problem], version: int) -> bool:
        """Merge background full-check results taken at ``version``; stale ones are dropped."""
        with self._lock:
            if version != self.version:
                return False
            self._apply({FULL: tuple(problems)})
            return True

    @property
    def full_problems(self) -> list[Problem]:
        with self._lock:
            return list(self._store.get(FULL, ()))


def _diff_names(before: dict[str, object], after: dict[str, object]) -> set[str]:
    out = set(before.keys() ^ after.keys())
    for name, val in before.items():
        if name in after and after[name] != val:
            out.add(name)
    return out
