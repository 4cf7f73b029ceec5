"""``--auto TOL``: the fewest most-sensitive nodes kept in float that bring every output within
TOL of the float model on the held-back inputs.

The full quantization is measured first; if it is within TOL, nothing stays float. Else
the nodes are ranked by the error each adds (:mod:`editor.quantize.sensitivity`), and a
bisection over *how many* of the top-ranked nodes stay in float finds the smallest prefix
whose outputs are within TOL (the search fp16's ``--auto-mixed`` does, over a measured
ranking). Every probe re-quantizes from the calibration already measured (the
:class:`~editor.quantize.engine.Quantizer` keeps onnxruntime's calibration cache) and runs
the candidate once per held-back set, the float outputs computed once
(:class:`~editor.quantize.proof.Reference`): about log2(n) quantizer passes and runs.

When even every ranked node in float is beyond TOL (the error comes from elsewhere: an
unranked node, the inputs), the result says so (``reached`` False) with that model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from editor.quantize.engine import Quantized, Quantizer
from editor.quantize.options import QuantizeOptions
from editor.quantize.proof import OutputAccuracy, Reference
from editor.quantize.sensitivity import Sensitivity, measure_sensitivity

__all__ = ["AutoResult", "auto_quantize", "worst"]


def worst(outputs: list[OutputAccuracy], metric: str) -> float:
    return max((o.error(metric) for o in outputs), default=0.0)


@dataclass
class AutoResult:
    quantized: Quantized
    #: the chosen model's errors per output and what onnxruntime ran it on
    outputs: list[OutputAccuracy]
    ran_on: str
    tol: float
    metric: str
    #: nodes the search kept in float (beyond those excluded on request), most sensitive first
    kept: list[str] = field(default_factory=list)
    reached: bool = True
    sensitivity: Sensitivity | None = None
    #: (nodes kept in float, worst error) of each probe, in the order they ran
    probes: list[tuple[int, float]] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = (f"auto: {len(self.kept)} node(s) kept in float after {len(self.probes)} probe(s) "
                f"(tolerance {self.tol:g} on the {self.metric} error)")
        if not self.reached:
            head += f"; even with every ranked node in float an output is beyond {self.tol:g}"
        out = [head]
        if self.kept:
            out.append("  kept in float: " + ", ".join(self.kept[:20]) + (" ..." if len(self.kept) > 20 else ""))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"tol": self.tol, "metric": self.metric, "reached": self.reached, "kept_in_float": self.kept,
                "probes": [{"kept": k, "worst": w} for k, w in self.probes]}


def auto_quantize(quantizer: Quantizer, options: QuantizeOptions, reference: Reference, tol: float, *,
                  metric: str = "range", sensitivity_sets: int = 2, macs: dict[str, int] | None = None,
                  say: Callable[[str], None] | None = None) -> AutoResult:
    """Quantize with as few nodes kept in float as the search finds necessary (module
    docstring). ``options.exclude_*`` stay excluded in every probe."""
    say = say or (lambda _m: None)
    probes: list[tuple[int, float]] = []

    def probe(kept: list[str]) -> tuple[Quantized, list[OutputAccuracy], str]:
        say(f"probe {len(probes) + 1}: {len(kept)} node(s) in float")
        q = quantizer.quantize(options.excluding(kept)) if kept else quantizer.quantize(options)
        outs, ran_on = reference.measure(q.model)
        probes.append((len(kept), worst(outs, metric)))
        return q, outs, ran_on

    full, outs, ran_on = probe([])
    if worst(outs, metric) <= tol:
        return AutoResult(full, outs, ran_on, tol, metric, [], True, None, probes)
    say("ranking nodes by the error each adds")
    sens = measure_sensitivity(full, reference.held_back[:max(1, sensitivity_sets)], reference.runner,
                               macs=macs, progress=say)
    order = [n for n in sens.ranking() if n not in options.exclude_nodes]
    if not order:
        return AutoResult(full, outs, ran_on, tol, metric, [], False, sens, probes)
    best = probe(order)
    if worst(best[1], metric) > tol:
        return AutoResult(*best, tol, metric, order, False, sens, probes)
    best_k = len(order)
    lo, hi = 1, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        got = probe(order[:mid])
        if worst(got[1], metric) <= tol:
            best, best_k, hi = got, mid, mid
        else:
            lo = mid + 1
    return AutoResult(*best, tol, metric, order[:best_k], True, sens, probes)

