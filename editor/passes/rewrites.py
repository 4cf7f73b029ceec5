"""The optimizer's rewrite passes: eliminations, fusions, deduplication, clean-up.

Each function rewrites one graph (a :class:`GraphView`) in place and returns how many
changes it made. Each only fires where the result is exactly the same computation: known
constants, known static shapes (from :mod:`editor.passes.shapes`), a value read by nothing
but the node being fused into, and graph inputs/outputs kept under their names.
"""

from __future__ import annotations

import hashlib

import numpy as np
import onnx
from onnx import numpy_helper

from editor.passes.folding import NONDETERMINISTIC
from editor.passes.graphview import DEFAULT_DOMAINS, GraphView, attr, rename_many, set_attr, subgraphs
from editor.passes.shapes import Dim

Dims = dict[str, tuple[int, list[Dim] | None]]


def _std(node: onnx.NodeProto, *ops: str) -> bool:
    return node.op_type in ops and node.domain in DEFAULT_DOMAINS


def _static(dims: Dims, name: str) -> list[int] | None:
    entry = dims.get(name)
    if entry is None or entry[1] is None or not all(isinstance(d, int) for d in entry[1]):
        return None
    return list(entry[1])  # type: ignore[arg-type]


def _elem(dims: Dims, name: str) -> int | None:
    entry = dims.get(name)
    return entry[0] if entry and entry[0] else None


# ---------------------------------------------------------------------- eliminations
def _bypass_all(view: GraphView, picks: list[onnx.NodeProto]) -> int:
    done = 0
    for node in picks:
        if view.bypass(node, node.input[0], node.output[0]):
            done += 1
            view.refresh()
    return done


def eliminate_identity(view: GraphView, dims: Dims) -> int:
    """Identity, and Dropout in inference (its mask unused), pass their input through."""
    picks = []
    for n in view.graph.node:
        if _std(n, "Identity") and n.input and n.input[0]:
            picks.append(n)
        elif _std(n, "Dropout") and n.input and not (len(n.output) > 1 and n.output[1]):
            if attr(n, "is_test", 1) == 0:
                continue  # opset < 7: is_test=0 is training mode, which drops values
            mode = n.input[2] if len(n.input) > 2 and n.input[2] else None
            training = view.const(mode) if mode else None
            if mode and (training is None or bool(np.asarray(training).reshape(-1)[0])):
                continue
            picks.append(n)
    return _bypass_all(view, picks)


def eliminate_nop(view: GraphView, dims: Dims) -> int:
    """Transpose by the identity permutation, Cast to the same type, Pad by zeros, and
    Reshape/Slice/Expand/Squeeze/Flatten whose output has the input's (static) shape."""
    picks = []
    for n in view.graph.node:
        if n.domain not in DEFAULT_DOMAINS or not n.input or not n.input[0] or not n.output:
            continue
        x, y = n.input[0], n.output[0]
        if n.op_type == "Transpose":
            perm = attr(n, "perm")
            if perm is not None and list(perm) == list(range(len(perm))):
                picks.append(n)
        elif n.op_type == "Cast":
            if _elem(dims, x) is not None and _elem(dims, x) == attr(n, "to"):
                picks.append(n)
        elif n.op_type == "Pad":
            pads = attr(n, "pads") if len(n.input) < 2 else view.const(n.input[1])
            if pads is not None and not np.any(np.asarray(pads)):
                picks.append(n)
        elif n.op_type in ("Reshape", "Expand", "Squeeze", "Unsqueeze", "Flatten", "Slice", "Tile"):
            sx, sy = _static(dims, x), _static(dims, y)
            if sx is None or sx != sy:
                continue
            if n.op_type == "Slice":
                steps = view.const(n.input[4]) if len(n.input) > 4 and n.input[4] else np.array([1])
                if steps is None or np.any(np.asarray(steps) <= 0):
                    continue
            picks.append(n)
        elif n.op_type == "Concat" and len([i for i in n.input if i]) == 1:
            picks.append(n)
    return _bypass_all(view, picks)


# ---------------------------------------------------------------------- consecutive ops
def fuse_consecutive_transposes(view: GraphView, dims: Dims) -> int:
    done = 0
    for n in list(view.graph.node):
        if not _std(n, "Transpose") or attr(n, "perm") is None:
            continue
        first = view.producers.get(n.input[0])
        if first is None or not _std(first, "Transpose") or attr(first, "perm") is None:
            continue
        if view.single_reader(first.output[0]) is not n:
            continue
        p1, p2 = list(attr(first, "perm")), list(attr(n, "perm"))
        if len(p1) != len(p2):
            continue
        set_attr(n, "perm", [p1[k] for k in p2])
        n.input[0] = first.input[0]
        view.remove_nodes([first])
        view.refresh()
        done += 1
    return done


def fuse_consecutive_reshapes(view: GraphView, dims: Dims) -> int:
    """Reshape(Reshape(x, a), b) -> Reshape(x, b) when b is constant with no 0 (copy)
    entries; Squeeze/Unsqueeze/Flatten before a Reshape are absorbed the same way."""
    done = 0
    for n in list(view.graph.node):
        if not _std(n, "Reshape") or len(n.input) < 2 or attr(n, "allowzero", 0):
            continue
        target = view.const(n.input[1])
        if target is None or np.any(np.asarray(target) == 0):
            continue
        first = view.producers.get(n.input[0])
        if first is None or not _std(first, "Reshape", "Flatten", "Squeeze", "Unsqueeze"):
            continue
        if view.single_reader(first.output[0]) is not n:
            continue
        n.input[0] = first.input[0]
        view.remove_nodes([first])
        view.refresh()
        done += 1
    return done


# ---------------------------------------------------------------------- Conv fusions
def _conv_weights(view: GraphView, conv: onnx.NodeProto) -> tuple[np.ndarray, np.ndarray] | None:
    if not _std(conv, "Conv") or len(conv.input) < 2:
        return None
    w = view.const(conv.input[1])
    if w is None or w.dtype.kind != "f":
        return None
    if len(conv.input) > 2 and conv.input[2]:
        b = view.const(conv.input[2])
        if b is None:
            return None
    else:
        b = np.zeros(w.shape[0], dtype=w.dtype)
    return w, b


def _set_conv_weights(view: GraphView, conv: onnx.NodeProto, w: np.ndarray | None, b: np.ndarray) -> None:
    if w is not None:
        wn = view.new_name(conv.input[1] + "_fused")
        view.add_constant(wn, w)
        conv.input[1] = wn
    bn = view.new_name((conv.name or conv.output[0]) + "_bias")
    view.add_constant(bn, b)
    if len(conv.input) > 2:
        conv.input[2] = bn
    else:
        conv.input.append(bn)


def _channel_vector(c: np.ndarray, channels: int, rank: int) -> np.ndarray | None:
    """``c`` as one value per output channel when it broadcasts against a conv output of
    rank ``rank`` only along the channel axis; None otherwise."""
    shape = list(c.shape)
    if len(shape) > rank:
        return None
    shape = [1] * (rank - len(shape)) + shape
    if any(d != 1 for k, d in enumerate(shape) if k != 1):
        return None
    if shape[1] not in (1, channels):
        return None
    return np.broadcast_to(c.reshape(-1), (channels,)) if c.size == 1 else c.reshape(-1)


def _fuse_into_conv(view: GraphView, dims: Dims, ops: tuple[str, ...]) -> int:
    done = 0
    for n in list(view.graph.node):
        if not _std(n, *ops) or len(n.input) != 2:
            continue
        for k in (0, 1):
            conv = view.producers.get(n.input[k])
            if conv is None or view.single_reader(conv.output[0]) is not n:
                continue
            wb = _conv_weights(view, conv)
            other = view.const(n.input[1 - k])
            if wb is None or other is None:
                continue
            w, b = wb
            if other.dtype != w.dtype:
                continue
            vec = _channel_vector(other, w.shape[0], w.ndim)
            if vec is None:
                continue
            if n.op_type == "Add":
                _set_conv_weights(view, conv, None, (b + vec).astype(w.dtype))
            elif n.op_type == "Mul":
                scale = vec.reshape((-1,) + (1,) * (w.ndim - 1))
                _set_conv_weights(view, conv, (w * scale).astype(w.dtype), (b * vec).astype(w.dtype))
            elif n.op_type == "Sub" and k == 0:
                _set_conv_weights(view, conv, None, (b - vec).astype(w.dtype))
            else:
                continue
            conv.output[0] = n.output[0]
            view.remove_nodes([n])
            view.refresh()
            done += 1
            break
    return done


def fuse_add_into_conv(view: GraphView, dims: Dims) -> int:
    """Conv followed by Add (or Sub) of a per-channel constant: the constant joins the bias."""
    return _fuse_into_conv(view, dims, ("Add", "Sub"))


def fuse_mul_into_conv(view: GraphView, dims: Dims) -> int:
    """Conv followed by Mul by a per-channel constant: weights and bias are scaled."""
    return _fuse_into_conv(view, dims, ("Mul",))


def fuse_bn_into_conv(view: GraphView, dims: Dims) -> int:
    """Conv followed by BatchNormalization (inference): folded into weights and bias."""
    done = 0
    for bn in list(view.graph.node):
        if not _std(bn, "BatchNormalization") or attr(bn, "training_mode", 0) or len(bn.input) < 5:
            continue
        if any(o for o in bn.output[1:]):
            continue
        conv = view.producers.get(bn.input[0])
        if conv is None or view.single_reader(conv.output[0]) is not bn:
            continue
        wb = _conv_weights(view, conv)
        params = [view.const(i) for i in bn.input[1:5]]
        if wb is None or any(p is None for p in params):
            continue
        w, b = wb
        scale, bias, mean, var = (np.asarray(p, dtype=np.float64) for p in params)
        k = scale / np.sqrt(var + float(attr(bn, "epsilon", 1e-5)))
        w2 = (w * k.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
        b2 = ((b - mean) * k + bias).astype(w.dtype)
        _set_conv_weights(view, conv, w2, b2)
        conv.output[0] = bn.output[0]
        view.remove_nodes([bn])
        view.refresh()
        done += 1
    return done


def fuse_matmul_add_into_gemm(view: GraphView, dims: Dims) -> int:
    """MatMul(A, B) + C -> Gemm(A, B, C) where A is known 2-D, B a 2-D constant and C
    broadcasts to the result one way. Rank > 2 stays MatMul + Add: Gemm is 2-D only."""
    done = 0
    for add in list(view.graph.node):
        if not _std(add, "Add") or len(add.input) != 2:
            continue
        for k in (0, 1):
            mm = view.producers.get(add.input[k])
            if mm is None or not _std(mm, "MatMul") or view.single_reader(mm.output[0]) is not add:
                continue
            a = _static(dims, mm.input[0]) or (dims.get(mm.input[0], (0, None))[1])
            b = view.const(mm.input[1])
            c = view.const(add.input[1 - k])
            if a is None or len(a) != 2 or b is None or b.ndim != 2 or c is None or c.ndim > 2:
                continue
            if c.dtype != b.dtype or b.dtype.kind != "f":
                continue
            m, n_ = a[0], b.shape[1]
            cs = [1] * (2 - c.ndim) + list(c.shape)
            if cs[1] not in (1, n_) or (cs[0] != 1 and cs[0] != m):
                continue
            gemm = onnx.helper.make_node("Gemm", [mm.input[0], mm.input[1], add.input[1 - k]], [add.output[0]],
                                         name=mm.name or add.name)
            idx = list(view.graph.node).index(add)
            view.graph.node.insert(idx, gemm)
            view.remove_nodes([mm, add])
            view.refresh()
            done += 1
            break
    return done


# ---------------------------------------------------------------------- deduplication
def _digest(a: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


def dedupe_initializers(view: GraphView, dims: Dims) -> int:
    """Initializers with the same type, dims and bytes: readers of the copies read the first."""
    g = view.graph
    if not isinstance(g, onnx.GraphProto):
        return 0
    seen: dict[tuple, str] = {}
    dupes: list[tuple[str, str]] = []
    for t in g.initializer:
        if t.name in view.inputs or t.name in view.outputs:
            continue
        a = view.const(t.name)
        if a is None or a.dtype == object:
            continue
        key = (t.data_type, tuple(t.dims), _digest(a))
        if key in seen:
            dupes.append((t.name, seen[key]))
        else:
            seen[key] = t.name
    rename_many(g, dict(dupes))
    gone = {d for d, _ in dupes}
    for k in range(len(g.initializer) - 1, -1, -1):
        if g.initializer[k].name in gone:
            del g.initializer[k]
    return len(dupes)


def _node_key(node: onnx.NodeProto) -> bytes | None:
    if node.op_type in NONDETERMINISTIC or any(True for _ in subgraphs(node)) or not node.output:
        return None
    if node.domain not in DEFAULT_DOMAINS and node.domain != "ai.onnx.ml":
        return None  # a custom op may have effects we cannot see
    key = onnx.NodeProto()
    key.CopyFrom(node)
    key.ClearField("name")
    key.ClearField("doc_string")
    key.ClearField("metadata_props")
    del key.output[:]
    key.output.extend([str(len(node.output))])
    return key.SerializeToString(deterministic=True)


def eliminate_common_subexpressions(view: GraphView, dims: Dims) -> int:
    """A node identical to an earlier one (op, attributes, inputs): readers of its outputs
    read the earlier node's outputs; it goes."""
    seen: dict[bytes, onnx.NodeProto] = {}
    doomed = []
    mapping: dict[str, str] = {}
    for n in view.graph.node:
        # later nodes read the survivors' names before their key is taken, so merges chain
        for k, i in enumerate(n.input):
            if i in mapping:
                n.input[k] = mapping[i]
        key = _node_key(n)
        if key is None:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = n
            continue
        if any(o in view.outputs for o in n.output if o):
            continue
        if any(old and not new for old, new in zip(n.output, first.output)):
            continue
        mapping.update({old: new for old, new in zip(n.output, first.output) if old})
        doomed.append(n)
    rename_many(view.graph, mapping)
    view.remove_nodes(doomed)
    return len(doomed)


# ---------------------------------------------------------------------- constants
def constant_to_initializer(view: GraphView, dims: Dims) -> int:
    """Constant nodes become initializers of the same name (graphs only: functions have none)."""
    g = view.graph
    if not isinstance(g, onnx.GraphProto):
        return 0
    doomed = []
    for n in g.node:
        if not _std(n, "Constant") or len(n.output) != 1 or n.output[0] in view.outputs:
            continue
        t = view.constants.get(n.output[0])
        if t is None:
            continue
        tensor = onnx.TensorProto()
        tensor.CopyFrom(t)
        tensor.name = n.output[0]
        g.initializer.append(tensor)
        doomed.append(n)
    view.remove_nodes(doomed)
    return len(doomed)


def initializer_to_constant(view: GraphView, dims: Dims) -> int:
    """The reverse: initializers (not graph inputs) become Constant nodes at the top."""
    g = view.graph
    if not isinstance(g, onnx.GraphProto):
        return 0
    moved = [t for t in g.initializer if t.name not in view.inputs]
    for pos, t in enumerate(moved):
        value = onnx.TensorProto()
        value.CopyFrom(t)
        g.node.insert(pos, onnx.helper.make_node("Constant", [], [t.name], value=value))
    names = {t.name for t in moved}
    for k in range(len(g.initializer) - 1, -1, -1):
        if g.initializer[k].name in names:
            del g.initializer[k]
    return len(moved)


# ---------------------------------------------------------------------- clean-up
def eliminate_dead_nodes(view: GraphView, dims: Dims) -> int:
    """Nodes that feed no graph output (nodes without outputs are kept: they may have
    effects), then initializers nothing reads."""
    g = view.graph
    live: set[int] = set()
    stack = [view.producers[o] for o in view.outputs if o in view.producers]
    stack += [n for n in g.node if not any(n.output)]
    while stack:
        n = stack.pop()
        if id(n) in live:
            continue
        live.add(id(n))
        for name in _reads(n):
            p = view.producers.get(name)
            if p is not None and id(p) not in live:
                stack.append(p)
    dead = [n for n in g.node if id(n) not in live]
    view.remove_nodes(dead)
    removed = len(dead)
    if isinstance(g, onnx.GraphProto):
        used = set(view.outputs)
        for n in g.node:
            used |= set(_reads(n))
        for k in range(len(g.initializer) - 1, -1, -1):
            name = g.initializer[k].name
            if name not in used and name not in view.inputs:
                del g.initializer[k]
                removed += 1
    return removed


def _reads(n: onnx.NodeProto) -> list[str]:
    from editor.passes.graphview import node_reads

    return node_reads(n)


def remove_stale_value_info(view: GraphView, dims: Dims) -> int:
    """value_info entries naming values the graph no longer has, or repeating one."""
    g = view.graph
    if not isinstance(g, onnx.GraphProto):
        return 0
    produced = set(view.producers)
    seen: set[str] = set()
    removed = 0
    for k in range(len(g.value_info) - 1, -1, -1):
        name = g.value_info[k].name
        if name not in produced or name in seen or name in view.outputs or name in view.inputs:
            del g.value_info[k]
            removed += 1
        seen.add(name)
    return removed


def toposort(view: GraphView, dims: Dims) -> int:
    """Order nodes so every value is produced before it is read (stable otherwise)."""
    nodes = list(view.graph.node)
    available = set(view.inputs) | set(view.constants)
    if isinstance(view.graph, onnx.GraphProto):
        available |= {t.name for t in view.graph.initializer}
    produced_here = set(view.producers)
    order: list[int] = []
    placed = [False] * len(nodes)
    progress = True
    while progress and len(order) < len(nodes):
        progress = False
        for k, n in enumerate(nodes):
            if placed[k]:
                continue
            if all(name in available or name not in produced_here for name in _reads(n)):
                placed[k] = True
                order.append(k)
                available |= {o for o in n.output if o}
                progress = True
    if len(order) < len(nodes) or order == list(range(len(nodes))):
        return 0  # a cycle, or already sorted
    copies = []
    for k in order:
        c = onnx.NodeProto()
        c.CopyFrom(nodes[k])
        copies.append(c)
    del view.graph.node[:]
    view.graph.node.extend(copies)
    return 1


def remove_unused_opsets(model: onnx.ModelProto) -> int:
    """Opset imports no node (in any graph or function) uses; the default domain stays."""
    used = {""}
    stack: list = [model.graph] + list(model.functions)
    while stack:
        g = stack.pop()
        for n in g.node:
            used.add("" if n.domain == "ai.onnx" else n.domain)
            stack += list(subgraphs(n))
    removed = 0
    for k in range(len(model.opset_import) - 1, -1, -1):
        if model.opset_import[k].domain not in used:
            del model.opset_import[k]
            removed += 1
    return removed


def tensor_from(value: np.ndarray, name: str) -> onnx.TensorProto:
    return numpy_helper.from_array(value, name)


# ---------------------------------------------------------------------- units and chains
#: op -> (which constant makes it a no-op, may the constant be on the left)
_UNITS = {"Add": (0, True), "Sub": (0, False), "Mul": (1, True), "Div": (1, False), "Pow": (1, False),
          "And": (True, True), "Or": (False, True)}


def _same_shape(dims: Dims, a: str, b: str) -> bool:
    ea, eb = dims.get(a), dims.get(b)
    if not ea or not eb or ea[1] is None or eb[1] is None or ea[0] != eb[0]:
        return False
    return len(ea[1]) == len(eb[1]) and all(x is not None and x == y for x, y in zip(ea[1], eb[1]))


def eliminate_nop_with_unit(view: GraphView, dims: Dims) -> int:
    """x + 0, x * 1, x / 1, x ** 1, x and True, x or False -> x, where the result has x's
    type and shape (a broadcast that grows x is not a no-op)."""
    picks = []
    for n in view.graph.node:
        if n.domain not in DEFAULT_DOMAINS or n.op_type not in _UNITS or len(n.input) != 2:
            continue
        unit, commutes = _UNITS[n.op_type]
        for k in ((1, 0) if commutes else (1,)):
            c = view.const(n.input[k])
            x = n.input[1 - k]
            if c is None or c.size == 0 or c.dtype == object or not np.all(c == unit):
                continue
            if n.op_type == "Pow" and c.dtype.kind not in "iuf":
                continue
            if _same_shape(dims, x, n.output[0]):
                picks.append((n, x))
                break
    done = 0
    for n, x in picks:
        if view.bypass(n, x, n.output[0]):
            done += 1
            view.refresh()
    return done


def _unsqueeze_axes(view: GraphView, n: onnx.NodeProto) -> list[int] | None:
    axes = attr(n, "axes") if len(n.input) < 2 else view.const(n.input[1])
    return None if axes is None else [int(a) for a in np.reshape(axes, -1)]


def fuse_consecutive_unsqueezes(view: GraphView, dims: Dims) -> int:
    """Unsqueeze(Unsqueeze(x, a), b) -> Unsqueeze(x, axes of both) when x's rank is known.
    When every reader of the first Unsqueeze is an Unsqueeze, each is rewritten and the
    first goes (no reader is left computing it)."""
    done = 0
    for first in list(view.graph.node):
        if not _std(first, "Unsqueeze") or not first.output or first.output[0] in view.outputs:
            continue
        readers = view.readers.get(first.output[0], [])
        if not readers or view.uses.get(first.output[0], 0) != len(readers):
            continue
        if not all(_std(r, "Unsqueeze") and r.input[0] == first.output[0] and first.output[0] not in r.input[1:]
                   for r in readers):
            continue
        a = _unsqueeze_axes(view, first)
        entry = dims.get(first.input[0])
        if a is None or entry is None or entry[1] is None:
            continue
        plans = []
        for n in readers:
            b = _unsqueeze_axes(view, n)
            if b is None:
                break
            marks = ["x"] * len(entry[1])
            for axes in (a, b):
                r = len(marks) + len(axes)
                for ax in sorted(ax + r if ax < 0 else ax for ax in axes):
                    marks.insert(ax, "u")
            plans.append((n, [k for k, m in enumerate(marks) if m == "u"]))
        else:
            for n, combined in plans:
                n.input[0] = first.input[0]
                if len(n.input) < 2:
                    set_attr(n, "axes", combined)
                else:
                    name = view.new_name(n.input[1] + "_fused")
                    view.add_constant(name, np.array(combined, dtype=np.int64))
                    n.input[1] = name
            view.remove_nodes([first])
            view.refresh()
            done += 1
    return done


def initializer_inputs_to_constants(model: onnx.ModelProto) -> int:
    """Drop initializers from the main graph's input list (old exporters list every weight
    as an input, which makes it overridable and so not a constant to any optimizer).
    IR 3 requires that listing, so such a model moves to IR 4 (the same format otherwise)."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    doomed = [k for k, vi in enumerate(g.input) if vi.name in inits]
    for k in reversed(doomed):
        del g.input[k]
    if doomed and model.ir_version < 4:
        model.ir_version = 4
    return len(doomed)


def _slice_args(view: GraphView, n: onnx.NodeProto) -> list[np.ndarray] | None:
    """starts, ends, axes, steps of an opset >= 10 Slice, all constant (defaults filled)."""
    if len(n.input) < 3:
        return None
    starts, ends = view.const(n.input[1]), view.const(n.input[2])
    if starts is None or ends is None:
        return None
    axes = view.const(n.input[3]) if len(n.input) > 3 and n.input[3] else np.arange(len(starts), dtype=np.int64)
    steps = view.const(n.input[4]) if len(n.input) > 4 and n.input[4] else np.ones(len(starts), dtype=np.int64)
    if axes is None or steps is None:
        return None
    return [np.asarray(a, dtype=np.int64).reshape(-1) for a in (starts, ends, axes, steps)]


def fuse_consecutive_slices(view: GraphView, dims: Dims) -> int:
    """Slice(Slice(x, a), b) over different axes -> one Slice over both (x's rank known).
    When every reader of the first Slice is such a Slice, each is rewritten and the first
    goes."""
    done = 0
    for first in list(view.graph.node):
        if not _std(first, "Slice") or not first.output or first.output[0] in view.outputs:
            continue
        readers = view.readers.get(first.output[0], [])
        if not readers or view.uses.get(first.output[0], 0) != len(readers):
            continue
        entry = dims.get(first.input[0])
        a = _slice_args(view, first)
        if a is None or entry is None or entry[1] is None:
            continue
        rank = len(entry[1])
        axes_a = {int(x) % rank for x in a[2]} if rank else set()
        plans = []
        for n in readers:
            b = _slice_args(view, n) if _std(n, "Slice") and n.input[0] == first.output[0] else None
            if b is None or {int(x) % rank for x in b[2]} & axes_a or first.output[0] in n.input[1:]:
                break
            plans.append((n, [np.concatenate([x, y]) for x, y in zip(a, b)]))
        else:
            for n, merged in plans:
                names = []
                for arr, what in zip(merged, ("starts", "ends", "axes", "steps")):
                    name = view.new_name(f"{n.name or n.output[0]}_{what}")
                    view.add_constant(name, arr)
                    names.append(name)
                del n.input[:]
                n.input.extend([first.input[0], *names])
            view.remove_nodes([first])
            view.refresh()
            done += 1
    return done
