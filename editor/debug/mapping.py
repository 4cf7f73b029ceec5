"""Which tensor of model B carries the same quantity as each tensor of model A.

Comparing two models numerically (fp32 vs int8, before vs after a pass, original vs
re-exported) needs a tensor map, and the structural diff (:mod:`editor.diff`) already knows
which nodes correspond. :func:`map_tensors` turns that into value pairs, in this order of
trust:

1. graph inputs and outputs: by name, else by position;
2. matched nodes: output ``k`` of A's node is output ``k`` of its partner;
3. rewrites the diff recognised (quantization, fusion): the values at the region's boundary;
4. the same value name in B (exporters and quantizers keep names of the values they keep).

A B value of an 8-bit integer type produced by ``QuantizeLinear`` / ``QLinear*`` /
``DynamicQuantizeLinear`` is compared after dequantization with its scale and zero point
(:class:`Dequant` says where to find them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx

if TYPE_CHECKING:
    from editor.diff import ModelDiff

__all__ = ["Dequant", "TensorMap", "TensorPair", "main_tensors", "map_tensors", "same_model_map"]


@dataclass(frozen=True)
class Dequant:
    """Value names in B holding the scale and zero point of a quantized B tensor."""

    scale: str
    zero_point: str | None
    axis: int = 1


@dataclass(frozen=True)
class TensorPair:
    a: str
    b: str | None
    #: 'same' (one model), 'io', 'matched', 'rewrite', 'name', or '' when unmapped
    how: str
    dequant: Dequant | None = None


@dataclass
class TensorMap:
    """One :class:`TensorPair` per tensor of A, in A's topological order."""

    pairs: list[TensorPair]
    diff: ModelDiff | None = None

    @property
    def mapped(self) -> int:
        return sum(1 for p in self.pairs if p.b is not None)

    def coverage(self) -> float:
        return self.mapped / len(self.pairs) if self.pairs else 1.0

    def b_names(self) -> list[str]:
        return list(dict.fromkeys(p.b for p in self.pairs if p.b is not None))


def _topo_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """Nodes in a topological order (graph order when it already is one, the usual case)."""
    produced: dict[str, int] = {}
    for i, node in enumerate(graph.node):
        for o in node.output:
            if o:
                produced[o] = i
    order, placed = [], [False] * len(graph.node)
    ready = True
    for i, node in enumerate(graph.node):
        if any(produced.get(x, -1) > i for x in node.input):
            ready = False
            break
    if ready:
        return list(graph.node)
    # Kahn's algorithm in graph order
    pending = {i: sum(1 for x in set(n.input) if x in produced and produced[x] != i) for i, n in enumerate(graph.node)}
    users: dict[int, list[int]] = {}
    for i, n in enumerate(graph.node):
        for x in set(n.input):
            if x in produced and produced[x] != i:
                users.setdefault(produced[x], []).append(i)
    queue = [i for i, c in pending.items() if c == 0]
    while queue:
        i = queue.pop(0)
        if placed[i]:
            continue
        placed[i] = True
        order.append(graph.node[i])
        for u in users.get(i, ()):
            pending[u] -= 1
            if pending[u] == 0:
                queue.append(u)
    order += [n for i, n in enumerate(graph.node) if not placed[i]]
    return order


def main_tensors(model: onnx.ModelProto) -> list[tuple[str, onnx.NodeProto | None]]:
    """(value, producing node) for the main graph's inputs and every node output, in
    topological order; initializers and Constant outputs are weights, not results, and
    are left out."""
    g = model.graph
    inits = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    out: list[tuple[str, onnx.NodeProto | None]] = [(vi.name, None) for vi in g.input if vi.name not in inits]
    for node in _topo_nodes(g):
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            continue
        out.extend((o, node) for o in node.output if o)
    return out


def same_model_map(model: onnx.ModelProto) -> TensorMap:
    """Every tensor to itself (one model on two backends)."""
    return TensorMap([TensorPair(name, name, "same") for name, _ in main_tensors(model)])


_QUANT_PRODUCERS = {"QuantizeLinear": (1, 2), "DynamicQuantizeLinear": None}


#: ops that move quantized values around without changing scale or zero point
_MOVES = {"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "MaxPool", "Slice", "Gather", "Identity",
          "Concat", "Split", "Resize", "DepthToSpace", "SpaceToDepth"}
#: activations a quantizer folds into the op before them (QLinearConv computes Conv+Relu)
_FOLDED = {"Relu", "Clip"}


def _dequant_for(model_b: onnx.ModelProto, name: str, producers: dict[str, onnx.NodeProto], depth: int = 0) -> Dequant | None:
    node = producers.get(name)
    if node is None or depth > 8:
        return None
    op = node.op_type
    if op in _MOVES and node.input:
        return _dequant_for(model_b, node.input[0], producers, depth + 1)
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    if op == "QuantizeLinear" and len(node.input) >= 2:
        return Dequant(node.input[1], node.input[2] if len(node.input) > 2 and node.input[2] else None, int(axis))
    if op == "DynamicQuantizeLinear" and node.output[0] == name and len(node.output) >= 3:
        return Dequant(node.output[1], node.output[2])
    if op.startswith("QLinear") and len(node.input) >= 3:
        # QLinearConv / QLinearMatMul / QLinearAdd ...: y_scale, y_zero_point are the last two
        # inputs except for ops with a trailing bias (QLinearConv: x, xs, xz, w, ws, wz, ys, yz, B)
        if op == "QLinearConv" and len(node.input) >= 8:
            return Dequant(node.input[6], node.input[7])
        if op == "QLinearMatMul" and len(node.input) >= 8:
            return Dequant(node.input[6], node.input[7])
        if op in ("QLinearAdd", "QLinearMul") and len(node.input) >= 8:
            return Dequant(node.input[6], node.input[7])
        if op in ("QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax", "QLinearGlobalAveragePool",
                  "QLinearAveragePool") and len(node.input) >= 5:
            return Dequant(node.input[3], node.input[4])
    return None


def map_tensors(model_a: onnx.ModelProto, model_b: onnx.ModelProto, diff: ModelDiff | None = None) -> TensorMap:
    """A's tensors mapped to B's (see module docstring); ``diff`` is computed when not given."""
    from editor.diff import diff_models
    from editor.document import Document

    doc_a, doc_b = Document(model_a), Document(model_b)
    if diff is None:
        diff = diff_models(doc_a, doc_b)
    ga, gb = model_a.graph, model_b.graph
    b_values: set[str] = {o for n in gb.node for o in n.output if o} | {vi.name for vi in gb.input}
    producers_b = {o: n for n in gb.node for o in n.output if o}
    found: dict[str, tuple[str, str]] = {}

    inits_a = {t.name for t in ga.initializer}
    inits_b = {t.name for t in gb.initializer}
    ins_a = [vi.name for vi in ga.input if vi.name not in inits_a]
    ins_b = [vi.name for vi in gb.input if vi.name not in inits_b]
    for names_a, names_b in ((ins_a, ins_b), ([o.name for o in ga.output], [o.name for o in gb.output])):
        set_b = set(names_b)
        left_b = [n for n in names_b if n not in names_a]
        k = 0
        for n in names_a:
            if n in set_b:
                found[n] = (n, "io")
            elif k < len(left_b):
                found[n] = (left_b[k], "io")
                k += 1
    main_a, main_b = doc_a.index.main, doc_b.index.main
    main_ids_a = set(doc_a.index.scopes[main_a].node_ids)
    for ida, idb in diff.pairs.items():
        if ida not in main_ids_a or not doc_b.has_node(idb):
            continue
        na, nb = doc_a.node(ida), doc_b.node(idb)
        for oa, ob in zip(na.output, nb.output):
            if oa and ob:
                found.setdefault(oa, (ob, "matched"))
    for rw in diff.rewrites:
        for va, vb in rw.values:
            found.setdefault(va, (vb, "rewrite"))
    # quantized spellings: "X_quantized" in B is X, in 8 bits (QOperator format); where
    # an activation was folded into the op before it, it is the activation's output
    consumers_a: dict[str, list[onnx.NodeProto]] = {}
    for node in ga.node:
        for x in node.input:
            consumers_a.setdefault(x, []).append(node)
    folded: set[str] = set()
    for node in ga.node:
        if node.op_type in _FOLDED and node.input and node.output and node.output[0] not in found:
            x, y = node.input[0], node.output[0]
            if f"{x}_quantized" in b_values and f"{y}_quantized" not in b_values and y not in b_values \
                    and len(consumers_a.get(x, ())) == 1:
                found[y] = (f"{x}_quantized", "name")
                folded.add(x)
    pairs = []
    for name, _node in main_tensors(model_a):
        hit = found.get(name)
        if hit is None and name in b_values:
            hit = (name, "name")
        if hit is None and name not in folded and f"{name}_quantized" in b_values:
            hit = (f"{name}_quantized", "name")
        if hit is None:
            pairs.append(TensorPair(name, None, ""))
            continue
        bname, how = hit
        pairs.append(TensorPair(name, bname, how, _dequant_for(model_b, bname, producers_b)))
    # a B value found by name for two A tensors belongs to the later one (an activation
    # folded into the op before it): the earlier has no counterpart
    last_for: dict[str, int] = {}
    for k, p in enumerate(pairs):
        if p.b is not None:
            last_for[p.b] = k
    pairs = [p if p.b is None or p.how != "name" or last_for[p.b] == k else TensorPair(p.a, None, "")
             for k, p in enumerate(pairs)]
    _ = main_b
    return TensorMap(pairs, diff)
