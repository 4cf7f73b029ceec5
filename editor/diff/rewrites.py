"""After matching: pairs not grounded in a shared anchor are undone, and the unmatched
nodes of both sides that sit between the same matched neighbours become one *rewrite*
each (quantization, fusion, opset spelling)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from editor.diff.records import Rewrite

if TYPE_CHECKING:
    from editor.diff.matcher import _Side


# -- neighbourhood support -----------------------------------------------------------
def _b_value_for(A: _Side, B: _Side, name: str, anchor: dict[str, str]) -> str | None:
    """The B value that corresponds to A value ``name``: the same output of the matched
    producer, or the anchored input / initializer / outer value."""
    p = A.producer.get(name)
    if p is not None:
        j = A.matched[p[0]]
        if j < 0:
            return None
        outs = B.nodes[j].output
        return outs[p[1]] if p[1] < len(outs) and outs[p[1]] else None
    for bn, an in anchor.items():
        if an == name:
            return bn
    return None


def _unground(A: _Side, B: _Side, anchor: dict[str, str], out_map: dict[str, str],
              trusted: Collection[int] = ()) -> None:
    """Undo matches that nothing around them supports (NOTE in the module docstring).

    A pair is grounded when the two nodes share a non-empty name, when they read the same
    anchored value (graph input, initializer, outer value) at the same port, when they
    produce corresponding graph outputs, or when a neighbour along a corresponding edge
    (producer of input k / consumer of output k at the same port) is a grounded pair.
    Loose rounds pair, say, every Constant of one model with one of the other by order;
    without a grounded neighbour such a pair is two unrelated nodes and is reported as
    removed + added. ``trusted``: A indices of pairs grounded by how they were made (the
    quantized round keys them from the anchors through data edges whose ports differ).
    """
    a_anchor = {an: bn for bn, an in anchor.items()}
    b_out_for_a = {an: bn for bn, an in out_map.items()}
    grounded: set[int] = set()
    todo: list[int] = []
    for i, j in enumerate(A.matched):
        if j < 0:
            continue
        na, nb = A.nodes[i], B.nodes[j]
        seed = (bool(na.name) and na.name == nb.name) or i in trusted
        if not seed:
            for k, x in enumerate(A.inputs[i]):
                if x and x not in A.producer and k < len(B.inputs[j]) and a_anchor.get(x, x) == B.inputs[j][k]:
                    seed = True
                    break
        if not seed:
            for k, o in enumerate(na.output):
                if o in b_out_for_a and k < len(nb.output) and nb.output[k] == b_out_for_a[o]:
                    seed = True
                    break
        if seed:
            grounded.add(i)
            todo.append(i)
    while todo:
        i = todo.pop()
        j = A.matched[i]
        # upstream: producers of corresponding inputs
        for k, x in enumerate(A.inputs[i]):
            pa = A.producer.get(x)
            if pa is None or k >= len(B.inputs[j]):
                continue
            pb = B.producer.get(B.inputs[j][k])
            if pb is not None and A.matched[pa[0]] == pb[0] and pa[1] == pb[1] and pa[0] not in grounded:
                grounded.add(pa[0])
                todo.append(pa[0])
        # downstream: consumers of corresponding outputs at the same port
        for k, o in enumerate(A.nodes[i].output):
            if not o or k >= len(B.nodes[j].output):
                continue
            ob = B.nodes[j].output[k]
            b_uses = set(B.consumers.get(ob, ()))
            for c, port in A.consumers.get(o, ()):
                m = A.matched[c]
                if m >= 0 and c not in grounded and (m, port) in b_uses:
                    grounded.add(c)
                    todo.append(c)
    for i, j in enumerate(A.matched):
        if j >= 0 and i not in grounded:
            A.matched[i] = -1
            B.matched[j] = -1


# -- rewrites --------------------------------------------------------------------------
_QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger", "MatMulInteger",
              "QGemm", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QAttention", "DynamicQuantizeLSTM",
              "MatMulNBits", "QOrderedMatMul", "GatherBlockQuantized", "MatMulBnb4"}
_FUSED_OPS = {"Gemm", "LayerNormalization", "SkipLayerNormalization", "Gelu", "FastGelu", "BiasGelu",
              "Attention", "MultiHeadAttention", "FusedConv", "FusedMatMul", "EmbedLayerNormalization",
              "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "RotaryEmbedding",
              "GroupQueryAttention", "BiasAdd", "QuickGelu", "FusedGemm"}


_MAX_REWRITE_A = 24  # nodes of A one rewrite may replace (an unfused attention block)
_MAX_REWRITE_B = 64  # nodes of B it may become (an LSTM quantized into a chain)


def _rewrite_regions(A: _Side, B: _Side, anchor: dict[str, str], out_map: dict[str, str],
                     skip_a: Collection[int] = (), skip_b: Collection[int] = (),
                     ) -> list[tuple[list[int], list[int], list[tuple[str, str]]]]:
    """Connected regions of unmatched nodes on both sides that sit between the same matched
    neighbours: (A indices, B indices, boundary value pairs A -> B). Regions with nodes on
    one side only are plain additions or removals and are not returned, except inserted
    (or removed) QuantizeLinear / DequantizeLinear pairs. ``skip_a`` / ``skip_b``: nodes
    already in a region (an activation folded into a quantized op)."""
    ua = [i for i, m in enumerate(A.matched) if m < 0 and i not in skip_a]
    ub = [j for j, m in enumerate(B.matched) if m < 0 and j not in skip_b]
    if not ub and not ua:
        return []
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(x: tuple[str, int], y: tuple[str, int]) -> None:
        parent[find(x)] = find(y)

    for side, tag, free in ((A, "a", ua), (B, "b", ub)):
        for i in free:
            find((tag, i))
            for x in side.inputs[i]:
                p = side.producer.get(x)
                if p is not None and side.matched[p[0]] < 0:
                    union((tag, i), (tag, p[0]))
    values: list[tuple[str, str]] = []
    b_names = {o: j for j in ub for o in B.nodes[j].output if o}
    b_out_for_a = {an: bn for bn, an in out_map.items()}
    for i in ua:
        for k, o in enumerate(A.nodes[i].output):
            if not o:
                continue
            partners: set[str] = set()
            for c, port in A.consumers.get(o, ()):  # output side: what the matched consumer reads in B
                m = A.matched[c]
                if m >= 0 and port < len(B.inputs[m]):
                    partners.add(B.inputs[m][port])
            if o in b_out_for_a:
                partners.add(b_out_for_a[o])
            if o in b_names and A.nodes[i].op_type != "Constant" and B.nodes[b_names[o]].op_type != "Constant":
                partners.add(o)  # the rewrite kept the value's name (constants' names are too generic)
            for bv in partners:
                pb = B.producer.get(bv)
                if pb is not None and B.matched[pb[0]] < 0:
                    union(("a", i), ("b", pb[0]))
                    values.append((o, bv))
        for x in A.inputs[i]:  # input side: B's rewrite reads the corresponding value
            bx = _b_value_for(A, B, x, anchor) if x else None
            if bx is None:
                continue
            for c, _ in B.consumers.get(bx, ()):
                if B.matched[c] < 0:
                    union(("a", i), ("b", c))
    groups: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for i in ua:
        groups.setdefault(find(("a", i)), ([], []))[0].append(i)
    for j in ub:
        groups.setdefault(find(("b", j)), ([], []))[1].append(j)
    out = []
    for root, (ra, rb) in groups.items():
        # A rewrite replaces a few nodes by a few others, between matched neighbours; a
        # region as big as a model is two different models, and the same ops on both sides
        # are unmatched nodes, not a rewrite: both stay removed + added.
        if not ra and rb and len(rb) <= _MAX_REWRITE_B and \
                all(B.nodes[j].op_type in ("QuantizeLinear", "DequantizeLinear") for j in rb):
            # QDQ format: a quantize-dequantize pair inserted on an edge, nothing of A replaced
            out.append(([], sorted(rb, key=B.order.index), []))
            continue
        if ra and not rb and len(ra) <= _MAX_REWRITE_B and \
                all(A.nodes[i].op_type in ("QuantizeLinear", "DequantizeLinear") for i in ra):
            # the same the other way round (a quantized A against its float model)
            out.append((sorted(ra, key=A.order.index), [], []))
            continue
        if ra and not rb and len(ra) <= _MAX_REWRITE_A and _folded_to_constant(A, B, ra):
            # an optimizer computed it once: B's readers read a constant where A computes
            # one (a Reshape's target shape from Shape -> Gather -> Concat)
            out.append((sorted(ra, key=A.order.index), [], []))
            continue
        if not ra or not rb or len(ra) > _MAX_REWRITE_A or len(rb) > _MAX_REWRITE_B:
            continue
        if sorted(A.nodes[i].op_type for i in ra) == sorted(B.nodes[j].op_type for j in rb):
            continue
        if len(ra) == len(rb) == 1 and A.names[ra[0]] and B.names[rb[0]] and A.names[ra[0]] != B.names[rb[0]] \
                and not _is_quant_or_fused([B.nodes[rb[0]].op_type]):
            continue  # one named node deleted and another added in its place: not a rewrite
        if ra and rb:
            set_a = set(ra)
            vals = list(dict.fromkeys((av, bv) for av, bv in values
                                      if A.producer.get(av, (-1,))[0] in set_a))
            out.append((sorted(ra, key=A.order.index), sorted(rb, key=B.order.index), vals))
    return out


def _folded_to_constant(A: _Side, B: _Side, ra: list[int]) -> bool:
    """Whether region ``ra`` (A only) computes something from the graph's data, and every
    reader of it is paired and its partner reads a constant (a weight, an initializer) at
    the same input."""
    from editor.diff.canonical import constant_values

    inside = set(ra)
    ca, cb = constant_values(A), constant_values(B)
    if all(o in ca for i in ra for o in A.nodes[i].output if o):
        return False  # weights held another way (ModelDiff.weight_nodes), nothing computed
    uses = [(c, k) for i in ra for o in A.nodes[i].output if o for c, k in A.consumers.get(o, ()) if c not in inside]
    return bool(uses) and all(A.matched[c] >= 0 and k < len(B.inputs[A.matched[c]]) and B.inputs[A.matched[c]][k] in cb
                              for c, k in uses)


def _is_quant_or_fused(ops: list[str]) -> bool:
    return any(op in _QUANT_OPS or op.startswith("QLinear") or op in _FUSED_OPS for op in ops)


def _classify(A: _Side, B: _Side, ra: list[int], rb: list[int], values: list[tuple[str, str]]) -> Rewrite:
    ops_a = [A.nodes[i].op_type for i in ra]
    ops_b = [B.nodes[j].op_type for j in rb]
    if not ra:
        return Rewrite("quantized", "value quantized to int8 (QuantizeLinear + DequantizeLinear inserted)", [],
                       [B.ref(j) for j in rb], values)
    if not rb and all(op in ("QuantizeLinear", "DequantizeLinear") for op in ops_a):
        return Rewrite("dequantized", "value back to float (QuantizeLinear + DequantizeLinear removed)",
                       [A.ref(i) for i in ra], [], values)
    if not rb:
        return Rewrite("fused", f"{'+'.join(dict.fromkeys(ops_a))} folded into a constant", [A.ref(i) for i in ra], [],
                       values)
    if not any(op in _QUANT_OPS or op.startswith("QLinear") for op in ops_b) and \
            any(op in _QUANT_OPS or op.startswith("QLinear") for op in ops_a):
        main_b = "+".join(dict.fromkeys(op for op in ops_b if op not in ("Constant", "Identity", "Reshape", "Cast")))
        return Rewrite("dequantized", f"{'+'.join(dict.fromkeys(ops_a))} back to float ({main_b or '+'.join(ops_b)})",
                       [A.ref(i) for i in ra], [B.ref(j) for j in rb], values)
    main_a = "+".join(dict.fromkeys(op for op in ops_a if op not in ("Constant", "Identity", "Reshape", "Cast"))) \
        or "+".join(dict.fromkeys(ops_a))
    quant = [op for op in ops_b if op in _QUANT_OPS or op.startswith("QLinear")]
    if quant:
        core = [op for op in dict.fromkeys(quant) if op not in ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear")]
        how = ", ".join(core) if core else "QDQ"
        bits = _bit_width(B, rb)
        return Rewrite("quantized", f"{main_a} quantized to {bits} ({how})", [A.ref(i) for i in ra],
                       [B.ref(j) for j in rb], values)
    ops_b_main = "+".join(dict.fromkeys(ops_b))
    if len(ra) > len(rb) or any(op in _FUSED_OPS for op in ops_b):
        return Rewrite("fused", f"{'+'.join(dict.fromkeys(ops_a))} fused into {ops_b_main}", [A.ref(i) for i in ra],
                       [B.ref(j) for j in rb], values)
    return Rewrite("rewritten", f"{'+'.join(dict.fromkeys(ops_a))} rewritten as {ops_b_main}",
                   [A.ref(i) for i in ra], [B.ref(j) for j in rb], values)


def _bit_width(B: _Side, rb: list[int]) -> str:
    """The weights' integer width of a quantized region: MatMulNBits / GatherBlockQuantized
    say theirs (``bits``, int4 by default), 8-bit ops are int8."""
    for j in rb:
        node = B.nodes[j]
        if node.op_type in ("MatMulNBits", "GatherBlockQuantized"):
            bits = next((a.i for a in node.attribute if a.name == "bits"), 4)
            return f"int{bits}"
        if node.op_type == "MatMulBnb4":
            return "4-bit (bnb)"
    return "int8"


# -- helpers ---------------------------------------------------------------------------
