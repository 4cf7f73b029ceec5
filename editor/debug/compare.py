"""Compare two runs on the same inputs, tensor by tensor, and find the first divergence.

A run is a :class:`RunSpec`: a model, a backend and its options (execution providers,
graph optimization level). :func:`compare_runs` runs both sides in the child-process
:class:`~editor.runtime.Runner` with every main-graph tensor requested, maps A's tensors to
B's (the same names for one model, :func:`editor.debug.mapping.map_tensors` for two), and
measures each pair (:func:`editor.debug.metrics.compare_values`). The *first divergence*
is the first tensor in A's topological order that exceeds the tolerance: its inputs still
agreed, so its node is where the numbers start to go wrong.

NOTE: no silent fallback (the verdict, :mod:`editor.debug.verdict`, states its evidence). A
side with no backend named runs on onnxruntime, *pinned*: if onnxruntime cannot run it, there is no verdict (the reference
evaluator is a second implementation, not the truth; ``allow_fallback=True`` lets such a
side fall back to it, and the verdict then says so). Inputs are cast to each side's
declared types (an fp16 model is fed fp16), each cast listed in :attr:`Comparison.notes`.

NOTE: requesting every intermediate makes both runs slower than a plain run (onnxruntime
cannot fuse across a value that must be returned), so "optimizations on vs off" compared
this way is the optimizer's effect on unfused graphs; the graph outputs are compared too,
and ``outputs_ok`` is what the exit code reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from editor.debug.bodies import Inlined, inline_by_running
from editor.debug.mapping import TensorMap, TensorPair, main_tensors, map_tensors, same_model_map
from editor.debug.metrics import Tolerance, compare_values, dequantize
from editor.debug.verdict import Comparison, RunFailed, RunSpec, SideRun, TensorResult
from editor.runtime import Runner, RunResult
from editor.runtime.input_plan import InputPlan, plan_inputs
from editor.runtime.source import ModelSource

__all__ = ["compare_runs", "compare_to_saved", "feeds_for_b", "same_model"]


def _run_all(runner: Runner, spec: RunSpec, names: list[str], feeds: Mapping[str, Any], timeout: float | None,
             allow_fallback: bool = False, side: str = "") -> RunResult:
    """Run one side. With no backend named, onnxruntime is pinned unless ``allow_fallback``
    (module NOTE): a side that cannot run is no verdict, never a silent move."""
    backend = spec.backend or (None if allow_fallback else "ort")
    result = runner.run(spec.source(), feeds, outputs=names, backend=backend, options=spec.options, timeout=timeout)
    if not result.ok:
        hint = "" if spec.backend or allow_fallback else \
            " (--allow-fallback lets it run on the reference evaluator instead, said so in the verdict)"
        raise RunFailed(f"{side + ' ' if side else ''}{spec.label()} could not run: {result.error or result.status}{hint}")
    return result


def _side_run(spec: RunSpec, result: RunResult) -> SideRun:
    return SideRun(spec.backend, result.backend, result.fallback_reasons() if len(result.attempts) > 1 else [],
                   result.detail if result.backend == "ort" else None)


def same_model(a: RunSpec, b: RunSpec) -> bool:
    """Whether both sides run the same model (one object, or one file)."""
    if a.model is b.model:
        return True
    if isinstance(a.model, onnx.ModelProto) or isinstance(b.model, onnx.ModelProto):
        return False
    return Path(a.model).resolve() == Path(b.model).resolve()


def feeds_for_b(proto_a: onnx.ModelProto, proto_b: onnx.ModelProto,
                feeds: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """B's inputs from A's (by name, else by position), cast to B's declared types; the
    notes say what was cast. Raises :class:`RunFailed` for a B input nothing feeds."""
    from editor.debug.mapping import io_pairs
    from editor.runtime.inputs import cast_to_declared, input_specs

    a_of_b = {b: a for a, b in io_pairs(proto_a, proto_b).items() if a in feeds}
    fed: dict[str, Any] = {}
    for spec in input_specs(proto_b):
        source = a_of_b.get(spec.name)
        if source is None:
            raise RunFailed(f"B's input {spec.name!r} has no counterpart among A's inputs "
                            f"({', '.join(feeds) or 'none'}): B cannot be fed the same values")
        fed[spec.name] = feeds[source]
    return cast_to_declared(proto_b, fed, side="B")


def compare_runs(
    a: RunSpec,
    b: RunSpec,
    inputs: Mapping[str, Any] | None = None,
    *,
    tolerance: Tolerance | None = None,
    runner: Runner | None = None,
    seed: int = 0,
    dims: Mapping[str, int] | None = None,
    val_ranges: Mapping[str, tuple[float, float]] | None = None,
    intermediates: bool = True,
    keep_values: bool = False,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    pool: Sequence[Runner] | None = None,
    allow_fallback: bool = False,
) -> Comparison:
    """Run ``a`` and ``b`` on the same inputs and compare them tensor by tensor.

    ``inputs`` missing from the mapping are generated (:func:`editor.runtime.plan_inputs`,
    ``seed``, ``dims``, ``val_ranges``); the ones used are in ``Comparison.inputs`` (what
    they are in ``Comparison.input_plan``), and each side is fed them cast to its declared
    input types. With ``intermediates``, each If a side's run decides is inlined into its
    taken branch (:mod:`editor.debug.bodies`), so values inside bodies are compared too;
    ``intermediates=False`` compares the graph outputs only (onnxruntime's fused graph).
    A side with no backend named runs on onnxruntime only, unless ``allow_fallback``
    (module NOTE). Raises :class:`RunFailed` (exit code 2, no verdict) when a side cannot
    be read, fed or run. ``pool``: two or more runners (remote hosts) run the two sides at
    once; the result is the same as one runner running them in turn.
    """
    tolerance = tolerance or Tolerance()
    say = progress or (lambda _msg: None)
    proto_a = a.proto()
    one_model = same_model(a, b)
    if a.model is b.model and isinstance(a.model, onnx.ModelProto):
        b.__dict__["_source"] = a.source()  # one serialization for both sides
    proto_b = proto_a if one_model else b.proto()
    plan = plan_inputs(proto_a, given=inputs, dims=dims, seed=seed, val_ranges=val_ranges)
    own = runner is None and (pool is None or len(pool) < 2)
    runner = Runner() if own else runner
    setup = _Setup(a, b, proto_a, proto_b, one_model, intermediates, timeout, allow_fallback, say)
    try:
        while True:
            try:
                prepared = setup.prepare(plan, runner or pool[0])  # type: ignore[index]
                ra, rb = prepared.run.both(runner, pool, say)
                break
            except RunFailed as failed:
                better = setup.refit_sizes(plan, failed, runner or pool[0])  # type: ignore[index]
                if better is None:
                    raise
                plan = better
    finally:
        if own and runner is not None:
            runner.close()
    say("comparing")
    return prepared.comparison(ra, rb, tolerance, plan, keep_values)


@dataclass
class _Setup:
    """What a comparison is asked to do, before any input is known."""

    a: RunSpec
    b: RunSpec
    proto_a: onnx.ModelProto
    proto_b: onnx.ModelProto
    one_model: bool
    intermediates: bool
    timeout: float | None
    allow_fallback: bool
    say: Callable[[str], None]

    def _backend(self, spec: RunSpec) -> str | None:
        return spec.backend or (None if self.allow_fallback else "ort")

    def _inline(self, spec: RunSpec, proto: onnx.ModelProto, feeds: Mapping[str, Any], runner: Runner,
                side: str) -> Inlined:
        """``proto`` with the Ifs its run decides inlined (nothing to do without Ifs)."""
        if not self.intermediates or not any(n.op_type == "If" for n in proto.graph.node):
            return Inlined(proto)

        def conditions_of(model: onnx.ModelProto, names: list[str]) -> Mapping[str, Any]:
            self.say(f"running {side} for the conditions of {len(names)} If node(s)")
            result = runner.run(ModelSource.from_any(model), feeds, outputs=names, backend=self._backend(spec),
                                options=spec.options, timeout=self.timeout)
            if not result.ok:
                raise RunFailed(f"{side} {spec.label()} could not run: {result.error or result.status}")
            return {k: r.value for k, r in result.outputs.items()}

        return inline_by_running(proto, conditions_of)

    def refit_sizes(self, plan: InputPlan, failed: RunFailed, runner: Runner) -> InputPlan | None:
        """A side failed at the plan's sizes: other sizes for its guessed dims that A runs
        at (:func:`editor.runtime.input_plan.refit`, each try a run of A's outputs), or None
        (a failure sizes do not explain: the model could not even be loaded, nothing was
        guessed, or no size tried runs)."""
        from editor.runtime.input_plan import refit
        from editor.runtime.inputs import cast_to_declared

        if "cannot create a session" in failed.message or not plan.dims.guessed():
            return None
        self.say("the run failed at the guessed sizes: trying others")

        def error_of(feeds: Mapping[str, Any]) -> str | None:
            result = runner.run(self.a.source(), cast_to_declared(self.proto_a, feeds)[0], backend=self._backend(self.a),
                                options=self.a.options, timeout=self.timeout)
            return None if result.ok else (result.error or result.status)

        return refit(self.proto_a, plan, failed.message, error_of)

    def prepare(self, plan: InputPlan, runner: Runner) -> _Prepared:
        """Feeds per side, the Ifs inlined, the map, and the runs to make."""
        from editor.runtime.inputs import cast_to_declared

        feeds = plan.feeds
        feeds_a, notes = cast_to_declared(self.proto_a, feeds, side="A")
        feeds_b, notes_b = feeds_for_b(self.proto_a, self.proto_b, feeds)
        notes += notes_b
        ia = self._inline(self.a, self.proto_a, feeds_a, runner, "A")
        ib = self._inline(self.b, self.proto_b, feeds_b, runner, "B")
        notes += _inlining_notes(ia, ib)
        run_a = self.a if not ia.changed else RunSpec(ia.model, self.a.backend, self.a.options, self.a.label().rsplit(" [", 1)[0])
        run_b = self.b if not ib.changed else RunSpec(ib.model, self.b.backend, self.b.options, self.b.label().rsplit(" [", 1)[0])
        self.say("mapping tensors")
        if self.one_model:
            tmap = same_model_map(ia.model, _defined(ib.model) if ia.taken != ib.taken else None)
        else:
            tmap = map_tensors(ia.model, ib.model)
        outputs = [o.name for o in self.proto_a.graph.output]
        a_to_b = {p.a: p.b for p in tmap.pairs if p.b is not None}
        if not self.intermediates:
            keep = set(outputs)
            tmap = TensorMap([p for p in tmap.pairs if p.a in keep], tmap.diff)
        inits_b = {t.name: t for t in ib.model.graph.initializer}
        names_a = [p.a for p in tmap.pairs if p.a not in feeds]
        names_b = [n for n in tmap.b_names() if n not in feeds_b]
        extra_b = [d.scale for p in tmap.pairs if p.dequant for d in [p.dequant]] + \
                  [p.dequant.zero_point for p in tmap.pairs if p.dequant and p.dequant.zero_point]
        names_b += [n for n in dict.fromkeys(extra_b) if n not in inits_b and n not in names_b]
        wanted_b = names_b or [o.name for o in self.proto_b.graph.output]
        runs = Runs(run_a, run_b, names_a or outputs, wanted_b, feeds_a, feeds_b, self.timeout, self.allow_fallback)
        return _Prepared(self, feeds, feeds_a, feeds_b, notes, ia, ib.model, tmap, a_to_b, inits_b, outputs, runs)


def _defined(model: onnx.ModelProto) -> set[str]:
    g = model.graph
    return {vi.name for vi in g.input} | {o for n in g.node for o in n.output if o}


def _inlining_notes(ia: Inlined, ib: Inlined) -> list[str]:
    notes = []
    if ia.taken:
        notes.append(f"A: {len(ia.taken)} If node(s) inlined into the branch the run took: their values are compared")
    if ib.taken and ib.taken != ia.taken:
        notes.append(f"B: {len(ib.taken)} If node(s) inlined into the branch the run took")
    for name in sorted(set(ia.taken) & set(ib.taken)):
        if ia.taken[name] != ib.taken[name]:
            notes.append(f"If {name!r}: A took its {ia.taken[name]}, B its {ib.taken[name]}")
    notes += [f"A: {n}" for n in ia.notes] + [f"B: {n}" for n in ib.notes]
    return notes


@dataclass
class _Prepared:
    """One attempt at a comparison: feeds, models as run, the map, the runs."""

    setup: _Setup
    feeds: dict[str, Any]
    feeds_a: dict[str, Any]
    feeds_b: dict[str, Any]
    notes: list[str]
    inlined_a: Inlined
    model_b: onnx.ModelProto
    tmap: TensorMap
    #: every A tensor -> its B counterpart (also with --outputs-only, which compares fewer)
    a_to_b: dict[str, str]
    inits_b: dict[str, onnx.TensorProto]
    outputs: list[str]
    run: Runs

    def comparison(self, ra: RunResult, rb: RunResult, tolerance: Tolerance, plan: InputPlan,
                   keep_values: bool) -> Comparison:
        va = {k: r.value for k, r in ra.outputs.items()}
        va.update(self.feeds_a)
        vb = {k: r.value for k, r in rb.outputs.items()}
        vb.update(self.feeds_b)
        rows = _rows(self.inlined_a.model, self.tmap, va, vb, ra.missing, rb.missing, tolerance, self.inits_b)
        for row in rows:
            if row.node:
                row.scope = self.inlined_a.scope.get(row.node, "")
        first = next((t for t in rows if t.ok is False), None)
        if first is not None:
            first.b_cause = _b_only_producer(first, self.inlined_a.model, self.model_b, self.a_to_b)
        a, b = self.setup.a, self.setup.b
        return Comparison(
            a, b, rows, self.outputs, tolerance, self.feeds, ra.backend, rb.backend, self.tmap,
            values_a=va if keep_values else {}, values_b=vb if keep_values else {},
            run_seconds=(ra.wall_seconds or 0.0, rb.wall_seconds or 0.0),
            side_a=_side_run(a, ra), side_b=_side_run(b, rb), notes=self.notes, input_plan=plan,
        )


def _b_only_producer(row: TensorResult, model_a: onnx.ModelProto, model_b: onnx.ModelProto,
                     a_to_b: Mapping[str, str]) -> str:
    """When ``row``'s node gets, in B, an input from a node A has no counterpart for (an op
    inserted in B, a rewired edge), that node in words; '' when B feeds it as A does."""
    producers_a = {o: n for n in model_a.graph.node for o in n.output if o}
    producers_b = {o: n for n in model_b.graph.node for o in n.output if o}
    node_a, node_b = producers_a.get(row.a), producers_b.get(row.b or "")
    if node_a is None or node_b is None:
        return ""
    for k, (x_a, x_b) in enumerate(zip(node_a.input, node_b.input)):
        mapped = a_to_b.get(x_a)
        if mapped is None or mapped == x_b or not x_b:
            continue
        src = producers_b.get(x_b)
        what = f"node {src.name or src.output[0]!r} ({src.op_type})" if src is not None else f"value {x_b!r}"
        return f"in B, its input {k} {x_b!r} comes from {what}, which has no counterpart in A"
    return ""


@dataclass
class Runs:
    """The two runs of a comparison: what each side computes and is fed."""

    a: RunSpec
    b: RunSpec
    names_a: list[str]
    names_b: list[str]
    feeds_a: Mapping[str, Any]
    feeds_b: Mapping[str, Any]
    timeout: float | None
    allow_fallback: bool

    def both(self, runner: Runner | None, pool: Sequence[Runner] | None,
             say: Callable[[str], None]) -> tuple[RunResult, RunResult]:
        """Run A then B on one runner, or both at once on a pool of two or more."""
        run_a = lambda r: _run_all(r, self.a, self.names_a, self.feeds_a, self.timeout, self.allow_fallback, "A")  # noqa: E731
        run_b = lambda r: _run_all(r, self.b, self.names_b, self.feeds_b, self.timeout, self.allow_fallback, "B")  # noqa: E731
        if pool is not None and len(pool) >= 2:
            from concurrent.futures import ThreadPoolExecutor

            say(f"running A: {self.a.label()} and B: {self.b.label()} at once")
            with ThreadPoolExecutor(2, thread_name_prefix="onnx-studio-compare") as ex:
                fa, fb = ex.submit(run_a, pool[0]), ex.submit(run_b, pool[1])
                return fa.result(), fb.result()
        assert runner is not None
        say(f"running A: {self.a.label()}")
        ra = run_a(runner)
        say(f"running B: {self.b.label()}")
        return ra, run_b(runner)


def _rows(proto_a: onnx.ModelProto, tmap: TensorMap, va: Mapping[str, Any], vb: Mapping[str, Any],
          missing_a: Mapping[str, str], missing_b: Mapping[str, str], tolerance: Tolerance,
          inits_b: Mapping[str, onnx.TensorProto]) -> list[TensorResult]:
    """One :class:`TensorResult` per pair of ``tmap``, in A's topological order."""
    tensors = main_tensors(proto_a)
    producers = dict(tensors)
    order = {id(n): i for i, (_, n) in enumerate(tensors) if n is not None}
    rows: list[TensorResult] = []
    for p in tmap.pairs:
        node = producers.get(p.a)
        row = TensorResult(p.a, p.b, node.name if node is not None else None, node.op_type if node is not None else None,
                           p.how, order=order.get(id(node), -1) if node is not None else -1)
        x = va.get(p.a)
        if p.b is None:
            row.note = "no counterpart in B"
        elif p.a not in va:
            row.note = "A did not produce it: " + missing_a.get(p.a, "not returned")
        elif p.b not in vb:
            row.note = "B did not produce it: " + missing_b.get(p.b, "not returned")
        else:
            y = vb[p.b]
            if p.dequant is not None and isinstance(y, np.ndarray) and y.dtype.kind in "iu":
                scale = _value_of(p.dequant.scale, vb, inits_b)
                if scale is None:
                    row.note = f"B is quantized and its scale {p.dequant.scale!r} could not be read: raw integers"
                else:
                    y = dequantize(y, scale, _value_of(p.dequant.zero_point, vb, inits_b), p.dequant.axis,
                                   p.dequant.block_size)
                    row.note = f"B dequantized with {p.dequant.scale!r}"
            if isinstance(x, np.ndarray):
                row.shape_a = list(x.shape)
            if isinstance(y, np.ndarray):
                row.shape_b = list(y.shape)
            atol, rtol = tolerance.for_tensor(p.a)
            row.error = compare_values(x, y, atol, rtol)
        rows.append(row)
    return rows


def compare_to_saved(
    a: RunSpec,
    saved: Mapping[str, Any] | str | Path,
    inputs: Mapping[str, Any] | None = None,
    *,
    tolerance: Tolerance | None = None,
    runner: Runner | None = None,
    seed: int = 0,
    dims: Mapping[str, int] | None = None,
    val_ranges: Mapping[str, tuple[float, float]] | None = None,
    keep_values: bool = False,
    timeout: float | None = None,
    allow_fallback: bool = False,
) -> Comparison:
    """Run ``a`` and compare it with values saved earlier (``.npz``: tensor name -> array,
    as ``compare --save`` and ``run --save`` write them; the saved run's inputs should be
    given as ``inputs`` for the comparison to mean anything). Tensors of A the file does
    not name are not compared; graph outputs it does not name leave no verdict."""
    from editor.runtime.inputs import cast_to_declared, load_inputs

    tolerance = tolerance or Tolerance()
    label = RunSpec(str(saved) if isinstance(saved, (str, Path)) else "saved values", "saved")
    values_b = dict(load_inputs(saved)) if isinstance(saved, (str, Path)) else dict(saved)
    proto_a = a.proto()
    outputs = [o.name for o in proto_a.graph.output]
    plan = plan_inputs(proto_a, given=inputs, dims=dims, seed=seed, val_ranges=val_ranges)
    feeds = plan.feeds
    feeds_a, notes = cast_to_declared(proto_a, feeds, side="A")
    known = [name for name, _ in main_tensors(proto_a)]
    pairs = [TensorPair(n, n, "name") for n in known if n in values_b or n in outputs]
    if not any(p.a in values_b for p in pairs):
        raise RunFailed(f"{label.label()}: no saved value is named like a tensor of the model")
    wanted = [p.a for p in pairs if p.a not in feeds]
    own = runner is None
    runner = runner or Runner()
    try:
        ra = _run_all(runner, a, wanted or outputs, feeds_a, timeout, allow_fallback, "A")
    finally:
        if own:
            runner.close()
    va = {k: r.value for k, r in ra.outputs.items()}
    va.update(feeds_a)
    tmap = TensorMap(pairs)
    missing_b = {n: "not in the saved file" for n in outputs if n not in values_b}
    rows = _rows(proto_a, tmap, va, values_b, ra.missing, missing_b, tolerance, {})
    return Comparison(a, label, rows, outputs, tolerance, feeds, ra.backend, "saved", tmap,
                      values_a=va if keep_values else {}, values_b=values_b if keep_values else {},
                      run_seconds=(ra.wall_seconds or 0.0, 0.0), side_a=_side_run(a, ra),
                      side_b=SideRun("saved", "saved"), notes=notes, input_plan=plan)


def _value_of(name: str | None, values: Mapping[str, Any], inits: Mapping[str, onnx.TensorProto]) -> np.ndarray | None:
    """A value of B by name: from its run, else its initializers (None when neither has it)."""
    from onnx import numpy_helper

    if name is None:
        return None
    if name in values:
        return np.asarray(values[name])
    if name in inits:
        return numpy_helper.to_array(inits[name])
    return None
