"""What each graph input feeds, so random values for it make sense.

A random int in [-10, 10] is a fine value for most integer inputs and a wrong one for an
index: a Gather over a 30,000-row embedding table wants token ids in [0, 30000), a sequence
length must not be negative, an input compared with ``16000`` wants to *be* 16000 (or one of
the other constants it is compared with) so the branch that matters runs. ``input_roles``
follows each input through value-preserving ops (Cast, Reshape, Unsqueeze ...) to the ops
that read it and turns what they need into an :class:`InputRole`: a value set, or a range.

NOTE: ranges meet. An input read by two Gathers over tables of 100 and 50 rows gets
[0, 49], the range both accept; a value set (from comparisons) wins over ranges because it
is the stronger statement about what the model expects.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import onnx
from onnx import numpy_helper

__all__ = ["InputRole", "input_roles"]

#: ops whose output carries the input's values unchanged (input 0 only)
_TRANSPARENT = {"Cast", "Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Expand", "Transpose",
                "CastLike", "Slice", "Concat", "Tile"}
#: (op, port) -> (data port, index of the attribute 'axis' default): indices into a data input
_INDEXING = {
    ("Gather", 1): 0,
    ("GatherElements", 1): 0,
    ("GatherND", 1): 0,
    ("ScatterElements", 1): 0,
    ("ScatterND", 1): 0,
    ("Scatter", 1): 0,
    ("EmbedLayerNormalization", 0): 2,  # com.microsoft: input_ids into word_embedding
    ("EmbedLayerNormalization", 1): 4,  # segment_ids into segment_embedding
}
#: (op, port): a count or a size, must be >= 1 to mean anything
_COUNTS = {("TopK", 1), ("Tile", 1), ("ConstantOfShape", 0), ("Range", 1), ("Range", 2), ("OneHot", 1),
           ("Resize", 3), ("Upsample", 1), ("Expand", 1), ("Reshape", 1), ("NonMaxSuppression", 2)}
#: (op, port) -> port of a tensor whose dim 0 bounds the lengths (RNN sequence_lens)
_LENGTHS = {("LSTM", 4): 0, ("GRU", 4): 0, ("RNN", 4): 0}
_COMPARE = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}


@dataclass
class InputRole:
    """What values an input should take: one of ``choices``, else within [low, high]."""

    low: float | None = None
    high: float | None = None
    choices: tuple[float, ...] = ()
    #: why, for the input panel and ``run`` output ("indices into 'emb' (30522 rows)")
    reason: str = ""

    def meet(self, other: InputRole) -> InputRole:
        """Both constraints at once (see the module NOTE)."""
        if self.choices or other.choices:
            choices = self.choices or other.choices
            if self.choices and other.choices:
                common = tuple(c for c in self.choices if c in other.choices)
                choices = common or self.choices
            return InputRole(choices=choices, reason=self.reason if self.choices else other.reason)
        low = max((x for x in (self.low, other.low) if x is not None), default=None)
        high = min((x for x in (self.high, other.high) if x is not None), default=None)
        if low is not None and high is not None and high < low:
            high = low
        return InputRole(low, high, reason="; ".join(r for r in (self.reason, other.reason) if r))


class _Graph:
    def __init__(self, model: onnx.ModelProto, dims: Mapping[str, int]) -> None:
        g = model.graph
        self.model, self.dims = model, dims
        self.consumers: dict[str, list[tuple[onnx.NodeProto, int]]] = defaultdict(list)
        self.producer: dict[str, onnx.NodeProto] = {}
        for node in g.node:
            for k, name in enumerate(node.input):
                if name:
                    self.consumers[name].append((node, k))
            for o in node.output:
                self.producer[o] = node
        self.inits = {t.name: t for t in g.initializer}
        self.declared: dict[str, onnx.TypeProto] = {vi.name: vi.type for vi in list(g.input) + list(g.value_info) + list(g.output)}
        self._inferred: dict[str, onnx.TypeProto] | None = None

    def constant(self, name: str, limit: int = 64) -> np.ndarray | None:
        """The value of a small constant (initializer or Constant node), else None."""
        t = self.inits.get(name)
        if t is None:
            node = self.producer.get(name)
            if node is None or node.op_type != "Constant":
                return None
            t = next((a.t for a in node.attribute if a.name == "value" and a.HasField("t")), None)
            if t is None:
                return None
        size = int(np.prod(t.dims)) if t.dims else 1
        if size > limit or t.data_location == onnx.TensorProto.EXTERNAL:
            return None
        try:
            return numpy_helper.to_array(t)
        except Exception:  # noqa: BLE001 - unreadable constant: no hint from it
            return None

    def shape(self, name: str) -> tuple[int, ...] | None:
        """Concrete dims of ``name`` where known (weights, declarations, inference)."""
        t = self.inits.get(name)
        if t is not None:
            return tuple(int(d) for d in t.dims)
        node = self.producer.get(name)
        if node is not None and node.op_type == "Constant":
            t = next((a.t for a in node.attribute if a.name == "value" and a.HasField("t")), None)
            if t is not None:
                return tuple(int(d) for d in t.dims)
        tp = self.declared.get(name) or self._inferred_types().get(name)
        if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
            return None
        out = []
        for d in tp.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                out.append(int(d.dim_value))
            elif d.dim_param and d.dim_param in self.dims:
                out.append(int(self.dims[d.dim_param]))
            else:
                return None
        return tuple(out)

    def _inferred_types(self) -> dict[str, onnx.TypeProto]:
        if self._inferred is None:
            self._inferred = {}
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model, strict_mode=False)
                self._inferred = {vi.name: vi.type for vi in inferred.graph.value_info}
            except Exception:  # noqa: BLE001 - inference is a hint here
                pass
        return self._inferred


def _attr_int(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((int(a.i) for a in node.attribute if a.name == name), default)


def _role_for_use(g: _Graph, node: onnx.NodeProto, port: int) -> InputRole | None:
    op = node.op_type
    if (op, port) in _INDEXING:
        data_port = _INDEXING[(op, port)]
        if data_port >= len(node.input):
            return None
        data = node.input[data_port]
        shape = g.shape(data)
        if not shape:
            return InputRole(low=0, reason=f"indices into {data!r}")
        if op in ("GatherND", "ScatterND"):
            size = min(shape)
        else:
            axis = 0 if op == "EmbedLayerNormalization" else _attr_int(node, "axis", 0)
            if not -len(shape) <= axis < len(shape):
                return None
            size = shape[axis]
        return InputRole(low=0, high=max(size - 1, 0), reason=f"indices into {data!r} ({size} along axis)")
    if (op, port) in _LENGTHS:
        x_shape = g.shape(node.input[_LENGTHS[(op, port)]])
        high = x_shape[0] if x_shape else None
        return InputRole(low=1, high=high, reason=f"sequence lengths of {node.op_type}")
    if (op, port) in _COUNTS:
        return InputRole(low=1, high=8, reason=f"a count or size read by {op}")
    if op == "OneHot" and port == 0 and len(node.input) > 1:
        depth = g.constant(node.input[1])
        if depth is not None and depth.size == 1:
            return InputRole(low=0, high=max(int(depth.reshape(-1)[0]) - 1, 0), reason="OneHot indices")
    if op in _COMPARE and len(node.input) == 2:
        other = g.constant(node.input[1 - port])
        if other is not None and other.size and other.dtype.kind in "fiub":
            values = tuple(sorted({float(v) for v in other.reshape(-1)}))
            if op != "Equal":  # both sides of each threshold
                values = tuple(sorted({v + d for v in values for d in (-1.0, 0.0, 1.0)}))
            return InputRole(choices=values, reason=f"compared with constants by {op}")
    return None


def _paired_length(model: onnx.ModelProto, lens: onnx.ValueInfoProto, dims: Mapping[str, int]) -> int | None:
    """For ``waveforms_lens [batch]`` beside ``waveforms [batch, N]``: N, resolved (lengths
    longer than the data they measure make no sense)."""
    ld = lens.type.tensor_type.shape.dim
    if len(ld) != 1:
        return None
    batch = ld[0].dim_param or ld[0].dim_value
    for vi in model.graph.input:
        if vi is lens or not vi.type.HasField("tensor_type"):
            continue
        d = vi.type.tensor_type.shape.dim
        if len(d) >= 2 and (d[0].dim_param or d[0].dim_value) == batch:
            last = d[len(d) - 1]
            if last.HasField("dim_value") and last.dim_value > 0:
                return int(last.dim_value)
            if last.dim_param in dims:
                return int(dims[last.dim_param])
            if f"{vi.name}[{len(d) - 1}]" in dims:  # an unnamed dim, as the input plan keys it
                return int(dims[f"{vi.name}[{len(d) - 1}]"])
            from editor.runtime.inputs import guess_dim

            return guess_dim(last.dim_param or None)
    return None


_INTS = (onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.INT8, onnx.TensorProto.UINT8,
         onnx.TensorProto.BOOL)


def _role_by_name(model: onnx.ModelProto, vi: onnx.ValueInfoProto, dims: Mapping[str, int]) -> InputRole | None:
    """What an integer input's name says when nothing it feeds does: an attention mask is
    all ones (random ints in it turn a transformer's softmax into NaN), a sample rate is
    16000, lengths and counts are positive and no longer than their data."""
    tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
    if tt is None or tt.elem_type not in _INTS:
        return None
    lowered = vi.name.lower()
    if "mask" in lowered:
        return InputRole(choices=(1,), reason="an attention mask (by its name): every position attended")
    if lowered in ("sr", "sample_rate", "sampling_rate", "samplerate"):
        return InputRole(choices=(16000,), reason="a sample rate (by its name): 16 kHz")
    if any(w in lowered for w in ("len", "count", "num_", "size")) and tt.elem_type != onnx.TensorProto.BOOL:
        high = _paired_length(model, vi, dims)
        return InputRole(low=1, high=high or 16, reason="a length or count (by its name)")
    return None


def input_roles(model: onnx.ModelProto, dims: Mapping[str, int] | None = None) -> dict[str, InputRole]:
    """Input name -> :class:`InputRole` for the inputs whose values something constrains.

    ``dims`` resolves symbolic dims of the data an index reads (as the run will). Integer
    inputs that nothing constrains get what their names say (:func:`_role_by_name`: masks,
    sample rates, lengths and counts).
    """
    g = _Graph(model, dims or {})
    inits = set(g.inits)
    roles: dict[str, InputRole] = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        role: InputRole | None = None
        todo, seen = [vi.name], set()
        while todo:
            value = todo.pop()
            if value in seen:
                continue
            seen.add(value)
            for node, port in g.consumers.get(value, ()):
                found = _role_for_use(g, node, port)
                if found is not None:
                    role = found if role is None else role.meet(found)
                elif node.op_type in _TRANSPARENT and port == 0 and node.domain in ("", "ai.onnx"):
                    todo.extend(o for o in node.output if o)
        if role is None:
            role = _role_by_name(model, vi, g.dims)
        if role is not None:
            roles[vi.name] = role
    return roles
