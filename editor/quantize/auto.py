"""``--auto TOL``: the fewest most-sensitive nodes kept in float that bring every output within
TOL of the float model on the held-back inputs.

The full quantization is measured first; if it is within TOL, nothing stays float. Else the
search keeps in float first what costs no MACs, then as little of the Conv/MatMul family as
it must, bisecting along measured orders (the search fp16's ``--auto-mixed`` does):

1. the nodes are ranked by the error each adds (:mod:`editor.quantize.sensitivity`);
2. each op type outside the Conv/MatMul family (Softmax, LayerNormalization, Add, HardSwish
   ...) is kept in float on its own once, and its effect on the outputs measured; a type
   whose nodes add next to nothing (each at most 1% of the largest error such a node adds:
   Reshape, Transpose, Where ...) gets no probe. Measured
   on real models, the added-error ranking alone is a poor guide where the error is spread
   thin over many elementwise nodes (PP-OCR's detector and recognizer: bisecting along it
   kept 281 of 326 and 372 of 384 nodes in float, none of their Conv MACs left in int8),
   while the types that matter show at once when kept in float as a group;
3. those nodes, the types that helped first (the most helpful first; within a type, by
   added error): if all of them in float bring the outputs within TOL, a bisection over how
   many finds the shortest prefix, and every Conv/MatMul stays int8;
3b. else, when other calibration methods are allowed (``methods``: the command line's
   default, percentile beside minmax), the same nodes in float are probed with each; the
   nearest to the float model is kept for the rest of the search (measured on
   all-MiniLM-L6-v2: percentile closes a third of minmax's gap there, where the rare
   outliers of LayerNorm and GELU outputs stretch uint8 ranges), and step 3 is tried again;
4. else, for QDQ with 8-bit activations (:mod:`editor.quantize.wide`): every activation
   tensor no Conv/MatMul reads or writes at 16 bits, every node quantized; if that is not
   within TOL, the Conv/MatMul nodes cheapest first (fewest MACs; the ranking breaks ties)
   with the tensors they read and write at 16 bits as well, and a bisection over how many
   (a MatMul so widened keeps its weight in float: see :data:`_NBITS_PRONE`).
   Cheapest first, not most sensitive first: measured on PP-OCRv4's recognizer, the error
   is made in the first Convs at full resolution (a depthwise Conv there costs 0.1% of the
   MACs), while the added-error ranking put its big pointwise Convs first and needed 86%
   of the MACs out of int8. With every activation at 16 bits and still beyond TOL (the
   weights), step 5;
5. the free nodes all stay float, the Conv/MatMul nodes are ranked again on that model (the
   first ranking was measured amid the others' noise), and a bisection over how many of
   them stay float finds the fewest; with those in float, a last bisection along step 3's
   order gives back to int8 the free nodes that need not stay float.

Every probe re-quantizes from the calibration already measured (the
:class:`~editor.quantize.engine.Quantizer` keeps onnxruntime's calibration cache) and runs
the candidate once per held-back set, the float outputs computed once
(:class:`~editor.quantize.proof.Reference`): one probe per op type plus about log2(n) per bisection.

When even every ranked node in float is beyond TOL (the error comes from elsewhere: an
unranked node, the inputs), the result says so (``reached`` False) with that model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import onnx

from editor.quantize.classify import COMPUTE_OPS, mac_share
from editor.quantize.engine import Quantized, Quantizer
from editor.quantize.options import QuantizeOptions
from editor.quantize.proof import OutputAccuracy, Reference
from editor.quantize.sensitivity import Sensitivity, measure_sensitivity
from editor.quantize.wide import free_tensors, node_tensors, wider

__all__ = ["AutoResult", "auto_quantize", "cheapest_first", "search_order", "worst"]

#: an op type kept in float "helps" when it closes at least this share of the gap to TOL
HELPS = 0.1
#: an op type whose nodes each add at most this share of the largest error a node outside the
#: Conv/MatMul family adds is not probed (measured on all-MiniLM-L6-v2: IsNaN, Where, Shape,
#: Reshape, Transpose and Div, six of eleven probes, each left the output where it was)
SILENT = 0.01


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
    #: (calibration method, worst error with every free node in float) of each method tried
    methods: list[tuple[str, float]] = field(default_factory=list)
    #: op types not probed: their nodes add next to nothing (:data:`SILENT`)
    silent: list[str] = field(default_factory=list)
    #: Conv/MatMul nodes whose activations the search quantized at 16 bits (step 4), and how
    #: many activation tensors are at 16 bits in all (with those no Conv/MatMul reads or writes)
    widened: list[str] = field(default_factory=list)
    wide_tensors: int = 0

    def lines(self) -> list[str]:
        head = (f"auto: {len(self.kept)} node(s) kept in float after {len(self.probes) + len(self.types)} probe(s) "
                f"(tolerance {self.tol:g} on the {self.metric} error)")
        if not self.reached:
            head += f"; even with every ranked node in float an output is beyond {self.tol:g}"
        out = [head]
        if len(self.methods) > 1:
            chosen = self.quantized.options.method
            out.append(f"  calibration: {chosen} (with the free nodes in float: "
                       + ", ".join(f"{m} {e:.3g}" for m, e in self.methods) + ")")
        if self.types:
            out.append("  op types alone in float: " + ", ".join(f"{t} {e:.3g}" for t, e in self.types[:12])
                       + (" ..." if len(self.types) > 12 else ""))
        if self.silent:
            out.append("  not probed (their nodes add next to nothing): " + ", ".join(self.silent))
        if self.wide_tensors:
            out.append(f"  at 16 bits: {self.wide_tensors} activation tensor(s), those no Conv/MatMul reads or "
                       f"writes and those of {len(self.widened)} Conv/MatMul node(s) taken out of int8"
                       + (": " + ", ".join(self.widened[:20]) + (" ..." if len(self.widened) > 20 else "")
                          if self.widened else ""))
        if self.kept:
            out.append("  kept in float: " + ", ".join(self.kept[:20]) + (" ..." if len(self.kept) > 20 else ""))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"tol": self.tol, "metric": self.metric, "reached": self.reached, "kept_in_float": self.kept,
                "probes": [{"kept": k, "worst": w} for k, w in self.probes],
                "op_types": [{"op_type": t, "worst": w} for t, w in self.types],
                "calibration_method": self.quantized.options.method,
                "methods": [{"method": m, "worst": w} for m, w in self.methods], "silent_op_types": self.silent,
                "sixteen_bit_nodes": self.widened, "sixteen_bit_tensors": self.wide_tensors}


def search_order(sensitivity: Sensitivity, types: list[tuple[str, float]], full: float, tol: float,
                 skip: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The order the nodes outside the Conv/MatMul family are kept in float (module
    docstring, step 3). ``types``: (op type, worst error with it in float); ``full``: the
    worst error with everything quantized."""
    rows = [r for r in sensitivity.rows if r.node not in skip and r.op_type not in COMPUTE_OPS]
    gap = max(full - tol, 0.0)
    helpful = [t for t, e in sorted(types, key=lambda te: te[1]) if full - e >= HELPS * gap and e < full]
    order = [r.node for t in helpful for r in rows if r.op_type == t]
    placed = set(order)
    return order + [r.node for r in rows if r.node not in placed]


def auto_quantize(quantizer: Quantizer, options: QuantizeOptions, reference: Reference, tol: float, *,
                  metric: str = "cosine", sensitivity_sets: int = 2, macs: dict[str, int] | None = None,
                  methods: Sequence[str] = (), dims: Mapping[str, int] | None = None,
                  say: Callable[[str], None] | None = None) -> AutoResult:
    """Quantize with as few nodes kept in float as the search finds necessary (module
    docstring). ``options.exclude_*`` stay excluded in every probe; ``methods``: other
    calibration methods the search may switch to (step 3b)."""
    say = say or (lambda _m: None)
    probes: list[tuple[int, float]] = []
    sets = reference.held_back[:max(1, sensitivity_sets)]
    current = [options]  # the request every probe makes (its method may change once, step 3b)

    def probe(kept: list[str], wide: Sequence[str] = (), count: int | None = None) -> tuple:
        """The request with ``kept`` in float and the ``wide`` tensors at 16 bits, measured;
        recorded as (``count``, default the nodes kept in float; worst error)."""
        n = len(kept) if count is None else count
        say(f"probe {len(probes) + 1}: " + (f"{n} node(s) in float" if count is None else
                                            f"{n} Conv/MatMul node(s) with their tensors at 16 bits"))
        q = quantizer.quantize(current[0].excluding(kept).widening(wide))
        outs, ran_on = reference.measure(q.model)
        probes.append((n, worst(outs, metric)))
        return q, outs, ran_on

    def within(got: tuple[Quantized, list[OutputAccuracy], str]) -> bool:
        return worst(got[1], metric) <= tol

    def bisect(attempt: Callable[[int], tuple], n: int, best: tuple, lo: int = 1) -> tuple[tuple, int]:
        """The least k in [lo, n] whose ``attempt(k)`` is within TOL; ``best`` is the
        probe of ``attempt(n)``, within TOL. (Where the error is not monotonic in k, a k
        whose probe is within TOL, not always the least.)"""
        best_k, hi = n, n
        while lo < hi:
            mid = (lo + hi) // 2
            got = attempt(mid)
            if within(got):
                best, best_k, hi = got, mid, mid
            else:
                lo = mid + 1
        return best, best_k

    full = probe([])
    full_err = worst(full[1], metric)
    if full_err <= tol:
        return AutoResult(*full, tol, metric, [], True, None, probes)
    say("ranking nodes by the error each adds")
    sens = measure_sensitivity(full[0], sets, reference.runner, macs=macs, progress=say)
    skip = set(options.exclude_nodes)
    adds: dict[str, float] = {}
    for r in sens.rows:
        if r.node not in skip and r.op_type not in COMPUTE_OPS and r.op_type not in options.exclude_ops:
            adds[r.op_type] = max(adds.get(r.op_type, -math.inf), r.added)
    # a type whose nodes add next to nothing (Reshape, Transpose: QDQ passes their values
    # through on one scale) does not help in float: no probe for it
    floor = SILENT * max(max(adds.values(), default=0.0), 0.0)
    candidates = sorted(t for t, a in adds.items() if a > floor)
    silent = sorted(t for t, a in adds.items() if a <= floor)
    types: list[tuple[str, float]] = []
    for k, op in enumerate(candidates):
        say(f"op type {k + 1} of {len(candidates)} in float: {op}")
        q = quantizer.quantize(options.excluding(ops=[op]))
        types.append((op, worst(reference.measure(q.model)[0], metric)))
    types.sort(key=lambda te: te[1])
    free = search_order(sens, types, full_err, tol, skip)

    tried: list[tuple[str, float]] = []

    def result(got: tuple, kept: list[str], reached: bool) -> AutoResult:  # noqa: ANN001
        return AutoResult(*got, tol, metric, kept, reached, sens, probes, types, tried, silent)

    # 1. the nodes that cost no MACs
    got = probe(free) if free else full
    # other calibrations with the same nodes in float (docstring, 3b): the one nearest the float model
    # wins (percentile clips the rare outliers that stretch a LayerNorm's or a GELU's range)
    tried.append((options.method, worst(got[1], metric)))
    chosen = options
    for method in methods:
        if within(got) or method == options.method:
            continue
        say(f"the same nodes in float, {method} calibration")
        current[0] = replace(options, method=method)
        alt = probe(free)
        tried.append((method, worst(alt[1], metric)))
        if worst(alt[1], metric) < worst(got[1], metric):
            got, chosen = alt, current[0]
    current[0] = chosen
    if within(got):
        best, k = bisect(lambda k: probe(free[:k]), len(free), got) if free else (got, 0)
        return result(best, free[:k], True)
    # 4. (QDQ, 8-bit activations) the tensors no Conv/MatMul reads or writes at 16 bits, then
    # the Conv/MatMul nodes, cheapest first, with the tensors around them at 16 bits
    if chosen.format == "qdq" and wider(chosen.activation_type) != chosen.activation_type:
        found = _widen(probe, within, bisect, got[0].prepared, skip, sens,
                       macs or mac_share(got[0].prepared, {}, dims).per_node, say)
        if found is not None:
            best, widened = found
            return AutoResult(*best, tol, metric, list(best[0].options.exclude_nodes[len(options.exclude_nodes):]),
                              True, sens, probes, types, tried, silent, widened, len(best[0].options.wide_tensors))
    # 5. else the Conv/MatMul family in float, ranked again with the free nodes in float (the
    # first ranking was measured amid their noise)
    say("ranking the Conv/MatMul nodes again with the rest in float")
    again = measure_sensitivity(got[0], sets, reference.runner, macs=macs, progress=say) if free else sens
    ranked = [r.node for r in again.rows if r.op_type in COMPUTE_OPS and r.node not in skip]
    ranked += [r.node for r in sens.rows if r.op_type in COMPUTE_OPS and r.node not in skip and r.node not in ranked]
    if not ranked:
        return result(got, free, False)
    every = probe(free + ranked)
    if not within(every):
        return result(every, free + ranked, False)
    best, k = bisect(lambda k: probe(free + ranked[:k]), len(ranked), every)
    # with those Conv/MatMul nodes in float, the free nodes that need not be
    best, j = bisect(lambda j: probe(ranked[:k] + free[:j]), len(free), best, lo=0) if free else (best, 0)
    return result(best, ranked[:k] + free[:j], True)


#: ops onnxruntime turns into MatMulNBits when their int8 weight is not read by an 8-bit kernel
_NBITS_PRONE = frozenset({"MatMul", "Gemm"})


def cheapest_first(nodes: Sequence[str], macs: Mapping[str, int]) -> list[str]:
    """``nodes`` by the MACs each would take out of int8, fewest first; the given order
    (the sensitivity ranking) breaks ties."""
    return [n for _, n in sorted(enumerate(nodes), key=lambda k_n: (macs.get(k_n[1]) or 0, k_n[0]))]


def _widen(probe: Callable[..., tuple], within: Callable[[tuple], bool], bisect: Callable[..., tuple],
           prepared: onnx.ModelProto, skip: set[str], sens: Sensitivity, macs: Mapping[str, int],
           say: Callable[[str], None]) -> tuple[tuple, list[str]] | None:
    """Step 4 of the module docstring: (the probe within TOL, the Conv/MatMul nodes whose
    tensors it widened), or None when even every Conv/MatMul widened is not within TOL."""
    free = free_tensors(prepared)
    say(f"{len(free)} activation tensor(s) no Conv/MatMul reads or writes at 16 bits")
    base = probe([], free, 0)
    if within(base):
        return base, []
    ranked = [r.node for r in sens.rows if r.op_type in COMPUTE_OPS and r.node not in skip]
    ranked += [n.name for n in prepared.graph.node
               if n.op_type in COMPUTE_OPS and n.name not in skip and n.name not in ranked]
    order = cheapest_first(ranked, macs)
    if not order:
        return None
    matmuls = {n.name for n in prepared.graph.node if n.op_type in _NBITS_PRONE}

    def attempt(k: int) -> tuple:
        # a widened MatMul keeps its weight in float: onnxruntime (1.32, CPU) rewrites
        # DequantizeLinear(int8 weight) -> MatMul into MatMulNBits where the MatMul is not
        # fused as an 8-bit one, and computes it wrongly (on the tests' tiny net: an error of
        # 0.67 of the output's range, 0.0095 with its graph optimizations off)
        return probe([n for n in order[:k] if n in matmuls], free + node_tensors(prepared, order[:k]), k)

    every = attempt(len(order))
    if not within(every):
        return None
    best, k = bisect(attempt, len(order), every)
    return best, order[:k]
