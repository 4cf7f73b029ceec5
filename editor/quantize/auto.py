"""``--auto TOL``: the fewest most-sensitive nodes kept in float that bring every output within
TOL of the float model on the held-back inputs.

The full quantization is measured first; if it is within TOL, nothing stays float. Else the
search measures an order and bisects along it (the search fp16's ``--auto-mixed`` does):

1. the nodes are ranked by the error each adds (:mod:`editor.quantize.sensitivity`);
2. each op type outside the Conv/MatMul family (Softmax, LayerNormalization, Add, HardSwish
   ...) is kept in float on its own once, and its effect on the outputs measured. Measured
   on real models, the added-error ranking alone is a poor guide where the error is spread
   thin over many elementwise nodes (PP-OCR's detector and recognizer: bisecting along it
   kept 280 of 326 and 372 of 384 nodes in float, none of their Conv MACs left in int8),
   while the types that matter show at once when kept in float as a group;
3. the order: the nodes of the types that helped (the most helpful type first; within a
   type, by added error), then the Conv/MatMul family by added error, then the rest. Types
   that cost no MACs go first because the point of quantizing is the Conv/MatMul MACs;
4. a bisection over *how many* of that order stay in float finds the smallest prefix whose
   outputs are within TOL.

Every probe re-quantizes from the calibration already measured (the
:class:`~editor.quantize.engine.Quantizer` keeps onnxruntime's calibration cache) and runs
the candidate once per held-back set, the float outputs computed once
(:class:`~editor.quantize.proof.Reference`): one probe per op type plus about log2(n).

When even every ranked node in float is beyond TOL (the error comes from elsewhere: an
unranked node, the inputs), the result says so (``reached`` False) with that model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from editor.quantize.classify import COMPUTE_OPS
from editor.quantize.engine import Quantized, Quantizer
from editor.quantize.options import QuantizeOptions
from editor.quantize.proof import OutputAccuracy, Reference
from editor.quantize.sensitivity import Sensitivity, measure_sensitivity

__all__ = ["AutoResult", "auto_quantize", "search_order", "worst"]

#: an op type kept in float "helps" when it closes at least this share of the gap to TOL
HELPS = 0.1


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
    #: nodes the search kept in float (beyond those excluded on request), in search order
    kept: list[str] = field(default_factory=list)
    reached: bool = True
    sensitivity: Sensitivity | None = None
    #: (nodes kept in float, worst error) of each probe along the order, in the order they ran
    probes: list[tuple[int, float]] = field(default_factory=list)
    #: (op type, worst error with that type alone in float), most helpful first
    types: list[tuple[str, float]] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = (f"auto: {len(self.kept)} node(s) kept in float after {len(self.probes) + len(self.types)} probe(s) "
                f"(tolerance {self.tol:g} on the {self.metric} error)")
        if not self.reached:
            head += f"; even with every ranked node in float an output is beyond {self.tol:g}"
        out = [head]
        if self.types:
            out.append("  op types alone in float: " + ", ".join(f"{t} {e:.3g}" for t, e in self.types[:12])
                       + (" ..." if len(self.types) > 12 else ""))
        if self.kept:
            out.append("  kept in float: " + ", ".join(self.kept[:20]) + (" ..." if len(self.kept) > 20 else ""))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"tol": self.tol, "metric": self.metric, "reached": self.reached, "kept_in_float": self.kept,
                "probes": [{"kept": k, "worst": w} for k, w in self.probes],
                "op_types": [{"op_type": t, "worst": w} for t, w in self.types]}


def search_order(sensitivity: Sensitivity, types: list[tuple[str, float]], full: float, tol: float,
                 skip: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The order nodes are kept in float (module docstring, step 3). ``types``: (op type,
    worst error with it in float); ``full``: the worst error with everything quantized."""
    rows = [r for r in sensitivity.rows if r.node not in skip]
    gap = max(full - tol, 0.0)
    helpful = [t for t, e in sorted(types, key=lambda te: te[1]) if full - e >= HELPS * gap and e < full]
    order = [r.node for t in helpful for r in rows if r.op_type == t]
    order += [r.node for r in rows if r.op_type in COMPUTE_OPS]
    placed = set(order)
    return order + [r.node for r in rows if r.node not in placed]


def auto_quantize(quantizer: Quantizer, options: QuantizeOptions, reference: Reference, tol: float, *,
                  metric: str = "cosine", sensitivity_sets: int = 2, macs: dict[str, int] | None = None,
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
    full_err = worst(outs, metric)
    if full_err <= tol:
        return AutoResult(full, outs, ran_on, tol, metric, [], True, None, probes)
    say("ranking nodes by the error each adds")
    sens = measure_sensitivity(full, reference.held_back[:max(1, sensitivity_sets)], reference.runner,
                               macs=macs, progress=say)
    skip = set(options.exclude_nodes)
    candidates = sorted({r.op_type for r in sens.rows if r.node not in skip and r.op_type not in COMPUTE_OPS}
                        - set(options.exclude_ops))
    types: list[tuple[str, float]] = []
    for k, op in enumerate(candidates):
        say(f"op type {k + 1} of {len(candidates)} in float: {op}")
        q = quantizer.quantize(options.excluding(ops=[op]))
        types.append((op, worst(reference.measure(q.model)[0], metric)))
    types.sort(key=lambda te: te[1])
    order = search_order(sens, types, full_err, tol, skip)
    if not order:
        return AutoResult(full, outs, ran_on, tol, metric, [], False, sens, probes, types)
    best = probe(order)
    if worst(best[1], metric) > tol:
        return AutoResult(*best, tol, metric, order, False, sens, probes, types)
    best_k = len(order)
    lo, hi = 1, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        got = probe(order[:mid])
        if worst(got[1], metric) <= tol:
            best, best_k, hi = got, mid, mid
        else:
            lo = mid + 1
    return AutoResult(*best, tol, metric, order[:best_k], True, sens, probes, types)
