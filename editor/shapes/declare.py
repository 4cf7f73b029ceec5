"""From the shape engine's table to ``ValueInfoProto`` entries, and the JSON of ``shapes``.

A formula dim is written as a ``dim_param`` with its text (``floor((height - 1)/2) + 1``),
an unknown dim as a dim with neither value nor param, an unknown rank as no shape at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import onnx

from editor.shapes.engine import ShapeTable, ValueShape, shape_of_type, type_proto
from editor.shapes.symbolic import Dim, Expr, evaluate, free_symbols, to_text

__all__ = ["type_proto", "dtype_name", "graph_values", "values_json", "short_dim", "label_value_info"]

#: a formula longer than this is shown by its leading term on canvas labels
LABEL_CHARS = 16


def dtype_name(elem_type: int) -> str | None:
    """onnx's lower-case name of an element type (``float32``), None when unknown."""
    if not elem_type:
        return None
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name if elem_type not in (
            onnx.TensorProto.STRING, onnx.TensorProto.BFLOAT16) else onnx.TensorProto.DataType.Name(elem_type).lower()
    except (KeyError, ValueError, TypeError):
        return onnx.TensorProto.DataType.Name(elem_type).lower() if elem_type in onnx.TensorProto.DataType.values() \
            else None


def graph_values(graph: onnx.GraphProto, table: ShapeTable, path: str) -> Iterator[tuple[str, str, ValueShape, str]]:
    """(graph path, value name, shape, source) for the graph's inputs, initializers and
    every value a node makes, then the same for every body (path ``<graph>/<node>.<attr>``)."""
    declared = {vi.name for vi in list(graph.value_info) + list(graph.output) + list(graph.input)}
    seen: set[str] = set()
    for vi in graph.input:
        seen.add(vi.name)
        yield path, vi.name, table.get(vi.name), "declared"
    for t in graph.initializer:
        if t.name not in seen:
            seen.add(t.name)
            yield path, t.name, table.get(t.name), "declared"  # a weight's type is its tensor's
    for node in graph.node:
        for name in node.output:
            if name and name not in seen:
                seen.add(name)
                yield path, name, table.get(name), "declared" if name in declared else "inferred"
    for k, node in enumerate(graph.node):
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH and (k, attr.name) in table.bodies:
                yield from graph_values(attr.g, table.bodies[(k, attr.name)],
                                        f"{path}/{node.name or f'#{k}'}.{attr.name}")


def values_json(model: onnx.ModelProto, table: ShapeTable) -> dict:
    """``{"values": [{"name", "graph", "dtype", "shape", "source"}]}`` (the ``shapes --json``
    contract: a shape is null when the rank is unknown, else ints, strings for symbolic
    dims or formulas, null for an unknown dim)."""
    out = []
    g = model.graph
    declared = {vi.name: vi for vi in list(g.value_info) + list(g.output) + list(g.input)}
    for path, name, vs, source in graph_values(g, table, g.name or "main"):
        if source == "declared" and vs.dims is None and name in declared:
            vs = shape_of_type(declared[name].type)  # what the file says, where we know nothing better
        shape = None if vs.dims is None else [d if isinstance(d, int) or d is None else to_text(d) for d in vs.dims]
        out.append({"name": name, "graph": path, "dtype": dtype_name(vs.elem_type), "shape": shape, "source": source})
    return {"values": out}


def short_name(name: str, limit: int = 12) -> str:
    """A long dim name made short for a label: an exporter's CamelCase stem by its capitals
    (``p2o.DynamicDimension.1`` -> ``DD.1``), anything else cut in the middle."""
    if len(name) <= limit:
        return name
    parts = re.split(r"[._]", name)
    camel = [p for p in parts if re.fullmatch(r"(?:[A-Z][a-z0-9]+){2,}", p)]
    if camel and parts[-1] and parts[-1] not in camel:
        return "".join(ch for ch in camel[-1] if ch.isupper()) + "." + parts[-1]
    return name[:limit // 2] + "…" + name[-(limit - limit // 2 - 1):]


def short_dim(d: Dim | None) -> str:
    """A dim as an edge label shows it: the number, the (shortened) name, a short formula as
    it is, and a long one by its leading term marked ``~`` (``floor((floor((h + 1)/2) +
    1)/2)`` reads ``~h/4``); the exact formula stays in ``shapes`` and the properties panel."""
    text = to_text(d)
    if not isinstance(d, Expr):
        return text
    names = free_symbols(d)
    if len(names) == 1:
        (name,) = names
        if text == name:
            return short_name(name)
        if len(text) <= LABEL_CHARS:
            return text
        big = 1 << 20
        lo, hi = evaluate(d, {name: big}), evaluate(d, {name: 2 * big})
        if lo is not None and hi is not None and hi != lo:
            slope = (hi - lo) / big
            if abs(slope - round(slope)) < 1e-3 and round(slope) != 0:
                k = round(slope)
                return f"~{short_name(name)}" if k == 1 else f"~{k}*{short_name(name)}"
            inverse = 1 / slope
            if abs(inverse - round(inverse)) < 1e-3:
                return f"~{short_name(name)}/{round(inverse)}"
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def label_value_info(graph: onnx.GraphProto, table: ShapeTable, *, bodies: bool = False,
                     names: Iterable[str] | None = None) -> dict[str, onnx.ValueInfoProto]:
    """ValueInfoProtos for the graph's values whose declared shape is missing or less
    complete than the engine's, with dims written as :func:`short_dim` (for drawing only:
    never saved into a model). ``bodies``: the values of every If/Loop/Scan body too (a
    body's names are its own in a valid model, so one mapping serves all scopes).
    ``names``: only these values (a view relabelling what an edit changed)."""
    declared = {vi.name: vi for vi in list(graph.value_info) + list(graph.input) + list(graph.output)}
    out: dict[str, onnx.ValueInfoProto] = {}
    if names is None:
        names = [vi.name for vi in graph.input] + [n for node in graph.node for n in node.output if n]
    for name in names:
        vs = table.get(name)
        if vs.dims is None or not vs.elem_type:
            continue
        have = declared.get(name)
        if have is not None and not any(isinstance(x, Expr) and short_dim(x) != to_text(x) for x in vs.dims):
            old = shape_of_type(have.type)
            if old.dims is not None and None not in old.dims and not any(isinstance(x, Expr) and
                                                                         x != y for x, y in zip(old.dims, vs.dims)):
                continue  # the file says as much already, as briefly
        out[name] = onnx.helper.make_value_info(name, type_proto(vs, short_dim))
    if bodies:
        for k, node in enumerate(graph.node):
            for attr in node.attribute:
                sub = table.bodies.get((k, attr.name)) if attr.type == onnx.AttributeProto.GRAPH else None
                if sub is not None:
                    for name, vi in label_value_info(attr.g, sub, bodies=True).items():
                        out.setdefault(name, vi)
    return out
