"""Compare two runs on the same inputs, tensor by tensor, and find the first divergence.

A run is a :class:`RunSpec`: a model, a backend and its options (execution providers,
graph optimization level). :func:`compare_runs` runs both sides in the child-process
:class:`~editor.runtime.Runner` with every main-graph tensor requested, maps A's tensors to
B's (the same names for one model, :func:`editor.debug.mapping.map_tensors` for two), and
measures each pair (:func:`editor.debug.metrics.compare_values`). The *first divergence*
is the first tensor in A's topological order that exceeds the tolerance: its inputs still
agreed, so its node is where the numbers start to go wrong.

NOTE: a verdict states its evidence. :attr:`Comparison.verdict` is ``agree`` (exit 0),
``differ`` (1) or ``no verdict`` (2), and only ``agree`` when every graph output was
compared, is within tolerance and is finite on both sides: an output that is NaN on both
sides is a *difference* (a finding), never agreement. A side with no backend named runs on
onnxruntime, *pinned*: if onnxruntime cannot run it, there is no verdict (the reference
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from editor.debug.bodies import Inlined, inline_by_running
from editor.debug.mapping import TensorMap, TensorPair, main_tensors, map_tensors, same_model_map
from editor.debug.metrics import TensorError, Tolerance, compare_values, dequantize
from editor.errors import RuntimeBackendError
from editor.runtime import Runner, RunOptions, RunResult
from editor.runtime.input_plan import InputPlan, plan_inputs
from editor.runtime.source import ModelSource

__all__ = ["EXIT_CODES", "Comparison", "RunFailed", "RunSpec", "SideRun", "TensorResult", "compare_runs", "compare_to_saved",
           "feeds_for_b", "same_model"]


class RunFailed(RuntimeBackendError):
    """A side of a comparison could not be run (``compare`` exits 2: no verdict)."""

    exit_code = 2


@dataclass(frozen=True)
class RunSpec:
    """One side of a comparison: a model (path or ModelProto), a backend (None: onnxruntime,
    falling back to the reference evaluator) and run options."""

    model: str | Path | onnx.ModelProto
    backend: str | None = None
    options: RunOptions = field(default_factory=RunOptions)
    #: what :meth:`label` calls the model (default: its file name, or "model")
    name: str = ""

    def source(self) -> ModelSource:
        """The model to hand the Runner; a ModelProto is serialized (and hashed) once per
        RunSpec, not once per run: that costs as much as a run on a 50 MB model."""
        cached = self.__dict__.get("_source")
        if cached is None:
            cached = ModelSource.from_any(self.model if isinstance(self.model, onnx.ModelProto) else str(self.model))
            self.__dict__["_source"] = cached
        return cached

    def proto(self) -> onnx.ModelProto:
        """The ModelProto (parsed once per RunSpec: 40 ms for a 50 MB file)."""
        if isinstance(self.model, onnx.ModelProto):
            return self.model
        cached = self.__dict__.get("_proto")
        if cached is None:
            cached = self.source().load_proto()
            self.__dict__["_proto"] = cached
        return cached

    def label(self) -> str:
        model = self.name or (Path(self.model).name if not isinstance(self.model, onnx.ModelProto) else "model")
        opts = ""
        if self.options.providers:
            opts += " " + ",".join(self.options.providers)
        if self.options.graph_optimization_level != "all":
            opts += f" opt={self.options.graph_optimization_level}"
        return f"{model} [{self.backend or 'ort'}{opts}]"


@dataclass
class TensorResult:
    """One row of the comparison: a tensor of A, its counterpart in B and their errors."""

    a: str
    b: str | None
    node: str | None  # name of the node of A that produces ``a`` (None for graph inputs)
    op_type: str | None
    how: str
    error: TensorError | None = None
    shape_a: list[int] | None = None
    shape_b: list[int] | None = None
    note: str = ""
    #: position of the producing node in A's topological order (-1: graph input)
    order: int = -1
    #: the body the node comes from ("If '/model/If_1' then_branch"), '' for the main graph
    scope: str = ""

    @property
    def ok(self) -> bool | None:
        """True within tolerance, False beyond it, None when not compared (NaN at the same
        place on both sides is within tolerance here: :attr:`finding` says it is there)."""
        return None if self.error is None else self.error.ok

    @property
    def finding(self) -> str:
        """NaN / Inf on either side, in words ("A finite, B all NaN"); '' when none."""
        return self.error.nonfinite_text() if self.error is not None else ""

    @property
    def status(self) -> str:
        """'ok', 'differ', 'nan', 'inf' (within tolerance, but a side holds one) or
        'not compared'; a row that differs *and* holds NaN is 'nan' (the words say more)."""
        e = self.error
        if e is None:
            return "not compared"
        if e.nan_a or e.nan_b:
            return "nan"
        if e.inf_a or e.inf_b:
            return "inf"
        return "ok" if e.ok else "differ"

    def to_dict(self) -> dict[str, Any]:
        e = self.error.to_dict() if self.error is not None else {}
        return {
            "a": self.a, "b": self.b, "node": self.node, "op_type": self.op_type, "mapped_by": self.how or None,
            "max_abs": e.get("max_abs"), "max_rel": e.get("max_rel"), "mean_abs": e.get("mean_abs"),
            "cosine": e.get("cosine"), "nan_a": e.get("nan_a", 0), "nan_b": e.get("nan_b", 0),
            "inf_a": e.get("inf_a", 0), "inf_b": e.get("inf_b", 0), "mismatched": e.get("mismatched"),
            "scope": self.scope or None,
            "shape_a": self.shape_a, "shape_b": self.shape_b, "ok": self.ok, "status": self.status,
            "nonfinite": self.finding or None,
            "note": (self.note + ("; " if self.note and e.get("note") else "") + e.get("note", "")) or None,
        }


#: exit code of each verdict (``compare``, ``reduce`` and their ``--json``)
EXIT_CODES = {"agree": 0, "differ": 1, "no verdict": 2}


@dataclass
class SideRun:
    """What one side really ran on: the backend asked for (None: onnxruntime, pinned unless
    fallback was allowed), the one that ran, and why others were passed over."""

    requested: str | None
    backend: str | None
    #: "ort: <why it could not run>" for each backend passed over (a fallback happened)
    passed_over: list[str] = field(default_factory=list)
    detail: str | None = None

    @property
    def fell_back(self) -> bool:
        return bool(self.passed_over)

    def text(self) -> str:
        """'onnxruntime (CPUExecutionProvider)', 'the ONNX reference evaluator (fell back: ...)'."""
        name = _BACKEND_WORDS.get(self.backend or "", self.backend or "nothing")
        if self.backend == "ort" and self.detail:
            name += f" ({self.detail})"
        if self.fell_back:
            name += " -- FELL BACK, passed over " + "; ".join(self.passed_over)
        return name

    def to_json(self) -> dict[str, Any]:
        return {"requested": self.requested or "ort", "backend": self.backend, "detail": self.detail,
                "fell_back": self.fell_back, "passed_over": self.passed_over}


_BACKEND_WORDS = {"ort": "onnxruntime", "reference": "the ONNX reference evaluator (a second implementation, not ground truth)",
                  "saved": "saved values"}


@dataclass
class Comparison:
    """The result of :func:`compare_runs` (``to_json`` is the ``compare --json`` contract)."""

    a: RunSpec
    b: RunSpec
    tensors: list[TensorResult]
    outputs: list[str]
    tolerance: Tolerance
    inputs: dict[str, Any]
    backend_a: str | None = None
    backend_b: str | None = None
    mapping: TensorMap | None = None
    #: the values of both runs, kept when asked (the window shows them side by side)
    values_a: dict[str, Any] = field(default_factory=dict)
    values_b: dict[str, Any] = field(default_factory=dict)
    run_seconds: tuple[float, float] = (0.0, 0.0)
    side_a: SideRun | None = None
    side_b: SideRun | None = None
    #: what was done to make the runs comparable (inputs cast per side ...), one line each
    notes: list[str] = field(default_factory=list)
    #: the inputs and what they are (shapes, ranges, guessed dims): part of the evidence
    input_plan: InputPlan | None = None

    @property
    def first_divergence(self) -> TensorResult | None:
        return next((t for t in self.tensors if t.ok is False), None)

    @property
    def first_nonfinite(self) -> TensorResult | None:
        """The first tensor, in A's order, that holds NaN or Inf on either side."""
        return next((t for t in self.tensors if t.finding), None)

    def output_rows(self) -> list[TensorResult]:
        outs = set(self.outputs)
        return [t for t in self.tensors if t.a in outs]

    @property
    def verdict(self) -> str:
        """'agree', 'differ' or 'no verdict' (module NOTE)."""
        rows = self.output_rows()
        if any(t.b is not None and t.error is None for t in rows):
            return "no verdict"  # a side did not give an output: nothing was checked
        ok = all(t.error is not None and t.error.verdict_ok(self.tolerance.infinities_equal) for t in rows)
        return "agree" if ok else "differ"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def outputs_ok(self) -> bool:
        return self.verdict == "agree"

    def reason(self) -> str:
        """Why the verdict is what it is, in one line."""
        rows = self.output_rows()
        verdict = self.verdict
        if verdict == "agree":
            inf = " (the same Inf in the same places counted equal)" if any(t.finding for t in rows) else ""
            return (f"{len(rows)} output(s) within atol={self.tolerance.atol:g} rtol={self.tolerance.rtol:g}, "
                    f"finite on both sides{inf}")
        for t in rows:
            if t.b is None:
                return f"output {t.a!r} has no counterpart in B"
            if t.error is None:
                return f"output {t.a!r} was not compared: {t.note}"
        for t in rows:
            if t.error is not None and not t.error.verdict_ok(self.tolerance.infinities_equal):
                if t.finding:
                    return f"output {t.a!r} holds NaN/Inf ({t.finding}): a finding, not agreement"
                return f"output {t.a!r} differs: max abs {_num(t.error.max_abs)}, cosine {_num(t.error.cosine)}"
        return ""  # pragma: no cover - a differ verdict always has a row

    def counts(self) -> dict[str, int]:
        return {
            "tensors": len(self.tensors),
            "compared": sum(1 for t in self.tensors if t.ok is not None),
            "differ": sum(1 for t in self.tensors if t.ok is False),
            "nonfinite": sum(1 for t in self.tensors if t.finding),
            "unmapped": sum(1 for t in self.tensors if t.b is None),
        }

    def to_json(self) -> dict[str, Any]:
        fd, fn = self.first_divergence, self.first_nonfinite
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "reason": self.reason(),
            "outputs_ok": self.outputs_ok,
            "first_divergence": None if fd is None else {"node": fd.node, "tensor": fd.a, "b": fd.b, "op_type": fd.op_type,
                                                          "scope": fd.scope or None,
                                                          "max_abs": fd.error.max_abs if fd.error else None,
                                                          "nonfinite": fd.finding or None},
            "first_nonfinite": None if fn is None else {"node": fn.node, "tensor": fn.a, "b": fn.b,
                                                         "op_type": fn.op_type, "nonfinite": fn.finding},
            "a": {"run": self.a.label(), "backend": self.backend_a, **(self.side_a.to_json() if self.side_a else {})},
            "b": {"run": self.b.label(), "backend": self.backend_b, **(self.side_b.to_json() if self.side_b else {})},
            "atol": self.tolerance.atol,
            "rtol": self.tolerance.rtol,
            "infinities_equal": self.tolerance.infinities_equal,
            "notes": self.notes,
            "inputs": self.input_plan.to_json() if self.input_plan is not None else None,
            "counts": self.counts(),
            "rewrites": (self.mapping.diff.rewrite_counts() if self.mapping and self.mapping.diff else {}),
            "tensors": [t.to_dict() for t in self.tensors],
        }

    def summary(self) -> list[str]:
        """The verdict with its evidence, one line each: what each side ran on, the notes,
        the first divergence and the first NaN/Inf, then the verdict (the CLI prints these,
        the window shows them)."""
        lines = [f"A: {self.a.label()} ran on {self.side_a.text() if self.side_a else self.backend_a}",
                 f"B: {self.b.label()} ran on {self.side_b.text() if self.side_b else self.backend_b}"]
        if self.input_plan is not None:
            lines += self.input_plan.lines()
        lines += [f"note: {n}" for n in self.notes]
        fd, fn = self.first_divergence, self.first_nonfinite
        if fd is None:
            lines.append("first divergence: none")
        else:
            what = f"{fd.finding} from here" if fd.finding else \
                f"max abs {_num(fd.error.max_abs if fd.error else None)}, cosine {_num(fd.error.cosine if fd.error else None)}"
            lines.append(f"first divergence: {_where(fd)}, tensor {fd.a!r}: {what}")
        if fn is not None and fn is not fd:
            lines.append(f"first NaN/Inf: {_where(fn)}, tensor {fn.a!r}: {fn.finding}")
        words = {"agree": "outputs agree", "differ": "outputs DIFFER", "no verdict": "NO VERDICT"}[self.verdict]
        lines.append(f"{words}: {self.reason()} (exit {self.exit_code})")
        return lines


def _where(t: TensorResult) -> str:
    if t.node is None:
        return "graph input"
    return f"node {t.node!r} ({t.op_type})" + (f" inside {t.scope}" if t.scope else "")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _badness(t: TensorResult) -> float:
    if t.error is None:
        return -1.0
    if not t.error.ok and t.error.max_rel is None:
        return float("inf")
    return float(t.error.max_rel or 0.0) + (1e9 if not t.error.ok else 0.0)


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
                probe = Runs(a, b, [], [], {}, {}, timeout, allow_fallback)
                better = _refit_sizes(proto_a, plan, failed, probe, runner or pool[0], say)  # type: ignore[index]
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
        return _Prepared(self, feeds, feeds_a, feeds_b, notes, ia, tmap, inits_b, outputs, runs)


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
    tmap: TensorMap
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
        a, b = self.setup.a, self.setup.b
        return Comparison(
            a, b, rows, self.outputs, tolerance, self.feeds, ra.backend, rb.backend, self.tmap,
            values_a=va if keep_values else {}, values_b=vb if keep_values else {},
            run_seconds=(ra.wall_seconds or 0.0, rb.wall_seconds or 0.0),
            side_a=_side_run(a, ra), side_b=_side_run(b, rb), notes=self.notes, input_plan=plan,
        )


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

    def probe_a(self, runner: Runner, feeds: Mapping[str, Any]) -> str | None:
        """Run A's graph outputs only on ``feeds``: its error, or None when it runs."""
        backend = self.a.backend or (None if self.allow_fallback else "ort")
        result = runner.run(self.a.source(), feeds, backend=backend, options=self.a.options, timeout=self.timeout)
        return None if result.ok else (result.error or result.status)


def _refit_sizes(proto_a: onnx.ModelProto, plan: InputPlan, failed: RunFailed, run: Runs, runner: Runner,
                 say: Callable[[str], None]) -> InputPlan | None:
    """A side failed at the plan's sizes: other sizes for its guessed dims that A runs at
    (:func:`editor.runtime.input_plan.refit`), or None (a failure sizes do not explain:
    the model could not even be loaded, nothing was guessed, or no size tried runs)."""
    from editor.runtime.input_plan import refit
    from editor.runtime.inputs import cast_to_declared

    if "cannot create a session" in failed.message or not plan.dims.guessed():
        return None
    say("the run failed at the guessed sizes: trying others")
    return refit(proto_a, plan, failed.message, lambda feeds: run.probe_a(runner, cast_to_declared(proto_a, feeds)[0]))


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
