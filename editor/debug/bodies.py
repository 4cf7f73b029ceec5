"""Values inside If bodies made comparable: each If whose condition a run fixed is inlined
into the branch it took.

onnxruntime cannot return a value computed inside an If branch (it exists only while the
branch runs), so a comparison of the main graph stops at the If: "the first divergence is
``If_1``" when the change is three nodes deep in its ``then_branch``. For one run, though,
the branch an If takes is fixed by its condition, a main-graph value; a copy of the model
with that If replaced by the nodes of the taken branch computes the same outputs *and* has
every value of the branch in its main graph, where any backend can return it, any
comparison pair it and any reduction cut it. :func:`inline_by_running` does that to a fixed
point (an inlined branch may hold Ifs of its own, decided by values computed inside it),
asking the caller's run for the conditions it needs at each level.

The copy keeps every name: the branch's nodes and values as the body had them (so the
first divergence names the body node), the If's outputs produced by Identity nodes that
carry the If's own name (so a tensor the If gave still points at the If). :class:`Inlined`
says which node came from which body, for reports ("inside If '/model/If_1' then_branch").

NOTE: Loop and Scan bodies are not unrolled: a body that runs N times has N values per
name, and no single main-graph copy holds them; their outputs are compared as the node's.
An If whose branch would redefine a name the graph already has (not valid ONNX, but seen)
is left as it is, and said so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

__all__ = ["Inlined", "inline_by_running", "inline_taken_branches"]


@dataclass
class Inlined:
    """A model with taken branches inlined, and where its nodes came from."""

    model: onnx.ModelProto
    #: node name -> "If '/model/If_1' then_branch" (nested: "... > If 'x' else_branch")
    scope: dict[str, str] = field(default_factory=dict)
    #: If name -> the branch taken ("then_branch" / "else_branch")
    taken: dict[str, str] = field(default_factory=dict)
    #: what could not be inlined, and why
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.taken)


def _condition(value: Any) -> bool | None:
    """A run's value of an If condition as a bool (None when it is not a single value)."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
        return bool(value.reshape(-1)[0])
    return None


def _defined_names(graph: onnx.GraphProto) -> set[str]:
    names = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    names |= {t.values.name for t in graph.sparse_initializer}
    for node in graph.node:
        names.update(o for o in node.output if o)
    return names


def _unique_name(node: onnx.NodeProto, taken: set[str], keep: bool = False) -> onnx.NodeProto:
    """``node`` with a name no other node of the graph has (onnxruntime refuses two nodes of
    one name; a body's node names need not be unique against the main graph's); ``keep``:
    the name is the inlined If's own, which is leaving the graph."""
    if keep or node.name not in taken:
        taken.add(node.name)
        return node
    k = 2
    while f"{node.name}#{k}" in taken:
        k += 1
    renamed = onnx.NodeProto()
    renamed.CopyFrom(node)
    renamed.name = f"{node.name}#{k}"
    taken.add(renamed.name)
    return renamed


def inline_taken_branches(model: onnx.ModelProto, conditions: Mapping[str, Any],
                          scope: Mapping[str, str] | None = None) -> Inlined:
    """A copy of ``model`` with every main-graph If whose condition ``conditions`` holds
    replaced by its taken branch (module docstring); ``scope`` is carried over from an
    earlier level (its labels prefix the new ones)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    result = Inlined(out, dict(scope or {}))
    defined = _defined_names(g)
    node_names = {n.name for n in g.node if n.name}
    nodes: list[onnx.NodeProto] = []
    for node in g.node:
        cond = _condition(conditions.get(node.input[0])) if node.op_type == "If" and node.domain in ("", "ai.onnx") \
            and node.input else None
        if cond is None:
            nodes.append(node)
            continue
        attr = "then_branch" if cond else "else_branch"
        body = next((a.g for a in node.attribute if a.name == attr), None)
        label = f"If {node.name or node.output[0]!r} {attr}"
        if body is None:
            nodes.append(node)
            continue
        new = _defined_names(body) - {vi.name for vi in body.input}
        clash = sorted(new & defined)
        if clash:
            result.notes.append(f"{label} not inlined: it redefines {clash[0]!r}")
            nodes.append(node)
            continue
        defined |= new
        outer = result.scope.get(node.name)
        where = f"{outer} > {label}" if outer else label
        for t in body.initializer:
            g.initializer.append(t)
        for t in body.sparse_initializer:
            g.sparse_initializer.append(t)
        g.value_info.extend(body.value_info)
        for inner in body.node:
            if inner.name:
                inner = _unique_name(inner, node_names)
                result.scope[inner.name] = where
            nodes.append(inner)
        # the If's outputs, from the branch's: Identity nodes named after the If (the first
        # one its very name, so the If's first tensor still points at the If)
        for k, (src, dst) in enumerate(zip(body.output, node.output)):
            if dst:
                name = (node.name or f"If_{dst}") if k == 0 else f"{node.name or 'If'}:{k}"
                identity = _unique_name(onnx.helper.make_node("Identity", [src.name], [dst], name=name), node_names,
                                        keep=name == node.name)
                nodes.append(identity)
                if outer:
                    result.scope[identity.name] = outer
        result.taken[node.name or node.output[0]] = attr
    del g.node[:]
    g.node.extend(nodes)
    return result


def inline_by_running(model: onnx.ModelProto,
                      conditions_of: Callable[[onnx.ModelProto, list[str]], Mapping[str, Any]],
                      *, max_levels: int = 8) -> Inlined:
    """Inline taken branches level by level: ``conditions_of(model, names)`` runs ``model``
    and gives the values of the If conditions named (a nested If's condition is computed
    inside its parent's branch, so it is known only once that branch is inlined)."""
    current = Inlined(model)
    for _ in range(max_levels):
        ifs = [n for n in current.model.graph.node if n.op_type == "If" and n.domain in ("", "ai.onnx") and n.input]
        if not ifs:
            break
        names = list(dict.fromkeys(n.input[0] for n in ifs))
        values = conditions_of(current.model, names)
        step = inline_taken_branches(current.model, values, current.scope)
        if not step.changed:
            current.notes += step.notes
            break
        step.taken = {**current.taken, **step.taken}
        step.notes = current.notes + step.notes
        current = step
    return current
