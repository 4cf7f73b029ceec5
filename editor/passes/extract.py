"""Extract a subgraph of a model as a new standalone model (the document is not changed).

Two ways to say what to cut out:

* ``node_ids``: a selection of nodes of one graph scope. The new model's inputs are the
  values the selection consumes but does not produce; its outputs are the values it
  produces that something outside the selection (a node, a subgraph capturing the value,
  or a graph output) still uses.
* ``inputs`` / ``outputs``: value names, like :func:`onnx.utils.extract_model`: the nodes
  needed to compute ``outputs`` from ``inputs`` (walking back from the outputs and stopping
  at the inputs). Names that do not exist, or inputs that do not cut every path back to
  the graph's own inputs, are refused with a :class:`~editor.errors.CommandError`.

Either way the result keeps the model's IR version, opset imports, the model-local
functions its nodes actually call (directly, inside subgraphs or inside other functions)
and the producer fields. Values a control-flow node's body captures from the outer graph
count as that node's inputs. Initializers the cut needs come along as initializers;
``Constant`` nodes outside a node selection that feed it become initializers too.
Boundary values get their types from the graph (inputs, outputs, value_info of the scope
and the enclosing scopes), then from shape inference on a copy, then (outputs only) from
shape inference on the extracted model; an input whose type cannot be found is refused.
A boundary value whose *rank* nothing can tell (say, the output of an ``If`` whose branches
differ in rank) keeps a tensor type without a shape: onnxruntime runs such a model, but
``onnx.checker`` refuses shape-less main-graph inputs and outputs (give those values a
shape in the document, or move the cut).

# NOTE: external data. By default (``inline_external=True``) weights stored outside the
# model file are read through ``doc.store`` and put inline, so the result is standalone
# (checker, onnxruntime from bytes). That needs the weights in memory once, and protobuf's
# 2 GB limit applies to the result. With ``inline_external=False`` external tensors stay
# references relative to ``doc.store``'s folder; save such a model with
# :func:`editor.io.save_model` and ``store=doc.store`` (``onnx-studio extract`` does that,
# writing only the tensors the extract uses to ``OUT.data``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import onnx
from onnx import helper

from editor.errors import CommandError, ExternalDataError
from editor.io.tensors import iter_tensors, resolve_path, uses_external_data

if TYPE_CHECKING:
    from editor.document import Document
    from editor.document.index import Scope

__all__ = ["captured_names", "extract_model"]


def _as_document(doc: Document | onnx.ModelProto) -> Document:
    from editor.document import Document

    if isinstance(doc, onnx.ModelProto):
        return Document(doc)
    return doc


def captured_names(graph: onnx.GraphProto, outer_defined: Iterable[str] = ()) -> list[str]:
    """Names ``graph`` (and graphs nested in it) use without defining them, in first-use order.

    ``outer_defined``: names defined by enclosing bodies below the scope asking, which are
    therefore not free (used by the recursion).
    """
    defined = set(outer_defined)
    defined.update(v.name for v in graph.input)
    defined.update(t.name for t in graph.initializer)
    defined.update(s.values.name for s in graph.sparse_initializer)
    free: dict[str, None] = {}
    for node in graph.node:
        for name in _node_uses(node, defined):
            if name not in defined:
                free[name] = None
        defined.update(o for o in node.output if o)
    return list(free)


def _node_uses(node: onnx.NodeProto, defined: set[str] | None = None) -> list[str]:
    """Every name ``node`` reads: its inputs, then what its subgraphs capture."""
    uses = [i for i in node.input if i]
    for attr in node.attribute:
        bodies = [attr.g] if attr.HasField("g") else []
        bodies += list(attr.graphs)
        for body in bodies:
            uses += captured_names(body, defined or ())
    return uses


def extract_model(
    doc: Document | onnx.ModelProto,
    *,
    node_ids: Sequence[int] | None = None,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    scope: int | None = None,
    inline_external: bool = True,
    shapes: Mapping[str, Sequence[int | str | None]] | None = None,
) -> onnx.ModelProto:
    """A new model made of part of ``doc``'s graph ``scope`` (default: the main graph).

    Give either ``node_ids`` or both ``inputs`` and ``outputs`` (value names). Raises
    :class:`CommandError` when the request does not describe a valid cut (quoting the
    offending name) and :class:`ExternalDataError` when an external weight cannot be read.

    ``shapes`` gives shapes (int, symbolic name or None per axis) for boundary values whose
    rank static inference cannot tell, say from a run that captured them; it fills only
    tensor types that have no shape, never overrides a declared one.
    """
    doc = _as_document(doc)
    sid = doc.index.main if scope is None else scope
    if sid not in doc.index.scopes:
        raise CommandError(f"no graph scope {sid!r}")
    sc = doc.index.scopes[sid]
    if sc.is_function:
        raise CommandError(f"cannot extract from function {sc.title!r}: function bodies have no types")
    if node_ids is not None and (inputs is not None or outputs is not None):
        raise CommandError("give either node ids or input and output names, not both")
    if node_ids is not None:
        return _Extraction(doc, sc, inline_external, shapes).from_nodes(node_ids)
    if inputs is None or outputs is None:
        raise CommandError("give node ids, or both input and output names")
    return _Extraction(doc, sc, inline_external, shapes).from_names(list(inputs), list(outputs))


class _Extraction:
    def __init__(self, doc: Document, sc: Scope, inline_external: bool,
                 shapes: Mapping[str, Sequence[int | str | None]] | None) -> None:
        self.doc, self.sc, self.inline_external = doc, sc, inline_external
        self.shapes = dict(shapes or {})
        self.chain = doc.index.scope_chain(sc.id)  # this scope first, then the enclosing ones
        self._types: dict[str, onnx.TypeProto] | None = None

    # -- where a name comes from ---------------------------------------------------------
    def _lookup(self, name: str) -> tuple[Scope, str, object] | None:
        """(scope, kind, thing) defining ``name``: kind is "input", "initializer", "sparse"
        or "node" (thing: node id); searched from this scope outwards."""
        for s in self.chain:
            g = s.graph
            if name in s.producers:
                return s, "node", s.producers[name]
            for t in g.initializer:
                if t.name == name:
                    return s, "initializer", t
            for sp in g.sparse_initializer:
                if sp.values.name == name:
                    return s, "sparse", sp
            for v in g.input:
                if v.name == name:
                    return s, "input", v
        return None

    # -- (a) a node selection ------------------------------------------------------------
    def from_nodes(self, node_ids: Sequence[int]) -> onnx.ModelProto:
        sc = self.sc
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            raise CommandError("no nodes selected to extract")
        for nid in wanted:
            if nid not in self.doc.index.nodes:
                raise CommandError(f"no node with id {nid!r}")
            if self.doc.index.node_scope[nid] != sc.id:
                node = self.doc.node(nid)
                raise CommandError(
                    f"node {node.name or node.op_type!r} (id {nid}) is not in graph {self.doc.index.path(sc.id)!r}"
                )
        selected = set(wanted)
        ordered = [nid for nid in sc.node_ids if nid in selected]  # keep graph order
        produced: dict[str, None] = {}
        for nid in ordered:
            produced.update((o, None) for o in self.doc.node(nid).output if o)
        needed: dict[str, None] = {}
        for nid in ordered:
            for name in _node_uses(self.doc.node(nid)):
                if name not in produced:
                    needed[name] = None
        # outputs: used outside the selection (directly, captured by a body, graph output)
        used_outside: set[str] = set(sc.output_names())
        for nid, node in zip(sc.node_ids, sc.graph.node):
            if nid not in selected:
                used_outside.update(_node_uses(node))
        outs = [name for name in produced if name in used_outside]
        if not outs:
            # nothing downstream: the selection's own results are what it produces and
            # does not consume itself
            consumed = set()
            for nid in ordered:
                consumed.update(_node_uses(self.doc.node(nid)))
            outs = [name for name in produced if name not in consumed]
        nodes = [self.doc.node(nid) for nid in ordered]
        inits: list[onnx.TensorProto] = []
        sparse: list[onnx.SparseTensorProto] = []
        ins: list[str] = []
        for name in needed:
            found = self._lookup(name)
            if found is None:
                raise CommandError(f"value {name!r} used by the selection is not defined in the model")
            _, kind, thing = found
            if kind == "initializer":
                inits.append(thing)  # type: ignore[arg-type]
            elif kind == "sparse":
                sparse.append(thing)  # type: ignore[arg-type]
            elif kind == "node":
                tensor = _constant_tensor(self.doc.node(thing), name)  # type: ignore[arg-type]
                if tensor is not None:
                    inits.append(tensor)
                else:
                    ins.append(name)
            else:
                ins.append(name)
        return self._build(nodes, ins, outs, inits, sparse, label=f"{len(nodes)} nodes")

    # -- (b) input and output names ------------------------------------------------------
    def from_names(self, inputs: list[str], outputs: list[str]) -> onnx.ModelProto:
        sc = self.sc
        if not outputs:
            raise CommandError("no outputs given to extract")
        for name in list(inputs) + list(outputs):
            if not name or self._lookup(name) is None:
                raise CommandError(f"value {name!r} does not exist in graph {self.doc.index.path(sc.id)!r}")
        stop = set(inputs)
        keep: set[int] = set()
        inits: dict[str, onnx.TensorProto] = {}
        sparse: dict[str, onnx.SparseTensorProto] = {}
        # walk back from the outputs; `via` remembers which output led where, for errors
        stack = [(name, name) for name in reversed(outputs)]
        seen: set[str] = set()
        while stack:
            name, via = stack.pop()
            if name in seen or name in stop:
                continue
            seen.add(name)
            found = self._lookup(name)
            if found is None:
                raise CommandError(f"value {name!r} (needed for output {via!r}) is not defined in the model")
            owner, kind, thing = found
            if kind == "initializer":
                inits[name] = thing  # type: ignore[assignment]
            elif kind == "sparse":
                sparse[name] = thing  # type: ignore[assignment]
            elif kind == "input":
                if owner.id == sc.id or owner.kind == "main":
                    raise CommandError(
                        f"output {via!r} depends on graph input {name!r}, which is not among the inputs: "
                        "the inputs do not cut the graph"
                    )
                raise CommandError(
                    f"output {via!r} depends on {name!r}, an input of enclosing graph "
                    f"{self.doc.index.path(owner.id)!r}: add it to the inputs"
                )
            elif owner.id != sc.id:
                # produced by a node of an enclosing graph: it must be cut there
                tensor = _constant_tensor(self.doc.node(thing), name)  # type: ignore[arg-type]
                if tensor is None:
                    raise CommandError(
                        f"output {via!r} depends on {name!r}, computed in enclosing graph "
                        f"{self.doc.index.path(owner.id)!r}: add it to the inputs"
                    )
                inits[name] = tensor
            else:
                nid = thing
                if nid in keep:
                    continue
                keep.add(nid)  # type: ignore[arg-type]
                for used in _node_uses(self.doc.node(nid)):  # type: ignore[arg-type]
                    stack.append((used, via))
        ordered = [nid for nid in sc.node_ids if nid in keep]
        nodes = [self.doc.node(nid) for nid in ordered]
        produced = {o for n in nodes for o in n.output if o}
        for name in outputs:
            if name not in produced and name not in stop and name not in inits and name not in sparse:
                raise CommandError(f"output {name!r} is not computed by the extracted nodes")
        ins = list(dict.fromkeys(inputs))
        used = {u for n in nodes for u in _node_uses(n)} | set(outputs)
        for name in ins:
            if name not in used:
                raise CommandError(f"input {name!r} does not lead to any of the outputs {', '.join(map(repr, outputs))}")
        return self._build(nodes, ins, list(dict.fromkeys(outputs)), list(inits.values()), list(sparse.values()),
                           label=f"{', '.join(ins)} -> {', '.join(outputs)}")

    # -- building the model --------------------------------------------------------------
    def _declared_types(self) -> dict[str, onnx.TypeProto]:
        types: dict[str, onnx.TypeProto] = {}
        for s in self.chain:  # inner scopes first: they shadow outer names
            g = s.graph
            for vi in list(g.input) + list(g.output) + list(g.value_info):
                if vi.type.WhichOneof("value") is not None:
                    types.setdefault(vi.name, vi.type)
            for t in g.initializer:
                types.setdefault(t.name, helper.make_tensor_type_proto(t.data_type, list(t.dims)))
        return types

    def _inferred_types(self, missing: set[str]) -> dict[str, onnx.TypeProto]:
        """Types of ``missing`` from shape inference on a copy of the whole model."""
        copy = onnx.ModelProto()
        copy.CopyFrom(self.doc.model)
        try:
            inferred = onnx.shape_inference.infer_shapes(copy, strict_mode=False, data_prop=True)
        except Exception:  # noqa: BLE001 - inference is best effort; unknown types are reported later
            return {}
        found: dict[str, onnx.TypeProto] = {}
        for g in _graphs_along(inferred, self.doc, self.chain):
            for vi in list(g.value_info) + list(g.output) + list(g.input):
                if vi.name in missing and vi.type.WhichOneof("value") is not None:
                    found.setdefault(vi.name, vi.type)
        return found

    def _build(self, nodes: list[onnx.NodeProto], ins: list[str], outs: list[str],
               inits: list[onnx.TensorProto], sparse: list[onnx.SparseTensorProto], *, label: str) -> onnx.ModelProto:
        src = self.doc.model
        init_names = {t.name for t in inits} | {s.values.name for s in sparse}
        ins = [n for n in ins if n not in init_names]
        types = self._declared_types()
        internal = {o for n in nodes for o in n.output if o}
        boundary = set(ins) | set(outs) | internal
        missing = {n for n in boundary if n not in types}
        if missing:
            types.update(self._inferred_types(missing))
        for name in ins:
            if name not in types:
                raise CommandError(
                    f"cannot tell the type of input {name!r} of the extract; run shape inference on the model first"
                )
        graph = onnx.GraphProto(name=f"{self.sc.graph.name or 'graph'}_extract")
        graph.doc_string = f"extracted by onnx-studio from {self.doc.index.path(self.sc.id)!r}: {label}"
        graph.node.extend(nodes)
        for name in ins:
            graph.input.append(helper.make_value_info(name, types[name]))
        for t in inits:
            graph.initializer.add().CopyFrom(t)
            if src.ir_version < 4:
                # NOTE: before IR 4 every initializer must also be a graph input
                graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        for sp in sparse:
            graph.sparse_initializer.add().CopyFrom(sp)
        outputs_known = all(name in types and _has_shape(types[name]) for name in outs)
        for name in outs:
            vi = graph.output.add()
            vi.name = name
            if name in types:
                vi.type.CopyFrom(types[name])
        for name in sorted(internal - set(outs)):  # keep what was known about intermediates
            if name in types:
                graph.value_info.append(helper.make_value_info(name, types[name]))
        model = onnx.ModelProto()
        for field in ("ir_version", "producer_name", "producer_version", "domain", "model_version"):
            if src.HasField(field):
                setattr(model, field, getattr(src, field))
        model.opset_import.extend(src.opset_import)
        model.graph.CopyFrom(graph)
        model.functions.extend(_used_functions(src, nodes))
        if not outputs_known:
            _type_outputs_by_inference(model)
        if self.shapes:
            _fill_shapes(model.graph, self.shapes)
        if self.inline_external:
            _inline_external(model, self.doc)
        return model


def _graphs_along(model: onnx.ModelProto, doc: Document, chain: list[Scope]) -> list[onnx.GraphProto]:
    """The graphs of ``chain`` (innermost first) found in ``model``, a copy of ``doc.model``
    with the same node positions (shape inference only adds value_info)."""
    path: list[tuple[int, str, int]] = []
    for s in chain[:-1]:  # every scope but the main one has an owner node
        parent = doc.index.scopes[s.parent]  # type: ignore[index]
        path.append((parent.position(s.owner), s.attr, s.attr_index))  # type: ignore[arg-type]
    graphs = [model.graph]
    g = model.graph
    for pos, attr_name, k in reversed(path):
        try:
            attr = next(a for a in g.node[pos].attribute if a.name == attr_name)
        except (StopIteration, IndexError):
            break
        g = attr.g if k < 0 else attr.graphs[k]
        graphs.append(g)
    return list(reversed(graphs))


def _type_outputs_by_inference(model: onnx.ModelProto) -> None:
    """Fill the types of untyped outputs from shape inference on the extracted model."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - leave them untyped; the checker will say so
        return
    known = {vi.name: vi.type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
             if vi.type.WhichOneof("value") is not None}
    for vi in model.graph.output:
        if vi.name in known and (vi.type.WhichOneof("value") is None
                                 or (not _has_shape(vi.type) and _has_shape(known[vi.name]))):
            vi.type.CopyFrom(known[vi.name])


def _fill_shapes(graph: onnx.GraphProto, shapes: dict[str, Sequence[int | str | None]]) -> None:
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        dims = shapes.get(vi.name)
        if dims is None or not vi.type.HasField("tensor_type") or vi.type.tensor_type.HasField("shape"):
            continue
        shape = vi.type.tensor_type.shape
        shape.SetInParent()  # an empty shape is a scalar: present even with no dims
        for d in dims:
            dim = shape.dim.add()
            if isinstance(d, str):
                dim.dim_param = d
            elif d is not None:
                dim.dim_value = int(d)


def _has_shape(t: onnx.TypeProto) -> bool:
    """False for a tensor type of unknown rank (the checker wants a shape on graph I/O)."""
    return not t.HasField("tensor_type") or t.tensor_type.HasField("shape")


def _constant_tensor(node: onnx.NodeProto, name: str) -> onnx.TensorProto | None:
    """The value of a ``Constant`` node as an initializer named ``name`` (None when the
    node is not a plain Constant: sparse values or not a Constant at all)."""
    if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.attribute) != 1:
        return None
    attr = node.attribute[0]
    if attr.ref_attr_name:
        return None
    kind = attr.name
    if kind == "value":
        t = onnx.TensorProto()
        t.CopyFrom(attr.t)
    elif kind == "value_float":
        t = helper.make_tensor(name, onnx.TensorProto.FLOAT, [], [attr.f])
    elif kind == "value_floats":
        t = helper.make_tensor(name, onnx.TensorProto.FLOAT, [len(attr.floats)], list(attr.floats))
    elif kind == "value_int":
        t = helper.make_tensor(name, onnx.TensorProto.INT64, [], [attr.i])
    elif kind == "value_ints":
        t = helper.make_tensor(name, onnx.TensorProto.INT64, [len(attr.ints)], list(attr.ints))
    elif kind == "value_string":
        t = helper.make_tensor(name, onnx.TensorProto.STRING, [], [attr.s])
    elif kind == "value_strings":
        t = helper.make_tensor(name, onnx.TensorProto.STRING, [len(attr.strings)], list(attr.strings))
    else:
        return None
    t.name = name
    return t


def _used_functions(model: onnx.ModelProto, nodes: list[onnx.NodeProto]) -> list[onnx.FunctionProto]:
    """The model-local functions ``nodes`` call, directly or through bodies and functions."""
    by_key = {(f.domain, f.name, f.overload): f for f in model.functions}
    if not by_key:
        return []
    used: set[tuple[str, str, str]] = set()
    todo: list[onnx.NodeProto] = list(nodes)
    while todo:
        node = todo.pop()
        key = (node.domain, node.op_type, node.overload)
        if key in by_key and key not in used:
            used.add(key)
            todo.extend(by_key[key].node)
        for attr in node.attribute:
            if attr.HasField("g"):
                todo.extend(attr.g.node)
            for g in attr.graphs:
                todo.extend(g.node)
    return [f for f in model.functions if (f.domain, f.name, f.overload) in used]  # model order


def _inline_external(model: onnx.ModelProto, doc: Document) -> None:
    """Replace every external-data reference in ``model`` with the bytes from ``doc.store``."""
    for site in list(iter_tensors(model)):
        if not uses_external_data(site.tensor):
            continue
        if doc.store is None:
            raise ExternalDataError(f"tensor {site.tensor.name!r} has external data but the document has no data store")
        payload = bytes(doc.store.read_bytes(site.tensor))
        tensor = resolve_path(model, site.path)
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
        tensor.raw_data = payload
