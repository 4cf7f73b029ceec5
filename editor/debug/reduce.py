"""Reduce a failing model to the smallest subgraph that still fails, with its inputs.

The failure is a :class:`FailureCheck` on a (sub)model and its inputs: an output with NaN
(:class:`NanCheck`), a backend that crashes or refuses (:class:`CrashCheck`), two backends
that disagree (:class:`BackendDiffCheck`), or model A that disagrees with model B on
the same inputs (:class:`ModelDiffCheck`). :func:`reduce_model`, in the spirit of
Polygraphy's ``debug reduce``:

1. runs the model once with every intermediate value requested (on a backend that can:
   for a crash, the other one), so any cut can be fed *real* values;
2. checks the whole model fails (else there is nothing to reduce);
3. bisects the topological order for the smallest prefix that fails (its end is the
   culprit), then for the latest start that still fails;
4. refines: keeps only the culprit's ancestors, tries the culprit alone, then drops nodes
   one at a time (their outputs become inputs fed real values) while it still fails.

Every cut is :func:`editor.passes.extract_model` (Constant nodes become initializers) and
every run goes through the child-process :class:`~editor.runtime.Runner`: a backend that
crashes counts as a failure, the caller's process lives on. A (sub)model the checker
cannot judge (the cut cannot be extracted, a needed value is missing) counts as passing, so
bisection moves past it rather than stopping on it.

NOTE: run budget. Steps 3 cost ``2 * ceil(log2 n)`` checks; step 4 is capped so the total
stays within ``2 * log2(n) + 20`` checks for a single-run check (NaN, crash); a diff check
runs two backends per check. ``ReduceResult.runs`` counts the backend runs made.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from editor.debug.bodies import Inlined, inline_by_running
from editor.debug.metrics import Tolerance, compare_values
from editor.errors import RuntimeBackendError, StudioError
from editor.runtime import Runner, RunOptions, RunResult
from editor.runtime.input_plan import InputPlan, plan_inputs, refit
from editor.runtime.inputs import save_inputs
from editor.runtime.source import ModelSource

__all__ = ["BackendDiffCheck", "CrashCheck", "DoesNotFail", "FailureCheck", "ModelDiffCheck", "NanCheck", "ReduceResult",
           "reduce_model"]


class DoesNotFail(RuntimeBackendError):
    """The whole model passes the check: nothing to reduce (``reduce`` exits 1)."""

    exit_code = 1


_COUNT_LOCK = threading.Lock()


class FailureCheck(ABC):
    """Says whether a (sub)model fails on given inputs; counts the runs it makes."""

    #: backend whose run gives the real intermediate values cuts are fed with
    values_backend: str | None = None
    values_options: RunOptions = RunOptions()

    def __init__(self) -> None:
        self.runs = 0
        #: set by :func:`reduce_model` before asking for a hint
        self.runner: Runner | None = None
        self.model: onnx.ModelProto | None = None
        self.feeds: Mapping[str, Any] = {}

    def _run(self, runner: Runner, model: onnx.ModelProto, feeds: Mapping[str, Any], backend: str | None,
             options: RunOptions, timeout: float | None) -> RunResult:
        with _COUNT_LOCK:  # checks may run on several threads (a pool of remote runners)
            self.runs += 1
        return runner.run(ModelSource.from_any(model), feeds, backend=backend, options=options, timeout=timeout)

    @abstractmethod
    def fails(self, runner: Runner, model: onnx.ModelProto, feeds: Mapping[str, Any]) -> bool:
        """True when ``model`` on ``feeds`` shows the failure."""

    @abstractmethod
    def describe(self) -> str:
        """What fails, in a few words ("NaN in an output on ort")."""

    def feeds_for(self, names: list[str], values: Mapping[str, Any]) -> dict[str, Any] | None:
        """Inputs of a cut from the full run's values (None: a value is missing)."""
        if any(n not in values for n in names):
            return None
        return {n: values[n] for n in names}

    def suspect(self, order: list[onnx.NodeProto], values: Mapping[str, Any]) -> int | None:
        """Index in ``order`` of a node the full run already points at, to try first."""
        return None


def _first_differing(order: list[onnx.NodeProto], values: Mapping[str, Any], others: Mapping[str, Any],
                     tolerance: Tolerance, rename: Mapping[str, str] | None = None) -> int | None:
    """Index of the first node of ``order`` with an output beyond tolerance between
    ``values`` and ``others`` (names through ``rename``); the node a diff check suspects."""
    rename = rename or {}
    for k, node in enumerate(order):
        for o in node.output:
            b = rename.get(o, o) if rename else o
            if o in values and b in others:
                atol, rtol = tolerance.for_tensor(o)
                if not compare_values(values[o], others[b], atol, rtol).ok:
                    return k
    return None


def _has_nan(value: Any) -> bool:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return bool(np.isnan(value).any())
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return False


class NanCheck(FailureCheck):
    """An output holds NaN although no input does (the NaN is made here)."""

    def __init__(self, backend: str | None = None, options: RunOptions | None = None, timeout: float | None = None) -> None:
        super().__init__()
        self.backend, self.options, self.timeout = backend, options or RunOptions(), timeout
        self.values_backend, self.values_options = backend, self.options

    def fails(self, runner: Runner, model: onnx.ModelProto, feeds: Mapping[str, Any]) -> bool:
        if any(_has_nan(v) for v in feeds.values()):
            return False
        result = self._run(runner, model, feeds, self.backend, self.options, self.timeout)
        return result.ok and any(_has_nan(r.value) for r in result.outputs.values())

    def describe(self) -> str:
        return f"NaN in an output on {self.backend or 'the default backend'}"

    def suspect(self, order: list[onnx.NodeProto], values: Mapping[str, Any]) -> int | None:
        for k, node in enumerate(order):
            if any(_has_nan(values.get(o)) for o in node.output if o) and \
                    not any(_has_nan(values.get(x)) for x in node.input if x):
                return k
        return None


class CrashCheck(FailureCheck):
    """``backend`` crashes, refuses, errors or times out on the model."""

    def __init__(self, backend: str = "ort", options: RunOptions | None = None, timeout: float | None = 60.0,
                 values_backend: str | None = None) -> None:
        super().__init__()
        self.backend, self.options, self.timeout = backend, options or RunOptions(), timeout
        self.values_backend = values_backend or ("reference" if backend == "ort" else "ort")
        self.last_error: str | None = None

    def fails(self, runner: Runner, model: onnx.ModelProto, feeds: Mapping[str, Any]) -> bool:
        result = self._run(runner, model, feeds, self.backend, self.options, self.timeout)
        if result.status in ("crashed", "failed", "timeout"):
            self.last_error = result.error
            return True
        return False

    def describe(self) -> str:
        return f"{self.backend} crashes or fails"


class BackendDiffCheck(FailureCheck):
    """Two backends (or one with two option sets) disagree beyond tolerance, or the first
    fails where the second runs."""

    def __init__(self, backend_a: str | None, backend_b: str | None, *, options_a: RunOptions | None = None,
                 options_b: RunOptions | None = None, tolerance: Tolerance | None = None,
                 timeout: float | None = 60.0) -> None:
        super().__init__()
        self.a, self.b = backend_a, backend_b
        self.oa, self.ob = options_a or RunOptions(), options_b or RunOptions()
        self.tolerance, self.timeout = tolerance or Tolerance(), timeout
        self.values_backend, self.values_options = backend_b, self.ob

    def fails(self, runner: Runner, model: onnx.ModelProto, feeds: Mapping[str, Any]) -> bool:
        rb = self._run(runner, model, feeds, self.b, self.ob, self.timeout)
        if not rb.ok:
            return False  # the reference side cannot judge this cut
        ra = self._run(runner, model, feeds, self.a, self.oa, self.timeout)
        if not ra.ok:
            return True
        for name, rec in rb.outputs.items():
            if name in ra.outputs:
                atol, rtol = self.tolerance.for_tensor(name)
                if not compare_values(ra.outputs[name].value, rec.value, atol, rtol).ok:
                    return True
        return False

    def describe(self) -> str:
        return f"{self.a or 'auto'} disagrees with {self.b or 'auto'}"

    def suspect(self, order: list[onnx.NodeProto], values: Mapping[str, Any]) -> int | None:
        """One more full run, on side A, and the first node where the two runs part."""
        if self.runner is None or self.model is None:
            return None
        names = [o for n in order for o in n.output if o]
        self.runs += 1
        ra = self.runner.run(ModelSource.from_any(self.model), self.feeds, outputs=names, backend=self.a,
                             options=self.oa, timeout=self.timeout)
        if not ra.ok:
            return None
        return _first_differing(order, {k: r.value for k, r in ra.outputs.items()}, values, self.tolerance)


class ModelDiffCheck(FailureCheck):
    """A cut of model A, fed model B's values of the mapped tensors, gives outputs that
    differ from B's values of the mapped outputs: the node where A computes something
    else than B given the same inputs."""

    def __init__(self, model_b: onnx.ModelProto | str | Path, *, backend: str | None = None,
                 options: RunOptions | None = None, tolerance: Tolerance | None = None,
                 timeout: float | None = 60.0) -> None:
        super().__init__()
        self.model_b = model_b
        self.backend, self.options, self.tolerance, self.timeout = backend, options or RunOptions(), tolerance or Tolerance(), timeout
        self.values_backend, self.values_options = backend, self.options
        self.map_a_to_b: dict[str, str] = {}
        self.values_b: dict[str, Any] = {}

    def prepare(self, runner: Runner, model_a: onnx.ModelProto, feeds: Mapping[str, Any]) -> None:
        """Map A's tensors to B's (B's Ifs inlined into the branches B's run takes) and run B
        once with every mapped tensor."""
        from editor.debug.mapping import io_pairs, map_tensors

        proto_b = self.model_b if isinstance(self.model_b, onnx.ModelProto) else ModelSource.from_path(self.model_b).load_proto()
        b_inputs = {vi.name for vi in proto_b.graph.input}
        pairs = io_pairs(model_a, proto_b)
        feeds_b = {pairs[k]: v for k, v in feeds.items() if pairs.get(k) in b_inputs}

        def run_b(model: onnx.ModelProto, names: list[str] | None) -> dict[str, Any]:
            self.runs += 1
            rb = runner.run(ModelSource.from_any(model), feeds_b, outputs=names, backend=self.backend,
                            options=self.options, timeout=self.timeout)
            if not rb.ok:
                raise RuntimeBackendError(f"model B cannot be run: {rb.error}")
            return {k: r.value for k, r in rb.outputs.items()}

        proto_b = inline_by_running(proto_b, run_b).model
        tmap = map_tensors(model_a, proto_b)
        self.map_a_to_b = {p.a: p.b for p in tmap.pairs if p.b is not None and p.dequant is None}
        wanted = [n for n in dict.fromkeys(self.map_a_to_b.values()) if n not in b_inputs]
        self.values_b = run_b(proto_b, wanted or None)
        self.values_b.update(feeds_b)

    def feeds_for(self, names: list[str], values: Mapping[str, Any]) -> dict[str, Any] | None:
        out = {}
        for n in names:
            b = self.map_a_to_b.get(n)
            if b is not None and b in self.values_b:
                out[n] = self.values_b[b]
            elif n in values:
                out[n] = values[n]
            else:
                return None
        return out

    def fails(self, runner: Runner, model: onnx.ModelProto, feeds: Mapping[str, Any]) -> bool:
        ra = self._run(runner, model, feeds, self.backend, self.options, self.timeout)
        if not ra.ok:
            return True
        for name, rec in ra.outputs.items():
            b = self.map_a_to_b.get(name)
            if b is None or b not in self.values_b:
                continue
            atol, rtol = self.tolerance.for_tensor(name)
            if not compare_values(rec.value, self.values_b[b], atol, rtol).ok:
                return True
        return False

    def describe(self) -> str:
        return "model A disagrees with model B"

    def suspect(self, order: list[onnx.NodeProto], values: Mapping[str, Any]) -> int | None:
        """The first node of A whose output differs from B's mapped value (both full runs
        are already made)."""
        return _first_differing(order, values, self.values_b, self.tolerance, self.map_a_to_b)


@dataclass
class ReduceResult:
    """The smallest failing subgraph found, its inputs, and how it was found."""

    model: onnx.ModelProto
    inputs: dict[str, Any]
    #: names (or op types for unnamed nodes) of the nodes kept, in order
    nodes: list[str]
    #: backend runs made (the values run included) and checks evaluated
    runs: int
    checks: int
    original_nodes: int
    check: str
    log: list[str] = field(default_factory=list)
    #: rounds of waiting for checks of the bisection (sequential: one per check; a pool:
    #: up to one check per runner a round)
    rounds: int = 0
    #: the whole model's inputs and what they are (shapes, ranges, guessed dims)
    input_plan: InputPlan | None = None
    #: node label -> the body it came from ("If '/model/If_1' then_branch"), for kept
    #: nodes that were inside a body
    scopes: dict[str, str] = field(default_factory=dict)

    def save(self, path: str | Path) -> tuple[Path, Path]:
        """Write the model to ``path`` and its inputs beside it (``path`` with ``.npz``)."""
        from editor.io import save_model

        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        save_model(self.model, p)
        npz = save_inputs(p.with_suffix(".npz"), self.inputs)
        return p, npz


class _Cutter:
    """Extracts node sets of one model and feeds them real values."""

    def __init__(self, model: onnx.ModelProto, values: Mapping[str, Any], check: FailureCheck) -> None:
        from editor.document import Document

        self.doc = Document(model)
        self.values, self.check = values, check
        scope = self.doc.index.scopes[self.doc.index.main]
        ids_by_position = list(scope.node_ids)
        from editor.debug.mapping import _topo_nodes

        position = {id(n): k for k, n in enumerate(scope.graph.node)}
        self.order: list[tuple[int, onnx.NodeProto]] = [
            (ids_by_position[position[id(n)]], n) for n in _topo_nodes(scope.graph)
            if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))
        ]
        self.shapes = {k: list(v.shape) for k, v in values.items() if isinstance(v, np.ndarray)}
        self.cache: dict[frozenset[int], bool] = {}
        self.rounds = 0

    def cut(self, idx: list[int]) -> tuple[onnx.ModelProto, dict[str, Any]] | None:
        from editor.passes.extract import extract_model

        try:
            sub = extract_model(self.doc, node_ids=[self.order[k][0] for k in idx], shapes=self.shapes)
        except StudioError:
            return None
        inits = {t.name for t in sub.graph.initializer}
        feeds = self.check.feeds_for([vi.name for vi in sub.graph.input if vi.name not in inits], self.values)
        if feeds is None:
            return None
        return sub, feeds

    def fails(self, runner: Runner, idx: list[int]) -> bool:
        key = frozenset(idx)
        if key in self.cache:
            return self.cache[key]
        made = self.cut(idx)
        if made is not None:
            self.rounds += 1
        result = False if made is None else self.check.fails(runner, *made)
        self.cache[key] = result
        return result

    def ancestors(self, idx: list[int], last: int) -> list[int]:
        """Members of ``idx`` that ``last`` depends on (``last`` included), in order."""
        members = set(idx)
        producer = {o: k for k in idx for o in self.order[k][1].output if o}
        keep, todo = {last}, [last]
        while todo:
            k = todo.pop()
            for x in self.order[k][1].input:
                p = producer.get(x)
                if p is not None and p in members and p not in keep:
                    keep.add(p)
                    todo.append(p)
        return sorted(keep)


def reduce_model(
    model: onnx.ModelProto | str | Path,
    check: FailureCheck,
    inputs: Mapping[str, Any] | None = None,
    *,
    runner: Runner | None = None,
    seed: int = 0,
    dims: Mapping[str, int] | None = None,
    val_ranges: Mapping[str, tuple[float, float]] | None = None,
    use_hints: bool = True,
    progress: Callable[[str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    pool: Sequence[Runner] | None = None,
) -> ReduceResult:
    """Bisect ``model`` to the smallest subgraph that still fails ``check`` (module docstring).

    Each If the values run decides is first inlined into its taken branch
    (:mod:`editor.debug.bodies`), so the culprit can be a node inside a body. Raises
    :class:`RuntimeBackendError` when the model cannot be run for its values or does
    not fail ``check`` at all, and when ``cancelled()`` turns true. ``pool``: runners (remote
    hosts) that check bisection steps at once, speculatively; the result is the sequential
    one (same cuts, same nodes), ``runs`` and ``checks`` also count the speculative checks.
    """
    say = progress or (lambda _m: None)
    stop = cancelled or (lambda: False)
    proto = model if isinstance(model, onnx.ModelProto) else ModelSource.from_path(model).load_proto()
    plan = plan_inputs(proto, given=inputs, dims=dims, seed=seed, val_ranges=val_ranges)
    for line in plan.lines():  # the evidence: shapes, ranges, guessed dims
        say(line)
    own = runner is None and not pool
    runner = runner or (pool[0] if pool else Runner())
    runners = list(pool) if pool else [runner]
    try:
        whole = _values_of(proto, plan, check, runner, say)
        if isinstance(check, ModelDiffCheck):
            check.prepare(runner, whole.inlined.model, whole.plan.feeds)
        return _reduce(whole, check, runner, runners, use_hints, say, stop)
    finally:
        if own:
            runner.close()


@dataclass
class _Whole:
    """The whole model as reduction sees it: its Ifs inlined, its inputs, every value."""

    inlined: Inlined
    plan: InputPlan
    values: dict[str, Any]
    outputs: list[str]


def _values_of(proto: onnx.ModelProto, plan: InputPlan, check: FailureCheck, runner: Runner,
               say: Callable[[str], None]) -> _Whole:
    """Run the whole model for every value on the check's values backend: other sizes when
    the guessed ones do not run (:func:`refit`), then each If it decides inlined and the
    inlined model run again, so cuts can be fed values from inside bodies."""
    from editor.runtime.intermediates import value_scopes

    def values_run(model: onnx.ModelProto, feeds: Mapping[str, Any], outputs: list[str] | None) -> RunResult:
        check.runs += 1
        return runner.run(ModelSource.from_any(model), feeds, outputs=outputs, backend=check.values_backend,
                          options=check.values_options, timeout=None)

    def every_value(model: onnx.ModelProto) -> list[str]:
        scopes = value_scopes(model)
        return list(dict.fromkeys(scopes.main + scopes.outputs))

    say("running the whole model for its intermediate values")
    full = values_run(proto, plan.feeds, every_value(proto))
    if not full.ok and "cannot create a session" not in (full.error or "") and plan.dims.guessed():
        say("the run failed at the guessed sizes: trying others")
        better = refit(proto, plan, full.error or full.status,
                       lambda f: (lambda r: None if r.ok else (r.error or r.status))(values_run(proto, f, None)))
        if better is not None:
            plan = better
            for line in plan.lines():
                say(line)
            full = values_run(proto, plan.feeds, every_value(proto))
    if not full.ok:
        raise RuntimeBackendError(f"cannot compute intermediate values on {check.values_backend or 'any backend'}: {full.error}")
    values: dict[str, Any] = {k: r.value for k, r in full.outputs.items()}

    def conditions_of(model: onnx.ModelProto, names: list[str]) -> Mapping[str, Any]:
        if model is proto:
            return values
        result = values_run(model, plan.feeds, names)
        if not result.ok:
            raise RuntimeBackendError(f"cannot run the model with its Ifs inlined: {result.error}")
        return {k: r.value for k, r in result.outputs.items()}

    inlined = inline_by_running(proto, conditions_of)
    if inlined.changed:
        say(f"{len(inlined.taken)} If node(s) inlined into the branch taken: running again for their values")
        full = values_run(inlined.model, plan.feeds, every_value(inlined.model))
        if not full.ok:
            raise RuntimeBackendError(f"cannot run the model with its Ifs inlined: {full.error}")
        values = {k: r.value for k, r in full.outputs.items()}
    values.update(plan.feeds)
    return _Whole(inlined, plan, values, [o.name for o in proto.graph.output])


def _reduce(whole: _Whole, check: FailureCheck, runner: Runner, runners: list[Runner], use_hints: bool,
            say: Callable[[str], None], stop: Callable[[], bool]) -> ReduceResult:
    """Check the whole model fails, then bisect (or take the node the full run points at)."""
    proto, feeds, values, log = whole.inlined.model, whole.plan.feeds, whole.values, []
    cutter = _Cutter(proto, values, check)
    n = len(cutter.order)
    if n == 0:
        raise RuntimeBackendError("the model has no nodes to reduce")
    everything = list(range(n))
    say(f"checking the whole model ({n} nodes)")
    if not check.fails(runner, proto, feeds):
        nan = [o for o in whole.outputs if _has_nan(values.get(o))]
        hint = f"; output {nan[0]!r} holds NaN on this run: --check nan finds the node that makes it" \
            if nan and not isinstance(check, NanCheck) else ""
        raise DoesNotFail(f"the model does not fail the check ({check.describe()}): nothing to reduce{hint}")
    cutter.cache[frozenset(everything)] = True
    best: list[int] | None = None
    if use_hints:
        check.runner, check.model, check.feeds = runner, proto, feeds
        hint = check.suspect([nd for _, nd in cutter.order], values)
        if hint is not None:
            say(f"trying the node the full run points at: {_label(cutter.order[hint][1])}")
            if cutter.fails(runner, [hint]):
                best = [hint]
                log.append(f"the full run pointed at {_label(cutter.order[hint][1])}, which fails alone")
    if best is None:
        best = _bisect(cutter, runners, n, log, say, stop)
    nodes = [cutter.order[k][1] for k in best]
    made = cutter.cut(best)
    if made is None:
        raise RuntimeBackendError("the reduced subgraph cannot be extracted")  # pragma: no cover - it just ran
    sub, sub_feeds = made
    scope = whole.inlined.scope
    return ReduceResult(sub, sub_feeds, [_label(nd) for nd in nodes], check.runs, len(cutter.cache),
                        n, check.describe(), log, rounds=cutter.rounds, input_plan=whole.plan,
                        scopes={_label(nd): scope[nd.name] for nd in nodes if nd.name in scope})


def _label(node: onnx.NodeProto) -> str:
    return node.name or f"<{node.op_type}>"


# A bisection is written once, as a generator that yields the cut to check next and is
# sent whether it fails; a driver answers it. The sequential driver checks each cut in
# turn. The speculative one (a pool of remote runners) replays the generator from the start
# with the answers known so far plus *assumed* answers, to see which cuts the bisection
# could ask next whichever way the pending checks go, and checks up to one per runner at
# once. The real bisection then only ever reads answers from the cache, so it takes the
# very path the sequential run takes: same cuts, same result, fewer rounds of waiting.

_Bisection = Generator[list[int], bool, list[int]]


def _bisect_steps(cutter: _Cutter, n: int, log: list[str], say: Callable[[str], None]) -> _Bisection:
    # smallest failing prefix: its last node is the culprit
    lo, hi = 1, n
    while lo < hi:
        mid = (lo + hi) // 2
        say(f"bisecting the end: nodes [0, {mid}) of {n}")
        if (yield list(range(mid))):
            hi = mid
        else:
            lo = mid + 1
    end = lo
    log.append(f"smallest failing prefix ends at node {end - 1}: {_label(cutter.order[end - 1][1])}")
    # latest start that still fails
    lo, hi = 0, end - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        say(f"bisecting the start: nodes [{mid}, {end}) of {n}")
        if (yield list(range(mid, end))):
            lo = mid
        else:
            hi = mid - 1
    start = lo
    best = list(range(start, end))
    log.append(f"latest failing start: node {start} ({len(best)} nodes)")
    last = end - 1
    # refine: only what the culprit depends on; the culprit alone; then drop nodes one by one
    anc = cutter.ancestors(best, last)
    if len(anc) < len(best) and (yield anc):
        best = anc
    if len(best) > 1 and (yield [last]):
        best = [last]
    budget = max(0, 20 - 4)
    for k in reversed(best[:-1]):
        if budget <= 0 or len(best) <= 1:
            break
        if k not in best:
            continue
        trial = cutter.ancestors([m for m in best if m != k], last)
        budget -= 1
        say(f"refining: {len(trial)} nodes")
        if (yield trial):
            best = trial
    log.append(f"refined to {len(best)} node(s)")
    return best


def _bisect(cutter: _Cutter, runners: Sequence[Runner], n: int, log: list[str], say: Callable[[str], None],
            stop: Callable[[], bool]) -> list[int]:
    if len(runners) > 1:
        _speculate(cutter, runners, n, stop)
    steps = _bisect_steps(cutter, n, log, say)
    try:
        idx = next(steps)
        while True:
            if stop():
                raise RuntimeBackendError("reduce cancelled")
            idx = steps.send(cutter.fails(runners[0], idx))
    except StopIteration as done:
        return done.value


def _frontier(cutter: _Cutter, n: int, assumed: Mapping[frozenset[int], bool]) -> list[int] | None:
    """The first cut the bisection asks whose answer is neither known nor assumed (None:
    it finishes on these answers)."""
    steps = _bisect_steps(cutter, n, [], lambda _m: None)
    try:
        idx = next(steps)
        while True:
            key = frozenset(idx)
            answer = cutter.cache.get(key, assumed.get(key))
            if answer is None:
                return idx
            idx = steps.send(answer)
    except StopIteration:
        return None


def _speculate(cutter: _Cutter, runners: Sequence[Runner], n: int, stop: Callable[[], bool]) -> None:
    """Fill ``cutter.cache`` with every answer the bisection needs, a round of up to
    ``len(runners)`` concurrent checks at a time (the next cut, then the cuts after each
    possible answer, breadth first)."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    free: queue.Queue[Runner] = queue.Queue()
    for r in runners:
        free.put(r)

    def check(made: tuple[onnx.ModelProto, dict[str, Any]]) -> bool:
        runner = free.get()
        try:
            return cutter.check.fails(runner, *made)
        finally:
            free.put(runner)

    width = len(runners)
    with ThreadPoolExecutor(width, thread_name_prefix="onnx-studio-reduce") as pool:
        while True:
            if stop():
                raise RuntimeBackendError("reduce cancelled")
            batch: dict[frozenset[int], list[int]] = {}
            todo: list[dict[frozenset[int], bool]] = [{}]
            expanded = 0
            while todo and len(batch) < width and expanded < 4 * width + 8:
                assumed = todo.pop(0)
                expanded += 1
                idx = _frontier(cutter, n, assumed)
                if idx is None:
                    continue
                key = frozenset(idx)
                batch.setdefault(key, idx)
                todo += [{**assumed, key: True}, {**assumed, key: False}]
            if not batch:
                return
            # cuts are made here, one at a time (the document is not shared across
            # threads); only the runs go out at once
            made = {}
            for key, idx in batch.items():
                cut = cutter.cut(idx)
                if cut is None:
                    cutter.cache[key] = False  # as _Cutter.fails: a cut that cannot be made passes
                else:
                    made[key] = cut
            cutter.rounds += 1 if made else 0
            for key, fails in zip(made, pool.map(check, made.values())):
                cutter.cache[key] = fails
