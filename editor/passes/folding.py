"""Shape-aware constant folding with a size budget.

Three things fold here, in one sweep over a graph in node order:

1. **Shape arithmetic.** ``Shape``/``Size`` of a value whose dims are known become
   constants. Where some dims are symbolic, the shape vector is tracked entry by entry
   (a size, a symbol, or unknown) through the ops torch exports put between ``Shape`` and
   ``Reshape``: ``Gather``, ``Slice``, ``Unsqueeze``, ``Squeeze``, ``Concat``, ``Cast``.
   A vector whose entries all turn out to be sizes is a constant. A ``Reshape`` whose
   target is such a vector gets a constant target when each symbolic entry is the data's
   own dim at that axis (written ``0``: copy) or the only unknown left (written ``-1``).
2. **Constant nodes.** A node whose inputs are all constant is evaluated with the ONNX
   reference evaluator (exact semantics, one node at a time) and replaced by its outputs.
3. **Budget.** A fold may only replace bytes with at most as many bytes: its outputs may
   not be larger than the constant inputs it frees (inputs nothing else reads) plus
   :data:`SMALL_BYTES`, nor larger than the size limit (1 MB by default).
   NOTE: a run-wide allowance (0.5 % of the model) was tried so that small slices of a
   shared weight could fold; a second run then found a fresh allowance and folded more, so
   the result was no longer a fixed point and repeated runs grew the file. Each fold pays
   for itself instead. This is what
   stops folding from duplicating a shared weight, from expanding a ``ConstantOfShape``
   into a weight file, and from undoing quantization (``DequantizeLinear`` of int8 weights
   grows 4x); the last is also refused outright.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx

from editor.passes.graphview import DEFAULT_DOMAINS, GraphView, attr, subgraphs
from editor.passes.shapes import Dim

SMALL_BYTES = 64
DEFAULT_SIZE_LIMIT = 1 << 20
NONDETERMINISTIC = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
                    "Bernoulli"}
#: never folded: they exist to keep weights small or to mark a quantization boundary
QUANTIZATION = {"DequantizeLinear", "QuantizeLinear", "DynamicQuantizeLinear"}


@dataclass
class FoldOptions:
    size_limit: int = DEFAULT_SIZE_LIMIT  # bytes, per folded tensor
    allow_growth: bool = False  # fold even when the result is larger than what it frees
    dims: dict[str, tuple[int, list[Dim] | None]] | None = None  # from shapes.infer_dims
    opsets: dict[str, int] | None = None


def _nbytes(a: np.ndarray) -> int:
    return int(a.nbytes) if a.dtype != object else sum(len(str(v)) for v in a.flat)


class _Folder:
    def __init__(self, view: GraphView, options: FoldOptions) -> None:
        self.view = view
        self.options = options
        self.dims = options.dims or {}
        # 1-D (or scalar) int vectors known entry by entry: (entries, is scalar, dtype)
        self.sym: dict[str, tuple[list[Dim], bool, np.dtype]] = {}
        self.new: dict[str, np.ndarray] = {}  # values folded in this sweep
        self.remaining = dict(view.uses)
        self.folded: list[onnx.NodeProto] = []
        self.changes = 0

    # -------------------------------------------------------------- values
    def value(self, name: str) -> np.ndarray | None:
        if name in self.new:
            return self.new[name]
        return self.view.const(name)

    def vec(self, name: str) -> tuple[list[Dim], bool, np.dtype] | None:
        """A small int tensor as entries (scalar flag, dtype), constant or symbolic."""
        if name in self.sym:
            return self.sym[name]
        v = self.value(name)
        if v is None or v.dtype.kind not in "iu" or v.ndim > 1 or v.size > 64:
            return None
        return [int(x) for x in v.reshape(-1)], v.ndim == 0, v.dtype

    def shape_of(self, name: str) -> list[Dim] | None:
        v = self.value(name)
        if v is not None:
            return list(v.shape)
        entry = self.dims.get(name)
        return entry[1] if entry else None

    # -------------------------------------------------------------- the sweep
    def run(self) -> int:
        for node in list(self.view.graph.node):
            if node.domain not in DEFAULT_DOMAINS or node.op_type == "Constant":
                continue
            if any(o in self.view.outputs for o in node.output):
                continue  # a graph output stays produced by its node
            if self._symbolic(node):
                continue
            if node.op_type == "Reshape":
                self._pin_reshape(node)
            self._evaluate(node)
        if self.folded:
            self.view.remove_nodes(self.folded)
            for name, value in self.new.items():
                if self.remaining.get(name, 0) > 0:
                    self.view.add_constant(name, value)
        return self.changes + len(self.folded)

    def _fold_to(self, node: onnx.NodeProto, values: list[np.ndarray]) -> None:
        for name, v in zip(node.output, values):
            if name:
                self.new[name] = v
        for i in node.input:
            if i:
                self.remaining[i] = self.remaining.get(i, 0) - 1
        self.folded.append(node)

    # -------------------------------------------------------------- shape vectors
    def _set_sym(self, node: onnx.NodeProto, entries: list[Dim], scalar: bool,
                 dtype: np.dtype = np.dtype(np.int64)) -> bool:
        """Record the node's output vector; fold it when every entry is a size."""
        if all(isinstance(e, int) for e in entries):
            arr = np.array(entries, dtype=dtype)
            self._fold_to(node, [arr.reshape(()) if scalar else arr])
            return True
        self.sym[node.output[0]] = (entries, scalar, np.dtype(dtype))
        return True

    def _symbolic(self, node: onnx.NodeProto) -> bool:
        op, ins = node.op_type, list(node.input)
        if op == "Shape" and ins:
            dims = self.shape_of(ins[0])
            if dims is None:
                return False
            r = len(dims)
            start, end = attr(node, "start", 0), attr(node, "end", r)
            start = min(max(start + r if start < 0 else start, 0), r)
            end = min(max(end + r if end < 0 else end, 0), r)
            return self._set_sym(node, list(dims[start:end]), False)
        if op == "Size" and ins:
            dims = self.shape_of(ins[0])
            if dims is None or not all(isinstance(d, int) for d in dims):
                return False
            self._fold_to(node, [np.array(int(np.prod(dims)), dtype=np.int64)])
            return True
        if not any(i in self.sym for i in ins):
            return False
        if op == "Gather" and len(ins) == 2 and attr(node, "axis", 0) == 0:
            src, idx = self.vec(ins[0]), self.value(ins[1])
            if src is None or src[1] or idx is None or idx.ndim > 1 or idx.dtype.kind not in "iu":
                return False
            n = len(src[0])
            picks = [int(k) + n if int(k) < 0 else int(k) for k in idx.reshape(-1)]
            if any(not 0 <= k < n for k in picks):
                return False
            return self._set_sym(node, [src[0][k] for k in picks], idx.ndim == 0, src[2])
        if op == "Unsqueeze" and ins:
            src = self.vec(ins[0])
            axes = attr(node, "axes") if len(ins) < 2 else self.value(ins[1])
            if src is None or not src[1] or axes is None or [int(a) for a in np.reshape(axes, -1)] not in ([0], [-1]):
                return False
            return self._set_sym(node, src[0], False, src[2])
        if op == "Squeeze" and ins:
            src = self.vec(ins[0])
            if src is None or src[1] or len(src[0]) != 1:
                return False
            return self._set_sym(node, src[0], True, src[2])
        if op == "Cast" and ins:
            src = self.vec(ins[0])
            to = {onnx.TensorProto.INT64: np.dtype(np.int64), onnx.TensorProto.INT32: np.dtype(np.int32)}
            if src is None or attr(node, "to") not in to:
                return False
            return self._set_sym(node, src[0], src[1], to[attr(node, "to")])
        if op == "Concat" and attr(node, "axis", 0) in (0, -1):
            parts = [self.vec(i) for i in ins if i]
            if any(p is None or p[1] for p in parts):
                return False
            return self._set_sym(node, [e for p in parts for e in p[0]], False, parts[0][2] if parts else np.int64)
        if op == "Slice" and len(ins) >= 3:
            src = self.vec(ins[0])
            args = [self.value(i) if i else None for i in ins[1:5]]
            if src is None or src[1] or args[0] is None or args[1] is None:
                return False
            if len(args) > 2 and args[2] is not None and [int(a) for a in args[2].reshape(-1)] not in ([0], [-1]):
                return False
            step = int(args[3].reshape(-1)[0]) if len(args) > 3 and args[3] is not None else 1
            start, end = int(args[0].reshape(-1)[0]), int(args[1].reshape(-1)[0])
            if step == 0:
                return False
            picked = list(src[0][slice(*slice(start, end, step).indices(len(src[0])))])
            return self._set_sym(node, picked, False, src[2])
        return False

    def _pin_reshape(self, node: onnx.NodeProto) -> None:
        """Give a Reshape with a symbolic target a constant one (0 = copy, -1 = the rest)."""
        if len(node.input) < 2 or node.input[1] not in self.sym or attr(node, "allowzero", 0):
            return
        entries = self.sym[node.input[1]][0]
        data = self.shape_of(node.input[0]) or []
        target: list[int | None] = []
        for k, e in enumerate(entries):
            if isinstance(e, int):
                target.append(e)
            elif isinstance(e, str) and k < len(data) and data[k] == e:
                target.append(0)
            else:
                target.append(None)
        unknown = [k for k, t in enumerate(target) if t is None]
        if len(unknown) > 1 or (unknown and -1 in target):
            return
        for k in unknown:
            target[k] = -1
        name = self.view.new_name(node.input[1] + "_pinned")
        self.view.add_constant(name, np.array(target, dtype=np.int64))
        self.remaining[node.input[1]] = self.remaining.get(node.input[1], 0) - 1
        node.input[1] = name
        self.remaining[name] = 1
        self.changes += 1

    # -------------------------------------------------------------- evaluation
    def _evaluate(self, node: onnx.NodeProto) -> None:
        if node.op_type in NONDETERMINISTIC or node.op_type in QUANTIZATION or any(True for _ in subgraphs(node)):
            return
        if node.op_type == "Dropout" and (len(node.output) > 1 and node.output[1]):
            return
        ins = [i for i in node.input if i]
        if not ins:
            if node.op_type not in ("ConstantOfShape", "Range", "EyeLike"):
                return
        feeds = {}
        for i in ins:
            v = self.value(i)
            if v is None:
                return
            feeds[i] = v
        in_bytes = sum(_nbytes(v) for v in feeds.values())
        if in_bytes > max(self.options.size_limit, 1) * 4:
            return  # reading and evaluating huge weights is not worth it
        try:
            outs = _run_node(node, feeds, self.options.opsets or {"": 17})
        except Exception:  # noqa: BLE001 - a node we cannot evaluate is simply kept
            return
        if any(not isinstance(o, np.ndarray) for o in outs):
            return
        out_bytes = sum(_nbytes(o) for o in outs)
        if out_bytes > self.options.size_limit:
            return
        freed = 0
        for i in set(ins):
            left = self.remaining.get(i, 0) - list(node.input).count(i)
            if left <= 0 and (i in self.new or i in self.view.constants):
                freed += _nbytes(feeds[i])
        if not self.options.allow_growth and out_bytes > freed + SMALL_BYTES:
            return
        self._fold_to(node, [np.asarray(o) for o in outs])


_SESSIONS: dict[bytes, object] = {}


def _run_node(node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]) -> list:
    from onnx.reference import ReferenceEvaluator

    inputs = [
        onnx.helper.make_tensor_value_info(k, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for k, v in feeds.items()
    ]
    outputs = [onnx.helper.make_empty_tensor_value_info(o) for o in node.output if o]
    graph = onnx.helper.make_graph([node], "fold", inputs, outputs)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opsets.items()])
    outs = ReferenceEvaluator(model).run(None, feeds)
    names = [o for o in node.output if o]
    by_name = dict(zip(names, outs))
    return [by_name.get(o, np.zeros(0)) for o in node.output]


def fold_constants(view: GraphView, options: FoldOptions) -> int:
    """Fold what is constant or computed from known shapes in one graph; the change count."""
    return _Folder(view, options).run()
