"""Weight-preparation chains: which constant-only nodes fold into the box that consumes them.

A model often prepares a weight in a few nodes (``DequantizeLinear`` of an int8 initializer,
``Transpose``/``Reshape``/``Cast`` of a weight, ``ConstantOfShape``) before its one consumer
reads it. Drawing those as boxes buries the picture in plumbing, so
:func:`editor.viewmodel.build_display_graph` lists each chain as a weight row of its
consumer instead; this module decides which nodes fold where and what the row says.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import onnx

from editor.viewmodel.nodetable import NodeTable

__all__ = ["DEAD", "NEVER_FOLD", "body_reads", "chain_texts", "fold_weight_chains", "node_body_reads"]

# NOTE: ops never folded although their inputs may all be constant: random generators
# differ per run (their box says so), and a node with a body may read outer values.
NEVER_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                         "Multinomial", "Bernoulli", "If", "Loop", "Scan"})
_MAX_CHAIN_OPS = 3   # ops named in a folded weight row; longer chains elide the middle
DEAD = -1            # fold target of constant nodes whose results nobody reads


def fold_weight_chains(table: NodeTable, hidden: bytearray, known: set[str],
                       output_set: Collection[str], keep: Collection[int]) -> dict[int, int]:
    """Node index -> index of the node it folds into, for every weight-preparation node.

    A node is *constant* when it has inputs and every one of them is a weight (initializer,
    weight Constant, outer weight) or the result of a constant node. A constant node folds
    into ``t`` when all its results are consumed by ``t`` alone, directly or through other
    nodes that fold into ``t``; a constant node with several consumers stays a box (the
    chain above it folds into it). Nodes consumed by ``keep`` (unfolded consumers) stay
    boxes. Graph order is topological in a valid model; an unsorted graph just folds less.
    """
    const_vals = set(known)
    const: list[int] = []
    ops, inputs, outputs, body = table.op, table.inputs, table.outputs, table.body
    for i in range(len(table)):
        if hidden[i] or body[i] or ops[i] in NEVER_FOLD:
            continue
        constant = False   # some input, and every one constant
        for v in inputs[i]:
            if v:
                if v not in const_vals:
                    constant = False
                    break
                constant = True
        if not constant:
            continue
        outs = outputs[i]
        if any(o in output_set for o in outs):
            continue
        const.append(i)
        const_vals.update(o for o in outs if o)
    if not const:
        return {}
    made_by: dict[str, int] = {}
    for i in const:
        for o in outputs[i]:
            if o:
                made_by[o] = i
    consumers: dict[int, set[int]] = {}
    made = made_by.keys()
    for j in range(len(table)):
        if hidden[j] or (not body[j] and made.isdisjoint(inputs[j])):
            continue   # (most nodes read no constant result)
        # a body reading an outer value consumes it too
        for v in (*inputs[j], *table.body_reads(j)) if body[j] else inputs[j]:
            i = made_by.get(v)
            if i is not None:
                consumers.setdefault(i, set()).add(j)
    fold_to: dict[int, int] = {}
    keep = set(keep)   # grows: an unfolded chain is drawn whole, up to its sources
    for i in reversed(const):
        targets = {fold_to.get(j, j) for j in consumers.get(i, ())}
        if not targets:
            fold_to[i] = DEAD   # constant data nobody reads: not drawn, like an unused initializer
        elif len(targets) == 1:
            t = next(iter(targets))
            if t in keep:
                keep.add(i)
            else:
                fold_to[i] = t
    return fold_to


def body_reads(g: onnx.GraphProto) -> list[str]:
    """Every value name a (nested) body's nodes read; a superset of what it captures."""
    out: list[str] = []
    for node in g.node:
        out += node.input
        out += node_body_reads(node)
    return out


def node_body_reads(node: onnx.NodeProto) -> list[str]:
    """Every value name the bodies of ``node`` (its GRAPH/GRAPHS attributes) read."""
    out: list[str] = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out += body_reads(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            for sg in a.graphs:
                out += body_reads(sg)
    return out


def chain_texts(nodes: Sequence[onnx.NodeProto], fold_to: Mapping[int, int],
                weights: Mapping[str, str], values: Mapping[str, str] | None = None
                ) -> tuple[dict[str, str], dict[str, str]]:
    """Weight-row text of every folded result (``"768x768 int8 → DequantizeLinear"``), and
    the value text of the results that keep a small constant's values (``"[4]"`` for an
    ``Unsqueeze`` of the scalar ``4``: see :data:`_KEEPS_VALUES`)."""
    values = values or {}
    src: dict[str, tuple[str, tuple[str, ...]]] = {}   # value -> (source text, ops so far)
    kept: dict[str, str] = {}
    for i in sorted(fold_to):
        node = nodes[i]
        base, ops = "", ()
        for v in node.input:
            if v in src:
                base, ops = src[v]
                break
        else:
            for v in node.input:
                if v in weights:
                    base = weights[v]
                    break
        ops = ops + (node.op_type,)
        data = [v for v in node.input if v]
        kept_text = None
        if node.op_type in _KEEPS_VALUES and node.domain in ("", "ai.onnx") and data:
            first = values.get(data[0]) if data[0] not in src else kept.get(data[0])
            if first is not None:
                kept_text = _kept_value(node, first)
        for o in node.output:
            if o:
                src[o] = (base, ops)
                if kept_text is not None:
                    kept[o] = kept_text
    out = {}
    for v, (base, ops) in src.items():
        if len(ops) > _MAX_CHAIN_OPS:
            ops = ops[:1] + ("…",) + ops[-(_MAX_CHAIN_OPS - 1):]
        out[v] = " → ".join((base,) + ops if base else ops)
    return out, kept


# NOTE: ops that move a small constant's elements without computing new ones, so the value
# of the result is known without running anything (``Unsqueeze(4)`` is ``[4]``). Cast is
# handled by converting the element texts; anything else keeps its chain text.
_KEEPS_VALUES = frozenset({"Unsqueeze", "Squeeze", "Reshape", "Identity", "Flatten", "Cast"})


def _kept_value(node: onnx.NodeProto, text: str) -> str | None:
    """Value text of ``node``'s result from its input's value text ``text``."""
    items = [t.strip() for t in text.strip("[]").split(",")] if text else []
    if node.op_type == "Cast":
        to = next((a.i for a in node.attribute if a.name == "to"), None)
        if to is None:
            return None
        try:
            kind = onnx.helper.tensor_dtype_to_np_dtype(to).kind
        except Exception:
            return None
        conv = []
        for t in items:
            try:
                f = float(t) if t not in ("true", "false") else float(t == "true")
            except ValueError:
                return None
            conv.append(("true" if f else "false") if kind == "b" else
                        str(int(f)) if kind in "iu" else f"{f:.4g}")
        items = conv
        return items[0] if not text.startswith("[") and len(items) == 1 else "[" + ", ".join(items) + "]"
    if node.op_type == "Squeeze" and len(items) == 1:
        return items[0]
    if node.op_type == "Identity":
        return text
    return "[" + ", ".join(items) + "]"
