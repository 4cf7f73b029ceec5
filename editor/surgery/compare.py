"""Run a reference model and an edited one on the same inputs and measure how far apart
their outputs are: the proof a precision conversion (or a merge) owes the user.

NOTE: a deliberately small local helper. The numeric comparison package of "find where
numbers go wrong" (editor/debug) is being built in parallel; once it lands, this module
should become a thin call into it. Runs go through :class:`editor.runtime.Runner`, in a
child process, so a kernel that crashes on a converted model cannot take the caller down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from editor.errors import StudioError
from editor.runtime import Runner
from editor.runtime.inputs import cast_to_declared, make_inputs

__all__ = ["OutputError", "Comparison", "compare_models", "inputs_for", "run_values"]


@dataclass
class OutputError:
    name: str
    max_abs: float
    #: max |a - b| / max(|a|) over the output: the error in units of the output's scale
    max_rel: float
    #: positions where exactly one side is NaN or ±inf, or where both are but differ
    non_finite: int = 0

    def within(self, tol: float) -> bool:
        return self.non_finite == 0 and self.max_abs <= tol


@dataclass
class Comparison:
    errors: list[OutputError] = field(default_factory=list)

    @property
    def worst(self) -> float:
        return max((e.max_abs if e.non_finite == 0 else float("inf") for e in self.errors), default=0.0)

    def within(self, tol: float) -> bool:
        return all(e.within(tol) for e in self.errors)


def inputs_for(model: onnx.ModelProto, *, dims: Mapping[str, int] | None = None, seed: int = 0) -> dict[str, Any]:
    """Random inputs for ``model`` (fixed seed, so two runs see the same values)."""
    return make_inputs(model, "random", dims=dims, seed=seed)


def _cast_inputs(model: onnx.ModelProto, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` in the element types ``model`` declares (an fp16 model takes fp16)."""
    return cast_to_declared(model, values)[0]


def run_values(runner: Runner, model: onnx.ModelProto, inputs: Mapping[str, Any], *,
               outputs: Sequence[str] | None = None, timeout: float = 300.0,
               source: str | None = None) -> dict[str, Any]:
    """The named (default: graph) outputs of ``model`` on ``inputs`` with onnxruntime.
    ``source``: the model's file, run instead of the in-memory proto (external weights)."""
    result = runner.run(source or model, _cast_inputs(model, inputs), outputs=outputs, backend="ort",
                        timeout=timeout)
    if not result.ok:
        raise StudioError(f"the model could not run: {result.error or result.status}")
    return {name: rec.value for name, rec in result.outputs.items()}


def output_error(name: str, ref: Any, got: Any) -> OutputError:
    if not isinstance(ref, np.ndarray) or not isinstance(got, np.ndarray) or ref.dtype.kind not in "fiub":
        leaves_a, leaves_b = _leaves(ref), _leaves(got)
        if leaves_a is not None and leaves_b is not None and len(leaves_a) == len(leaves_b) and leaves_a:
            return output_error(name, np.asarray(leaves_a, np.float64), np.asarray(leaves_b, np.float64))
        same = _same(ref, got)
        return OutputError(name, 0.0 if same else float("inf"), 0.0 if same else float("inf"), 0 if same else 1)
    if ref.shape != got.shape:
        return OutputError(name, float("inf"), float("inf"), int(max(ref.size, got.size, 1)))
    a, b = ref.astype(np.float64), got.astype(np.float64)
    fa, fb = np.isfinite(a), np.isfinite(b)
    both = fa & fb
    odd = (fa != fb) | (~fa & ~fb & ~((a == b) | (np.isnan(a) & np.isnan(b))))
    diff = np.abs(a[both] - b[both])
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = float(np.abs(a[both]).max()) if diff.size else 0.0
    return OutputError(name, max_abs, max_abs / scale if scale > 0 else max_abs, int(odd.sum()))


def _leaves(v: Any) -> list[float] | None:
    """The numbers of a sequence / map value in order (None when it holds anything else)."""
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return [float(v)]
    if isinstance(v, np.ndarray) and v.dtype.kind in "fiu":
        return [float(x) for x in v.reshape(-1)]
    if isinstance(v, dict):
        parts = [_leaves(v[k]) for k in sorted(v, key=repr)]
    elif isinstance(v, (list, tuple)):
        parts = [_leaves(x) for x in v]
    else:
        return None
    if any(p is None for p in parts):
        return None
    return [x for p in parts for x in p]  # type: ignore[union-attr]


def _same(a: Any, b: Any) -> bool:
    """Deep equality of run values (sequences of maps, optionals ...), arrays by value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that cannot compare are reported different
        return False


def compare_models(runner: Runner, reference: onnx.ModelProto, candidate: onnx.ModelProto,
                   inputs: Mapping[str, Any], *, reference_values: Mapping[str, Any] | None = None,
                   sources: tuple[str | None, str | None] = (None, None)) -> Comparison:
    """Error per graph output of ``candidate`` against ``reference`` on the same inputs
    (``sources``: their files, when they hold external weights)."""
    ref = dict(reference_values) if reference_values is not None else run_values(runner, reference, inputs,
                                                                                  source=sources[0])
    got = run_values(runner, candidate, inputs, source=sources[1])
    cmp = Comparison()
    for name, value in ref.items():
        if name in got:
            cmp.errors.append(output_error(name, value, got[name]))
    return cmp
