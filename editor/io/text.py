"""The ONNX text syntax (``onnx.printer`` / ``onnx.parser``), in and out.

The text form is for reading and hand-editing small models. It does not carry everything a
binary model can (the printer drops doc strings, metadata, value_info of nested graphs and a
few attribute kinds), so the editor saves text only when asked; a text save must parse back
to an equivalent graph (same nodes, inputs, outputs, initializers): :func:`text_differences`
says where it does not, and ``convert --text`` refuses to call such a file a success.

NOTE: two things the printer and parser disagree on, handled here:

* the printer quotes a tensor literal's name (``float[2] "fc_0.w_0" {...}``) but onnx's
  parser cannot read a quoted name there (ppocr's Constants, onnx 1.23). Inside an attribute
  (a Constant's ``value``) that name carries no meaning (the node's output names the value),
  so such names are left out of the text; every other name is kept.
* the parser stores values in typed fields (``float_data``, ``int64_data`` ...), 2-5 times the
  size of the packed ``raw_data`` that exporters write; parsed tensors are packed again.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import onnx
import onnx.parser
import onnx.printer
from onnx import numpy_helper

from editor.errors import LoadError

#: File name suffixes that mean "text syntax" (checked case-insensitively).
TEXT_SUFFIXES = (".onnxtxt", ".txt")

_POSITION = re.compile(r"line:\s*(\d+)\s+column:\s*(\d+)")
#: what the parser reads unquoted; the printer quotes every other name
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def serialize_model_text(model: onnx.ModelProto) -> str:
    """The ONNX text syntax for ``model`` (tensor values inline)."""
    if _attribute_tensors_to_rename(model):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        for t in _attribute_tensors_to_rename(copy):
            t.ClearField("name")
        model = copy
    text = onnx.printer.to_text(model)
    return text if text.endswith("\n") else text + "\n"


def _attribute_tensors_to_rename(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    """Tensors inside attributes whose names the parser cannot read back."""
    return [t for t in _attribute_tensors(model) if t.name and not _IDENTIFIER.match(t.name)]


def _attribute_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    out: list[onnx.TensorProto] = []

    def nodes(ns) -> None:  # noqa: ANN001 - repeated NodeProto
        for n in ns:
            for a in n.attribute:
                if a.HasField("t"):
                    out.append(a.t)
                out.extend(a.tensors)
                if a.HasField("g"):
                    nodes(a.g.node)
                for g in a.graphs:
                    nodes(g.node)

    nodes(model.graph.node)
    for f in model.functions:
        nodes(f.node)
    return out


def _all_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    out = list(model.graph.initializer) + _attribute_tensors(model)

    def graphs(ns) -> None:  # noqa: ANN001 - initializers of nested graphs
        for n in ns:
            for a in n.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    out.extend(g.initializer)
                    graphs(g.node)

    graphs(model.graph.node)
    return out


def pack_raw(model: onnx.ModelProto) -> int:
    """Move values held in typed fields into ``raw_data`` (as exporters store them); returns
    how many tensors were packed. Strings, external and already-packed tensors stay."""
    packed = 0
    for t in _all_tensors(model):
        if t.HasField("raw_data") or t.data_location == onnx.TensorProto.EXTERNAL \
                or t.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
            continue
        try:
            array = numpy_helper.to_array(t)
            again = numpy_helper.from_array(np.ascontiguousarray(array))
        except Exception:  # noqa: BLE001 - a type numpy cannot hold (4-bit ...): keep the typed fields
            continue
        if again.data_type != t.data_type or not again.HasField("raw_data"):
            continue
        for field in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            t.ClearField(field)
        t.raw_data = again.raw_data
        packed += 1
    return packed


def parse_model_text(text: str) -> onnx.ModelProto:
    """Parse ONNX text syntax (weights packed as ``raw_data``); syntax errors raise
    :class:`LoadError` with line and column."""
    try:
        model = onnx.parser.parse_model(text)
    except onnx.parser.ParseError as exc:
        raise LoadError(_describe(str(exc))) from None
    except Exception as exc:  # noqa: BLE001 - the C++ parser may throw other things
        raise LoadError(f"text syntax error: {type(exc).__name__}: {_describe(str(exc))}") from None
    pack_raw(model)
    return model


def _describe(message: str) -> str:
    # ParseError's text is the repr of a bytes object with escaped newlines:
    # "b'[ParseError at position (line: 1 column: 6)]\nError context: ...\nExpected ...'"
    cleaned = message
    if cleaned.startswith(("b'", 'b"')) and cleaned.endswith(("'", '"')):
        cleaned = cleaned[2:-1]
    lines = [ln.strip() for ln in cleaned.replace("\\n", "\n").splitlines() if ln.strip()]
    where = _POSITION.search(cleaned)
    what = lines[-1] if lines else "unknown error"
    if where:
        return f"text syntax error at line {where.group(1)}, column {where.group(2)}: {what}"
    return f"text syntax error: {what}"


def looks_like_text(data: bytes) -> bool:
    """True when ``data`` starts (after blank lines and ``#`` comments) with ``<`` as UTF-8 text."""
    head = data[:65536]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a multi-byte char cut by the slice is fine
            return False
        text = head[: exc.start].decode("utf-8")
    text = text.lstrip("\ufeff")
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return stripped.startswith("<")
    return False


# -- does the text say the same as the model? ------------------------------------------------

def _value_sig(a: onnx.AttributeProto, read=None) -> object:  # noqa: ANN001 - read: (TensorProto) -> ndarray
    """An attribute's value as comparable data (tensor names left out: see the module)."""
    A = onnx.AttributeProto
    if a.ref_attr_name:
        return ("ref", a.ref_attr_name, a.type)
    if a.type == A.TENSOR:
        return _tensor_sig(a.t, read)
    if a.type == A.TENSORS:
        return [_tensor_sig(t, read) for t in a.tensors]
    if a.type == A.GRAPH:
        return _graph_sig(a.g, read)
    if a.type == A.GRAPHS:
        return [_graph_sig(g, read) for g in a.graphs]
    if a.type == A.FLOAT:
        return np.float32(a.f).tobytes()
    if a.type == A.FLOATS:
        return np.asarray(a.floats, np.float32).tobytes()
    if a.type == A.INT:
        return a.i
    if a.type == A.INTS:
        return list(a.ints)
    if a.type == A.STRING:
        return a.s
    if a.type == A.STRINGS:
        return list(a.strings)
    if a.type == A.TYPE_PROTO:
        return a.tp.SerializeToString()
    if a.type == A.TYPE_PROTOS:
        return [t.SerializeToString() for t in a.type_protos]
    if a.type == A.SPARSE_TENSOR:
        return (_tensor_sig(a.sparse_tensor.values), _tensor_sig(a.sparse_tensor.indices), list(a.sparse_tensor.dims))
    return a.SerializeToString()


def _tensor_sig(t: onnx.TensorProto, read=None) -> tuple:  # noqa: ANN001 - read: (TensorProto) -> ndarray
    try:
        if t.data_type == onnx.TensorProto.STRING:
            values = list(t.string_data)
        elif t.data_location == onnx.TensorProto.EXTERNAL and read is not None:
            values = np.ascontiguousarray(read(t)).tobytes()
        else:
            values = numpy_helper.to_array(t).tobytes()
    except Exception:  # noqa: BLE001 - a layout numpy cannot read: compare the stored fields
        values = t.SerializeToString()
    return t.data_type, tuple(t.dims), values


def _graph_sig(g: onnx.GraphProto, read=None) -> tuple:  # noqa: ANN001 - read: (TensorProto) -> ndarray
    nodes = [(n.op_type, n.domain or "", n.name, n.overload, list(n.input), list(n.output),
              sorted((a.name, repr(_value_sig(a, read))) for a in n.attribute)) for n in g.node]
    io = [(v.name, v.type.SerializeToString()) for v in list(g.input) + list(g.output)]
    inits = sorted((t.name, _tensor_sig(t, read)) for t in g.initializer) + sorted(
        (s.values.name, _tensor_sig(s.values, read), _tensor_sig(s.indices, read), tuple(s.dims))
        for s in g.sparse_initializer)
    return nodes, io, inits


def text_differences(model: onnx.ModelProto, parsed: onnx.ModelProto, limit: int = 5,
                     read_external: Callable[[onnx.TensorProto], np.ndarray] | None = None) -> list[str]:
    """Where ``parsed`` (the text read back) says something else than ``model``: IR version,
    opset imports, metadata, the nodes (names, wiring and attribute values, nested graphs
    included), graph inputs and outputs with their types, initializers (dense and sparse)
    with their values, the main graph's declared value types, and model functions' nodes.
    Doc strings and annotations on values are not compared. ``read_external`` gives the
    values of ``model``'s external tensors (the text holds them inline). Empty when they
    agree."""
    out: list[str] = []
    if model.ir_version != parsed.ir_version:
        out.append(f"IR version {model.ir_version} reads back as {parsed.ir_version}")
    opsets = sorted((o.domain or "ai.onnx", o.version) for o in model.opset_import)
    again = sorted((o.domain or "ai.onnx", o.version) for o in parsed.opset_import)
    if opsets != again:
        out.append(f"opset imports {opsets} read back as {again}")
    if [(p.key, p.value) for p in model.metadata_props] != [(p.key, p.value) for p in parsed.metadata_props]:
        out.append("the model's metadata reads back differently")
    a, b = _graph_sig(model.graph, read_external), _graph_sig(parsed.graph)
    # value_info: the declared types (annotations on them, such as onnxscript's
    # "folded_from" metadata, are not part of the syntax)
    va = [(v.name, v.type.SerializeToString()) for v in model.graph.value_info]
    vb = [(v.name, v.type.SerializeToString()) for v in parsed.graph.value_info]
    for what, x, y in (("nodes", a[0], b[0]), ("graph inputs/outputs", a[1], b[1]), ("initializers", a[2], b[2]),
                       ("value types", va, vb)):
        if len(x) != len(y):
            out.append(f"{len(x)} {what} read back as {len(y)}")
            continue
        for k, (p, q) in enumerate(zip(x, y)):
            if p != q:
                out.append(f"{what} #{k} ({p[0]!r}) reads back differently")
                break
    fa = [(f.domain, f.name, _graph_sig(onnx.helper.make_graph(f.node, f.name, [], []))[0]) for f in model.functions]
    fb = [(f.domain, f.name, _graph_sig(onnx.helper.make_graph(f.node, f.name, [], []))[0]) for f in parsed.functions]
    if fa != fb:
        out.append("model functions read back differently")
    return out[:limit]
