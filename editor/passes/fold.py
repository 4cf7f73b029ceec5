"""Constant folding as one window/script step: the optimizer's size-limited, shape-aware
folding (:mod:`editor.passes.folding`) over every graph of the document.

NOTE: this used to fold node by node into new initializers with no size accounting. On
real models that copied a weight read through 14 Identity outputs 14 times (84.8 MB ->
139 MB) and turned int8 DequantizeLinear weights back into float32 (22.9 MB -> 109 MB).
The optimizer's fold only creates what the constants it frees pay for; constants left
unused are removed by "remove unused".

``_known_values`` (a graph's initializers and Constant outputs) stays here for the
document-level fusions in :mod:`editor.passes.fuse`.
"""

from __future__ import annotations

import onnx

from editor.commands.initializers import constant_tensor
from editor.document import Document, ScopeId
from editor.passes.base import PassPlan
from editor.passes.folding import DEFAULT_SIZE_LIMIT


def _known_values(doc: Document, sid: ScopeId) -> dict[str, onnx.TensorProto]:
    s = doc.scope(sid)
    g = s.graph
    inputs = set(s.input_names())
    known: dict[str, onnx.TensorProto] = {}
    if isinstance(g, onnx.GraphProto):
        for t in g.initializer:
            if t.name not in inputs:  # an initializer that is also an input can be overridden
                known[t.name] = t
    for nid in s.node_ids:
        n = doc.node(nid)
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output:
            try:
                known[n.output[0]] = constant_tensor(n)
            except ValueError:
                pass
    return known


def plan_constant_folding(doc: Document, *, size_limit: int = DEFAULT_SIZE_LIMIT,
                          allow_growth: bool = False) -> PassPlan:
    """Fold constants and shape arithmetic in every graph, within the size budget."""
    from editor.passes.manager import OptimizeOptions, plan_optimize

    plan = plan_optimize(doc, OptimizeOptions(passes=["fold-constants"], size_limit=size_limit,
                                              allow_growth=allow_growth, max_rounds=1))
    plan.name = "Constant folding"
    if plan.command is not None:
        plan.command.label = "Constant folding"
    return plan
