"""Per-node sensitivity: the error each quantized node *adds*, measured, not guessed.

The float model (as prepared for the quantizer) and the quantized one run on held-back
inputs through the compare engine (:func:`editor.debug.compare_runs`), every intermediate
captured and mapped (the same node names in QDQ; rewrites for QOperator). Each tensor's
error is its relative RMS error, read from the engine's cosine: ``sqrt(2 (1 - cos))``
(scale-free, and for quantization noise the noise-to-signal ratio). A quantized node's
*added* error is its output's error minus the worst of its inputs': what quantizing this
node's inputs and weights did, not what it inherited from upstream. This is how fp16's
``--auto-mixed`` ranks nodes (:mod:`editor.surgery.automixed`), with the compare engine
doing the mapping and the statistics. Over several held-back sets a tensor's error is its
worst.

The ranking (most added error first) is what ``--auto`` bisects along and what the
window's sensitivity table and heat map show.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx

from editor.debug import Comparison, RunSpec, compare_runs
from editor.quantize.engine import Quantized
from editor.runtime import Runner

__all__ = ["NodeSensitivity", "Sensitivity", "measure_sensitivity", "tensor_error"]


def tensor_error(cosine: float | None) -> float | None:
    """Relative RMS error from a cosine similarity (module docstring); None when unknown."""
    if cosine is None or not math.isfinite(cosine):
        return None
    return math.sqrt(max(0.0, 2.0 * (1.0 - cosine)))


@dataclass
class NodeSensitivity:
    """One quantized node of the float model and what quantizing it costs."""

    node: str
    op_type: str
    #: how it is quantized ('int8', 'int4 weights' ...)
    kind: str
    #: error its output has minus the worst of its inputs' (relative RMS)
    added: float
    #: its output's error (relative RMS) and cosine, worst over the sets
    error: float
    cosine: float | None
    tensor: str
    macs: int | None = None

    def to_json(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else x

        return {"node": self.node, "op_type": self.op_type, "kind": self.kind, "added": num(self.added),
                "error": num(self.error), "cosine": num(self.cosine), "tensor": self.tensor, "macs": self.macs}


@dataclass
class Sensitivity:
    """Quantized nodes, the one adding the most error first (module docstring)."""

    rows: list[NodeSensitivity]
    sets: int
    #: the first set's comparison (the compare heat map and the Compare dock show it)
    comparison: Comparison | None = None
    notes: list[str] = field(default_factory=list)

    def ranking(self) -> list[str]:
        return [r.node for r in self.rows]

    def lines(self, top: int = 10) -> list[str]:
        out = [f"sensitivity on {self.sets} held-back set(s): the error each quantized node adds "
               "(relative RMS, its output's minus its inputs' worst):"]
        for r in self.rows[:top]:
            cos = "-" if r.cosine is None else f"{r.cosine:.5f}"
            macs = "" if r.macs is None else f", {r.macs / 1e6:.1f}M MACs"
            out.append(f"  {r.node} ({r.op_type}, {r.kind}): adds {r.added:.4f}, output error {r.error:.4f}, "
                       f"cosine {cos}{macs}")
        if len(self.rows) > top:
            out.append(f"  ... {len(self.rows) - top} more")
        out += [f"note: {n}" for n in self.notes]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"sets": self.sets, "nodes": [r.to_json() for r in self.rows], "notes": self.notes}


def measure_sensitivity(quantized: Quantized, held_back: Sequence[Mapping[str, Any]], runner: Runner, *,
                        macs: Mapping[str, int] | None = None, timeout: float | None = None,
                        progress: Callable[[str], None] | None = None) -> Sensitivity:
    """Rank ``quantized``'s quantized nodes by the error each adds on ``held_back``."""
    float_model = quantized.prepared
    errors: dict[str, float] = {}
    cosines: dict[str, float | None] = {}
    first: Comparison | None = None
    a, b = RunSpec(float_model, "ort", name="float"), RunSpec(quantized.model, "ort", name="quantized")
    for k, feeds in enumerate(held_back):
        if progress is not None:
            progress(f"measuring sensitivity on held-back set {k + 1} of {len(held_back)}")
        cmp = compare_runs(a, b, dict(feeds), runner=runner, timeout=timeout)
        first = first or cmp
        for row in cmp.tensors:
            e = row.error
            if e is None:
                continue
            err = math.inf if e.nonfinite_text() else tensor_error(e.cosine)
            if err is None:
                continue
            if err >= errors.get(row.a, -1.0):
                errors[row.a], cosines[row.a] = err, e.cosine
    rows = _rank(float_model, quantized.quantized, errors, cosines, macs or {})
    notes = []
    unmeasured = len(quantized.quantized) - len(rows)
    if unmeasured > 0:
        notes.append(f"{unmeasured} quantized node(s) have no compared output (unmapped or not float): not ranked")
    return Sensitivity(rows, len(held_back), first, notes)


def _rank(model: onnx.GraphProto | onnx.ModelProto, kinds: Mapping[str, str], errors: Mapping[str, float],
          cosines: Mapping[str, float | None], macs: Mapping[str, int]) -> list[NodeSensitivity]:
    graph = model.graph if isinstance(model, onnx.ModelProto) else model
    rows: list[NodeSensitivity] = []
    for node in graph.node:
        kind = kinds.get(node.name)
        if kind is None:
            continue
        outs = [(errors[o], o) for o in node.output if o in errors]
        if not outs:
            continue
        err, tensor = max(outs)
        into = max((errors[i] for i in node.input if i in errors), default=0.0)
        added = err - into if math.isfinite(err - into) else (math.inf if not math.isfinite(err) else 0.0)
        rows.append(NodeSensitivity(node.name, node.op_type, kind, added, err, cosines.get(tensor), tensor,
                                    macs.get(node.name)))
    rows.sort(key=lambda r: (-r.added, -r.error, r.node))
    return rows
