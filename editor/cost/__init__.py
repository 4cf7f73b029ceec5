"""The cost model: MACs, parameters, weight bytes and activation memory per node, as
formulas in a model's dynamic dims (see :mod:`editor.cost.report` for the conventions and
:mod:`editor.cost.formulas` for the per-op table). FLOPs = 2 x MACs."""

from editor.cost.formulas import Unknown, macs_of
from editor.cost.report import SAMPLE_DIM, GraphCost, ModelCost, NodeCost, dtype_bits, graph_cost, model_cost

__all__ = ["SAMPLE_DIM", "GraphCost", "ModelCost", "NodeCost", "Unknown", "dtype_bits", "graph_cost", "macs_of",
           "model_cost"]
