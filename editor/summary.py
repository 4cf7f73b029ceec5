"""A model at a glance: what ``onnx-studio info`` prints and the GUI's summary view shows.

:func:`summarize` reads the document (never external data: sizes come from dims and element
types) and returns a :class:`ModelSummary`; ``to_json()`` gives the machine-readable form.

NOTE: what is counted where (the JSON keys, so scripts can rely on them):

* ``nodes``: nodes of the main graph only. ``nodes_total``: every graph of the main graph
  tree (main graph plus If/Loop/Scan bodies at any depth); model-local functions and the
  graphs nested in them are excluded, as are training_info graphs.
* ``op_types``: op -> count over that same main graph tree. Ops of the default domain
  (``""`` / ``ai.onnx``) are keyed by op type alone (``"Conv"``), others as
  ``"domain.op_type"`` (``"com.microsoft.FusedConv"``). ``function_op_types`` counts the
  bodies of model-local functions (and their subgraphs) the same way, separately.
* ``initializers``: dense initializers of the main graph tree; ``sparse_initializers``
  apart. ``weight_bytes``: bytes of those initializers, dense and sparse (values + indices),
  inline and external alike, from dims x element size (strings: their byte lengths).
  ``parameters``: their element count (a sparse tensor counts its full shape).
* ``constants`` / ``constant_bytes`` / ``constant_parameters``: the same for the payloads of
  ``Constant`` nodes in the main graph tree (see :mod:`editor.weights`); Paddle and spox
  exports keep every weight there and have no initializers at all.
* ``weights_by_dtype``: dtype -> {tensors, parameters, bytes} over initializers *and*
  Constant payloads, i.e. every weight a user thinks of; ``total_parameters`` and
  ``total_weight_bytes`` are the sums over both.
* ``inputs`` / ``outputs``: ``{name, elem_type, shape, kind}``: ``elem_type`` is a dtype label
  of :func:`editor.weights.dtype_label` (``float32``, ``int64``, ``bfloat16`` ...) or, for
  non-tensor values, a type expression such as ``sequence(map(int64,float32))``; ``shape`` is
  a list of ints (``dim_value`` as stored, even ``-1``), strings (``dim_param``) and ``null``
  (unknown dim), or ``null`` when no shape is known. Graph inputs that are also initializers
  (IR < 4 style) are listed with ``"initializer": true``.
* ``external_data_files``: one entry per distinct file: ``path`` (the location as written in
  the model), ``bytes`` (file size, from the stat done at load), ``tensors`` and
  ``referenced_bytes`` (what the model's tensors use of it).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import onnx
from onnx import TensorProto

from editor.io import iter_tensors, tensor_nbytes, uses_external_data
from editor.blockquant import packed_weights
from editor.weights import dtype_label, list_weights
from editor.types import shape_dims

if TYPE_CHECKING:
    from editor.document import Document


@dataclass
class ModelSummary:
    """Everything ``info`` reports. See the module docstring for what each count covers."""

    path: str | None
    format: str
    file_size: int
    ir_version: int
    producer_name: str
    producer_version: str
    domain: str
    model_version: int
    doc_string: str
    graph_name: str
    opset_imports: dict[str, int]
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    nodes: int
    nodes_total: int
    initializers: int
    sparse_initializers: int
    weight_bytes: int
    parameters: int
    constants: int
    constant_bytes: int
    constant_parameters: int
    weights_by_dtype: dict[str, dict[str, int]]
    op_types: dict[str, int]
    function_op_types: dict[str, int]
    functions: list[dict[str, Any]]
    subgraphs: list[dict[str, Any]]
    external_data_files: list[dict[str, Any]]
    metadata_props: dict[str, str]
    training_info: int = 0
    value_info: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def total_parameters(self) -> int:
        """Elements of every weight: initializers plus Constant payloads."""
        return self.parameters + self.constant_parameters

    @property
    def total_weight_bytes(self) -> int:
        return self.weight_bytes + self.constant_bytes

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("extra")
        out["total_parameters"] = self.total_parameters
        out["total_weight_bytes"] = self.total_weight_bytes
        out.update(self.extra)
        return out


def op_key(node: onnx.NodeProto) -> str:
    """Histogram key of a node's op: ``Conv`` for the default domain, else ``domain.Op``."""
    if node.domain in ("", "ai.onnx"):
        return node.op_type
    return f"{node.domain}.{node.op_type}"


def type_label(tp: onnx.TypeProto) -> tuple[str, str]:
    """(kind, element type label) of a TypeProto: ``("tensor", "float32")``,
    ``("sequence", "sequence(map(int64,float32))")`` ..."""
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        return "tensor", dtype_label(tp.tensor_type.elem_type)
    if which == "sparse_tensor_type":
        return "sparse_tensor", f"sparse_tensor({dtype_label(tp.sparse_tensor_type.elem_type)})"
    if which == "sequence_type":
        inner = type_label(tp.sequence_type.elem_type)[1] if tp.sequence_type.HasField("elem_type") else "?"
        return "sequence", f"sequence({inner})"
    if which == "map_type":
        key = dtype_label(tp.map_type.key_type)
        inner = type_label(tp.map_type.value_type)[1] if tp.map_type.HasField("value_type") else "?"
        return "map", f"map({key},{inner})"
    if which == "optional_type":
        inner = type_label(tp.optional_type.elem_type)[1] if tp.optional_type.HasField("elem_type") else "?"
        return "optional", f"optional({inner})"
    if which == "opaque_type":
        o = tp.opaque_type
        return "opaque", f"opaque({o.domain + '.' if o.domain else ''}{o.name})"
    return "undefined", "undefined"


#: dims of a tensor type (ints, symbolic names, None for unknown); None when unranked
shape_of = shape_dims


def describe_value(vi: onnx.ValueInfoProto) -> dict[str, Any]:
    kind, elem = type_label(vi.type) if vi.HasField("type") else ("undefined", "undefined")
    return {"name": vi.name, "elem_type": elem, "shape": shape_of(vi.type) if vi.HasField("type") else None,
            "kind": kind}


def _root_kind(doc: Document, sid: int) -> str:
    return doc.index.scope_chain(sid)[-1].kind


def _count_ops(doc: Document, sids: list[int]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for sid in sids:
        scope = doc.index.scopes[sid]
        for node in scope.graph.node:
            counts[op_key(node)] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def summarize(doc: Document) -> ModelSummary:
    """The summary of ``doc`` as it is now (edits included); reads no tensor data."""
    m = doc.model
    g = m.graph
    index = doc.index
    main_tree = [sid for sid in index.scopes if _root_kind(doc, sid) == "main"]
    fn_tree = [sid for sid in index.scopes if _root_kind(doc, sid) == "function"]

    init_names = {t.name for t in g.initializer}
    inputs = []
    for vi in g.input:
        rec = describe_value(vi)
        if vi.name in init_names:
            rec["initializer"] = True
        inputs.append(rec)

    initializers = sparse = weight_bytes = parameters = 0
    packed = packed_weights(index.scopes[index.main].graph)  # int4/int2 values in uint8 bytes
    for sid in main_tree:
        graph = index.scopes[sid].graph
        for t in graph.initializer:
            initializers += 1
            weight_bytes += tensor_nbytes(t)
            pw = packed.get(t.name) if sid == index.main else None
            parameters += pw.values if pw else _elements(t.dims)
        for sp in graph.sparse_initializer:
            sparse += 1
            weight_bytes += tensor_nbytes(sp.values) + (tensor_nbytes(sp.indices) if sp.HasField("indices") else 0)
            parameters += _elements(sp.dims)

    main_set = set(main_tree)
    constants = constant_bytes = constant_parameters = 0
    by_dtype: dict[str, dict[str, int]] = {}
    for w in list_weights(doc):
        if w.scope not in main_set:
            continue
        if w.source == "constant":
            constants += 1
            constant_bytes += w.nbytes
            constant_parameters += w.elements
        pw = packed.get(w.name) if w.scope == index.main and w.source == "initializer" else None
        entry = by_dtype.setdefault(pw.label if pw else w.dtype, {"tensors": 0, "parameters": 0, "bytes": 0})
        entry["tensors"] += 1
        entry["parameters"] += pw.values if pw else w.elements
        entry["bytes"] += w.nbytes
    by_dtype = dict(sorted(by_dtype.items(), key=lambda kv: (-kv[1]["bytes"], kv[0])))

    functions = []
    for sid in index.function_scopes:
        fn = index.scopes[sid].graph
        functions.append(
            {
                "domain": fn.domain,
                "name": fn.name,
                "overload": fn.overload,
                "inputs": list(fn.input),
                "outputs": list(fn.output),
                "attributes": list(fn.attribute) + [a.name for a in fn.attribute_proto],
                "nodes": len(fn.node),
                "opset_imports": {(o.domain or "ai.onnx"): o.version for o in fn.opset_import},
            }
        )

    subgraphs = []
    for sid, scope in index.scopes.items():
        if scope.kind != "subgraph":
            continue
        owner = index.nodes[scope.owner]
        subgraphs.append(
            {
                "path": index.path(sid),
                "scope": sid,
                "owner": owner.name,
                "owner_op": owner.op_type,
                "attribute": scope.attr,
                "nodes": len(scope.graph.node),
                "nodes_total": _nodes_below(doc, sid),
                "in_function": _root_kind(doc, sid) == "function",
            }
        )

    return ModelSummary(
        path=str(doc.path) if doc.path is not None else None,
        format=doc.format,
        file_size=doc.file_size,
        ir_version=m.ir_version,
        producer_name=m.producer_name,
        producer_version=m.producer_version,
        domain=m.domain,
        model_version=m.model_version,
        doc_string=m.doc_string,
        graph_name=g.name,
        opset_imports={(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        inputs=inputs,
        outputs=[describe_value(vi) for vi in g.output],
        nodes=len(g.node),
        nodes_total=sum(len(index.scopes[sid].graph.node) for sid in main_tree),
        initializers=initializers,
        sparse_initializers=sparse,
        weight_bytes=weight_bytes,
        parameters=parameters,
        constants=constants,
        constant_bytes=constant_bytes,
        constant_parameters=constant_parameters,
        weights_by_dtype=by_dtype,
        op_types=_count_ops(doc, main_tree),
        function_op_types=_count_ops(doc, fn_tree),
        functions=functions,
        subgraphs=subgraphs,
        external_data_files=_external_files(doc),
        metadata_props={p.key: p.value for p in m.metadata_props},
        training_info=len(m.training_info),
        value_info=len(g.value_info),
    )


def _elements(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _nodes_below(doc: Document, sid: int) -> int:
    """Nodes of a scope and of every subgraph nested in it."""
    scope = doc.index.scopes[sid]
    total = len(scope.graph.node)
    for nid in scope.node_ids:
        for sub in doc.index.children.get(nid, ()):
            total += _nodes_below(doc, sub)
    return total


def _external_files(doc: Document) -> list[dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for site in iter_tensors(doc.model):
        t = site.tensor
        if not uses_external_data(t):
            continue
        entries = {e.key: e.value for e in t.external_data}
        location = entries.get("location", "")
        rec = files.get(location)
        if rec is None:
            rec = files[location] = {"path": location, "bytes": None, "tensors": 0, "referenced_bytes": 0}
            size = _file_size(doc, t)
            if size is not None:
                rec["bytes"] = size
        rec["tensors"] += 1
        rec["referenced_bytes"] += tensor_nbytes(t) if t.data_type != TensorProto.STRING else 0
    return sorted(files.values(), key=lambda r: r["path"])


def _file_size(doc: Document, t: TensorProto) -> int | None:
    store = doc.store
    if store is None:
        return None
    try:
        ref = store.ref(t)  # validated (and stat-cached) at load; no data is read
    except Exception:  # noqa: BLE001 - an unresolvable reference has no size to show
        return None
    ident = store.identity(ref.path)
    if ident is not None:
        return ident.size
    try:
        return os.stat(ref.path).st_size
    except OSError:
        return None


__all__ = ["ModelSummary", "describe_value", "op_key", "shape_of", "summarize", "type_label"]
