"""Axis attributes against the rank of the input they index, from whatever rank is known.

The op's own inference (:mod:`editor.validation.typecheck`) checks ``axis`` ranges only when
*every* input type is declared; in exported models the inputs of a Concat or a Gather are
usually computed values with no declaration, so a Concat ``axis=3`` over rank-2 inputs went
unnoticed live while onnx's full check and onnxruntime both refuse the model. Here one known
rank is enough: the rank of the input the attribute indexes (for Concat, of any input: they
all share it), taken from a declaration, an initializer or a Constant node.

NOTE: a rule is listed only where onnx's inference rejects the out-of-range value when it
knows the rank (tests/editor/test_validation_truth.py builds each case and asks onnx), so
every problem here is an error onnx stands behind. The ranges are the widest any opset of
the op accepts (negative axes count from the end), never stricter than onnx.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import onnx

#: ANY: the rank of any input (all inputs of the op share one rank)
ANY = -1


@dataclass(frozen=True)
class AxisRule:
    """``attr`` of this op indexes the dims of input ``source``, or with ``of_output`` those of
    the output (Unsqueeze: the input's rank plus one dim per axis); ``inclusive`` lets the
    axis equal the rank (Flatten)."""

    attr: str
    source: int = 0
    of_output: bool = False
    inclusive: bool = False
    kind: str = "axis"  # "axis" (int), "axes" (ints), "perm" (a permutation of the dims)


_REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")

RULES: dict[str, tuple[AxisRule, ...]] = {
    "Concat": (AxisRule("axis", ANY),),
    "Gather": (AxisRule("axis"),),
    "GatherElements": (AxisRule("axis"),),
    "ScatterElements": (AxisRule("axis"),),
    "Softmax": (AxisRule("axis"),),
    "LogSoftmax": (AxisRule("axis"),),
    "Hardmax": (AxisRule("axis"),),
    "Flatten": (AxisRule("axis", inclusive=True),),
    "Split": (AxisRule("axis"),),
    "Squeeze": (AxisRule("axes", kind="axes"),),
    "Unsqueeze": (AxisRule("axes", kind="axes", of_output=True),),
    "ArgMax": (AxisRule("axis"),),
    "ArgMin": (AxisRule("axis"),),
    "TopK": (AxisRule("axis"),),
    "Transpose": (AxisRule("perm", kind="perm"),),
    **{op: (AxisRule("axes", kind="axes"),) for op in _REDUCE},
}


def _ints(attr: onnx.AttributeProto, kind: str) -> list[int] | None:
    if kind == "axis":
        return [attr.i] if attr.type == onnx.AttributeProto.INT else None
    return list(attr.ints) if attr.type == onnx.AttributeProto.INTS else None


def axis_problems(node: onnx.NodeProto, rank_of: Callable[[str], int | None]) -> list[str]:
    """Messages for each axis attribute of ``node`` out of range for its input's known rank."""
    rules = RULES.get(node.op_type)
    if not rules or node.domain not in ("", "ai.onnx"):
        return []
    out: list[str] = []
    attrs = {a.name: a for a in node.attribute}
    for rule in rules:
        attr = attrs.get(rule.attr)
        if attr is None or attr.ref_attr_name:
            continue
        values = _ints(attr, rule.kind)
        if values is None:
            continue  # a wrong attribute type is the schema check's problem
        rank = _source_rank(node, rule, rank_of)
        if rank is None:
            continue
        if rule.of_output:
            rank += len(values)
        if rule.kind == "perm":
            if sorted(values) != list(range(rank)):
                out.append(f"perm {values} is not a permutation of the {rank} dims of its input")
            continue
        hi = rank if rule.inclusive else rank - 1
        bad = [x for x in values if not -rank <= x <= hi]
        if bad:
            what = f"{rule.attr} {bad[0]}" if rule.kind == "axis" else f"{rule.attr} {values}"
            out.append(f"{what} is out of range for rank {rank} (must be in [{-rank}, {hi}])")
    return out


def _source_rank(node: onnx.NodeProto, rule: AxisRule, rank_of: Callable[[str], int | None]) -> int | None:
    if rule.source == ANY:
        for name in node.input:
            if name:
                r = rank_of(name)
                if r is not None:
                    return r
        return None
    if rule.source >= len(node.input) or not node.input[rule.source]:
        return None
    return rank_of(node.input[rule.source])
