"""What a model costs: MACs, parameters, weight bytes and activation memory, per node.

:func:`model_cost` walks the main graph in order over the shape engine's table
(:mod:`editor.shapes`), so every figure is an ``int`` when the model's dims are fixed and a
formula (:mod:`editor.shapes.symbolic`) in its dynamic dims otherwise; ``dims`` fixes named
dims as ``run --dim`` does. A figure that shapes cannot give (a data-dependent size such as
NonZero's) is ``None`` with the reason in :attr:`NodeCost.unknown`, never a silent 0.

Parameters are every constant tensor the graph reads: initializers and the tensors of
``Constant`` nodes, each counted once however many nodes read it, and attributed to the
first node that runs on it. A constant-only chain (a DequantizeLinear of an int8 weight, a
Transpose of a weight) costs nothing at run time (runtimes fold it) and its source tensor is
counted as a weight of the node it feeds, in its stored type (int8 = 1 byte, int4 = half).

Control flow: an ``If`` carries both branches (:attr:`NodeCost.branches`) and costs the
branch taken when its condition is a constant, else the larger; a ``Loop`` costs its body times the trip count (a formula ``trips(<node>)`` when the
count is not a constant); a ``Scan`` its body times the scanned length.

Peak activation memory: the values that are alive together (graph inputs and node outputs,
from their producer to their last reader; outputs to the end), summed at each node of the
graph order, the largest sum over the order. With symbolic dims the peak step is chosen by
evaluating every step with the dims given and :data:`SAMPLE_DIM` for the others.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx

from editor.cost.formulas import Unknown, macs_of
from editor.shapes import ShapeTable, ValueShape, infer_model
from editor.shapes.rules import attr
from editor.shapes import symbolic as S
from editor.shapes.symbolic import Dim

__all__ = ["NodeCost", "ModelCost", "model_cost", "graph_cost", "SAMPLE_DIM", "dtype_bits"]

#: the value given to a free dim when symbolic figures must be ordered (peak, larger branch)
SAMPLE_DIM = 64


@functools.lru_cache(maxsize=64)
def dtype_bits(elem_type: int) -> int:
    """Bits per element of an ONNX tensor type (0 for strings and unknown types)."""
    if elem_type in (onnx.TensorProto.STRING, 0):
        return 0
    try:
        np_type = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    except (KeyError, ValueError, TypeError):
        return 0
    name = onnx.TensorProto.DataType.Name(elem_type)
    if name.endswith(("INT4", "FLOAT4E2M1")):
        return 4
    if name.endswith("INT2"):
        return 2
    return np_type.itemsize * 8


def packed_weight(node: onnx.NodeProto, slot: int, stored: int) -> tuple[int, str] | None:
    """(values, type) of a uint8 weight that packs narrower values, at input ``slot`` of
    ``node``: MatMulNBits' B (``bits`` per value, blocks of K), GatherBlockQuantized's
    data; None for a weight stored as what it is."""
    if node.domain != "com.microsoft":
        return None
    if node.op_type == "MatMulNBits" and slot == 1:
        bits = int(attr(node, "bits", 4))
        return stored * 8 // bits, f"int{bits}"
    if node.op_type == "GatherBlockQuantized" and slot == 0:
        bits = int(attr(node, "bits", 4))
        return stored * 8 // bits, f"int{bits}"
    return None


def _bytes(vs: ValueShape) -> Dim | None:
    bits = dtype_bits(vs.elem_type)
    if vs.dims is None or None in vs.dims or not bits:
        return None
    n = S.product(vs.dims)
    return S.ceildiv(S.mul(n, bits), 8) if bits % 8 else S.mul(n, bits // 8)


@dataclass
class NodeCost:
    name: str
    op_type: str
    index: int
    macs: Dim | None = 0
    params: int = 0
    weight_bytes: int = 0
    output_bytes: Dim | None = 0
    #: why ``macs`` (or ``output_bytes``) is None
    unknown: str | None = None
    #: a constant-only node: folded by runtimes, its cost is its consumer's weight
    folded: bool = False
    #: If: the cost of each branch; Loop/Scan: the body's cost per iteration
    branches: dict[str, GraphCost] = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {"name": self.name, "op_type": self.op_type, "macs": _num(self.macs), "params": self.params,
               "weight_bytes": self.weight_bytes, "output_bytes": _num(self.output_bytes)}
        if self.unknown:
            out["unknown"] = self.unknown
        if self.folded:
            out["folded"] = True
        if self.branches:
            out["branches"] = {k: g.totals_json() for k, g in self.branches.items()}
        return out


def _num(d: Dim | None) -> int | str | None:
    return d if d is None or isinstance(d, int) else S.to_text(d)


@dataclass
class GraphCost:
    """The cost of one graph (the main graph, or a body)."""

    nodes: list[NodeCost]
    macs: Dim
    params: int
    weight_bytes: int
    weight_bytes_by_type: dict[str, int]
    peak_activation_bytes: Dim | None
    #: nodes whose MACs are unknown (not counted in ``macs``)
    unknown_nodes: int

    def totals_json(self) -> dict:
        return {"macs": _num(self.macs), "params": self.params, "weight_bytes": self.weight_bytes,
                "peak_activation_bytes": _num(self.peak_activation_bytes), "unknown_nodes": self.unknown_nodes}


@dataclass
class ModelCost(GraphCost):
    #: named dims the figures depend on
    free_dims: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        total = self.totals_json()
        total["flops"] = _num(S.mul(self.macs, 2))
        total["weight_bytes_by_type"] = self.weight_bytes_by_type
        total["free_dims"] = self.free_dims
        return {"total": total, "nodes": [n.to_json() for n in self.nodes]}

    def evaluate(self, d: Dim | None, values: Mapping[str, int] | None = None) -> int | None:
        return S.evaluate(d, values or {}, SAMPLE_DIM)


def model_cost(model: onnx.ModelProto, dims: Mapping[str, int] | None = None,
               table: ShapeTable | None = None) -> ModelCost:
    """The cost of ``model``'s main graph (bodies inside their control-flow nodes)."""
    dims = dict(dims or {})
    table = table if table is not None else infer_model(model, dims)
    g = graph_cost(model.graph, table, dims)
    free: set[str] = set()
    for n in g.nodes:
        free |= S.free_symbols(n.macs) | S.free_symbols(n.output_bytes)
    return ModelCost(**g.__dict__, free_dims=sorted(free))


def graph_cost(graph: onnx.GraphProto, table: ShapeTable, dims: Mapping[str, int]) -> GraphCost:
    sources = _constant_sources(graph, table)
    attributed: set[str] = set()
    by_type: dict[str, int] = {}
    nodes: list[NodeCost] = []
    total: Dim = 0
    total_known = 0
    params = 0
    weight_bytes = 0
    unknown = 0
    value_bytes: dict[str, Dim | None] = {}
    constants, shape_of = table.constants, table.get
    body_nodes = {i for i, _ in table.bodies}
    for index, node in enumerate(graph.node):
        op_type, input_names, output_names = node.op_type, list(node.input), list(node.output)
        nc = NodeCost(node.name or f"#{index}", op_type, index)
        folded = bool(output_names) and all(n in constants for n in output_names if n)
        nc.folded = folded
        if not folded:
            inputs = [shape_of(n) for n in input_names]
            try:
                nc.macs = macs_of(node, inputs, [shape_of(n) for n in output_names])
            except Unknown as exc:
                nc.macs, nc.unknown = None, str(exc)
            except (ValueError, IndexError, TypeError, ZeroDivisionError):
                nc.macs, nc.unknown = None, "its shapes do not fit its operator"
            if index in body_nodes:
                _control_flow(nc, node, index, table, dims)
            for slot, name in enumerate(input_names):
                for src in sources.get(name, ()):
                    if src in attributed:
                        continue
                    attributed.add(src)
                    vs = table.get(src)
                    n_el = S.evaluate(S.product(vs.dims or ()), {}) if vs.dims is not None else None
                    if n_el is None:
                        continue
                    b = -(-n_el * dtype_bits(vs.elem_type) // 8)
                    type_name = onnx.TensorProto.DataType.Name(vs.elem_type) if vs.elem_type else "UNDEFINED"
                    packed = packed_weight(node, slot, n_el) if src == name and vs.elem_type == onnx.TensorProto.UINT8 else None
                    if packed is not None:  # int4/int2 values packed into bytes: count values
                        n_el, type_name = packed
                    nc.params += n_el
                    nc.weight_bytes += b
                    by_type[type_name.lower()] = by_type.get(type_name.lower(), 0) + b
            out_bytes: Dim | None = 0
            for name in output_names:
                if not name:
                    continue
                b = value_bytes[name] = _bytes(shape_of(name))
                out_bytes = None if out_bytes is None or b is None else S.add(out_bytes, b)
            nc.output_bytes = out_bytes
            if out_bytes is None and nc.unknown is None:
                nc.unknown = "an output's shape or type is unknown"
        if nc.macs is None:
            unknown += 1
        elif isinstance(nc.macs, int):
            total_known += nc.macs  # most nodes: one int add, not a formula
        else:
            total = S.add(total, nc.macs)
        params += nc.params
        weight_bytes += nc.weight_bytes
        nodes.append(nc)
    total = S.add(total, total_known)
    return GraphCost(nodes, total, params, weight_bytes, by_type, _peak(graph, table, dims, value_bytes), unknown)


def _constant_sources(graph: onnx.GraphProto, table: ShapeTable) -> dict[str, tuple[str, ...]]:
    """For each constant value of the graph, the source tensors it is computed from
    (initializers and Constant outputs), following constant-only chains."""
    sources: dict[str, tuple[str, ...]] = {t.name: (t.name,) for t in graph.initializer}
    for node in graph.node:
        outs = [n for n in node.output if n]
        if not outs or not all(n in table.constants for n in outs):
            continue
        if node.op_type == "Constant":
            for n in outs:
                sources[n] = (n,)
            continue
        src: list[str] = []
        for name in node.input:
            for s in sources.get(name, ()):
                if s not in src:
                    src.append(s)
        for n in outs:
            sources[n] = tuple(src)
    return sources


def _control_flow(nc: NodeCost, node: onnx.NodeProto, index: int, table: ShapeTable,
                  dims: Mapping[str, int]) -> None:
    bodies = {attr: graph_cost(a.g, table.bodies[(index, attr)], dims)
              for a in node.attribute if a.type == onnx.AttributeProto.GRAPH
              for attr in (a.name,) if (index, attr) in table.bodies}
    if not bodies:
        return
    nc.branches = bodies
    if node.op_type == "If":
        cond = table.get(node.input[0]).value if node.input else None
        if cond and isinstance(cond[0], (int, float)) and {"then_branch", "else_branch"} <= bodies.keys():
            taken = bodies["then_branch" if cond[0] else "else_branch"]  # decided when the model was made
        else:
            taken = max(bodies.values(), key=lambda g: S.evaluate(g.macs, dims, SAMPLE_DIM) or 0)
        nc.macs, nc.params = taken.macs, sum(g.params for g in bodies.values())
    elif node.op_type in ("Loop", "Scan"):
        body = next(iter(bodies.values()))
        trips: Dim = S.symbol(f"trips({nc.name})")
        if node.op_type == "Loop" and node.input and node.input[0]:
            m = table.get(node.input[0]).value
            if m and isinstance(m[0], int):
                trips = m[0]
        elif node.op_type == "Scan":
            n_scan = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
            first = table.get(node.input[len(node.input) - n_scan]) if n_scan else None
            if first is not None and first.dims and first.dims[0] is not None:
                trips = first.dims[0]
        nc.macs = S.mul(body.macs, trips)
        nc.params = body.params
    nc.weight_bytes = sum(g.weight_bytes for g in bodies.values())


def _peak(graph: onnx.GraphProto, table: ShapeTable, dims: Mapping[str, int],
          value_bytes: Mapping[str, Dim | None]) -> Dim | None:
    """The largest total of simultaneously live activations over the graph order.

    A value is alive from the node that makes it (step 0 for graph inputs) to its last
    reader (graph outputs: to the end). The sweep works on each value's size evaluated at
    the given dims (:data:`SAMPLE_DIM` for the others); the peak step's values are then
    summed as formulas."""
    n = len(graph.node)
    born: dict[str, int] = {}
    last_use: dict[str, int] = {}
    constants = table.constants
    for vi in graph.input:
        if vi.name not in constants:
            born[vi.name] = 0
    for k, node in enumerate(graph.node):
        for name in node.input:
            last_use[name] = k
        for name in node.output:
            if name and name not in constants:
                born[name] = k
    for vi in graph.output:
        last_use[vi.name] = n
    sizes: dict[str, Dim | None] = {}
    for name in born:
        size = value_bytes[name] if name in value_bytes else _bytes(table.get(name))
        if size is None:
            return None
        sizes[name] = size
    delta = [0] * (n + 2)  # +size where a value is born, -size after its last step
    ends: dict[str, int] = {}
    for name, k in born.items():
        end = ends[name] = max(k, last_use.get(name, k))  # never read: dies where it is born
        amount = S.evaluate(sizes[name], dims, SAMPLE_DIM) or 0
        delta[k] += amount
        delta[end + 1] -= amount
    best_k, best, current = 0, -1, 0
    for k in range(n + 1):
        current += delta[k]
        if current > best:
            best, best_k = current, k
    total: Dim = 0
    for name in sorted(born):
        if born[name] <= best_k <= ends[name]:
            total = S.add(total, sizes[name])  # type: ignore[arg-type]
    return total
