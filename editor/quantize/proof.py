"""The proof a quantization owes the user, made on the spot: the result passes onnx's full
checker, loads and runs in onnxruntime on the CPU, and each output's error against the float
model on held-back inputs, with the size and the share of MACs now in integers.

Per output, over every held-back set: the largest absolute error, that error relative to
the float output's range (max - min: scale-free, so one tolerance reads the same for
logits, boxes and probabilities) and the smallest cosine similarity. The numbers come from
the compare engine's metrics (:func:`editor.debug.compare_values`); NaN or Inf on either
side is a finding, never agreement.

:class:`Reference` runs the float model once per held-back set and keeps its outputs, so
every candidate of a search (``--auto``) costs one run of the candidate per set. Runs go
through the child-process :class:`~editor.runtime.Runner`, pinned to onnxruntime's CPU
execution provider: a kernel that crashes on a quantized model cannot take the caller down.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from editor.errors import RuntimeBackendError
from editor.quantize.classify import MacShare
from editor.quantize.engine import Quantized
from editor.runtime import Runner, RunOptions
from editor.runtime.source import ModelSource

__all__ = ["METRICS", "OutputAccuracy", "Proof", "Reference", "checker_refusal", "make_proof"]

#: tolerance metrics: what ``--auto TOL`` bounds
METRICS = ("cosine", "range", "abs")
CPU = RunOptions(providers=("CPUExecutionProvider",))


@dataclass
class OutputAccuracy:
    """One output's error against the float model, worst over the held-back sets."""

    name: str
    max_abs: float = 0.0
    #: max_abs / (max - min) of the float output
    rel_range: float = 0.0
    cosine: float | None = 1.0
    #: NaN / Inf in words ("A finite, B 3 of 1000 NaN"); '' when both sides are finite
    nonfinite: str = ""

    def error(self, metric: str) -> float:
        """The error ``metric`` measures (inf for NaN/Inf findings)."""
        if self.nonfinite:
            return math.inf
        if metric == "abs":
            return self.max_abs
        if metric == "cosine":
            return 1.0 - (self.cosine if self.cosine is not None else 0.0)
        return self.rel_range

    def text(self) -> str:
        cos = "-" if self.cosine is None else f"{self.cosine:.5f}"
        extra = f"; NaN/Inf: {self.nonfinite}" if self.nonfinite else ""
        return f"{self.name}: max abs {self.max_abs:.4g}, relative to range {self.rel_range:.3g}, cosine {cos}{extra}"

    def to_json(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else x

        return {"name": self.name, "max_abs": num(self.max_abs), "rel_range": num(self.rel_range),
                "cosine": num(self.cosine), "nonfinite": self.nonfinite or None}


def _merge(acc: OutputAccuracy, ref: Any, got: Any) -> None:
    from editor.debug.metrics import compare_values

    if not isinstance(ref, np.ndarray) or not isinstance(got, np.ndarray):
        return
    err = compare_values(ref, got, 0.0, 0.0)
    if err.nonfinite_text() and not acc.nonfinite:
        acc.nonfinite = err.nonfinite_text()
    max_abs = err.max_abs if err.max_abs is not None else math.inf
    finite = ref[np.isfinite(ref)] if ref.dtype.kind == "f" else ref
    span = float(finite.max()) - float(finite.min()) if finite.size else 0.0
    rel = max_abs / span if span > 0 else (0.0 if max_abs == 0 else math.inf)
    acc.max_abs = max(acc.max_abs, max_abs)
    acc.rel_range = max(acc.rel_range, rel)
    if err.cosine is not None:  # None: a side is all zeros, where a cosine means nothing
        acc.cosine = err.cosine if acc.cosine is None else min(acc.cosine, err.cosine)


def _run(runner: Runner, source: ModelSource | onnx.ModelProto, model: onnx.ModelProto,
         feeds: Mapping[str, Any], timeout: float | None) -> tuple[dict[str, Any], str]:
    from editor.runtime.inputs import cast_to_declared

    result = runner.run(source, cast_to_declared(model, feeds)[0], backend="ort", options=CPU, timeout=timeout)
    if not result.ok:
        raise RuntimeBackendError(result.error or f"the run {result.status}")
    return {k: r.value for k, r in result.outputs.items()}, result.detail or "CPUExecutionProvider"


class Reference:
    """The float model's outputs on the held-back sets, computed once (module docstring)."""

    def __init__(self, model: onnx.ModelProto, held_back: Sequence[Mapping[str, Any]], runner: Runner, *,
                 source: str | None = None, timeout: float | None = None) -> None:
        self.model = model
        self.held_back = list(held_back)
        self.runner = runner
        self.timeout = timeout
        self._source = source
        self._values: list[dict[str, Any]] | None = None
        self._early: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._abandoned = False
        self.detail = ""

    def start(self) -> None:
        """Begin the float runs now, in a thread: they need nothing but the float model and
        the worker, so they go on (in the worker process) while this one prepares, calibrates
        and quantizes; :meth:`values` waits for them. Measured on the bench's 50 MB encoder:
        the worker's start and the 8 float runs, 1.4 s, were the larger part of the proof."""
        if self._values is not None or self._early is not None:
            return
        if threading.current_thread() is threading.main_thread():
            self.runner.start(wait=False)  # the worker dies with us only if started from the main thread
        self._early = threading.Thread(target=self._compute, name="onnx-studio-quantize-reference", daemon=True)
        self._early.start()

    def abandon(self) -> None:
        """Let the early float runs stop before their next set (the session closes); wait
        for them with :meth:`join`."""
        self._abandoned = True

    def join(self) -> None:
        if self._early is not None:
            self._early.join()

    def _compute(self) -> None:
        try:
            source = ModelSource.from_path(self._source) if self._source else ModelSource.from_any(self.model)
            runs = []
            for feeds in self.held_back:
                if self._abandoned:
                    raise RuntimeBackendError("the float runs were abandoned (the quantize session closed)")
                runs.append(_run(self.runner, source, self.model, feeds, self.timeout))
        except RuntimeBackendError as exc:
            self._failure = RuntimeBackendError(f"the float model does not run on the held-back inputs: {exc.message}")
        except BaseException as exc:  # noqa: BLE001 - raised again by values(), in the caller's thread
            self._failure = exc
        else:
            self._values = [v for v, _ in runs]
            self.detail = runs[0][1] if runs else ""

    def values(self) -> list[dict[str, Any]]:
        if self._early is not None:
            self._early.join()
            self._early = None
        elif self._values is None and self._failure is None:
            self._compute()
        if self._failure is not None:
            failure, self._failure = self._failure, None  # a later call tries again
            raise failure
        assert self._values is not None
        return self._values

    def measure(self, candidate: onnx.ModelProto,
                progress: Callable[[int, int], None] | None = None) -> tuple[list[OutputAccuracy], str]:
        """Each output's error of ``candidate`` (worst over the sets) and what it ran on.
        Raises RuntimeBackendError when onnxruntime cannot load or run it."""
        ref = self.values()
        # one candidate at a time in the worker: each replaces the one before
        source = ModelSource.from_bytes(candidate.SerializeToString(), document="quantize:candidate")
        outs = {o.name: OutputAccuracy(o.name) for o in self.model.graph.output}
        detail = ""
        for k, (feeds, want) in enumerate(zip(self.held_back, ref)):
            if progress is not None:
                progress(k, len(ref))
            try:
                got, detail = _run(self.runner, source, candidate, feeds, self.timeout)
            except RuntimeBackendError as exc:
                raise RuntimeBackendError(f"the quantized model does not run in onnxruntime: {exc.message}") from exc
            for name, acc in outs.items():
                if name in want and name in got:
                    _merge(acc, want[name], got[name])
                elif name in want and not acc.nonfinite:
                    acc.nonfinite = "the quantized model did not return it"  # a finding, never agreement
        return list(outs.values()), detail


def checker_refusal(model: onnx.ModelProto) -> str | None:
    """The first line of onnx's full checker's refusal of ``model``, or None when it passes."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:  # noqa: BLE001 - the checker's first line is the reason
        text = str(exc).strip()
        return text.splitlines()[0] if text else type(exc).__name__
    return None


@dataclass
class Proof:
    """The evidence for one quantized model (module docstring)."""

    outputs: list[OutputAccuracy]
    #: None: onnx's full checker passes; else its first line
    checker: str | None
    #: what onnxruntime ran the result on ("CPUExecutionProvider")
    ran_on: str
    sets: int
    #: whether the held-back sets are other inputs than the calibration sets
    independent: bool
    float_bytes: int
    quantized_bytes: int
    macs: MacShare | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def size_ratio(self) -> float:
        return self.quantized_bytes / self.float_bytes if self.float_bytes else math.nan

    def worst(self, metric: str = "range") -> float:
        return max((o.error(metric) for o in self.outputs), default=0.0)

    def within(self, tol: float, metric: str = "range") -> bool:
        return self.worst(metric) <= tol

    def lines(self) -> list[str]:
        where = "held-back" if self.independent else "calibration (none held back)"
        out = [f"checker: {'passes (full)' if self.checker is None else 'REFUSES: ' + self.checker}",
               f"onnxruntime: loads and runs ({self.ran_on})",
               f"error vs float on {self.sets} {where} input set(s):"]
        out += [f"  {o.text()}" for o in self.outputs]
        out.append(f"size: {self.quantized_bytes / 1e6:.2f} MB vs {self.float_bytes / 1e6:.2f} MB float "
                   f"({self.size_ratio:.2f}x)")
        if self.macs is not None:
            out.append(_mac_line(self.macs))
        out += [f"note: {n}" for n in self.notes]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"checker": "pass" if self.checker is None else self.checker, "ran_on": self.ran_on,
                "held_back_sets": self.sets, "held_back_independent": self.independent,
                "outputs": [o.to_json() for o in self.outputs], "float_bytes": self.float_bytes,
                "quantized_bytes": self.quantized_bytes, "size_ratio": self.size_ratio,
                "macs": self.macs.to_json() if self.macs is not None else None, "notes": self.notes}


def _mac_line(m: MacShare) -> str:
    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    whole = sum(m.compute.values())
    kinds = ", ".join(f"{k} {v / 1e6:.1f}M" for k, v in sorted(m.compute.items(), key=lambda kv: -kv[1]))
    return (f"predicted Conv/MatMul MACs: {pct(m.share('int8'))} in int8, {pct(m.integer_share())} in any integer "
            f"kind ({kinds}; {whole / 1e6:.1f}M in all)")


def make_proof(quantized: Quantized, reference: Reference, *, independent: bool,
               dims: Mapping[str, int] | None = None,
               measured: tuple[list[OutputAccuracy], str] | None = None) -> Proof:
    """Check, run and measure ``quantized`` against ``reference`` (module docstring);
    ``measured``: its outputs' errors already measured on ``reference`` (a search's last
    probe). Raises RuntimeBackendError when onnxruntime cannot load or run the result."""
    from editor.quantize.classify import mac_share

    refusal = checker_refusal(quantized.model)
    outputs, ran_on = measured if measured is not None else reference.measure(quantized.model)
    try:
        macs = mac_share(quantized.prepared, quantized.quantized, dims)
    except Exception as exc:  # noqa: BLE001 - a cost the model cannot give is a note, not a failure
        macs = None
        notes = [f"MACs not predicted: {exc}"]
    else:
        notes = [f"{macs.unknown} node(s) without a MAC count (shapes unknown)"] if macs.unknown else []
    return Proof(outputs, refusal, ran_on, len(reference.held_back), independent, quantized.float_bytes,
                 quantized.model.ByteSize(), macs, notes)
