"""A working view of one graph for the optimizer's passes: producers, use counts, constants.

The optimizer (see :mod:`editor.passes.manager`) works on a *copy* of the model, one graph
at a time: the main graph, every If/Loop/Scan body and every function body. Each pass
rewrites the graph in place and returns how many changes it made; the view is rebuilt
between passes, so a pass never has to keep maps current itself.

A value is used by the nodes that read it, by nested bodies that capture it (name used
inside, defined outside), and by the graph's outputs. A constant is an initializer that is
not also a graph input (an input can override it) or the output of a ``Constant`` node;
bodies see their enclosing graphs' constants too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

Graph = onnx.GraphProto | onnx.FunctionProto
#: reads a TensorProto's values (external data through the document's store)
TensorReader = Callable[[onnx.TensorProto], np.ndarray]

DEFAULT_DOMAINS = ("", "ai.onnx")


def default_reader(tensor: onnx.TensorProto) -> np.ndarray:
    return numpy_helper.to_array(tensor)


def attr(node: onnx.NodeProto, name: str, default=None):  # noqa: ANN001, ANN201
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def set_attr(node: onnx.NodeProto, name: str, value) -> None:  # noqa: ANN001
    for k, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[k]
            break
    node.attribute.append(onnx.helper.make_attribute(name, value))


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    if not node.attribute:
        return
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def graph_inputs(g: Graph) -> list[str]:
    return list(g.input) if isinstance(g, onnx.FunctionProto) else [vi.name for vi in g.input]


def graph_outputs(g: Graph) -> list[str]:
    return list(g.output) if isinstance(g, onnx.FunctionProto) else [vi.name for vi in g.output]


def defined_in(g: Graph) -> set[str]:
    names = set(graph_inputs(g))
    if isinstance(g, onnx.GraphProto):
        names |= {t.name for t in g.initializer}
        names |= {s.values.name for s in g.sparse_initializer}
    for n in g.node:
        names |= {o for o in n.output if o}
    return names


def captured(g: onnx.GraphProto) -> set[str]:
    """Names a body reads from enclosing graphs."""
    inner = defined_in(g)
    used = set(graph_outputs(g))
    for n in g.node:
        used |= {i for i in n.input if i}
        for sub in subgraphs(n):
            used |= captured(sub)
    return used - inner


def node_reads(node: onnx.NodeProto) -> list[str]:
    """Every name the node reads: its inputs and what its bodies capture."""
    names = [i for i in node.input if i]
    for sub in subgraphs(node):
        names += sorted(captured(sub))
    return names


def rename_uses(g: Graph, old: str, new: str) -> None:
    """Make every reader of ``old`` in ``g`` (nested bodies and outputs too) read ``new``."""
    rename_many(g, {old: new})


def rename_many(g: Graph, mapping: dict[str, str]) -> None:
    """:func:`rename_uses` for many names in one walk over the graph."""
    if not mapping:
        return
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in mapping:
                n.input[k] = mapping[i]
        if n.attribute:
            for sub in subgraphs(n):
                inner = defined_in(sub)
                rename_many(sub, {a: b for a, b in mapping.items() if a not in inner})
    if isinstance(g, onnx.FunctionProto):
        for k, o in enumerate(g.output):
            if o in mapping:
                g.output[k] = mapping[o]
    else:
        for vi in g.output:
            if vi.name in mapping:
                vi.name = mapping[vi.name]


def tensor_nbytes(t: onnx.TensorProto) -> int:
    count = int(np.prod(t.dims)) if len(t.dims) else 1
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    except (KeyError, TypeError, ValueError):
        itemsize = 1
    return count * itemsize


@dataclass
class GraphView:
    """Maps over one graph, rebuilt by :meth:`refresh` after each pass."""

    graph: Graph
    reader: TensorReader = default_reader
    parent: GraphView | None = None
    producers: dict[str, onnx.NodeProto] = field(default_factory=dict)
    uses: dict[str, int] = field(default_factory=dict)
    readers: dict[str, list[onnx.NodeProto]] = field(default_factory=dict)
    outputs: set[str] = field(default_factory=set)
    inputs: set[str] = field(default_factory=set)
    constants: dict[str, onnx.TensorProto] = field(default_factory=dict)
    _arrays: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.refresh()

    @property
    def is_function(self) -> bool:
        return isinstance(self.graph, onnx.FunctionProto)

    def refresh(self) -> None:
        g = self.graph
        self.producers, self.uses, self.readers = {}, {}, {}
        self.outputs = set(graph_outputs(g))
        self.inputs = set(graph_inputs(g))
        self.constants = {}
        self._arrays = {}
        if isinstance(g, onnx.GraphProto):
            for t in g.initializer:
                if t.name not in self.inputs:
                    self.constants[t.name] = t
        for n in g.node:
            for o in n.output:
                if o:
                    self.producers[o] = n
            for name in node_reads(n):
                self.uses[name] = self.uses.get(name, 0) + 1
                self.readers.setdefault(name, []).append(n)
            if n.op_type == "Constant" and n.domain in DEFAULT_DOMAINS and n.output:
                t = constant_value(n)
                if t is not None:
                    self.constants[n.output[0]] = t
        for o in self.outputs:
            self.uses[o] = self.uses.get(o, 0) + 1

    # ------------------------------------------------------------------ constants
    def const_tensor(self, name: str) -> onnx.TensorProto | None:
        if not name:
            return None
        if name in self.constants:
            return self.constants[name]
        if name in self.producers or name in self.inputs:
            return None  # defined here, not constant
        return self.parent.const_tensor(name) if self.parent is not None else None

    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant, read once; None when ``name`` is not constant."""
        if name in self._arrays:
            return self._arrays[name]
        t = self.const_tensor(name)
        if t is None:
            return None
        try:
            value = self.reader(t)
        except Exception:  # noqa: BLE001 - an unreadable tensor is simply not folded
            return None
        self._arrays[name] = value
        return value

    def is_const(self, name: str) -> bool:
        return self.const_tensor(name) is not None

    def single_reader(self, name: str) -> onnx.NodeProto | None:
        """The one node reading ``name`` when nothing else (outputs, bodies) does."""
        readers = self.readers.get(name, [])
        if self.uses.get(name, 0) != 1 or len(readers) != 1 or name in self.outputs:
            return None
        return readers[0]

    # ------------------------------------------------------------------ editing
    def new_name(self, base: str) -> str:
        taken = defined_in(self.graph) | set(self.uses)
        if self.parent is not None:
            taken |= self.parent.all_names()
        name, k = base, 1
        while name in taken:
            name = f"{base}_{k}"
            k += 1
        return name

    def all_names(self) -> set[str]:
        names = defined_in(self.graph) | set(self.uses)
        return names | (self.parent.all_names() if self.parent is not None else set())

    def add_constant(self, name: str, value: np.ndarray) -> None:
        """Define ``name`` as a constant: an initializer, or a Constant node in a function."""
        tensor = numpy_helper.from_array(np.asarray(value), name)
        if isinstance(self.graph, onnx.GraphProto):
            self.graph.initializer.append(tensor)
        else:
            self.graph.node.insert(0, onnx.helper.make_node("Constant", [], [name], value=tensor))
        self.constants[name] = tensor
        self._arrays[name] = np.asarray(value)

    def remove_nodes(self, doomed: list[onnx.NodeProto]) -> None:
        # NOTE: deleting by index keeps every other node object valid (the maps of this
        # view and the pass's own lists still point at live nodes); copying the list would not
        ids = {id(n) for n in doomed}
        for k in range(len(self.graph.node) - 1, -1, -1):
            if id(self.graph.node[k]) in ids:
                del self.graph.node[k]

    def bypass(self, node: onnx.NodeProto, src: str, out: str) -> bool:
        """Remove ``node`` whose output ``out`` equals its input ``src``: readers of ``out``
        read ``src``. When ``out`` is a graph output, ``src``'s producer is renamed to
        ``out`` instead (the interface keeps its names); refused when that is impossible."""
        if out not in self.outputs:
            rename_uses(self.graph, out, src)
        else:
            prod = self.producers.get(src)
            if prod is None or src in self.outputs or src in self.inputs or out in self.inputs:
                return False
            for k, o in enumerate(prod.output):
                if o == src:
                    prod.output[k] = out
            rename_uses(self.graph, src, out)
            # value_info of the old name would now describe nothing; rename it too
            if isinstance(self.graph, onnx.GraphProto):
                for vi in self.graph.value_info:
                    if vi.name == src:
                        vi.name = out
        self.remove_nodes([node])
        return True


def constant_value(node: onnx.NodeProto) -> onnx.TensorProto | None:
    """The tensor of a Constant node (any ``value_*`` form), or None (sparse)."""
    for a in node.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            return a.t
        if a.name == "value_float":
            return numpy_helper.from_array(np.array(a.f, dtype=np.float32))
        if a.name == "value_floats":
            return numpy_helper.from_array(np.array(list(a.floats), dtype=np.float32))
        if a.name == "value_int":
            return numpy_helper.from_array(np.array(a.i, dtype=np.int64))
        if a.name == "value_ints":
            return numpy_helper.from_array(np.array(list(a.ints), dtype=np.int64))
    return None


def iter_views(model: onnx.ModelProto, reader: TensorReader) -> Iterator[GraphView]:
    """Views of every graph: functions, the main graph, then bodies (outer before inner).

    A view is made just before it is yielded, so a body's parent reflects edits done to it.
    """
    for fn in model.functions:
        yield from _walk(GraphView(fn, reader))
    yield from _walk(GraphView(model.graph, reader))


def _walk(view: GraphView) -> Iterator[GraphView]:
    yield view
    view.refresh()
    for n in list(view.graph.node):
        for sub in subgraphs(n):
            yield from _walk(GraphView(sub, view.reader, view))
