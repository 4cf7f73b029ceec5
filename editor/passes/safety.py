"""Proof that a transform is safe where it ran: the model before and after, on the same
inputs, through the editor's runtime (a child process), and the largest difference.

The inputs are generated from the *transformed* model's input types (an ``--input-shape``
override pins dims there, and those inputs fit the original too). Symbolic dims get the
runtime's guesses first; models that refuse those (audio windows, reflect padding) are
retried with every symbolic dim at 16, then 512. The original runs first with the usual
backend order; the transformed model then runs pinned to the backend that ran the original,
so both sides use the same kernels.
"""

from __future__ import annotations

from collections.abc import Mapping
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from editor.runtime import ModelSource, Runner, input_specs, make_inputs

#: relative difference the CLI and the window call "equal" (the issue's promise)
REL_TOLERANCE = 1e-5


@dataclass
class CheckResult:
    status: str  # "equal" | "different" | "not-run"
    backend: str | None = None
    max_abs: float = 0.0
    max_rel: float = 0.0
    compared: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # outputs whose shape/type/value differ
    reason: str | None = None  # why it could not run
    dims: dict[str, int] = field(default_factory=dict)  # symbolic dims used for the inputs

    @property
    def ok(self) -> bool:
        return self.status == "equal"

    def summary(self) -> str:
        if self.status == "not-run":
            return f"not checked: {self.reason}"
        verdict = "outputs equal" if self.ok else "OUTPUTS DIFFER"
        text = (f"{verdict} ({len(self.compared)} output(s), {self.backend}): "
                f"max abs diff {self.max_abs:.3g}, max rel diff {self.max_rel:.3g}")
        if self.problems:
            text += "; " + "; ".join(self.problems[:3])
        return text


def _symbols(model: onnx.ModelProto) -> set[str]:
    found = set()
    for spec in input_specs(model):
        for d in spec.shape or ():
            if isinstance(d, str):
                found.add(d)
    return found


def compare_values(a: object, b: object, name: str, result: CheckResult, rtol: float) -> None:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            result.problems.append(f"{name}: {a.dtype}{list(a.shape)} became {b.dtype}{list(b.shape)}")
            return
        if a.dtype.kind in "fc":
            x, y = a.astype(np.float64), b.astype(np.float64)
            same_nan = np.isnan(x) == np.isnan(y)
            if not np.all(same_nan):
                result.problems.append(f"{name}: NaN in different places")
            fin = np.isfinite(x) & np.isfinite(y)
            if np.any((x != y) & ~fin & same_nan & ~np.isnan(x)):
                result.problems.append(f"{name}: infinities differ")
            if fin.any():
                d = np.abs(x[fin] - y[fin])
                result.max_abs = max(result.max_abs, float(d.max()))
                scale = max(float(np.abs(x[fin]).max()), 1e-30)
                rel = float(d.max()) / scale
                result.max_rel = max(result.max_rel, rel)
                if rel > rtol:
                    result.problems.append(f"{name}: relative difference {rel:.3g}")
        elif not np.array_equal(a, b):
            result.problems.append(f"{name}: values differ")
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for k, (x, y) in enumerate(zip(a, b)):
            compare_values(x, y, f"{name}[{k}]", result, rtol)
        return
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            compare_values(a[k], b[k], f"{name}[{k!r}]", result, rtol)
        return
    if type(a) is not type(b) or (a is None) != (b is None):
        result.problems.append(f"{name}: {type(a).__name__} became {type(b).__name__}")


def check_equivalence(before: onnx.ModelProto, after: onnx.ModelProto, *, base_dir: str | Path | None = None,
                      runner: Runner | None = None, dims: Mapping[str, int] | None = None,
                      rtol: float = REL_TOLERANCE, timeout: float = 120.0) -> CheckResult:
    """Run both models on the same inputs and compare every graph output."""
    own = runner is None
    runner = runner or Runner()
    base = None if base_dir is None else str(base_dir)
    try:
        src_before = ModelSource.from_bytes(before.SerializeToString(), base_dir=base)
        src_after = ModelSource.from_bytes(after.SerializeToString(), base_dir=base)
        symbols = _symbols(after)
        tries: list[dict[str, int]] = [dict(dims or {})]
        if symbols:
            tries += [{s: 16 for s in symbols}, {s: 512 for s in symbols}]
        reason = "no inputs could be generated"
        for choice in tries:
            try:
                feeds = make_inputs(after, dims=choice)
            except Exception as exc:  # noqa: BLE001 - e.g. a map input needs a file
                return CheckResult("not-run", reason=f"cannot make inputs: {exc}")
            first = runner.run(src_before, feeds, timeout=timeout)
            if not first.ok:
                reason = f"the original model does not run: {first.error}"
                continue
            second = runner.run(src_after, feeds, backend=first.backend, timeout=timeout)
            result = CheckResult("equal", backend=first.backend, dims=choice)
            if not second.ok:
                result.status = "different"
                result.problems.append(f"the transformed model does not run: {second.error}")
                return result
            for name, rec in first.outputs.items():
                if rec.role != "output":
                    continue
                if name not in second.outputs:
                    result.problems.append(f"{name}: missing after the transform")
                    continue
                result.compared.append(name)
                compare_values(rec.value, second.outputs[name].value, name, result, rtol)
            if result.problems:
                result.status = "different"
            return result
        return CheckResult("not-run", reason=reason)
    finally:
        if own:
            runner.close()


def planned_model(doc, planner) -> onnx.ModelProto | None:  # noqa: ANN001 - Document, Planner
    """The model ``planner``'s plan would give, computed on a copy (the document is not
    touched); None when the plan changes nothing."""
    from editor.document import Document

    plan = planner(doc)
    if plan.empty:
        return None
    if isinstance(plan.result_model, onnx.ModelProto):
        return plan.result_model
    copy = onnx.ModelProto()
    copy.CopyFrom(doc.model)
    scratch = Document(copy, store=doc.store)
    again = planner(scratch)
    if again.empty:
        return None
    scratch.execute(again.command)
    return scratch.model


@dataclass
class PassCheck:
    name: str
    changes: int
    result: CheckResult


def optimize_checking_each_pass(model: onnx.ModelProto, options, *, reader=None,  # noqa: ANN001
                                base_dir: str | Path | None = None,
                                runner: Runner | None = None) -> tuple[onnx.ModelProto, list[PassCheck]]:
    """Run the optimizer's passes one at a time (rounds until none changes anything) and
    check each change by running the model before and after it; stops at the first pass
    whose outputs differ and returns the model from just before it."""
    from editor.passes.graphview import default_reader
    from editor.passes.manager import optimize_model, resolve
    from editor.passes.shapes import fix_input_shapes

    own = runner is None
    runner = runner or Runner()
    checks: list[PassCheck] = []
    names = resolve(options.passes, options.level)
    current = model
    if options.input_shapes:
        current = onnx.ModelProto()
        current.CopyFrom(model)
        fix_input_shapes(current, options.input_shapes)
    try:
        for _ in range(options.max_rounds):
            changed = False
            for name in names:
                step = dataclasses.replace(options, passes=[name], max_rounds=1, input_shapes={})
                new, report = optimize_model(current, step, reader=reader or default_reader)
                n = report.changes.get(name, 0)
                if not n:
                    continue
                result = check_equivalence(current, new, base_dir=base_dir, runner=runner)
                checks.append(PassCheck(name, n, result))
                if result.status == "different":
                    return current, checks
                current, changed = new, True
            if not changed:
                break
        return current, checks
    finally:
        if own:
            runner.close()
