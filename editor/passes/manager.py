"""The pass manager: named passes with dependencies, run to a fixed point over every graph.

In the spirit of onnx-optimizer: a pass has a name, a one-line description, a level
(``basic`` passes only remove what computes nothing or is constant; ``extended`` ones also
fuse and deduplicate) and the passes it needs to have run before it (its dependencies are
pulled in and ordered first). :func:`optimize_model` runs the chosen passes in order over
every graph of a model copy — functions, the main graph, every If/Loop/Scan body — and
repeats the whole sequence until a round changes nothing.

In the editor, :func:`plan_optimize` turns the result into one previewable, undoable
command (:class:`~editor.passes.apply.ApplyModel` applies only the differences), with the
nodes removed and added per op type as the preview's list of changes.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from editor.errors import StudioError
from editor.passes import rewrites as rw
from editor.passes.folding import DEFAULT_SIZE_LIMIT, FoldOptions, fold_constants
from editor.passes.graphview import GraphView, TensorReader, default_reader, iter_views, subgraphs
from editor.passes.shapes import fix_input_shapes, infer_dims

GraphPass = Callable[[GraphView, dict], int]
#: passes over the whole model rather than one graph at a time
MODEL_PASSES: dict[str, Callable[[onnx.ModelProto], int]] = {
    "eliminate-unused-opsets": rw.remove_unused_opsets,
    "initializer-inputs-to-constants": rw.initializer_inputs_to_constants,
}


class UnknownPassError(StudioError):
    """A pass name nobody registered."""


@dataclass(frozen=True)
class PassInfo:
    name: str
    description: str
    level: str  # "basic" | "extended" | "manual" (never part of a level)
    run: GraphPass | None = None  # per graph; None for model-level passes
    requires: tuple[str, ...] = ()
    needs_shapes: bool = False


REGISTRY: dict[str, PassInfo] = {}


def register(info: PassInfo) -> None:
    REGISTRY[info.name] = info


@dataclass
class OptimizeOptions:
    passes: Sequence[str] | None = None  # explicit names; None = the level's passes
    level: str = "extended"
    input_shapes: Mapping[str, Sequence[int]] = field(default_factory=dict)
    size_limit: int = DEFAULT_SIZE_LIMIT  # bytes per folded tensor
    allow_growth: bool = False
    max_rounds: int = 10


@dataclass
class OptimizeReport:
    passes: list[str]
    rounds: int = 0
    changes: dict[str, int] = field(default_factory=dict)  # pass -> changes made
    before: collections.Counter = field(default_factory=collections.Counter)  # op type -> count
    after: collections.Counter = field(default_factory=collections.Counter)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def nodes_before(self) -> int:
        return sum(self.before.values())

    @property
    def nodes_after(self) -> int:
        return sum(self.after.values())

    def op_changes(self) -> list[str]:
        """One line per op type whose count changed: ``-12 Constant`` / ``+3 Gemm``."""
        lines = []
        for op in sorted(set(self.before) | set(self.after)):
            d = self.after[op] - self.before[op]
            if d:
                lines.append(f"{d:+d} {op} ({self.before[op]} -> {self.after[op]})")
        return lines


def op_counts(model: onnx.ModelProto) -> collections.Counter:
    """Op type -> count over every graph (bodies and functions too)."""
    counts: collections.Counter = collections.Counter()
    stack: list = [model.graph] + list(model.functions)
    while stack:
        g = stack.pop()
        for n in g.node:
            counts[n.op_type] += 1
            stack += list(subgraphs(n))
    return counts


def resolve(names: Sequence[str] | None, level: str = "extended") -> list[str]:
    """The passes to run, dependencies first, each once."""
    if names is None:
        if level not in ("basic", "extended"):
            raise UnknownPassError(f"unknown level {level!r} (basic, extended)")
        levels = ("basic",) if level == "basic" else ("basic", "extended")
        names = [n for n, p in REGISTRY.items() if p.level in levels]
    order: list[str] = []

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name not in REGISTRY:
            raise UnknownPassError(f"unknown pass {name!r} (known: {', '.join(REGISTRY)})")
        if name in order or name in chain:
            return
        for dep in REGISTRY[name].requires:
            visit(dep, chain + (name,))
        order.append(name)

    for n in names:
        visit(n, ())
    return order


def optimize_model(model: onnx.ModelProto, options: OptimizeOptions | None = None, *,
                   reader: TensorReader = default_reader,
                   cancelled: Callable[[], bool] | None = None) -> tuple[onnx.ModelProto, OptimizeReport]:
    """Optimize a copy of ``model``; the original is not touched."""
    options = options or OptimizeOptions()
    started = time.perf_counter()
    names = resolve(options.passes, options.level)
    work = onnx.ModelProto()
    work.CopyFrom(model)
    report = OptimizeReport(passes=names, before=op_counts(model))
    if options.input_shapes:
        report.notes += fix_input_shapes(work, options.input_shapes)
    opsets = {o.domain: o.version for o in work.opset_import}
    for rnd in range(options.max_rounds):
        round_changes = 0
        for name in names:
            info = REGISTRY[name]
            if cancelled is not None and cancelled():
                raise StudioError("optimization cancelled")
            if info.run is None:
                n = MODEL_PASSES[name](work)
            else:
                ctx: dict = {"opsets": opsets, "options": options}
                if info.needs_shapes:
                    ctx["dims"] = infer_dims(work)
                n = sum(info.run(view, ctx) for view in iter_views(work, reader))
            report.changes[name] = report.changes.get(name, 0) + n
            round_changes += n
        report.rounds = rnd + 1
        if round_changes == 0:
            break
    report.after = op_counts(work)
    report.seconds = time.perf_counter() - started
    return work, report


# ---------------------------------------------------------------------- registry
def _with_dims(fn: Callable[[GraphView, dict], int]) -> GraphPass:
    def run(view: GraphView, ctx: dict) -> int:
        return fn(view, ctx.get("dims") or {})
    run.__doc__ = fn.__doc__
    return run


def _fold(view: GraphView, ctx: dict) -> int:
    opts: OptimizeOptions = ctx["options"]
    return fold_constants(view, FoldOptions(size_limit=opts.size_limit, allow_growth=opts.allow_growth,
                                            dims=ctx.get("dims"), opsets=ctx["opsets"]))


def _register_all() -> None:
    basic = [
        ("eliminate-identity", "remove Identity and inference-mode Dropout", rw.eliminate_identity, False),
        ("eliminate-nop", "remove no-op Transpose/Reshape/Cast/Pad/Slice/Expand/Concat", rw.eliminate_nop, True),
        ("fold-constants", "fold constants and shape arithmetic (size-limited)", None, True),
        ("eliminate-dead-nodes", "remove nodes and initializers no output depends on", rw.eliminate_dead_nodes, False),
    ]
    for name, desc, fn, shapes in basic:
        run = _fold if fn is None else _with_dims(fn)
        register(PassInfo(name, desc, "basic", run, needs_shapes=shapes))
    register(PassInfo("eliminate-unused-opsets", "remove opset imports no node uses", "basic", None))
    register(PassInfo("initializer-inputs-to-constants",
                      "stop listing initializers as graph inputs (old exporters; IR 3 becomes IR 4)", "extended", None))
    register(PassInfo("remove-stale-value-info", "remove value_info of values that are gone", "basic",
                      _with_dims(rw.remove_stale_value_info)))
    extended = [
        ("constant-to-initializer", "turn Constant nodes into initializers", rw.constant_to_initializer, False, ()),
        ("eliminate-nop-with-unit", "remove x+0, x*1, x/1, x**1, x and True, x or False", rw.eliminate_nop_with_unit,
         True, ()),
        ("fuse-consecutive-unsqueezes", "merge Unsqueeze chains", rw.fuse_consecutive_unsqueezes, True, ()),
        ("fuse-consecutive-slices", "merge Slices over different axes", rw.fuse_consecutive_slices, True, ()),
        ("dedupe-initializers", "share identical initializers", rw.dedupe_initializers, False, ()),
        ("eliminate-common-subexpressions", "merge identical nodes", rw.eliminate_common_subexpressions, False,
         ("dedupe-initializers",)),
        ("fuse-consecutive-transposes", "merge Transpose chains", rw.fuse_consecutive_transposes, False, ()),
        ("fuse-consecutive-reshapes", "merge Reshape chains", rw.fuse_consecutive_reshapes, False, ()),
        ("fuse-bn-into-conv", "fold BatchNormalization into Conv", rw.fuse_bn_into_conv, False, ()),
        ("fuse-add-into-conv", "fold a per-channel Add/Sub into the Conv bias", rw.fuse_add_into_conv, False, ()),
        ("fuse-mul-into-conv", "fold a per-channel Mul into Conv weights", rw.fuse_mul_into_conv, False, ()),
        ("fuse-matmul-add-into-gemm", "MatMul + Add -> Gemm (2-D only)", rw.fuse_matmul_add_into_gemm, True, ()),
    ]
    for name, desc, fn, shapes, requires in extended:
        register(PassInfo(name, desc, "extended", _with_dims(fn), requires, needs_shapes=shapes))
    # the order of a level's passes is the registry's order: clean up after the fusions
    for name in ("eliminate-dead-nodes", "remove-stale-value-info", "eliminate-unused-opsets"):
        REGISTRY[name] = REGISTRY.pop(name)
    register(PassInfo("initializer-to-constant", "turn initializers into Constant nodes", "manual",
                      _with_dims(rw.initializer_to_constant)))
    register(PassInfo("toposort", "order nodes so producers come first", "manual", _with_dims(rw.toposort)))


_register_all()


def plan_optimize(doc, options: OptimizeOptions | None = None, *,  # noqa: ANN001 - Document
                  cancelled: Callable[[], bool] | None = None):  # noqa: ANN201 - PassPlan
    """The optimizer as one previewable, undoable step on the document.

    The plan's changes list the nodes removed and added per op type; ``plan.report`` is the
    :class:`OptimizeReport` and ``plan.result_model`` the optimized model (for a safety check).
    """
    from editor.commands.tensors import tensor_to_array
    from editor.passes.apply import ApplyModel
    from editor.passes.base import PassPlan

    options = options or OptimizeOptions()
    new, report = optimize_model(doc.model, options, reader=lambda t: tensor_to_array(t, doc.store),
                                 cancelled=cancelled)
    title = "Optimize (" + (", ".join(report.passes) if options.passes else f"{options.level} passes") + ")"
    changes = [f"nodes {report.nodes_before} -> {report.nodes_after}"] + report.op_changes()
    changes += [f"{name}: {n} change(s)" for name, n in report.changes.items() if n]
    if new.SerializeToString(deterministic=True) == doc.model.SerializeToString(deterministic=True):
        plan = PassPlan(title, [], None, report.notes, report)
    else:
        plan = PassPlan(title, changes, ApplyModel(new, title), report.notes, report)
    plan.result_model = new
    return plan
