"""Which tensor of model B carries the same quantity as each tensor of model A.

Comparing two models numerically (fp32 vs int8, before vs after a pass, original vs
re-exported) needs a tensor map, and the structural diff (:mod:`editor.diff`) already knows
which nodes correspond. :func:`map_tensors` turns that into value pairs, in this order of
trust:

1. graph inputs and outputs: by name, else by position;
2. matched nodes: output ``k`` of A's node is output ``k`` of its partner;
3. rewrites the diff recognised (quantization, fusion): the values at the region's boundary;
4. the same value name in B (exporters and quantizers keep names of the values they keep).

A B value of an integer type produced by ``QuantizeLinear`` (per tensor, per axis or per
block), any ``QLinear*`` op, ``QGemm`` or ``DynamicQuantizeLinear`` is compared after
dequantization through *its own* scale and zero point (:class:`Dequant` says where to find
them): the producing op's inputs that its schema names after the output (``y`` ->
``y_scale`` / ``y_zero_point``, ``C`` -> ``C_scale``; QLinearConcat's ``Y_scale`` comes
first), so a new QLinear op needs no table here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx

if TYPE_CHECKING:
    from editor.diff import ModelDiff

__all__ = ["Dequant", "TensorMap", "TensorPair", "io_pairs", "main_tensors", "map_tensors", "same_model_map"]


@dataclass(frozen=True)
class Dequant:
    """Value names in B holding the scale and zero point of a quantized B tensor."""

    scale: str
    zero_point: str | None
    axis: int = 1
    #: QuantizeLinear's block_size (opset 21): one scale per ``block_size`` elements on ``axis``
    block_size: int = 0


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


def same_model_map(model: onnx.ModelProto, in_b: set[str] | None = None) -> TensorMap:
    """Every tensor to itself (one model on two backends); with ``in_b``, the names B has
    (its Ifs took other branches), the others without a counterpart."""
    return TensorMap([TensorPair(name, name, "same") if in_b is None or name in in_b else TensorPair(name, None, "")
                      for name, _ in main_tensors(model)])


#: ops that move quantized values around without changing scale or zero point
_MOVES = {"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "MaxPool", "Slice", "Gather", "Identity",
          "Concat", "Split", "Resize", "DepthToSpace", "SpaceToDepth"}
#: activations a quantizer folds into the op before them (QLinearConv computes Conv+Relu)
_FOLDED = {"Relu", "Clip"}


def _schema(op: str, domain: str, opset: int) -> onnx.defs.OpSchema | None:
    """The op's schema: onnx's, or onnxruntime's for its contrib ops (registered into onnx's
    registry by :mod:`editor.ort_schemas`); None when no runtime knows the op."""
    from editor.ort_schemas import ensure_registered

    ensure_registered()
    try:
        return onnx.defs.get_schema(op, max(opset, 1), domain)
    except onnx.defs.SchemaError:
        return None


@functools.lru_cache(maxsize=512)
def _formal_inputs(op: str, domain: str, opset: int) -> tuple[str, ...]:
    schema = _schema(op, domain, opset)
    return tuple(i.name for i in schema.inputs) if schema is not None else ()


def _output_quant_inputs(node: onnx.NodeProto, output: str, opset: int) -> tuple[str, str | None] | None:
    """The node's own inputs holding the scale and zero point of ``output``, found by the
    schema's names (``y`` -> ``y_scale`` / ``y_zero_point``, ``C`` -> ``C_scale`` ...): every
    QLinear* op, QGemm, QuantizeLinear, read the same way."""
    if output not in node.output:
        return None
    formal = _formal_inputs(node.op_type, node.domain or "", opset)
    k = list(node.output).index(output)
    out_name = _formal_outputs(node.op_type, node.domain or "", opset, k)
    if not formal or out_name is None:
        return None
    lowered = [f.lower() for f in formal]
    if node.op_type == "QuantizeLinear":
        scale_at, zp_at = 1, 2
    else:
        try:
            scale_at = lowered.index(f"{out_name.lower()}_scale")
        except ValueError:
            return None
        zp_name = f"{out_name.lower()}_zero_point"
        zp_at = lowered.index(zp_name) if zp_name in lowered else -1
    if scale_at >= len(node.input) or not node.input[scale_at]:
        return None  # QGemm without y_scale gives floats
    zp = node.input[zp_at] if 0 <= zp_at < len(node.input) and node.input[zp_at] else None
    return node.input[scale_at], zp


@functools.lru_cache(maxsize=512)
def _formal_outputs_all(op: str, domain: str, opset: int) -> tuple[str, ...]:
    schema = _schema(op, domain, opset)
    return tuple(o.name for o in schema.outputs) if schema is not None else ()


def _formal_outputs(op: str, domain: str, opset: int, k: int) -> str | None:
    names = _formal_outputs_all(op, domain, opset)
    return names[k] if k < len(names) else None


def _dequant_for(model_b: onnx.ModelProto, name: str, producers: dict[str, onnx.NodeProto], depth: int = 0) -> Dequant | None:
    """How to dequantize B's value ``name``: the scale and zero point of the op that made it
    (through ops that only move quantized values), or None for a value that is not quantized."""
    node = producers.get(name)
    if node is None or depth > 8:
        return None
    op = node.op_type
    if op in _MOVES and node.input and node.domain in ("", "ai.onnx"):
        return _dequant_for(model_b, node.input[0], producers, depth + 1)
    if op == "DynamicQuantizeLinear" and node.output[0] == name and len(node.output) >= 3:
        return Dequant(node.output[1], node.output[2])
    if not (op.startswith("QLinear") or op in ("QuantizeLinear", "QGemm")):
        return None
    opset = _opset(model_b, node.domain or "")
    found = _output_quant_inputs(node, name, opset)
    if found is None:
        return None
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1) if op == "QuantizeLinear" else 1
    block = next((a.i for a in node.attribute if a.name == "block_size"), 0) if op == "QuantizeLinear" else 0
    return Dequant(found[0], found[1], int(axis), int(block))


def _opset(model: onnx.ModelProto, domain: str) -> int:
    for o in model.opset_import:
        if (o.domain or "") == domain or (domain == "" and o.domain == "ai.onnx"):
            return int(o.version)
    return 1


def io_pairs(model_a: onnx.ModelProto, model_b: onnx.ModelProto) -> dict[str, str]:
    """A's graph inputs and outputs -> B's: by name, else by position among the unmatched."""
    ga, gb = model_a.graph, model_b.graph
    inits_a = {t.name for t in ga.initializer}
    inits_b = {t.name for t in gb.initializer}
    ins_a = [vi.name for vi in ga.input if vi.name not in inits_a]
    ins_b = [vi.name for vi in gb.input if vi.name not in inits_b]
    found: dict[str, str] = {}
    for names_a, names_b in ((ins_a, ins_b), ([o.name for o in ga.output], [o.name for o in gb.output])):
        set_b = set(names_b)
        left_b = [n for n in names_b if n not in names_a]
        k = 0
        for n in names_a:
            if n in set_b:
                found[n] = n
            elif k < len(left_b):
                found[n] = left_b[k]
                k += 1
    return found


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

    found.update((a, (b, "io")) for a, b in io_pairs(model_a, model_b).items())
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
