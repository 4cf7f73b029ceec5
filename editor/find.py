"""Find: one query language for the window's Find panel and ``onnx-studio find``.

A query is words separated by spaces. A word ``key:value`` with one of these keys is a
predicate; every other word is part of a name (substring; a regex with ``regex=True``).
All predicates must hold (AND).

=================  ===========================================================================
``op:Conv``        nodes of that op type (case-insensitive; a regex with ``regex=True``)
``domain:D``       nodes of that domain (``ai.onnx`` for the default one)
``attr:NAME``      nodes with that attribute; ``attr:group>1``, ``attr:mode=linear``,
                   ``attr:kernel_shape=[3,3]`` compare its value (``= != > >= < <=``; a list
                   attribute matches ``>``/``<`` when every element does)
``name:TEXT``      a node or value name containing TEXT
``dtype:float16``  values of that element type (onnx's lower-case names: ``float32``, ``int8``)
``shape:[*,3,*,*]``values of that shape: ``*`` any dim, a number, or a dim's name or formula
``rank:4``         values of that rank
``dim:batch``      values with a dim that is, or is computed from, ``batch`` (or a number)
=================  ===========================================================================

Node predicates find nodes; value predicates find values (graph inputs, node outputs and
initializers); with both, nodes with an output that satisfies the value predicates. Shapes
come from the shape engine (:mod:`editor.shapes`), symbolic where dynamic. A query with no
predicate at all is the plain search of the Find panel: node names, op types, tensor names
and attribute values, whatever matches.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import onnx

from editor.shapes import ShapeTable, ValueShape, free_symbols, infer_model, to_text
from editor.shapes.declare import dtype_name
from editor.shapes.engine import shape_of_type

__all__ = ["Hit", "Query", "QueryError", "parse", "search", "attribute_texts", "KEYS"]

NODE_KEYS = ("op", "domain", "attr")
VALUE_KEYS = ("dtype", "shape", "rank", "dim")
KEYS = NODE_KEYS + VALUE_KEYS + ("name",)
COMPARE = {"=": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
           "<": operator.lt}


class QueryError(ValueError):
    """A query that cannot be understood; the message says which word and why."""


@dataclass(frozen=True)
class Hit:
    kind: str  # "node" | "value" | "initializer"
    what: str  # what matched: "name" | "op" | "tensor" | "attribute" | "query"
    text: str  # the text that matched (a name, "attr=value", an op type)
    scope: int
    node: int | None  # the node id (kind "node")
    name: str  # node name or value name
    op_type: str | None
    graph: str  # the graph's path: main, main/If_0.then_branch, fn:custom.Foo
    where: str  # graph path and node, for a result list

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "graph": self.graph, "op_type": self.op_type}


@dataclass
class Query:
    node_preds: list[Callable[[onnx.NodeProto], bool]]
    value_preds: list[Callable[[ValueShape], bool]]
    name: re.Pattern | None

    @property
    def structured(self) -> bool:
        return bool(self.node_preds or self.value_preds)


def attribute_texts(attr: onnx.AttributeProto) -> list[str]:
    """Every scalar of an attribute as text, then the whole list (``[3, 3]``)."""
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return [value.decode("utf-8", "replace")]
    if isinstance(value, float):
        return [_float(value)]
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, list) and all(isinstance(v, (int, float, bytes)) for v in value):
        items = [v.decode("utf-8", "replace") if isinstance(v, bytes) else (_float(v) if isinstance(v, float)
                                                                              else str(v)) for v in value]
        return items + ["[" + ", ".join(items) + "]"]
    return [onnx.AttributeProto.AttributeType.Name(attr.type).lower()]


def _float(v: float) -> str:
    return f"{v:.6g}"


def _pattern(text: str, *, regex: bool, case: bool) -> re.Pattern:
    flags = 0 if case else re.IGNORECASE
    try:
        return re.compile(text if regex else re.escape(text), flags)
    except re.error as exc:
        raise QueryError(f"bad regex {text!r}: {exc}") from None


def _words(text: str) -> list[str]:
    """Split on spaces outside brackets (``shape:[*, 3]`` is one word)."""
    words, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch.isspace() and depth <= 0:
            if current:
                words.append(current)
            current = ""
        else:
            current += ch
    if current:
        words.append(current)
    return words


def parse(text: str, *, regex: bool = False, case: bool = False) -> Query | None:
    """The query of ``text``; None when it is empty. Raises :class:`QueryError`."""
    words = _words(text.strip())
    if not words:
        return None
    node_preds: list = []
    value_preds: list = []
    names: list[str] = []
    for word in words:
        key, sep, arg = word.partition(":")
        key = key.lower()
        if not sep or key not in KEYS:
            names.append(word)
            continue
        if not arg:
            raise QueryError(f"{word!r}: say what {key} to look for ({key}:...)")
        if key == "name":
            names.append(arg)
        elif key == "op":
            pat = _pattern(arg if regex else f"^{re.escape(arg)}$", regex=True, case=case)
            node_preds.append(lambda n, p=pat: bool(p.search(n.op_type)))
        elif key == "domain":
            want = "" if arg in ("ai.onnx", "onnx") else arg
            node_preds.append(lambda n, w=want: (n.domain if n.domain != "ai.onnx" else "") == w)
        elif key == "attr":
            node_preds.append(_attr_pred(arg))
        elif key == "dtype":
            value_preds.append(lambda vs, w=arg.lower(): dtype_name(vs.elem_type) in (w, _alias(w)))
        elif key == "rank":
            if not arg.isdigit():
                raise QueryError(f"{word!r}: a rank is a whole number")
            value_preds.append(lambda vs, r=int(arg): vs.rank == r)
        elif key == "dim":
            value_preds.append(lambda vs, d=arg: vs.dims is not None and any(_dim_is(x, d) for x in vs.dims))
        elif key == "shape":
            value_preds.append(_shape_pred(word, arg))
    name = _pattern(" ".join(names), regex=regex, case=case) if names else None
    return Query(node_preds, value_preds, name)


def _alias(dtype: str) -> str:
    return {"float": "float32", "double": "float64", "half": "float16"}.get(dtype, dtype)


def _dim_is(d: object, want: str) -> bool:
    if d is None:
        return False
    if isinstance(d, int):
        return want.isdigit() and d == int(want)
    return want in free_symbols(d) or to_text(d) == want  # type: ignore[arg-type]


def _shape_pred(word: str, arg: str) -> Callable[[ValueShape], bool]:
    if not (arg.startswith("[") and arg.endswith("]")):
        raise QueryError(f"{word!r}: a shape pattern is written [*,3,*,*]")
    parts = [p.strip() for p in arg[1:-1].split(",")] if arg[1:-1].strip() else []

    def pred(vs: ValueShape) -> bool:
        if vs.dims is None or len(vs.dims) != len(parts):
            return False
        return all(p == "*" or (d is not None and (str(d) if isinstance(d, int) else to_text(d)) == p)
                   for p, d in zip(parts, vs.dims))
    return pred


def _attr_pred(arg: str) -> Callable[[onnx.NodeProto], bool]:
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\s*(!=|>=|<=|=|>|<)?\s*(.*)", arg)
    if m is None:
        raise QueryError(f"attr:{arg!r}: write attr:NAME, or attr:NAME=VALUE (also != > >= < <=)")
    name, op, want = m.group(1), m.group(2), m.group(3)
    if op and not want:
        raise QueryError(f"attr:{arg!r}: a value is missing after {op}")

    def pred(node: onnx.NodeProto) -> bool:
        attr = next((a for a in node.attribute if a.name == name), None)
        if attr is None:
            return False
        if not op:
            return True
        return _compare(attr, op, want)
    return pred


def _compare(attr: onnx.AttributeProto, op: str, want: str) -> bool:
    texts = attribute_texts(attr)
    value = onnx.helper.get_attribute_value(attr)
    number = _number(want)
    if op in ("=", "!="):
        whole = texts[-1].replace(" ", "")
        equal = whole == want.replace(" ", "") or (len(texts) == 1 and (
            texts[0] == want or (number is not None and _number(texts[0]) == number)))
        return equal if op == "=" else not equal
    if number is None:
        return False
    scalars = value if isinstance(value, list) else [value]
    nums = [v for v in scalars if isinstance(v, (int, float))]
    return bool(nums) and all(COMPARE[op](v, number) for v in nums)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# ----------------------------------------------------------------------------- search


def _tables(doc) -> dict[int, ShapeTable]:
    """The shape table of every graph scope of the document (functions: none)."""
    main = infer_model(doc.model)
    tables = {doc.index.main: main}
    pending = [doc.index.main]
    while pending:
        sid = pending.pop()
        scope = doc.scope(sid)
        for k, nid in enumerate(scope.node_ids):
            for child in doc.index.children.get(nid, ()):
                body = tables[sid].bodies.get((k, doc.scope(child).attr))
                if body is not None:
                    tables[child] = body
                    pending.append(child)
    return tables


def _value_shape(doc, tables: dict[int, ShapeTable], sid: int, name: str) -> ValueShape:
    table = tables.get(sid)
    vs = table.get(name) if table is not None else ValueShape()
    if vs.dims is None:
        vi = doc.value_info(sid, name)
        if vi is not None and vi.HasField("type"):
            declared = shape_of_type(vi.type)
            vs = ValueShape(vs.elem_type or declared.elem_type, declared.dims)
    return vs


def search(doc, text: str, *, regex: bool = False, case: bool = False, limit: int = 5000) -> list[Hit]:
    """Every match of ``text`` in every graph of ``doc`` (see the module docstring)."""
    query = parse(text, regex=regex, case=case)
    if query is None:
        return []
    hits = list(_structured(doc, query) if query.structured else _plain(doc, query.name))
    return hits[:limit]


def _plain(doc, pattern: re.Pattern) -> Iterator[Hit]:
    seen: set[tuple[int, str]] = set()

    def value(sid: int, path: str, name: str, where: str) -> Iterator[Hit]:
        if name and (sid, name) not in seen and pattern.search(name):
            seen.add((sid, name))
            kind = "initializer" if doc.initializer(sid, name) is not None else "value"
            yield Hit(kind, "tensor", name, sid, None, name, None, path, where)

    for scope in list(doc.index.scopes.values()):
        path = doc.index.path(scope.id)
        for name in scope.input_names():
            yield from value(scope.id, path, name, f"{path} input")
        for nid in scope.node_ids:
            node = doc.node(nid)
            label = node.name or f"({node.op_type})"
            hit = None
            if node.name and pattern.search(node.name):
                hit = ("name", node.name, f"{path} · {node.op_type}")
            elif pattern.search(node.op_type):
                hit = ("op", node.op_type, f"{path} · {label}")
            else:
                for attr in node.attribute:
                    t = next((t for t in attribute_texts(attr) if pattern.search(t)), None)
                    if t is not None:
                        hit = ("attribute", f"{attr.name}={t}", f"{path} · {label}")
                        break
            if hit is not None:
                yield Hit("node", hit[0], hit[1], scope.id, nid, node.name, node.op_type, path, hit[2])
            for name in list(node.input) + list(node.output):
                yield from value(scope.id, path, name, f"{path} · {label}")
        for name in scope.initializer_names():
            yield from value(scope.id, path, name, f"{path} initializer")
        for name in scope.output_names():
            yield from value(scope.id, path, name, f"{path} output")


def _structured(doc, q: Query) -> Iterator[Hit]:
    tables = _tables(doc) if q.value_preds else {}

    def value_ok(sid: int, name: str) -> bool:
        vs = _value_shape(doc, tables, sid, name)
        return all(p(vs) for p in q.value_preds)

    for scope in list(doc.index.scopes.values()):
        path = doc.index.path(scope.id)
        if q.node_preds or not q.value_preds:
            for nid in scope.node_ids:
                node = doc.node(nid)
                if not all(p(node) for p in q.node_preds):
                    continue
                if q.name is not None and not q.name.search(node.name):
                    continue
                if q.value_preds and not any(value_ok(scope.id, o) for o in node.output if o):
                    continue
                yield Hit("node", "query", node.name or node.op_type, scope.id, nid, node.name, node.op_type, path,
                          f"{path} · {node.op_type}")
            continue
        seen: set[str] = set()
        names = list(scope.input_names()) + [o for nid in scope.node_ids for o in doc.node(nid).output] + list(
            scope.initializer_names())
        for name in names:
            if not name or name in seen:
                continue
            seen.add(name)
            if q.name is not None and not q.name.search(name):
                continue
            if value_ok(scope.id, name):
                kind = "initializer" if doc.initializer(scope.id, name) is not None else "value"
                producer = doc.producer(scope.id, name)
                op = doc.node(producer).op_type if producer is not None else None
                yield Hit(kind, "query", name, scope.id, None, name, op, path, f"{path} · {kind}")
