"""A round of matching on a canonical view: quantized spellings and fused neighbours.

# NOTE: why a round of its own. onnxruntime's QOperator format (``quantize_static`` with
# ``QuantFormat.QOperator``) replaces nearly every node: Conv -> QLinearConv, Add ->
# QLinearAdd, Sigmoid -> QLinearSigmoid, Concat -> QLinearConcat, with QuantizeLinear /
# DequantizeLinear where float and int8 parts meet, a Relu folded into the QLinearConv
# before it, and new node and value names ("Conv_41_quant", "877_quantized"). Its
# pre-processing (and any optimizer) folds a BatchNormalization or a bias Add into the
# Conv before it and turns Constant nodes into initializers. The hashing rounds of the
# matcher see none of that as equal: every key differs from the first rewritten node on,
# the unmatched nodes form one region as big as the model, and a detector read as 116 of
# 323 nodes paired, the rest removed + added.
#
# This round hashes a *canonical* view of both sides: a quantized op counts as its float
# op (QLinearConv as Conv), only its data inputs count (activations, not weights, scales
# or zero points: any value computed from constants alone is a weight), Quantize /
# Dequantize nodes on activations are see-through (their output is their input), and,
# once the rest is paired, a Relu, Clip, BatchNormalization or constant Add / Mul that the
# other side folded into the op before it is see-through too. Keys run forward from the
# anchors and backward from the graph outputs, as in the matcher, so every pair it makes
# is grounded by construction. :func:`canonical_regions` then reports a pair of an op and
# its quantized spelling (Conv / QLinearConv), or a pair with folded neighbours, as one
# rewrite each; pairs of the same op (a MaxPool on int8 values) stay ordinary pairs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from editor.diff.matcher import _Side

#: quantized op -> the float op it computes (domain left out: "com.microsoft" or "")
QUANTIZED_AS = {
    "QLinearConv": "Conv", "QLinearMatMul": "MatMul", "QLinearAdd": "Add", "QLinearMul": "Mul",
    "QLinearSigmoid": "Sigmoid", "QLinearLeakyRelu": "LeakyRelu", "QLinearSoftmax": "Softmax",
    "QLinearConcat": "Concat", "QLinearGlobalAveragePool": "GlobalAveragePool",
    "QLinearAveragePool": "AveragePool", "QLinearWhere": "Where", "QLinearReduceMean": "ReduceMean",
    "QLinearConvTranspose": "ConvTranspose", "QGemm": "Gemm", "MatMulNBits": "MatMul",
    "MatMulBnb4": "MatMul", "QAttention": "Attention", "GatherBlockQuantized": "Gather",
}
#: ports of a quantized op that carry data (the rest are scales and zero points)
_DATA_PORTS: dict[str, Callable[[int], list[int]]] = {
    "QLinearConv": lambda n: [0], "QLinearConvTranspose": lambda n: [0],
    "QLinearMatMul": lambda n: [0, 3], "QLinearAdd": lambda n: [0, 3], "QLinearMul": lambda n: [0, 3],
    "QGemm": lambda n: [0, 3], "QLinearWhere": lambda n: [0, 1, 4],
    "QLinearConcat": lambda n: list(range(2, n, 3)),
    "QLinearSigmoid": lambda n: [0], "QLinearLeakyRelu": lambda n: [0], "QLinearSoftmax": lambda n: [0],
    "QLinearGlobalAveragePool": lambda n: [0], "QLinearAveragePool": lambda n: [0],
    "QLinearReduceMean": lambda n: [0], "MatMulNBits": lambda n: [0], "MatMulBnb4": lambda n: [0],
    "QAttention": lambda n: [0], "GatherBlockQuantized": lambda n: [1],
}
#: nodes that only change how an activation is stored: see-through in this round
_SEE_THROUGH = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"}
#: what a quantizer or an optimizer folds into the op before it (QLinearConv computes
#: Conv+Relu; a Conv absorbs the BatchNormalization and the bias Add after it); the
#: arithmetic ones only with one data input (a constant operand)
_FOLDABLE = {"Relu", "Clip", "BatchNormalization", "Identity", "Dropout", "Add", "Sub", "Mul", "Div"}
_ROUNDS = 30


class _View:
    """One side seen as its float computation (see the module NOTE)."""

    def __init__(self, side: _Side, anchor_key: Callable[[str], Any]) -> None:
        self.side = side
        self.anchor_key = anchor_key
        n = len(side.nodes)
        constant = constant_values(side)
        self.see_through = [False] * n
        self.sig: list[int | None] = [None] * n
        self.data: list[list[str]] = [[] for _ in range(n)]
        for i, nd in enumerate(side.nodes):
            ins = side.inputs[i]
            ports = _DATA_PORTS.get(nd.op_type)
            picked = [ins[k] for k in (ports(len(nd.input)) if ports else range(len(ins))) if k < len(ins)]
            data = [x for x in picked if x and x not in constant]
            if not data:
                continue  # constants and weight preparation: nothing to key them by
            self.data[i] = data
            if nd.op_type in _SEE_THROUGH and data[0] == ins[0]:
                self.see_through[i] = True
                continue
            self.sig[i] = hash(QUANTIZED_AS.get(nd.op_type, nd.op_type))

    def quantized(self, i: int) -> bool:
        return self.side.nodes[i].op_type in QUANTIZED_AS

    def source(self, name: str) -> tuple[tuple[int, int] | None, str]:
        """((producer, output) or None, value name) of ``name`` after stepping through
        see-through nodes (the name is where the walk ended: a graph input, a weight)."""
        side = self.side
        for _ in range(64):
            p = side.producer.get(name)
            if p is None or not self.see_through[p[0]]:
                return p, name
            name = self.data[p[0]][0]
        return None, name

    def consumers(self, name: str, depth: int = 0) -> Iterator[tuple[int, int]]:
        """(consumer, data port index) of ``name``, stepping through see-through nodes."""
        side = self.side
        for c, _k in side.consumers.get(name, ()):
            if self.see_through[c] and depth < 64:
                out = side.nodes[c].output
                if out and out[0]:
                    yield from self.consumers(out[0], depth + 1)
            elif self.sig[c] is not None and name in self.data[c]:
                yield c, self.data[c].index(name)

    def foldable(self, i: int) -> bool:
        nd = self.side.nodes[i]
        return nd.op_type in _FOLDABLE and len(self.data[i]) == 1 and self.side.matched[i] < 0

    def forward(self, me: int) -> list[Any]:
        side = self.side
        keys: list[Any] = [None] * len(side.nodes)
        for i in side.order:
            if side.matched[i] >= 0:
                keys[i] = hash(("m", i if me == 0 else side.matched[i]))
            elif self.sig[i] is not None:
                keys[i] = hash((self.sig[i], tuple(self._vkey(x, keys) for x in self.data[i])))
        return keys

    def _vkey(self, name: str, keys: list[Any]) -> Any:
        p, name = self.source(name)
        if p is not None:
            return (keys[p[0]], p[1])
        return self.anchor_key(name)

    def backward(self, me: int, out_anchor: dict[str, Any]) -> list[Any]:
        side = self.side
        keys: list[Any] = [None] * len(side.nodes)
        for i in reversed(side.order):
            if side.matched[i] >= 0:
                keys[i] = hash(("m", i if me == 0 else side.matched[i]))
                continue
            if self.sig[i] is None:
                continue
            per_out = []
            for o in side.nodes[i].output:
                if not o:
                    per_out.append(None)
                    continue
                uses = sorted((hash(keys[c]), k) for c, k in self.consumers(o))
                per_out.append((tuple(uses), self._out_anchor(o, out_anchor)))
            keys[i] = hash((self.sig[i], tuple(per_out)))
        return keys

    def _out_anchor(self, name: str, out_anchor: dict[str, Any], depth: int = 0) -> Any:
        """The graph output ``name`` is, directly or through see-through nodes."""
        if name in out_anchor:
            return out_anchor[name]
        for c, _k in self.side.consumers.get(name, ()):
            if self.see_through[c] and depth < 64:
                out = self.side.nodes[c].output
                hit = self._out_anchor(out[0], out_anchor, depth + 1) if out and out[0] else None
                if hit is not None:
                    return hit
        return None


def constant_values(side: _Side) -> set[str]:
    """Values computed from initializers and Constants alone (weights and their
    preparation), computed once per side."""
    if side.constants is None:
        side.constants = _constant_values(side)
    return side.constants


def through_qdq(side: _Side, name: str) -> str:
    """The value behind an unmatched QuantizeLinear / DequantizeLinear chain ending in
    ``name`` (``name`` itself when it is not one): what an inserted Q -> DQ stands for."""
    for _ in range(8):
        p = side.producer.get(name)
        if p is None or side.matched[p[0]] >= 0:
            return name
        nd = side.nodes[p[0]]
        if nd.op_type not in ("QuantizeLinear", "DequantizeLinear") or not nd.input or not nd.input[0]:
            return name
        name = nd.input[0]
    return name


def _constant_values(side: _Side) -> set[str]:
    """Values computed from initializers and Constants alone (weights and their preparation)."""
    constant = set(side.initializers)
    for i in side.order:
        nd = side.nodes[i]
        ins = [x for x in side.inputs[i] if x]
        if (not ins and nd.op_type in ("Constant", "ConstantOfShape")) or (ins and all(x in constant for x in ins)):
            constant.update(o for o in nd.output if o)
    return constant


def worth_a_canonical_round(A: _Side, B: _Side) -> bool:
    """Whether the round can pair anything: nodes left on both sides, or a node left on
    one side that the other may have folded into its op (a deleted Neg, alone, is not)."""
    left_a = [i for i, m in enumerate(A.matched) if m < 0]
    left_b = [j for j, m in enumerate(B.matched) if m < 0]
    if left_a and left_b:
        return True
    return any(side.nodes[i].op_type in _FOLDABLE for side, left in ((A, left_a), (B, left_b)) for i in left)


def pair_canonical(A: _Side, B: _Side, vkey_a: Callable[[str], Any], vkey_b: Callable[[str], Any],
                   out_anchor_a: dict[str, Any], out_anchor_b: dict[str, Any]) -> set[int]:
    """Pair the nodes left unmatched through the canonical view (module NOTE); sets
    ``A.matched`` / ``B.matched`` and returns the A indices of the pairs it made."""
    va, vb = _View(A, vkey_a), _View(B, vkey_b)
    made: set[int] = set()
    for _ in range(_ROUNDS):
        progress = _pair(A, B, va.forward(0), vb.forward(1), made)
        progress += _pair(A, B, va.backward(0, out_anchor_a), vb.backward(1, out_anchor_b), made)
        if not progress and not _fold(A, B, va, vb):
            break
    return made


def _pair(A: _Side, B: _Side, ka: list[Any], kb: list[Any], made: set[int]) -> int:
    buckets: dict[Any, list[int]] = defaultdict(list)
    for j in B.order:
        if B.matched[j] < 0 and kb[j] is not None:
            buckets[kb[j]].append(j)
    count = 0
    for i in A.order:
        if A.matched[i] >= 0 or ka[i] is None:
            continue
        cands = buckets.get(ka[i])
        if not cands:
            continue
        j = cands.pop(0)  # ties (parallel identical branches): in topological order
        A.matched[i], B.matched[j] = j, i
        made.add(i)
        count += 1
    return count


def _fold(A: _Side, B: _Side, va: _View, vb: _View) -> bool:
    """Make unmatched Relu / Clip / BatchNormalization / constant Add ... see-through where
    they follow a paired node and the other side has nothing of the kind after its
    partner (it computes them inside its op: folded); True when any was."""
    changed = False
    for me, other, v in ((A, B, va), (B, A, vb)):
        for i in me.order:
            if not v.foldable(i) or v.see_through[i]:
                continue
            p, _name = v.source(v.data[i][0])
            if p is None or me.matched[p[0]] < 0:
                continue
            partner = me.matched[p[0]]
            op = me.nodes[i].op_type
            outs = [o for o in other.nodes[partner].output if o]
            if any(other.nodes[c].op_type == op and other.matched[c] < 0
                   for o in outs for c, _k in other.consumers.get(o, ())):
                continue  # the other side has its own: not folded
            v.see_through[i] = True
            me.folded.add(i)
            changed = True
    return changed


def canonical_regions(A: _Side, B: _Side, made: set[int],
                      anchor: dict[str, str]) -> list[tuple[list[int], list[int], list[tuple[str, str]]]]:
    """One rewrite region per matched pair of an op and its quantized spelling (Conv and
    QLinearConv, either way round), and per pair with nodes the other side folded into it
    (Conv+BatchNormalization and Conv): the pair, the folded nodes after it, and the
    boundary value pair. The pairs stay matched (the other regions are found between
    them); the caller unmatches them after (a rewrite's nodes are not pairs; see
    ModelDiff.rewrites). A pair of the ordinary rounds takes folded neighbours in only when
    its weights changed too (a fold rewrites them): a Relu deleted after a Conv is a
    removed node, not a fusion."""
    regions = []
    any_folded = bool(A.folded or B.folded)
    for i in A.order:
        j = A.matched[i]
        if j < 0:
            continue
        op_a, op_b = A.nodes[i].op_type, B.nodes[j].op_type
        quantized = op_a != op_b and (op_a in QUANTIZED_AS or op_b in QUANTIZED_AS) \
            and QUANTIZED_AS.get(op_a, op_a) == QUANTIZED_AS.get(op_b, op_b)
        if not quantized and not any_folded:
            continue
        ra, out_a = _with_folded(A, i)
        rb, out_b = _with_folded(B, j)
        folded = (len(ra) > 1 or len(rb) > 1) and (i in made or _weights_differ(A, B, i, j, anchor))
        if quantized or folded:
            regions.append((ra, rb, [(out_a, out_b)] if out_a and out_b else []))
    return regions


def _weights_differ(A: _Side, B: _Side, i: int, j: int, anchor: dict[str, str]) -> bool:
    """Whether the weight inputs of the pair are other values (by name, through the anchors)."""
    ca, cb = constant_values(A), constant_values(B)
    wa = [x for x in A.inputs[i] if x in ca]
    wb = [anchor.get(x, x) for x in B.inputs[j] if x in cb]
    return wa != wb


def _with_folded(side: _Side, i: int) -> tuple[list[int], str]:
    """``[i]`` and the chain of nodes folded into it (see :func:`_fold`), with the chain's
    output value."""
    nodes = [i]
    out = side.nodes[i].output[0] if side.nodes[i].output else ""
    for _ in range(8):
        users = side.consumers.get(out, ())
        if len(users) != 1 or users[0][0] not in side.folded:
            break
        c = users[0][0]
        nodes.append(c)
        out = side.nodes[c].output[0] if side.nodes[c].output else ""
    return nodes, out
