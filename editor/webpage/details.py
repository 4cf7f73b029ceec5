"""What a click on a node shows in the page: its attributes, its inputs and outputs with their
types and shapes (declared in the file, or inferred by the shape engine), and statistics of
the weights it reads. Never the weights themselves: the page must stay small and a model's
weights may be private.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import onnx

from editor.find import attribute_texts
from editor.types import dims_text, dtype_name, shape_dims

if TYPE_CHECKING:
    from editor.document import Document

__all__ = ["node_records", "value_texts", "ATTR_CHARS"]

#: an attribute's text is cut here (a long ints list, a tensor's repr)
ATTR_CHARS = 160


def _type_text(tp: onnx.TypeProto) -> str:
    if not tp.HasField("tensor_type"):
        return tp.WhichOneof("value") or ""
    dims = shape_dims(tp)
    dt = dtype_name(tp.tensor_type.elem_type)
    return f"{dt}[{dims_text(dims)}]" if dims is not None else f"{dt}[...]"


def value_texts(doc: Document, inferred: Mapping[str, onnx.ValueInfoProto] | None) -> dict[str, tuple[str, str]]:
    """Value name -> (type text ``float32[1,3,224,224]``, ``"declared"`` | ``"inferred"``)
    (``inferred``: the edge labels the view draws with, where they say more than the file)
    for every value of every graph scope whose type is known (a valid model's names are
    unique across its scopes, so one map serves all)."""
    out: dict[str, tuple[str, str]] = {}
    for scope in doc.index.scopes.values():
        g = scope.graph
        if not isinstance(g, onnx.GraphProto):
            continue
        for t in g.initializer:
            out[t.name] = (f"{dtype_name(t.data_type)}[{','.join(str(d) for d in t.dims)}]", "declared")
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            if vi.type.HasField("tensor_type") or vi.type.WhichOneof("value"):
                out[vi.name] = (_type_text(vi.type), "declared")
    for name, vi in (inferred or {}).items():
        text = _type_text(vi.type)
        if out.get(name, ("", ""))[0] != text:  # the window's labels repeat the file's where it says as much
            out[name] = (text, "inferred")
    return out


def _attr_text(a: onnx.AttributeProto) -> str:
    if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        graphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
        return "; ".join(f"graph '{g.name}': {len(g.node)} nodes" for g in graphs)
    if a.type == onnx.AttributeProto.TENSOR:
        t = a.t
        return f"tensor {dtype_name(t.data_type)}[{','.join(str(d) for d in t.dims)}]"
    texts = attribute_texts(a)
    text = texts[-1] if texts else ""
    return text if len(text) <= ATTR_CHARS else text[:ATTR_CHARS - 1] + "…"


def _number(v: Any) -> Any:
    if v is None:
        return None
    f = float(v)
    return None if not math.isfinite(f) else float(f"{f:.6g}")


def weight_summaries(doc: Document, names: Collection[str]) -> dict[str, dict[str, Any]]:
    """Statistics (dtype, shape, min, max, mean, std, zeros, NaN/Inf counts) of the weights
    named ``names`` that the document holds: initializers and Constant payloads."""
    from editor.weights import list_weights, weight_stats

    out: dict[str, dict[str, Any]] = {}
    wanted = set(names)
    for w in list_weights(doc, include_functions=False):
        if w.name not in wanted or w.name in out:
            continue
        try:
            s = weight_stats(doc, w, bins=1)
        except Exception as exc:  # noqa: BLE001 - a summary that cannot be read says why, the page still opens
            out[w.name] = {"dtype": w.dtype, "shape": list(w.shape), "note": f"not read: {exc}"}
            continue
        out[w.name] = {"dtype": s.dtype, "shape": list(s.shape), "count": s.count, "min": _number(s.min),
                       "max": _number(s.max), "mean": _number(s.mean), "std": _number(s.std),
                       "zeros": s.zero_count, "nan": s.nan_count, "inf": s.inf_count, "note": s.note}
    return out


def node_records(doc: Document, node_ids: Collection[int], values: Mapping[str, tuple[str, str]],
                 *, weights: bool = True) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
    """(``"<node id>" -> [op, domain, name, attributes, inputs, outputs]``, weight statistics
    by name) for the nodes ``node_ids``. Inputs and outputs are ``[name, type text, source]``
    (``""`` where the type is unknown); attributes ``[name, text]``."""
    index = doc.index
    out: dict[str, list[Any]] = {}
    read: set[str] = set()
    for nid in node_ids:
        node = index.nodes.get(nid)
        if node is None:
            continue
        attrs = [[a.name, _attr_text(a)] for a in node.attribute]
        ins = [[n, *values.get(n, ("", ""))] for n in node.input]
        outs = [[n, *values.get(n, ("", ""))] for n in node.output]
        out[str(nid)] = [node.op_type, node.domain, node.name, attrs, ins, outs]
        read.update(n for n in node.input if n)
        if node.op_type == "Constant":
            read.update(node.output)
    return out, (weight_summaries(doc, read) if weights else {})
