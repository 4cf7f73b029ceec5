"""A comparison's result and the verdict it supports: one record per tensor pair, what each
side really ran on, and agree / differ / no verdict with its exit code.

NOTE: a verdict states its evidence. :attr:`Comparison.verdict` is ``agree`` (exit 0),
``differ`` (1) or ``no verdict`` (2), and only ``agree`` when every graph output was
compared, is within tolerance and is finite on both sides: an output that is NaN on both
sides is a *difference* (a finding), never agreement. :meth:`Comparison.summary` is the
text of it (what each side ran on, a fallback named, the inputs and their guessed dims, the
notes, the first divergence and the first NaN/Inf); the CLI prints it and the window shows
it. :data:`EXIT_CODES` is the ``compare`` / ``reduce`` contract, the same in ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from editor.debug.mapping import TensorMap
from editor.debug.metrics import TensorError, Tolerance
from editor.errors import RuntimeBackendError
from editor.runtime import RunOptions
from editor.runtime.input_plan import InputPlan
from editor.runtime.source import ModelSource

__all__ = ["EXIT_CODES", "Comparison", "RunFailed", "RunSpec", "SideRun", "TensorResult"]


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
    #: for the first divergence: a node of B only that feeds it (an inserted op), in words
    b_cause: str = ""

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
                                                          "scope": fd.scope or None, "b_cause": fd.b_cause or None,
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
            lines.append(f"first divergence: {_where(fd)}, tensor {fd.a!r}: {what}" + (f"; {fd.b_cause}" if fd.b_cause else ""))
        if fn is not None and fn is not fd:
            lines.append(f"first NaN/Inf: {_where(fn)}, tensor {fn.a!r}: {fn.finding}")
        words = {"agree": "outputs agree", "differ": "outputs DIFFER", "no verdict": "NO VERDICT"}[self.verdict]
        lines.append(f"{words}: {self.reason()} (exit {self.exit_code})")
        return lines


def _where(t: TensorResult) -> str:
    if t.node is None:
        return "graph input"
    node = f"node {t.node!r} ({t.op_type})" if t.node else f"an unnamed {t.op_type} node"
    return node + (f" inside {t.scope}" if t.scope else "")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _badness(t: TensorResult) -> float:
    if t.error is None:
        return -1.0
    if not t.error.ok and t.error.max_rel is None:
        return float("inf")
    return float(t.error.max_rel or 0.0) + (1e9 if not t.error.ok else 0.0)
