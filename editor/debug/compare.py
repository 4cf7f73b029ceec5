"""Compare two runs on the same inputs, tensor by tensor, and find the first divergence.

A run is a :class:`RunSpec`: a model, a backend and its options (execution providers,
graph optimization level). :func:`compare_runs` runs both sides in the child-process
:class:`~editor.runtime.Runner` with every main-graph tensor requested, maps A's tensors to
B's (the same names for one model, :func:`editor.debug.mapping.map_tensors` for two), and
measures each pair (:func:`editor.debug.metrics.compare_values`). The *first divergence*
is the first tensor in A's topological order that exceeds the tolerance: its inputs still
agreed, so its node is where the numbers start to go wrong.

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

from editor.debug.mapping import TensorMap, TensorPair, main_tensors, map_tensors, same_model_map
from editor.debug.metrics import TensorError, Tolerance, compare_values, dequantize
from editor.errors import RuntimeBackendError
from editor.runtime import Runner, RunOptions, RunResult
from editor.runtime.inputs import input_specs, make_inputs
from editor.runtime.source import ModelSource

__all__ = ["Comparison", "RunFailed", "RunSpec", "TensorResult", "compare_runs", "compare_to_saved"]


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
        model = Path(self.model).name if not isinstance(self.model, onnx.ModelProto) else "model"
        opts = ""
        if self.options.providers:
            opts += " " + ",".join(self.options.providers)
        if self.options.graph_optimization_level != "all":
            opts += f" opt={self.options.graph_optimization_level}"
        return f"{model} [{self.backend or 'auto'}{opts}]"


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

    @property
    def ok(self) -> bool | None:
        """True within tolerance, False beyond it, None when not compared."""
        return None if self.error is None else self.error.ok

    def to_dict(self) -> dict[str, Any]:
        e = self.error.to_dict() if self.error is not None else {}
        return {
            "a": self.a, "b": self.b, "node": self.node, "op_type": self.op_type, "mapped_by": self.how or None,
            "max_abs": e.get("max_abs"), "max_rel": e.get("max_rel"), "mean_abs": e.get("mean_abs"),
            "cosine": e.get("cosine"), "nan_a": e.get("nan_a", 0), "nan_b": e.get("nan_b", 0),
            "inf_a": e.get("inf_a", 0), "inf_b": e.get("inf_b", 0), "mismatched": e.get("mismatched"),
            "shape_a": self.shape_a, "shape_b": self.shape_b, "ok": self.ok,
            "note": (self.note + ("; " if self.note and e.get("note") else "") + e.get("note", "")) or None,
        }


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

    @property
    def first_divergence(self) -> TensorResult | None:
        return next((t for t in self.tensors if t.ok is False), None)

    @property
    def outputs_ok(self) -> bool:
        outs = set(self.outputs)
        return all(t.ok is not False and not (t.ok is None and t.a in outs) for t in self.tensors if t.a in outs)

    def by_node(self) -> dict[str, TensorResult]:
        """Node name of A -> its worst tensor (the heat map colours nodes)."""
        out: dict[str, TensorResult] = {}
        for t in self.tensors:
            if t.node is None:
                continue
            cur = out.get(t.node)
            if cur is None or _badness(t) > _badness(cur):
                out[t.node] = t
        return out

    def counts(self) -> dict[str, int]:
        return {
            "tensors": len(self.tensors),
            "compared": sum(1 for t in self.tensors if t.ok is not None),
            "differ": sum(1 for t in self.tensors if t.ok is False),
            "unmapped": sum(1 for t in self.tensors if t.b is None),
        }

    def to_json(self) -> dict[str, Any]:
        fd = self.first_divergence
        return {
            "outputs_ok": self.outputs_ok,
            "first_divergence": None if fd is None else {"node": fd.node, "tensor": fd.a, "b": fd.b, "op_type": fd.op_type,
                                                          "max_abs": fd.error.max_abs if fd.error else None},
            "a": {"run": self.a.label(), "backend": self.backend_a},
            "b": {"run": self.b.label(), "backend": self.backend_b},
            "atol": self.tolerance.atol,
            "rtol": self.tolerance.rtol,
            "counts": self.counts(),
            "rewrites": (self.mapping.diff.rewrite_counts() if self.mapping and self.mapping.diff else {}),
            "tensors": [t.to_dict() for t in self.tensors],
        }


def _badness(t: TensorResult) -> float:
    if t.error is None:
        return -1.0
    if not t.error.ok and t.error.max_rel is None:
        return float("inf")
    return float(t.error.max_rel or 0.0) + (1e9 if not t.error.ok else 0.0)


def _run_all(runner: Runner, spec: RunSpec, names: list[str], feeds: Mapping[str, Any], timeout: float | None) -> RunResult:
    result = runner.run(spec.source(), feeds, outputs=names, backend=spec.backend, options=spec.options, timeout=timeout)
    if not result.ok:
        raise RunFailed(f"{spec.label()}: {result.error or result.status}")
    return result


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
) -> Comparison:
    """Run ``a`` and ``b`` on the same inputs and compare them tensor by tensor.

    ``inputs`` missing from the mapping are generated (:func:`editor.runtime.make_inputs`,
    ``seed``, ``dims``, ``val_ranges``); the ones used are in ``Comparison.inputs``.
    ``intermediates=False`` compares the graph outputs only. Raises
    :class:`RuntimeBackendError` (exit code 2) when a side cannot be read or run.
    ``pool``: two or more runners (remote hosts) run the two sides at once; the result is
    the same as one runner running them in turn.
    """
    tolerance = tolerance or Tolerance()
    say = progress or (lambda _msg: None)
    proto_a = a.proto()
    same_model = a.model is b.model or (
        not isinstance(a.model, onnx.ModelProto) and not isinstance(b.model, onnx.ModelProto)
        and Path(a.model).resolve() == Path(b.model).resolve())
    if a.model is b.model and isinstance(a.model, onnx.ModelProto):
        b.__dict__["_source"] = a.source()  # one serialization for both sides
    proto_b = proto_a if same_model else b.proto()
    say("mapping tensors")
    tmap = same_model_map(proto_a) if same_model else map_tensors(proto_a, proto_b)
    outputs = [o.name for o in proto_a.graph.output]
    if not intermediates:
        keep = set(outputs)
        tmap = TensorMap([p for p in tmap.pairs if p.a in keep], tmap.diff)
    given = dict(inputs or {})
    if all(s.name in given for s in input_specs(proto_a)):
        feeds = given
    else:
        generated = make_inputs(proto_a, "random", dims=dims, seed=seed, val_ranges=val_ranges)
        feeds = {**generated, **given}
    feeds_b = {}
    b_inputs = {vi.name for vi in proto_b.graph.input}
    for p in tmap.pairs:
        if p.a in feeds and p.b in b_inputs:
            feeds_b[p.b] = feeds[p.a]
    input_names_a = set(feeds)
    names_a = [p.a for p in tmap.pairs if p.a not in input_names_a]
    names_b = [n for n in tmap.b_names() if n not in b_inputs]
    extra_b = [d.scale for p in tmap.pairs if p.dequant for d in [p.dequant]] + \
              [p.dequant.zero_point for p in tmap.pairs if p.dequant and p.dequant.zero_point]
    inits_b = {t.name: t for t in proto_b.graph.initializer}
    names_b += [n for n in dict.fromkeys(extra_b) if n not in inits_b and n not in names_b]
    wanted_b = names_b or [o.name for o in proto_b.graph.output]
    if pool is not None and len(pool) >= 2:
        from concurrent.futures import ThreadPoolExecutor

        say(f"running A: {a.label()} and B: {b.label()} at once")
        with ThreadPoolExecutor(2, thread_name_prefix="onnx-studio-compare") as ex:
            fa = ex.submit(_run_all, pool[0], a, names_a or outputs, feeds, timeout)
            fb = ex.submit(_run_all, pool[1], b, wanted_b, feeds_b, timeout)
            ra, rb = fa.result(), fb.result()
        return _comparison(a, b, proto_a, tmap, outputs, tolerance, feeds, feeds_b, inits_b, ra, rb, keep_values, say)
    own = runner is None
    runner = runner or Runner()
    try:
        say(f"running A: {a.label()}")
        ra = _run_all(runner, a, names_a or outputs, feeds, timeout)
        say(f"running B: {b.label()}")
        rb = _run_all(runner, b, wanted_b, feeds_b, timeout)
    finally:
        if own:
            runner.close()
    return _comparison(a, b, proto_a, tmap, outputs, tolerance, feeds, feeds_b, inits_b, ra, rb, keep_values, say)


def _comparison(a: RunSpec, b: RunSpec, proto_a: onnx.ModelProto, tmap: TensorMap, outputs: list[str],
                tolerance: Tolerance, feeds: dict[str, Any], feeds_b: dict[str, Any],
                inits_b: Mapping[str, onnx.TensorProto], ra: RunResult, rb: RunResult, keep_values: bool,
                say: Callable[[str], None]) -> Comparison:
    """The comparison of two finished runs (however they were run)."""
    say("comparing")
    va = {k: r.value for k, r in ra.outputs.items()}
    va.update(feeds)
    vb = {k: r.value for k, r in rb.outputs.items()}
    vb.update(feeds_b)
    rows = _rows(proto_a, tmap, va, vb, ra.missing, rb.missing, tolerance, inits_b)
    return Comparison(
        a, b, rows, outputs, tolerance, feeds, ra.backend, rb.backend, tmap,
        values_a=va if keep_values else {}, values_b=vb if keep_values else {},
        run_seconds=(ra.wall_seconds or 0.0, rb.wall_seconds or 0.0),
    )


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
            if p.dequant is not None and isinstance(y, np.ndarray):
                y = _dequantized(y, p.dequant, vb, inits_b)
                row.note = "B dequantized"
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
) -> Comparison:
    """Run ``a`` and compare it with values saved earlier (``.npz``: tensor name -> array,
    as ``compare --save`` and ``run --save`` write them; the saved run's inputs should be
    given as ``inputs`` for the comparison to mean anything). Tensors of A the file does
    not name are not compared; graph outputs it does not name count as not comparable."""
    from editor.runtime.inputs import load_inputs

    tolerance = tolerance or Tolerance()
    label = RunSpec(str(saved) if isinstance(saved, (str, Path)) else "saved values", "saved")
    values_b = dict(load_inputs(saved)) if isinstance(saved, (str, Path)) else dict(saved)
    proto_a = a.proto()
    outputs = [o.name for o in proto_a.graph.output]
    given = dict(inputs or {})
    generated = {} if all(s.name in given for s in input_specs(proto_a)) else \
        make_inputs(proto_a, "random", dims=dims, seed=seed, val_ranges=val_ranges)
    feeds = {**generated, **given}
    known = [name for name, _ in main_tensors(proto_a)]
    pairs = [TensorPair(n, n, "name") for n in known if n in values_b or n in outputs]
    if not any(p.a in values_b for p in pairs):
        raise RunFailed(f"{label.label()}: no saved value is named like a tensor of the model")
    wanted = [p.a for p in pairs if p.a not in feeds]
    own = runner is None
    runner = runner or Runner()
    try:
        ra = _run_all(runner, a, wanted or outputs, feeds, timeout)
    finally:
        if own:
            runner.close()
    va = {k: r.value for k, r in ra.outputs.items()}
    va.update(feeds)
    tmap = TensorMap(pairs)
    missing_b = {n: "not in the saved file" for n in outputs if n not in values_b}
    rows = _rows(proto_a, tmap, va, values_b, ra.missing, missing_b, tolerance, {})
    return Comparison(a, label, rows, outputs, tolerance, feeds, ra.backend, "saved", tmap,
                      values_a=va if keep_values else {}, values_b=values_b if keep_values else {},
                      run_seconds=(ra.wall_seconds or 0.0, 0.0))


def _dequantized(y: np.ndarray, dq: Any, values: Mapping[str, Any], inits: Mapping[str, onnx.TensorProto]) -> np.ndarray:
    from onnx import numpy_helper

    def get(name: str | None) -> np.ndarray | None:
        if name is None:
            return None
        if name in values:
            return np.asarray(values[name])
        if name in inits:
            return numpy_helper.to_array(inits[name])
        return None

    scale = get(dq.scale)
    if scale is None or y.dtype.kind not in "iu":
        return y
    return dequantize(y, scale, get(dq.zero_point), dq.axis)
