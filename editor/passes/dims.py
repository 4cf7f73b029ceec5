"""Set input dims — fixed or symbolic — so that the model really follows them.

Making a fixed dim symbolic (batch 1 -> ``N``) changes only the declared input; the graph
may still carry the old size in the constants that shape tensors: a Reshape to
``[1, 512]``, an Expand to ``[1, 16, 64]``, a ConstantOfShape ``[1, 128]``. At batch 3
such a model fails or, worse, silently returns batch 1's shape. This module:

1. finds those *pins* with shape inference run with the new symbol: a Reshape/Expand whose
   data carries the symbol at an axis where its constant target holds the old size;
2. rewrites what it can exactly — a Reshape entry becomes ``0`` (copy the data's dim) or
   ``-1`` (the only inferred entry), an Expand entry becomes ``1`` (keep the data's dim).
   Each rewrite gives the same result at the old size, so the model is unchanged there;
3. lists what it cannot rewrite (ConstantOfShape, Tile, Expand of data without the symbol)
   and refuses unless forced;
4. checks by running the result at two sizes that some output dim follows the new dim,
   and at the old size that outputs equal the original's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx

from editor.errors import CommandError
from editor.passes.graphview import GraphView, attr
from editor.passes.shapes import infer_dims


class DimSpecError(CommandError):
    """A dim spec that names nothing or cannot be parsed (bad input: exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class DimSpec:
    name: str  # a main-graph input (or output)
    axis: int
    value: int | str  # a size, or a symbol


@dataclass
class DimPlan:
    model: onnx.ModelProto
    changes: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)  # pins rewritten exactly
    unresolved: list[str] = field(default_factory=list)  # pins left (refused unless forced)
    symbols: dict[str, int] = field(default_factory=dict)  # symbol -> the fixed size it replaced


def parse_dim_spec(text: str) -> DimSpec:
    """``NAME:AXIS=VALUE`` (VALUE an int or a symbol name)."""
    name, sep, rest = text.rpartition(":")
    axis_text, eq, value = rest.partition("=")
    if not sep or not name or not eq or not value:
        raise DimSpecError(f"{text!r}: expected NAME:AXIS=VALUE (e.g. input:0=batch or input:0=4)")
    try:
        axis = int(axis_text)
    except ValueError:
        raise DimSpecError(f"{text!r}: the axis {axis_text!r} is not an integer") from None
    parsed: int | str = int(value) if value.lstrip("-").isdigit() else value
    if isinstance(parsed, int) and parsed < 0:
        raise DimSpecError(f"{text!r}: a size cannot be negative")
    return DimSpec(name, axis, parsed)


def _value_infos(model: onnx.ModelProto, name: str) -> list[onnx.ValueInfoProto]:
    g = model.graph
    return [vi for vi in list(g.input) + list(g.output) if vi.name == name]


def set_dims(model: onnx.ModelProto, specs: Sequence[DimSpec]) -> tuple[onnx.ModelProto, list[str], dict]:
    """A copy with the dims set; also returns {symbol: old size} for dims made symbolic."""
    new = onnx.ModelProto()
    new.CopyFrom(model)
    changes, symbols = [], {}
    for spec in specs:
        vis = _value_infos(new, spec.name)
        if not vis:
            names = [vi.name for vi in list(new.graph.input) + list(new.graph.output)]
            raise DimSpecError(f"{spec.name!r} is not a graph input or output (these are: {', '.join(names)})")
        for vi in vis:
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
                raise CommandError(f"{spec.name!r} has no known shape")
            rank = len(tt.shape.dim)
            if not -rank <= spec.axis < rank:
                raise DimSpecError(f"axis {spec.axis} is outside {spec.name!r}'s rank {rank}")
            d = tt.shape.dim[spec.axis]
            old = d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            if isinstance(spec.value, str):
                if isinstance(old, int):
                    symbols[spec.value] = old
                d.ClearField("dim_value")
                d.dim_param = spec.value
            else:
                d.ClearField("dim_param")
                d.dim_value = spec.value
        changes.append(f"{spec.name} dim {spec.axis}: {old if old is not None else '?'} -> {spec.value}")
    return new, changes, symbols


def _const_target(view: GraphView, name: str) -> np.ndarray | None:
    v = view.const(name)
    if v is None:
        # old exporters list every initializer as an input too: still the file's constant
        init = next((t for t in view.graph.initializer if t.name == name), None)
        v = view.reader(init) if init is not None else None
    return v if v is not None and v.dtype.kind in "iu" and v.ndim == 1 else None


def rewrite_pins(model: onnx.ModelProto, symbols: dict[str, int],
                 axes: dict[str, set[int]] | None = None) -> tuple[list[str], list[str]]:
    """Rewrite, in place, the main graph's constants that pin a dim made symbolic.

    A ConstantOfShape/Tile/Expand constant is listed as a pin it cannot rewrite when it
    holds the old size at an axis the symbol was given at (``axes``; a weight's
    ``[256, 64, 1, 1]`` does not pin a batch of 1)."""
    if not symbols:
        return [], []
    dims = infer_dims(model)
    view = GraphView(model.graph)
    fixed, unresolved = [], []
    for n in list(model.graph.node):
        if n.domain not in ("", "ai.onnx") or len(n.input) < 2 and n.op_type != "ConstantOfShape":
            continue
        label = f"{n.op_type} {n.name or n.output[0]!r}"
        rewritten = False
        if n.op_type in ("Reshape", "Expand"):
            target = _const_target(view, n.input[1])
            data = (dims.get(n.input[0]) or (0, None))[1]
            if target is None or data is None:
                continue
            new = target.copy()
            offset = len(target) - len(data) if n.op_type == "Expand" else 0
            for sym, old in symbols.items():
                for j, d in enumerate(data):
                    k = j + offset
                    if d != sym or not 0 <= k < len(new) or int(new[k]) != old:
                        continue
                    if n.op_type == "Expand":
                        new[k] = 1
                    elif not attr(n, "allowzero", 0):
                        new[k] = 0
                    elif -1 not in new:
                        new[k] = -1
                if n.op_type == "Reshape" and any(d == sym for d in data) and np.array_equal(new, target) \
                        and old in target.tolist() and -1 not in target.tolist() and target.tolist().count(old) == 1:
                    new[target.tolist().index(old)] = -1
            if not np.array_equal(new, target):
                if model.ir_version < 4:
                    model.ir_version = 4  # IR 3 wants every initializer listed as an input
                name = view.new_name(n.input[1] + "_dynamic")
                view.add_constant(name, new.astype(target.dtype))
                n.input[1] = name
                fixed.append(f"{label}: target {target.tolist()} -> {new.tolist()}")
                rewritten = True
        if n.op_type in ("ConstantOfShape", "Tile", "Expand") and not rewritten:
            src = n.input[0] if n.op_type == "ConstantOfShape" else n.input[1]
            target = _const_target(view, src)
            if target is None:
                continue
            for sym, old in symbols.items():
                at = (axes or {}).get(sym)
                hits = [k for k, v in enumerate(target.tolist()) if v == old]
                if at is not None:
                    hits = [k for k in hits if k in at or k - len(target) in at]
                if hits:
                    unresolved.append(f"{label}: constant {src!r} = {target.tolist()} holds {old} "
                                      f"(the old size of {sym!r}); it cannot follow the new dim")
    return fixed, unresolved


def plan_dims(model: onnx.ModelProto, specs: Sequence[DimSpec]) -> DimPlan:
    new, changes, symbols = set_dims(model, specs)
    axes: dict[str, set[int]] = {}
    for spec in specs:
        if isinstance(spec.value, str):
            axes.setdefault(spec.value, set()).add(spec.axis)
    # a rewritten Reshape lets the symbol reach the next one: infer again until none is left
    fixed: list[str] = []
    for _ in range(50):
        more, unresolved = rewrite_pins(new, symbols, axes)
        fixed += more
        if not more:
            break
    return DimPlan(new, changes + fixed, fixed, unresolved, symbols)


def plan_set_dims(doc, specs: Sequence[DimSpec], *, force: bool = False):  # noqa: ANN001, ANN201
    """The dims change as one previewable, undoable step on the document (a PassPlan).

    Pins that cannot be rewritten are the plan's warnings; with any, the plan has no
    command unless ``force``. ``plan.result_model`` is the new model, for
    :func:`check_dims_follow`."""
    from editor.passes.apply import ApplyModel
    from editor.passes.base import PassPlan

    dp = plan_dims(doc.model, specs)
    title = "Set dims (" + ", ".join(f"{s.name}:{s.axis}={s.value}" for s in specs) + ")"
    warnings = [f"pinned: {u}" for u in dp.unresolved]
    command = None if (dp.unresolved and not force) else ApplyModel(dp.model, title)
    plan = PassPlan(title, dp.changes if command is not None else [], command, warnings)
    plan.result_model = dp.model
    return plan


@dataclass
class FollowCheck:
    ok: bool
    message: str


def check_dims_follow(before: onnx.ModelProto, after: onnx.ModelProto, symbols: dict[str, int], *,
                      base_dir: str | None = None, runner=None) -> FollowCheck:  # noqa: ANN001 - Runner
    """Run ``after`` at two sizes of each new symbol: some output dim must follow; at the
    old size the outputs must equal ``before``'s."""
    from editor.passes.safety import check_equivalence
    from editor.runtime import ModelSource, Runner, make_inputs

    own = runner is None
    runner = runner or Runner()
    try:
        same = check_equivalence(before, after, base_dir=base_dir, runner=runner, dims=dict(symbols))
        if same.status == "different":
            return FollowCheck(False, f"at the old size: {same.summary()}")
        source = ModelSource.from_bytes(after.SerializeToString(), base_dir=base_dir)
        shapes = []
        sizes = [max(symbols.values()) + 1, max(symbols.values()) + 2]
        for size in sizes:
            result = runner.run(source, make_inputs(after, dims={s: size for s in symbols}), timeout=120)
            if not result.ok:
                return FollowCheck(False, f"at size {size} the model does not run: {result.error}")
            shapes.append({k: r.shape for k, r in result.outputs.items() if r.role == "output"})
        a, b = shapes
        follows = [f"{k}{list(a[k])} -> {list(b[k])}" for k in a
                   if a[k] is not None and b.get(k) is not None and len(a[k]) == len(b[k])
                   and any(x == sizes[0] and y == sizes[1] for x, y in zip(a[k], b[k]))]
        if not follows:
            return FollowCheck(False, f"no output dim follows the new dim at sizes {sizes}: "
                                      + ", ".join(f"{k}{list(v) if v else v}" for k, v in b.items()))
        return FollowCheck(True, f"outputs follow the new dim ({'; '.join(follows[:3])}); "
                                 f"{same.summary() if same.status != 'not-run' else 'old size not compared'}")
    finally:
        if own:
            runner.close()
