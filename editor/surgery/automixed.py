"""Automatic mixed precision: the fewest fp32 nodes that bring every output within a tolerance.

Polygraphy's ``debug precision`` bisects by hand over a node order. Here the order comes
from the models themselves: one run of the fp32 model and one of the fully converted model,
both with every converted node's output captured, give each node the error it *adds*
(its output's relative error minus the worst of its inputs'). Nodes are kept in fp32 in
that order, and a bisection over how many are kept finds the smallest prefix whose outputs
are all within ``tol`` (max absolute error per output). Each probe is one conversion and
one run in the child-process runner, so the search costs about log2(n) runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from editor.errors import StudioError
from editor.runtime import Runner
from editor.surgery.compare import Comparison, compare_models, run_values
from editor.surgery.precision import PrecisionResult, convert_precision, node_label

__all__ = ["AutoMixedResult", "auto_mixed"]


@dataclass
class AutoMixedResult:
    result: PrecisionResult
    comparison: Comparison
    #: node labels kept in fp32 by the search (beyond those kept on request)
    kept: list[str] = field(default_factory=list)
    probes: int = 0
    reached: bool = True


def _rel(a: Any, b: Any) -> float:
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype.kind != "f":
        return 0.0
    x, y = a.astype(np.float64), b.astype(np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    if (~ok & np.isfinite(x)).any():
        return float("inf")
    if not ok.any():
        return 0.0
    scale = max(float(np.abs(x[ok]).max()), 1e-12)
    return float(np.abs(x[ok] - y[ok]).max()) / scale


def rank_nodes(runner: Runner, model: onnx.ModelProto, converted: PrecisionResult,
               inputs: Mapping[str, Any]) -> list[str]:
    """Labels of the converted main-graph nodes, the one adding the most error first."""
    wanted = set(converted.converted)
    nodes = [(node_label(n, k), n) for k, n in enumerate(model.graph.node) if node_label(n, k) in wanted]
    names = sorted({o for _, n in nodes for o in n.output if o} | {i for _, n in nodes for i in n.input if i})
    init = {t.name for t in model.graph.initializer}
    names = [n for n in names if n not in init]
    ref = run_values(runner, model, inputs, outputs=names)
    got = run_values(runner, converted.model, inputs, outputs=[n for n in names if n in ref])
    rel = {n: _rel(ref[n], got[n]) for n in ref if n in got}
    added = []
    for label, node in nodes:
        out = max((rel.get(o, 0.0) for o in node.output if o), default=0.0)
        into = max((rel.get(i, 0.0) for i in node.input if i), default=0.0)
        added.append((out - into if np.isfinite(out - into) else (float("inf") if not np.isfinite(out) else 0.0), label))
    added.sort(key=lambda t: -t[0])
    return [label for _, label in added]


def auto_mixed(model: onnx.ModelProto, tol: float, inputs: Mapping[str, Any], *, runner: Runner,
               convert: Callable[..., PrecisionResult] | None = None, **options: Any) -> AutoMixedResult:
    """Convert with as few nodes kept in fp32 as the search finds necessary for ``tol``.

    ``options`` go to :func:`~editor.surgery.precision.convert_precision` (``keep_nodes``
    there are kept in every probe).
    """
    convert = convert or convert_precision
    base_keep = list(options.pop("keep_nodes", ()))
    ref = run_values(runner, model, inputs)
    probes = 0

    def probe(extra: list[str]) -> tuple[PrecisionResult, Comparison]:
        nonlocal probes
        probes += 1
        res = convert(model, keep_nodes=[*base_keep, *extra], **options)
        return res, compare_models(runner, model, res.model, inputs, reference_values=ref)

    full, cmp = probe([])
    if cmp.within(tol):
        return AutoMixedResult(full, cmp, [], probes)
    order = rank_nodes(runner, model, full, inputs)
    if not order:
        raise StudioError("no converted node of the main graph can be kept in fp32 to reduce the error")
    best: tuple[PrecisionResult, Comparison, int] | None = None
    lo, hi = 1, len(order)
    res_all, cmp_all = probe(order)
    if not cmp_all.within(tol):
        return AutoMixedResult(res_all, cmp_all, order, probes, reached=False)
    best = (res_all, cmp_all, len(order))
    while lo < hi:
        mid = (lo + hi) // 2
        res, c = probe(order[:mid])
        if c.within(tol):
            best, hi = (res, c, mid), mid
        else:
            lo = mid + 1
    return AutoMixedResult(best[0], best[1], order[:best[2]], probes)
