"""The shape engine: element type and shape of every value, with symbolic dims kept.

onnx's shape inference gives up on arithmetic over dynamic dims: a stride-2 Conv over
``height`` yields a fresh ``unk__7``, a Concat of two dynamic lengths an unknown dim. The
cost model needs formulas (``3*height*width*96``), so this engine propagates shapes itself,
in graph order, with :mod:`editor.shapes.symbolic` dims:

- rules of our own for the ops that carry most real models (element-wise and broadcasting,
  Conv/Pool families, MatMul/Gemm, the shape-tensor chains of torch exports: Shape → Gather
  → Unsqueeze → Concat → Reshape, whose *values* are tracked as dims too);
- every other op goes through onnx's own per-node inference
  (``OpSchema._infer_node_outputs``) with our formulas passed as ``dim_param`` text and read
  back; an op neither knows leaves its outputs unknown (``None``), never a guess.

If/Loop/Scan bodies get tables of their own (:attr:`ShapeTable.bodies`), inferred with the
outer scope's shapes visible, so costs inside bodies are formulas too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from editor.shapes import rules
from editor.shapes.fold import fold_small
from editor.shapes.symbolic import Dim, Expr, symbol, to_text

__all__ = ["ValueShape", "ShapeTable", "infer_model", "infer_graph", "shape_of_type", "structure_snapshot"]

#: int tensors up to this many elements have their values tracked (shape arithmetic)
VALUE_LIMIT = 64
CONTROL_FLOW = ("If", "Loop", "Scan")


@dataclass(frozen=True)
class ValueShape:
    """A value's element type (``onnx.TensorProto`` enum, 0 unknown) and dims (None: rank
    unknown; a None dim: that dim unknown). ``value``: the elements of a small int tensor,
    flattened, when known (a shape being computed)."""

    elem_type: int = 0
    dims: tuple[Dim | None, ...] | None = None
    value: tuple[Dim, ...] | None = None

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    def text(self) -> str:
        if self.dims is None:
            return "?"
        return "[" + ", ".join(to_text(d) for d in self.dims) + "]"


UNKNOWN = ValueShape()


@dataclass
class ShapeTable:
    """Shapes of one graph's values; ``bodies[(node_index, attribute)]`` for its subgraphs."""

    values: dict[str, ValueShape] = field(default_factory=dict)
    bodies: dict[tuple[int, str], ShapeTable] = field(default_factory=dict)
    #: names whose value is a constant (initializer, Constant output, or computed from them)
    constants: set[str] = field(default_factory=set)

    def get(self, name: str) -> ValueShape:
        return self.values.get(name, UNKNOWN)


def shape_of_type(tp: onnx.TypeProto, name: str | None = None) -> ValueShape:
    """A declared type as a :class:`ValueShape` (dim_param → symbol, missing → None).

    With ``name`` (a graph input), a dim with no value and no name, or the invalid -1 some
    exporters write for "dynamic", becomes a symbol of its own, ``<name>_dim<axis>``, so
    what is computed from it stays a formula instead of unknown."""
    if not tp.HasField("tensor_type"):
        return UNKNOWN
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return ValueShape(tt.elem_type, None)
    dims: list[Dim | None] = []
    for axis, d in enumerate(tt.shape.dim):
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(_parse_param(d.dim_param))
        elif name is not None:
            dims.append(symbol(f"{name}_dim{axis}"))
        else:
            dims.append(None)
    return ValueShape(tt.elem_type, tuple(dims))


#: formulas we produced, by their text, so dims that went through onnx come back as formulas
_BY_TEXT: dict[str, Expr] = {}


def _parse_param(text: str) -> Expr:
    return _BY_TEXT.get(text) or symbol(text)


def type_proto(vs: ValueShape, dim_text: Callable[[Expr], str] = to_text) -> onnx.TypeProto | None:
    """The TypeProto that declares ``vs`` (None when not even the element type is known):
    formula dims as ``dim_param`` text (``dim_text``), unknown dims with neither field."""
    if not vs.elem_type:
        return None
    tp = onnx.TypeProto()
    tp.tensor_type.elem_type = vs.elem_type
    if vs.dims is not None:
        shape = tp.tensor_type.shape
        shape.SetInParent()
        for d in vs.dims:
            dim = shape.dim.add()
            if isinstance(d, int):
                dim.dim_value = d
            elif d is not None:
                dim.dim_param = dim_text(d)
    return tp


def _remembered_text(d: Expr) -> str:
    """A formula's text, remembered so that onnx's inference hands it back as the formula."""
    text = to_text(d)
    _BY_TEXT.setdefault(text, d)
    return text


def _tensor_shape(t: onnx.TensorProto) -> ValueShape:
    dims = tuple(int(d) for d in t.dims)
    value = None
    n = int(np.prod(dims)) if dims else 1
    small_float = t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE) and n <= 8  # Resize scales
    if n <= VALUE_LIMIT and (t.data_type in rules.INT_TYPES or small_float) \
            and t.data_location != onnx.TensorProto.EXTERNAL:
        try:
            array = numpy_helper.to_array(t).reshape(-1)
            value = tuple(float(v) if small_float else int(v) for v in array)
        except Exception:  # noqa: BLE001 - a malformed tensor: its value stays unknown
            value = None
    return ValueShape(t.data_type, dims, value)


def infer_model(model: onnx.ModelProto, dims: Mapping[str, int] | None = None) -> ShapeTable:
    """Shapes of the main graph (and bodies) of ``model``; ``dims`` fixes named dims."""
    opsets = {o.domain or "": o.version for o in model.opset_import}
    return infer_graph(model.graph, opsets, outer=None, fixed=dims or {}, ir_version=model.ir_version)


def infer_graph(graph: onnx.GraphProto, opsets: Mapping[str, int], *, outer: ShapeTable | None,
                fixed: Mapping[str, int] | None = None, ir_version: int = 8,
                declared_inputs: Sequence[ValueShape] | None = None) -> ShapeTable:
    table = ShapeTable()
    if outer is not None:
        table.values.update(outer.values)
        table.constants |= outer.constants
    fixed = fixed or {}

    def with_fixed(vs: ValueShape) -> ValueShape:
        if not fixed or vs.dims is None:
            return vs
        return ValueShape(vs.elem_type, tuple(_fix(d, fixed) for d in vs.dims), vs.value)

    for t in graph.initializer:
        table.values[t.name] = _tensor_shape(t)
        table.constants.add(t.name)
    for t in graph.sparse_initializer:
        table.values[t.values.name] = ValueShape(t.values.data_type, tuple(int(d) for d in t.dims))
        table.constants.add(t.values.name)
    initializers = {t.name for t in graph.initializer}
    for k, vi in enumerate(graph.input):
        if vi.name in initializers:
            continue  # an input with a default (IR < 4 lists every weight so): a weight
        if declared_inputs is not None and k < len(declared_inputs) and declared_inputs[k].dims is not None:
            table.values[vi.name] = declared_inputs[k]
        else:
            table.values[vi.name] = with_fixed(shape_of_type(vi.type, vi.name))
        table.constants.discard(vi.name)
    step = NodeStep(graph, table, opsets, ir_version, fixed)
    for index, node in enumerate(graph.node):
        step.run(index, node)
    return table


class NodeStep:
    """The engine's work for one node of one graph: its bodies, its outputs, whether they are
    constants. :func:`infer_graph` runs it over every node in order; the incremental update
    (:mod:`editor.shapes.incremental`) runs it again over a changed node's downstream only."""

    def __init__(self, graph: onnx.GraphProto, table: ShapeTable, opsets: Mapping[str, int], ir_version: int,
                 fixed: Mapping[str, int] | None = None) -> None:
        self.table, self.opsets, self.ir_version = table, opsets, ir_version
        self.fixed = fixed or {}
        self.ctx = rules.Context(opsets=opsets, ir_version=ir_version)
        self.set_declared(graph)

    def set_declared(self, graph: onnx.GraphProto) -> None:
        """Read the graph's value_info and outputs again (they fill what the engine cannot know)."""
        declared = {vi.name: vi for vi in graph.value_info}
        for vi in graph.output:
            declared.setdefault(vi.name, vi)
        self.declared = declared

    def _with_fixed(self, vs: ValueShape) -> ValueShape:
        if not self.fixed or vs.dims is None:
            return vs
        return ValueShape(vs.elem_type, tuple(_fix(d, self.fixed) for d in vs.dims), vs.value)

    def run(self, index: int, node: onnx.NodeProto) -> list[ValueShape]:
        """Infer ``node`` (``graph.node[index]``) from the table; write and return its outputs."""
        table, opsets, ir_version = self.table, self.opsets, self.ir_version
        values, constants, declared = table.values, table.constants, self.declared
        op_type, domain = node.op_type, node.domain
        input_names, output_names = list(node.input), list(node.output)
        inputs = [values.get(n, UNKNOWN) if n else UNKNOWN for n in input_names]
        # graph attributes exist on If/Loop/Scan and on ops of other domains only
        has_body = (op_type in CONTROL_FLOW or domain not in ("", "ai.onnx")) and any(
            a.type == _GRAPH_ATTR for a in node.attribute)
        if has_body:
            for attr in node.attribute:
                if attr.type == _GRAPH_ATTR:
                    table.bodies[(index, attr.name)] = _infer_body(node, attr.name, attr.g, inputs, table, opsets,
                                                                   ir_version)
        if op_type in CONTROL_FLOW and domain in ("", "ai.onnx"):
            outs = _control_flow_outputs(node, index, inputs, table, opsets)
        else:
            outs = rules.apply(node, inputs, self.ctx)
        known_inputs = bool(inputs) and all(vs.value is not None for n, vs in zip(input_names, inputs) if n)
        if known_inputs and (outs is None or any(vs.value is None for vs in outs)):
            outs = fold_small(node, inputs, opsets) or outs
        if outs is None:
            outs = _onnx_fallback(node, inputs, opsets, ir_version)
        written: list[ValueShape] = []
        for k, name in enumerate(output_names):
            if not name:
                continue
            vs = outs[k] if k < len(outs) else UNKNOWN
            if (vs.dims is None or not vs.elem_type) and name in declared:
                d = self._with_fixed(shape_of_type(declared[name].type))
                vs = ValueShape(vs.elem_type or d.elem_type, vs.dims if vs.dims is not None else d.dims, vs.value)
            values[name] = vs
            written.append(vs)
        if op_type == "Constant" or (input_names and not has_body and op_type not in rules.NOT_CONSTANT
                                     and all(n in constants for n in input_names if n)):
            constants.update(n for n in output_names if n)
        else:
            constants.difference_update(n for n in output_names if n)
        return written


_GRAPH_ATTR = onnx.AttributeProto.GRAPH


def _control_flow_outputs(node: onnx.NodeProto, index: int, inputs: list[ValueShape],
                          table: ShapeTable, opsets: Mapping[str, int]) -> list[ValueShape]:
    """If: the branches' outputs where they agree; Loop/Scan: the carried values as the
    body leaves them, scan outputs with the iteration count in front."""
    def body_outputs(attr: str) -> list[ValueShape]:
        body = next((a.g for a in node.attribute if a.name == attr), None)
        sub = table.bodies.get((index, attr))
        if body is None or sub is None:
            return []
        return [sub.get(vi.name) for vi in body.output]

    if node.op_type == "If":
        then, other = body_outputs("then_branch"), body_outputs("else_branch")
        cond = inputs[0].value if inputs else None
        if cond and isinstance(cond[0], (int, float)):
            # exporters guard on shapes known at export time: the branch taken is known
            return then if cond[0] else other
        return [_merge(a, b) for a, b in zip(then, other)]
    outs = body_outputs("body")
    if node.op_type == "Loop":
        carried = len(node.input) - 2
        trips: Dim | None = None
        if node.input and node.input[0] and inputs[0].value and isinstance(inputs[0].value[0], int):
            trips = inputs[0].value[0]
        states = outs[1:1 + carried]
        scans = [ValueShape(vs.elem_type, None if vs.dims is None else (trips,) + vs.dims) for vs in outs[1 + carried:]]
        return states + scans
    if opsets.get("", 9) < 9:
        return [UNKNOWN] * len(node.output)  # Scan-8: a batch axis and sequence_lens in front
    n_scan = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
    n_state = len(node.input) - n_scan
    in_axes = next((list(a.ints) for a in node.attribute if a.name == "scan_input_axes"), [0] * n_scan)
    out_axes = next((list(a.ints) for a in node.attribute if a.name == "scan_output_axes"), None)
    first = inputs[n_state] if n_scan else None
    length = None
    if first is not None and first.dims and in_axes:
        length = first.dims[in_axes[0] + len(first.dims) if in_axes[0] < 0 else in_axes[0]]
    scans = []
    for k, vs in enumerate(outs[n_state:]):
        if vs.dims is None:
            scans.append(ValueShape(vs.elem_type, None))
            continue
        axis = out_axes[k] if out_axes and k < len(out_axes) else 0
        axis = axis + len(vs.dims) + 1 if axis < 0 else axis
        scans.append(ValueShape(vs.elem_type, vs.dims[:axis] + (length,) + vs.dims[axis:]))
    return outs[:n_state] + scans


def _merge(a: ValueShape, b: ValueShape) -> ValueShape:
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return ValueShape(a.elem_type or b.elem_type, None)
    return ValueShape(a.elem_type or b.elem_type, tuple(x if x == y else None for x, y in zip(a.dims, b.dims)))


def _infer_body(node: onnx.NodeProto, attr: str, body: onnx.GraphProto, inputs: list[ValueShape],
                outer: ShapeTable, opsets: Mapping[str, int], ir_version: int) -> ShapeTable:
    declared: list[ValueShape] | None = None
    if node.op_type == "Loop":
        # iteration number, condition, then the loop-carried values as they come in
        declared = [ValueShape(onnx.TensorProto.INT64, ()), ValueShape(onnx.TensorProto.BOOL, ())] + inputs[2:]
    elif node.op_type == "Scan" and opsets.get("", 9) >= 9:
        n_scan = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        n_state = len(inputs) - n_scan
        axes = next((list(a.ints) for a in node.attribute if a.name == "scan_input_axes"), [0] * n_scan)
        declared = list(inputs[:n_state])
        for k, vs in enumerate(inputs[n_state:]):
            if vs.dims is None or k >= len(axes):
                declared.append(ValueShape(vs.elem_type, None))
                continue
            axis = axes[k] + len(vs.dims) if axes[k] < 0 else axes[k]
            declared.append(ValueShape(vs.elem_type, vs.dims[:axis] + vs.dims[axis + 1:]))
    return infer_graph(body, opsets, outer=outer, ir_version=ir_version, declared_inputs=declared)


def _fix(d: Dim | None, fixed: Mapping[str, int]) -> Dim | None:
    if isinstance(d, Expr):
        from editor.shapes.symbolic import evaluate, free_symbols

        if free_symbols(d) <= fixed.keys():
            return evaluate(d, fixed)
    return d


def _onnx_fallback(node: onnx.NodeProto, inputs: list[ValueShape], opsets: Mapping[str, int],
                   ir_version: int) -> list[ValueShape]:
    """onnx's own inference for one node, with our formulas as dim_param text."""
    domain = node.domain or ""
    if domain == "ai.onnx":
        domain = ""
    try:
        schema = onnx.defs.get_schema(node.op_type, opsets.get(domain, 1), domain)
    except Exception:  # noqa: BLE001 - an op onnx does not know (custom or contrib)
        return []
    types: dict[str, bytes] = {}
    for name, vs in zip(node.input, inputs):
        tp = type_proto(vs, _remembered_text) if name else None
        if tp is not None:
            types[name] = tp.SerializeToString()
    # small int tensors whose values are known (a frame step, a target shape): onnx's
    # inference reads them as constants
    data: dict[str, bytes] = {}
    for name, vs in zip(node.input, inputs):
        if name and vs.value is not None and vs.dims is not None and all(isinstance(v, int) for v in vs.value):
            try:
                t = onnx.helper.make_tensor(name, vs.elem_type, [int(d) for d in vs.dims], list(vs.value))
            except (TypeError, ValueError):
                continue
            data[name] = t.SerializeToString()
    try:
        inferred = schema._infer_node_outputs(  # noqa: SLF001 - the public wrapper re-serializes every call
            node.SerializeToString(), types, data, {}, dict(opsets), ir_version
        )
    except Exception:  # noqa: BLE001 - inference refused: outputs stay unknown
        return []
    return [shape_of_type(onnx.TypeProto.FromString(inferred[n])) if n in inferred else UNKNOWN
            for n in node.output]


def structure_snapshot(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` with what the engine reads and nothing more: every node, type and
    small tensor, but large tensors (initializers and ``Constant`` values) as their dims and
    type only. Cheap enough to take on a GUI thread between two edits, so shapes and costs
    can be computed on another thread while the user goes on editing the original."""
    out = onnx.ModelProto()
    out.ir_version = model.ir_version
    out.opset_import.extend(model.opset_import)
    g, src = out.graph, model.graph
    g.name = src.name
    start = 0
    for k, node in enumerate(src.node):
        # NOTE: a Paddle export keeps every weight in a Constant node: copied whole, the
        # snapshot of a 5 MB detector was 5 MB, and onnx's inference parsed all of it
        if node.op_type == "Constant" and _large_constant(node):
            g.node.extend(src.node[start:k])
            start = k + 1
            _stub_constant(node, g.node.add())
    g.node.extend(src.node[start:])
    g.input.extend(src.input)
    g.output.extend(src.output)
    g.value_info.extend(src.value_info)
    for t in src.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if n <= VALUE_LIMIT:
            g.initializer.append(t)
        else:
            _stub_tensor(t, g.initializer.add())
    return out


def _large_constant(node: onnx.NodeProto) -> bool:
    for a in node.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            n = 1
            for d in a.t.dims:
                n *= d
            return n > VALUE_LIMIT
    return False


def _stub_tensor(t: onnx.TensorProto, stub: onnx.TensorProto) -> None:
    stub.name, stub.data_type = t.name, t.data_type
    stub.dims.extend(t.dims)


def _stub_constant(node: onnx.NodeProto, out: onnx.NodeProto) -> None:
    """``node`` (a Constant with a large ``value``) with the value's data left out."""
    out.name, out.op_type, out.domain = node.name, node.op_type, node.domain
    out.input.extend(node.input)
    out.output.extend(node.output)
    for a in node.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            stub = out.attribute.add()
            stub.name, stub.type = a.name, a.type
            _stub_tensor(a.t, stub.t)
        else:
            out.attribute.append(a)
