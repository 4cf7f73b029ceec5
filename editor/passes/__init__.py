"""Graph passes: functions over the document that plan one undoable, previewable change.

| pass | planner |
| --- | --- |
| remove unused nodes and initializers | :func:`plan_remove_unused` |
| remove Identity nodes | :func:`plan_remove_identity` |
| topological sort | :func:`plan_toposort` |
| constant folding | :func:`plan_constant_folding` |
| fuse BatchNormalization into Conv | :func:`plan_fuse_bn_into_conv` |
| fuse MatMul + Add into Gemm | :func:`plan_fuse_matmul_add` |
| opset conversion | :func:`plan_convert_opset` |
| shape inference into value_info | :func:`plan_infer_shapes` |
| extract a subgraph as a new model (the document is unchanged) | :func:`extract_model` |
| the optimizer: named passes to a fixed point over every graph | :func:`plan_optimize` |
| set dims (symbolic or fixed), rewriting the constants that pin them | :func:`plan_set_dims` |
| run before/after on the same inputs, report the max difference | :func:`check_equivalence` |
"""

from editor.passes.apply import ApplyModel
from editor.passes.base import PassPlan, run_to_fixed_point
from editor.passes.cleanup import plan_remove_identity, plan_remove_unused, plan_toposort, topological_order
from editor.passes.convert import plan_convert_opset, plan_infer_shapes
from editor.passes.extract import extract_model
from editor.passes.fold import plan_constant_folding
from editor.passes.dims import check_dims_follow, plan_set_dims
from editor.passes.fuse import plan_fuse_bn_into_conv, plan_fuse_matmul_add
from editor.passes.manager import REGISTRY, OptimizeOptions, OptimizeReport, optimize_model, plan_optimize
from editor.passes.safety import CheckResult, check_equivalence

#: the clean-up passes offered in the UI, in a sensible order
CLEANUP_PASSES = {
    "remove-unused": plan_remove_unused,
    "remove-identity": plan_remove_identity,
    "toposort": plan_toposort,
    "fold-constants": plan_constant_folding,
    "fuse-bn-conv": plan_fuse_bn_into_conv,
    "fuse-matmul-add": plan_fuse_matmul_add,
    "optimize-basic": lambda doc: plan_optimize(doc, OptimizeOptions(level="basic")),
    "optimize-extended": lambda doc: plan_optimize(doc, OptimizeOptions(level="extended")),
}

__all__ = [
    "REGISTRY",
    "ApplyModel",
    "CLEANUP_PASSES",
    "CheckResult",
    "OptimizeOptions",
    "OptimizeReport",
    "PassPlan",
    "check_dims_follow",
    "check_equivalence",
    "optimize_model",
    "plan_optimize",
    "plan_set_dims",
    "extract_model",
    "plan_constant_folding",
    "plan_convert_opset",
    "plan_fuse_bn_into_conv",
    "plan_fuse_matmul_add",
    "plan_infer_shapes",
    "plan_remove_identity",
    "plan_remove_unused",
    "plan_toposort",
    "run_to_fixed_point",
    "topological_order",
]
