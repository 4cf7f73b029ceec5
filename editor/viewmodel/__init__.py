"""The display model: a small, immutable picture of one graph scope, ready for layout.

``build_display_graph`` turns a ``GraphProto`` (plus the document's stable node ids) into
boxes and edges. It never mutates the graph and holds no protobuf objects in its result, so
the layout can run on any thread and the canvas never sees protobuf.

What it decides (Netron-like):

* graph inputs that are not initializers and graph outputs become ``input``/``output``
  boxes; initializers and ``Constant`` outputs that feed a node are listed on the consumer
  box (``Box.weights``) instead of being drawn as far-away boxes;
* nodes are grouped by their name scopes (``/model/layers.3/attn/MatMul`` lies in
  ``/model``, ``/model/layers.3``, ``/model/layers.3/attn``); ``expanded`` says which groups
  are open, a closed group is one box whose ports are the distinct values crossing its
  boundary (parallel boundary edges are merged);
* sizes come from the text a box shows (see :data:`CHAR_W` and friends), so the canvas and
  the layout agree on how big a box is.

The grouping itself lives in :mod:`editor.viewmodel.groups`; colour categories in
:mod:`editor.viewmodel.categories`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from operator import attrgetter

import onnx
from onnx import numpy_helper


from editor.viewmodel.categories import CATEGORIES, category_of
from editor.viewmodel.folding import DEAD, body_reads, chain_texts, fold_weight_chains
from editor.viewmodel.plumbing import fold_plumbing
from editor.viewmodel.groups import GroupTree, build_group_tree, repeat_signature, scoped_name, scopes_of
from editor.viewmodel.nodetable import NodeTable, node_table
from editor.attr_names import enum_name
from editor.collector import without_collection
from editor.schema import get_schema
from editor.types import dims_text, dtype_name, shape_dims

__all__ = [
    "Box", "Edge", "DisplayGraph", "build_display_graph", "category_of", "CATEGORIES",
    "GroupTree", "build_group_tree", "repeat_signature", "scoped_name", "scopes_of", "shape_text", "function_graph", "default_expanded", "group_tree",
    "body_key", "document_bodies", "CHAR_W", "SMALL_CHAR_W", "LINE_H", "TITLE_H", "PAD_X", "MIN_W", "MAX_W",
]

# NOTE: geometry of the text inside a box. The canvas draws the title at ~12 px and detail
# lines at ~10 px; these widths are generous averages so text fits without measuring fonts
# in the Qt-free core (the canvas may elide text that still does not fit).
CHAR_W = 7.5         # title character width
SMALL_CHAR_W = 6.0   # detail / weight line character width
LINE_H = 13.0        # height of one detail line
TITLE_H = 26.0       # height of a box with only a title
PAD_X = 16.0         # horizontal padding, both sides together
MIN_W = 56.0
MAX_W = 300.0
MAX_LINES = 6        # detail + weight lines shown in a box at most
MAX_VALUE_CHARS = 28
MAX_FIRST_VIEW = 400   # boxes a first (collapsed) view may show at most
#: A weight or constant of at most this many elements is shown by its value on its consumer
#: (``B  1.414``, named by the schema's input name), a bigger one by shape and dtype.
MAX_VALUE_ELEMS = 4


@dataclass(frozen=True, slots=True)
class Box:
    key: str
    kind: str
    label: str
    name: str
    category: str
    width: float
    height: float
    n_in: int
    n_out: int
    node_id: int | None = None
    details: tuple[tuple[str, str], ...] = ()
    weights: tuple[tuple[str, str], ...] = ()
    child_count: int = 0
    subgraphs: tuple[str, ...] = ()
    #: Input / output indices that carry an edge, when some do not (weights, unused
    #: outputs): ports are spread over these only, so a Conv's one data input sits in the
    #: middle of its top edge. Empty: every port is used.
    in_ports: tuple[int, ...] = ()
    out_ports: tuple[int, ...] = ()
    #: Where the used ports sit along the top / bottom edge, as fractions of the width, when
    #: they are not evenly spread (a frame of the compound layout has each port right above
    #: or below the pin it joins inside). Empty: evenly spread.
    in_x: tuple[float, ...] = ()
    out_x: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Edge:
    key: str
    src: str
    src_port: int
    dst: str
    dst_port: int
    value: str
    label: str = ""
    #: ``""`` a value flowing from ``src`` into ``dst``; ``"body"``: ``dst`` is a closed
    #: If/Loop/Scan whose bodies read the value from this graph, or an open one that an
    #: output of its body ``src`` returns to (drawn dashed, and its label says which bodies),
    #: so a value used only inside a body is not left unconnected and an open If's outputs
    #: come out below the branches that make them.
    kind: str = ""


@dataclass(frozen=True)
class DisplayGraph:
    boxes: tuple[Box, ...]
    edges: tuple[Edge, ...]
    scope: str = ""
    #: Additive: group path -> repeat class id for collapsed groups that are structurally
    #: identical to at least one other visible group (see ``repeat_signature``).
    repeats: Mapping[str, int] = field(default_factory=dict)
    #: Additive: for boxes inside open groups, box key -> innermost open group path (the
    #: canvas uses it to outline an open group and to offer "collapse"). Boxes at the top
    #: level are absent.
    box_groups: Mapping[str, str] = field(default_factory=dict)
    #: Additive: open group path -> the open group it lies in ("" at the top level), for
    #: every open group holding a visible box.
    group_parents: Mapping[str, str] = field(default_factory=dict)
    #: Additive: display label of each open group (its last scope segment).
    group_labels: Mapping[str, str] = field(default_factory=dict)
    #: Additive: consumer box key -> ids of the weight-preparation nodes folded into it
    #: (drawn as weight rows of that box; see ``build_display_graph``'s ``unfold``); key
    #: ``""`` holds constant-only nodes whose results nobody reads (not drawn at all).
    folded: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def boxes_in(self, path: str) -> list[str]:
        """Keys of the boxes inside open group ``path``, at any depth.

        Membership is the display model's own (``box_groups``): a call of a reused scope
        (``/mol_layer#2``), a scope-less node adopted by the scope around it and a structural
        block hold what this model drew in them, which a node's raw name does not say."""
        parents = self.group_parents
        inside: dict[str, bool] = {path: True, "": False}

        def lies_in(g: str) -> bool:
            seen = []
            while g not in inside:
                seen.append(g)
                g = parents.get(g, "")
            for s in seen:
                inside[s] = inside[g]
            return inside[g]

        return [b.key for b in self.boxes if lies_in(self.box_groups.get(b.key, ""))]


# --------------------------------------------------------------------------- text helpers

def shape_text(vi: onnx.ValueInfoProto | None) -> str:
    """``"1x64x56x56"`` for a tensor value's shape, ``""`` when unknown or not a tensor."""
    if vi is None or not vi.type.HasField("tensor_type"):
        return ""
    dims = shape_dims(vi.type)
    if dims is None:
        return ""
    return dims_text(dims, "x") if dims else "scalar"


def _tensor_text(dims: Sequence[int], elem_type: int) -> str:
    shape = "x".join(str(d) for d in dims) if len(dims) else "scalar"
    return f"{shape} {dtype_name(elem_type)}"


def _attr_text(attr: onnx.AttributeProto) -> str | None:
    t = attr.type
    A = onnx.AttributeProto
    if t == A.INT:
        s = str(attr.i)
    elif t == A.FLOAT:
        s = f"{attr.f:.6g}"
    elif t == A.STRING:
        s = attr.s.decode("utf-8", "replace")
    elif t == A.INTS:
        sep = "x" if "shape" in attr.name or "kernel" in attr.name else ","
        s = sep.join(str(v) for v in attr.ints)
    elif t == A.FLOATS:
        s = ",".join(f"{v:.4g}" for v in attr.floats)
    elif t == A.STRINGS:
        s = ",".join(v.decode("utf-8", "replace") for v in attr.strings)
    elif t == A.TENSOR:
        s = _tensor_text(attr.t.dims, attr.t.data_type)
    else:
        return None  # graphs are listed in Box.subgraphs; sparse tensors/type protos skipped
    if len(s) > MAX_VALUE_CHARS:
        s = s[: MAX_VALUE_CHARS - 1] + "…"
    return s


def _value_text(t: onnx.TensorProto) -> str | None:
    """``"1.414"``, ``"[0, 1]"``: the value of a tensor of at most :data:`MAX_VALUE_ELEMS`
    elements stored in the file; None for bigger tensors and data kept outside the file."""
    if _numel(t.dims) > MAX_VALUE_ELEMS or t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    try:
        a = numpy_helper.to_array(t)
    except Exception:  # a damaged or exotic tensor keeps its shape text
        return None
    return _format_values(a.reshape(-1).tolist(), a.ndim == 0)


def _numel(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _format_values(values: Sequence[object], scalar: bool) -> str | None:
    if len(values) > MAX_VALUE_ELEMS:
        return None
    items = []
    for v in values:
        if isinstance(v, bool):
            items.append("true" if v else "false")
        elif isinstance(v, float):
            items.append(f"{v:.4g}")
        elif isinstance(v, bytes):
            items.append(repr(v.decode("utf-8", "replace")))
        else:
            items.append(str(v))
    text = items[0] if scalar and items else "[" + ", ".join(items) + "]"
    return text if len(text) <= MAX_VALUE_CHARS else None


def _constant_value_text(node: onnx.NodeProto) -> str | None:
    """The value of a small ``Constant`` (see :func:`_value_text`), None for a big one."""
    for a in node.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            return _value_text(a.t)
        if a.name == "value_float":
            return _format_values([a.f], True)
        if a.name == "value_int":
            return _format_values([a.i], True)
        if a.name == "value_floats":
            return _format_values(list(a.floats), False)
        if a.name == "value_ints":
            return _format_values(list(a.ints), False)
        if a.name == "value_string":
            return _format_values([a.s], True)
        if a.name == "value_strings":
            return _format_values(list(a.strings), False)
    return None


@lru_cache(maxsize=8192)
def _formal_input(op_type: str, domain: str, opset: int | None, index: int) -> str | None:
    """The schema's name of input ``index`` (``"B"`` of Mul's second input), None when unknown."""
    schema = get_schema(op_type, domain, opset)
    if schema is None or not schema.inputs:
        return None
    ins = schema.inputs
    if index < len(ins):
        return ins[index].name
    last = ins[-1]
    return last.name if last.option == onnx.defs.OpSchema.FormalParameterOption.Variadic else None


def _constant_text(node: onnx.NodeProto) -> str:
    for a in node.attribute:
        if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
            return _tensor_text(a.t.dims, a.t.data_type)
        if a.name == "value_float":
            return "scalar float32"
        if a.name == "value_int":
            return "scalar int64"
        if a.name == "value_floats":
            return f"{len(a.floats)} float32"
        if a.name == "value_ints":
            return f"{len(a.ints)} int64"
        if a.name == "value_string":
            return "scalar string"
        if a.name == "value_strings":
            return f"{len(a.strings)} string"
        if a.name == "sparse_value":
            return _tensor_text(a.sparse_tensor.dims, a.sparse_tensor.values.data_type) + " sparse"
    return "constant"


def _box_size(title: str, lines: Sequence[tuple[str, str]]) -> tuple[float, float]:
    w = len(title) * CHAR_W
    for k, v in lines[:MAX_LINES]:
        w = max(w, (len(k) + len(v) + 2) * SMALL_CHAR_W)
    w = min(MAX_W, max(MIN_W, w + PAD_X))
    h = TITLE_H + LINE_H * min(len(lines), MAX_LINES) + (4.0 if lines else 0.0)
    return float(round(w)), float(h)


# --------------------------------------------------------------------------- builder

@without_collection
def build_display_graph(
    graph: onnx.GraphProto,
    node_ids: Sequence[int],
    *,
    opsets: Mapping[str, int],
    value_info: Mapping[str, onnx.ValueInfoProto] | None = None,
    expanded: Collection[str] | None = None,
    groups: GroupTree | None = None,
    bodies: Callable[[int], Sequence[tuple[str, onnx.GraphProto, Sequence[int]]]] | None = None,
    unfold: Collection[int] = (),
    show_plumbing: bool = False,
    _captured: list[tuple[str, str, int]] | None = None,
    _outer_weights: Mapping[str, str] | None = None,
    _outer_values: Mapping[str, str] | None = None,
) -> DisplayGraph:
    """The display model of ``graph``; ``node_ids[i]`` is the stable id of ``graph.node[i]``.

    ``groups`` (additive) is the graph's :func:`group_tree`, when the caller already has it
    (e.g. from :func:`default_expanded`): it saves rebuilding it for every view.

    ``expanded`` is the set of open group paths; ``None`` draws every node (flat view).

    ``bodies`` (additive) gives the subgraph bodies of a control-flow node:
    ``bodies(node_id) -> [(label, body GraphProto, body node ids), ...]``. When ``expanded``
    holds :func:`body_key` of a node (``"@<node_id>"``), the node's box lies in an open frame
    with that path, next to one sub-frame per body (``"@<node_id>/<label>"``) holding the
    body's boxes (see ``_DisplayBuild.expand_bodies``). ``_captured`` and ``_outer_weights`` are
    internal: a body build lists in ``_captured`` the outer values its boxes consume, for the
    enclosing build to wire, and shows the enclosing graphs' initializers and weight
    Constants it reads (``_outer_weights``; ``_outer_values`` the values of the small ones)
    as weights of its boxes, like its own.

    A weight of at most :data:`MAX_VALUE_ELEMS` elements is shown by its value, named by the
    consumer's schema input (``("B", "1.414")`` on a Mul), so a GELU's constants read at a
    glance; a bigger one by its name, shape and dtype (``("W", "768x768 float32")``).

    Weight-preparation chains (constant-only nodes whose results all end in one consumer:
    ``DequantizeLinear`` of an int8 initializer, ``Transpose``/``Reshape``/``Cast`` of a
    weight, ``ConstantOfShape``) are folded into that consumer: not drawn as boxes, listed as
    a weight row of the consumer (``W: 768x768 int8 → DequantizeLinear``), and named in
    ``DisplayGraph.folded``. ``unfold`` holds node ids of consumers whose chains are drawn
    as boxes after all (the "show weight preparation" of the canvas). Constant-only nodes
    whose results nobody reads are not drawn, like unused initializers.

    Shape plumbing (``Shape → Gather → Unsqueeze → Concat`` chains that compute a Reshape's
    target, and small constant-only results shared by many readers) is drawn the same way:
    a row of every reader (``shape  Shape → Gather → … → Concat``; see
    :mod:`editor.viewmodel.plumbing`), listed in ``DisplayGraph.folded`` and drawn as boxes
    for readers in ``unfold``. ``show_plumbing`` draws all of it as boxes.
    """
    nodes = graph.node
    if len(node_ids) != len(nodes):
        raise ValueError(f"node_ids has {len(node_ids)} ids for {len(nodes)} nodes")
    # the tree's node table is this graph's when the tree is (a view change rebuilds with the
    # same tree: reading 3k NodeProtos again cost as much as onnx.load of the file)
    table = groups.table if groups is not None and expanded is not None else None
    if table is None or table.nodes is not nodes or len(table) != len(nodes):
        # (a grouped view without a tree builds one: the scoped names are read in the same pass)
        table = node_table(nodes, scoped_name if expanded is not None and groups is None else None)
    b = _DisplayBuild(graph, node_ids, opsets, value_info, _captured, _outer_weights, _outer_values, table)
    b.index_values()
    b.open_set = set(expanded) if bodies is not None and expanded is not None else set()
    b.group_and_fold(expanded, groups, unfold, show_plumbing)
    b.assign_boxes(expanded)
    b.input_boxes()
    b.node_boxes_and_edges()
    b.order_group_inputs()
    out_edges = b.output_sources()
    b.emit_boxes(out_edges)
    repeats = b.repeats()
    if repeats:
        b.widen_for_badges(repeats)
    b.place_in_groups(expanded)
    if bodies is not None and expanded is not None:
        b.expand_bodies(bodies, set(expanded))
    boxes = _with_used_ports(b.boxes, b.edges.values())
    return DisplayGraph(boxes=tuple(boxes), edges=tuple(b.edges.values()), scope=graph.name, repeats=repeats,
                        box_groups=b.box_groups, group_parents=b.group_parents, group_labels=b.group_labels,
                        folded=b.folded)


class _DisplayBuild:
    """The state of one :func:`build_display_graph` call, built up phase by phase (in order)."""

    def __init__(self, graph: onnx.GraphProto, node_ids: Sequence[int], opsets: Mapping[str, int],
                 value_info: Mapping[str, onnx.ValueInfoProto] | None,
                 captured: list[tuple[str, str, int]] | None, outer_weights: Mapping[str, str] | None,
                 outer_values: Mapping[str, str] | None = None, table: NodeTable | None = None) -> None:
        self.graph = graph
        self.nodes = graph.node
        self.node_ids = node_ids
        self.opsets = opsets
        self.value_info = value_info
        self.captured = captured
        self.outer_weights = outer_weights
        self.values: dict[str, str] = dict(outer_values or {})   # small weight -> its value text
        self.chain_results: set[str] = set()   # results of folded weight-preparation chains
        self.open_set: set[str] = set()         # open groups and bodies
        self.table = table if table is not None else node_table(graph.node)
        self.has_body = self.table.body
        self.boxes: list[Box] = []
        self.edges: dict[str, Edge] = {}
        self.labels: dict[str, str] = {}     # value -> edge label (its shape text), computed once
        self.type_texts: dict[bytes, str] = {}   # serialized TypeProto -> its shape text
        self.node_boxes: dict[int, Box] = {}
        self.box_groups: dict[str, str] = {}
        self.group_parents: dict[str, str] = {}
        self.group_labels: dict[str, str] = {}
        self.folded: dict[str, tuple[int, ...]] = {}

    def index_values(self) -> None:
        """Weights (initializers, weight Constants), graph inputs/outputs, value infos and producers."""
        graph, nodes = self.graph, self.nodes
        initializers: dict[str, str] = {}
        values = self.values
        texts: dict[tuple[tuple[int, ...], int], tuple[str, int]] = {}   # (dims, dtype) -> (text, elements)
        for t in graph.initializer:
            name = t.name
            dims = tuple(t.dims)
            key = (dims, t.data_type)
            known = texts.get(key)
            if known is None:
                known = texts[key] = (_tensor_text(dims, key[1]), _numel(dims))
            initializers[name] = known[0]
            # (only a small tensor has a value text: the big ones skip reading the rest)
            v = _value_text(t) if known[1] <= MAX_VALUE_ELEMS else None
            if v is not None:
                values[name] = v
            else:
                values.pop(name, None)  # a local weight hides an outer one of the same name
        for st in graph.sparse_initializer:
            initializers[st.values.name] = _tensor_text(st.dims, st.values.data_type) + " sparse"
        self.initializers = initializers
        self.graph_inputs = [vi.name for vi in graph.input if vi.name not in initializers]
        self.graph_input_set = set(self.graph_inputs)
        self.output_names = [vi.name for vi in graph.output]
        self.output_set = output_set = set(self.output_names)

        self.vis = _Declared(graph, self.value_info)

        # Producers of every value, and Constant nodes that are drawn as weights instead.
        producer: dict[str, tuple[int, int]] = {}
        weight_const: dict[str, str] = {}
        hidden = bytearray(len(nodes))  # 1 = node not drawn (a Constant used only as a weight)
        t = self.table
        ops = t.op
        for i, outs in enumerate(t.outputs):
            if ops[i] == "Constant" and _weight_constant(t, i, output_set):   # (the cheap test first)
                weight_const[outs[0]] = _constant_text(nodes[i])
                v = _constant_value_text(nodes[i])
                if v is not None:
                    values[outs[0]] = v
                hidden[i] = 1
                continue
            for k, o in enumerate(outs):
                if o:
                    producer[o] = (i, k)
        self.producer, self.weight_const, self.hidden = producer, weight_const, hidden

    def group_and_fold(self, expanded: Collection[str] | None, groups: GroupTree | None,
                       unfold: Collection[int], show_plumbing: bool = False) -> None:
        """The group tree, and the drawn nodes once weight-preparation chains fold into their consumer."""
        nodes, node_ids, hidden, n = self.nodes, self.node_ids, self.hidden, len(self.nodes)
        self.unfold, self.show_plumbing = unfold, show_plumbing   # open bodies are drawn the same way
        drawn = [i for i in range(n) if not hidden[i]]
        # the flat view needs no groups: skip building the tree (it is the big-graph case)
        if expanded is None:
            self.tree = GroupTree()
        elif groups is not None:
            self.tree = groups
        else:
            names = self.table.names   # (read with the table: see build_display_graph)
            self.tree = build_group_tree([names[i] for i in drawn], drawn, self.table)
        # Weight-preparation chains fold into their consumer (after the tree: a folded node still
        # belongs to its name scope, it is only not drawn as a box of its own).
        known = set(self.initializers)
        known.update(self.weight_const)
        if self.outer_weights:
            known.update(self.outer_weights)
        unfold_ids = set(unfold) if unfold else set()
        fold_to = fold_weight_chains(self.table, hidden, known, self.output_set,
                                     {i for i in range(n) if node_ids[i] in unfold_ids} if unfold_ids else set())
        if fold_to:
            outer = {**self.initializers, **self.weight_const, **(self.outer_weights or {})}
            texts, kept = chain_texts(nodes, fold_to, outer, self.values)
            self.weight_const.update(texts)
            self.values.update(kept)
            self.chain_results = set(texts)
            fold_members: dict[int, list[int]] = {}
            for i, t in fold_to.items():
                hidden[i] = 1
                for o in self.table.outputs[i]:
                    self.producer.pop(o, None)
                fold_members.setdefault(t, []).append(node_ids[i])
            drawn = [i for i in drawn if not hidden[i]]
            self.folded = {(f"n:{node_ids[t]}" if t != DEAD else ""): tuple(sorted(ids))
                           for t, ids in fold_members.items()}
        if not show_plumbing:
            drawn = self._fold_plumbing(drawn, unfold_ids)
        self.drawn = drawn

    def _fold_plumbing(self, drawn: list[int], unfold_ids: set[int]) -> list[int]:
        """Shape plumbing and shared small constants become rows of their readers (:mod:`.plumbing`)."""
        nodes, node_ids, hidden = self.nodes, self.node_ids, self.hidden
        known = set(self.initializers)
        known.update(self.weight_const)
        if self.outer_weights:
            known.update(self.outer_weights)
        pl = fold_plumbing(self.table, hidden, known, self.output_set,
                           {i for i in drawn if node_ids[i] in unfold_ids} if unfold_ids else set(), _Numel(self.vis))
        if not pl.hidden:
            return drawn
        outputs = self.table.outputs
        for i in pl.hidden:
            hidden[i] = 1
            for o in outputs[i]:
                self.producer.pop(o, None)
        self.weight_const.update(pl.texts)
        self.chain_results.update(pl.texts)
        for r, ids in pl.feeds.items():
            key = f"n:{node_ids[r]}"
            self.folded[key] = tuple(sorted(set(self.folded.get(key, ())) | {node_ids[i] for i in ids}))
        return [i for i in drawn if not hidden[i]]

    def assign_boxes(self, expanded: Collection[str] | None) -> None:
        """``rep[i]``: key of the box node i is drawn in (itself, or its outermost closed group)."""
        node_ids = self.node_ids
        rep: dict[int, str] = {}
        closed_groups: dict[str, int] = {}
        if expanded is None:
            for i in self.drawn:
                rep[i] = f"n:{node_ids[i]}"
        else:
            open_set = set(expanded)
            tree = self.tree
            # the box of a node depends only on its innermost group: resolve once per group
            closed_of: dict[str, str | None] = {}
            group_key: dict[str, str] = {}
            ng = tree.node_group
            for i in self.drawn:
                g = ng.get(i, "")
                c = closed_of.get(g, "?")
                if c == "?":
                    c = None
                    for path in tree.chain(i):
                        if path not in open_set:
                            c = path
                            break
                    closed_of[g] = c
                if c is None:
                    rep[i] = f"n:{node_ids[i]}"
                else:
                    gk = group_key.get(c)
                    if gk is None:
                        gk = group_key[c] = "g:" + c  # one string object per group
                    rep[i] = gk
                    closed_groups[c] = closed_groups.get(c, 0) + 1
        self.rep, self.closed_groups = rep, closed_groups
        # Group boundary ports: values entering / leaving each closed group, in first-use order.
        self.group_in_ports: dict[str, dict[str, int]] = {g: {} for g in closed_groups}
        self.group_out_ports: dict[str, dict[str, int]] = {g: {} for g in closed_groups}

    def input_boxes(self) -> None:
        """One ``input`` box per graph input that is not an initializer."""
        for name in self.graph_inputs:
            label = name
            w, h = _box_size(label, [])
            self.boxes.append(Box(key=f"in:{name}", kind="input", label=label, name=name, category="input",
                                  width=w, height=h, n_in=0, n_out=1,
                                  details=((("shape", sh),) if (sh := self.shape_label(name)) else ())))

    def add_edge(self, src: str, sp: int, dst: str, dp: int, value: str, kind: str = "", note: str = "",
                 label: str | None = None) -> None:
        """The edge ``src:sp -> dst:dp`` carrying ``value`` (once per key); ``note`` follows
        the shape in its label (``label``: the whole label, an edge of a body's build)."""
        key = f"{src}:{sp}->{dst}:{dp}"
        edges = self.edges
        if key not in edges:
            lab = label if label is not None else self.labels.get(value)
            if lab is None:
                lab = self.labels[value] = self.shape_label(value)
            if note:
                lab = f"{lab} · {note}" if lab else note
            edges[key] = Edge(key, src, sp, dst, dp, value, lab, kind)

    def order_group_inputs(self) -> None:
        """A closed group's inputs that come from one box sit in that box's output order.

        Its inputs are numbered in first-use order inside the group, which need not be the
        order of their source's outputs: a DynamicQuantizeLinear's scale and zero point went
        into a group's inputs 2 and 1 and crossed on the way (a group's input order means
        nothing; an op's does, and is kept)."""
        into: dict[str, dict[str, list[int]]] = {}   # group key -> source box -> its input ports
        for e in self.edges.values():
            if e.dst[0] == "g" and not e.kind:
                into.setdefault(e.dst, {}).setdefault(e.src, []).append(e.dst_port)
        remap: dict[str, dict[int, int]] = {}
        for g, by_src in into.items():
            for src, ports in by_src.items():
                if len(ports) < 2:
                    continue
                by_out = {e.dst_port: e.src_port for e in self.edges.values() if e.dst == g and e.src == src}
                for old, new in zip(sorted(ports, key=lambda p: (by_out[p], p)), sorted(ports)):
                    if old != new:
                        remap.setdefault(g, {})[old] = new
        if not remap:
            return
        for g, moves in remap.items():
            ports = self.group_in_ports[g[2:]]
            for value, p in ports.items():
                ports[value] = moves.get(p, p)
        edges: dict[str, Edge] = {}
        for key, e in self.edges.items():
            moves = remap.get(e.dst)
            if moves is not None and e.dst_port in moves:
                dp = moves[e.dst_port]
                key = f"{e.src}:{e.src_port}->{e.dst}:{dp}"
                e = Edge(key, e.src, e.src_port, e.dst, dp, e.value, e.label, e.kind)
            edges[key] = e
        self.edges = edges

    def shape_label(self, value: str) -> str:
        """:func:`shape_text` of ``value``'s value info, once per distinct type.

        # NOTE: reading the dims out of every value's TypeProto was a fifth of the flat view
        # of an 11.8k-node export; its 13.6k values have 25 distinct types, and serializing a
        # type to look it up costs a seventh of reading its dims."""
        vi = self.vis.get(value)
        if vi is None:
            return ""
        key = vi.type.SerializeToString()
        text = self.type_texts.get(key)
        if text is None:
            text = self.type_texts[key] = shape_text(vi)
        return text

    def src_of(self, value: str, consumer: str = "") -> tuple[str, int] | None:
        """(box key, output port) that ``value`` leaves from; port -1 inside one closed group."""
        p = self.producer.get(value)
        if p is not None:
            pi, k = p
            r = self.rep[pi]
            if r == consumer:
                return r, -1  # inside one closed group: no boundary port
            if r[0] == "g":
                ports = self.group_out_ports[r[2:]]
                k = ports.setdefault(value, len(ports))
            return r, k
        if value in self.graph_input_set:
            return f"in:{value}", 0
        return None

    def node_boxes_and_edges(self) -> None:
        """The box of every drawn node outside closed groups, and the edges into every box."""
        nodes, rep, initializers, weight_const = self.nodes, self.rep, self.initializers, self.weight_const
        outer_weights, captured, group_in_ports = self.outer_weights, self.captured, self.group_in_ports
        src_of, add_edge = self.src_of, self.add_edge
        producer_get = self.producer.get
        graph_input_set = self.graph_input_set
        opsets = self.opsets
        default_domain_opset = opsets.get("", opsets.get("ai.onnx"))
        inputs = self.table.inputs
        for i in self.drawn:
            r = rep[i]
            body_in = self._body_inputs(i) if self.has_body[i] else ()
            if r[0] == "g":
                # Fast path for nodes inside a closed group: most inputs come from the same
                # group and produce nothing; only boundary crossings become (merged) edges.
                for value in (*inputs[i], *body_in) if body_in else inputs[i]:
                    p = producer_get(value)
                    if p is not None:
                        if rep[p[0]] is r:
                            continue
                        s = src_of(value, r)
                    elif not value:
                        continue
                    else:   # a weight, a graph input or a value of an enclosing graph
                        s = (f"in:{value}", 0) if value in graph_input_set else None
                    if s is None:
                        if (captured is not None and value not in initializers and value not in weight_const
                                and not (outer_weights and value in outer_weights)):
                            ports = group_in_ports[r[2:]]
                            captured.append((value, r, ports.setdefault(value, len(ports))))
                        continue
                    if s[0] == r:
                        continue
                    ports = group_in_ports[r[2:]]
                    add_edge(s[0], s[1], r, ports.setdefault(value, len(ports)), value)
                continue
            node = nodes[i]
            weights: list[tuple[str, str]] = []
            for j, value in enumerate(inputs[i]):
                if not value:
                    continue
                s = src_of(value, r)
                if s is None:
                    w = initializers.get(value) or weight_const.get(value)
                    if w is None and outer_weights:
                        w = outer_weights.get(value)
                    if w is None:
                        # Not produced here: a value of an enclosing graph (subgraph bodies) or
                        # a dangling name (validation reports it); neither is a weight. A body
                        # drawn inside its owner's frame reports it for the outer build to wire.
                        if captured is not None:
                            captured.append((value, r, j))
                        continue
                    if r[0] == "n":
                        v = self.values.get(value)
                        if v is not None:
                            weights.append((self._formal(node, j) or value, v))
                        elif value in self.chain_results:
                            # a folded chain's result has a made-up name: the input's role says more
                            weights.append((self._formal(node, j) or value, w))
                        else:
                            weights.append((value, w))
                    continue
                if s[0] == r:
                    continue  # edge inside a closed group
                if r[0] == "g":
                    ports = group_in_ports[r[2:]]
                    dp = ports.setdefault(value, len(ports))
                else:
                    dp = j
                add_edge(s[0], s[1], r, dp, value)
            if r[0] != "n":
                continue
            if body_in:
                note = "in " + "/".join(a.name.removesuffix("_branch") for a in node.attribute
                                        if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS))
            for k, value in enumerate(body_in):
                s = src_of(value, r)
                if s is not None and s[0] != r:
                    add_edge(s[0], s[1], r, len(node.input) + k, value, "body", note)
                elif s is None and captured is not None:
                    captured.append((value, r, len(node.input) + k))
            details = []
            subgraphs = []
            for a in node.attribute:
                if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                    subgraphs.append(a.name)
                    continue
                t = enum_name(node.op_type, node.domain, a) or _attr_text(a)
                if t is not None and len(details) < 4:
                    details.append((a.name, t))
            label = node.op_type
            w, h = _box_size(label, details + weights)
            dom = node.domain
            cat = category_of(node.op_type, dom, opsets.get(dom, default_domain_opset) if dom not in ("", "ai.onnx") else default_domain_opset)
            self.node_boxes[i] = Box(key=r, kind="node", label=label, name=node.name, category=cat, width=w, height=h,
                                     n_in=len(node.input) + len(body_in), n_out=len(node.output), node_id=self.node_ids[i],
                                     details=tuple(details), weights=tuple(weights), subgraphs=tuple(subgraphs))

    def _body_inputs(self, i: int) -> tuple[str, ...]:
        """Values of this graph (or an enclosing one) that the closed bodies of node ``i``
        read, in first-use order; none when its bodies are open (their boxes read them)."""
        node = self.nodes[i]
        if body_key(self.node_ids[i]) in self.open_set:
            return ()
        own = set(node.input)
        out: dict[str, None] = {}
        for a in node.attribute:
            graphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs) \
                if a.type == onnx.AttributeProto.GRAPHS else []
            for g in graphs:
                made = _body_values(g)
                for v in body_reads(g):
                    if v and v not in made and v not in own and v not in out and v not in self.initializers \
                            and v not in self.weight_const and not (self.outer_weights and v in self.outer_weights):
                        out[v] = None
        return tuple(out)

    def _formal(self, node: onnx.NodeProto, j: int) -> str | None:
        """The schema's name of ``node``'s input ``j`` at the model's opset."""
        dom = node.domain if node.domain != "ai.onnx" else ""
        opsets = self.opsets
        return _formal_input(node.op_type, dom, opsets.get(dom, opsets.get("ai.onnx")), j)

    def output_sources(self) -> list[tuple[tuple[str, int], str]]:
        """(source, name) of every graph output drawn here (before group boxes: it adds their out ports)."""
        out_edges = []
        for name in self.output_names:
            s = self.src_of(name)
            if s is not None:
                out_edges.append((s, name))
            elif self.captured is not None and name not in self.initializers:
                self.captured.append((name, f"out:{name}", 0))
        return out_edges

    def emit_boxes(self, out_edges: list[tuple[tuple[str, int], str]]) -> None:
        """Node and group boxes in graph order (a group at its first node), then the outputs and their edges."""
        tree, boxes = self.tree, self.boxes
        emitted_groups: set[str] = set()
        for i in self.drawn:
            r = self.rep[i]
            if r[0] == "n":
                boxes.append(self.node_boxes[i])
            elif r not in emitted_groups:
                emitted_groups.add(r)
                path = r[2:]
                label = tree.label(path)
                count = tree.size[path]
                details = ((("nodes", str(count)),))
                w, h = _box_size(label, details)
                boxes.append(Box(key=r, kind="group", label=label, name=path, category="group", width=w,
                                 height=h, n_in=len(self.group_in_ports[path]), n_out=len(self.group_out_ports[path]),
                                 details=details, child_count=count))
        for s, name in out_edges:
            self.add_edge(s[0], s[1], f"out:{name}", 0, name)
        for name in self.output_names:
            w, h = _box_size(name, [])
            sh = self.shape_label(name)
            boxes.append(Box(key=f"out:{name}", kind="output", label=name, name=name, category="output",
                             width=w, height=h, n_in=1, n_out=0, details=((("shape", sh),) if sh else ())))

    def repeats(self) -> dict[str, int]:
        """Repeat signatures of the closed groups (equal structure, equal signature)."""
        if not self.closed_groups:
            return {}
        return repeat_signature(self.table, self.tree, [g for g in self.closed_groups], self.producer)

    def widen_for_badges(self, repeats: Mapping[str, int]) -> None:
        """Room on a repeated group box for its badge (``"24 identical blocks · 129 nodes"``)."""
        size: dict[int, int] = {}
        for c in repeats.values():
            size[c] = size.get(c, 0) + 1
        for k, b in enumerate(self.boxes):
            c = repeats.get(b.name) if b.kind == "group" else None
            if c is not None:
                w = min(MAX_W, (len(f"{size[c]} identical blocks · {b.child_count} nodes") + 2) * SMALL_CHAR_W + PAD_X)
                if w > b.width:
                    # (positionally, as in _with_used_ports: ``replace`` was most of this loop)
                    v = list(_box_fields(b))
                    v[_WIDTH] = float(round(w))
                    self.boxes[k] = Box(*v)

    def place_in_groups(self, expanded: Collection[str] | None) -> None:
        """The open group each box lies in, every open group's parent, and their labels."""
        box_groups, group_parents, tree = self.box_groups, self.group_parents, self.tree
        if expanded is not None:
            rep = self.rep
            seen: set[str] = set()
            for i in self.drawn:
                r = rep[i]
                # every node of a closed group gives that group's answer: once per box
                if r in seen:
                    continue
                seen.add(r)
                chain = tree.chain(i)
                if r[0] == "g":
                    # a closed group box lies in the open group just outside it
                    k = chain.index(r[2:])
                    chain = chain[:k]
                if chain:
                    box_groups[r] = chain[-1]
                    if chain[-1] not in group_parents:
                        for k, g in enumerate(chain):
                            group_parents[g] = chain[k - 1] if k else ""
        self.group_labels = {g: tree.label(g) for g in group_parents}

    def expand_bodies(self, bodies: Callable[[int], Sequence[tuple[str, onnx.GraphProto, Sequence[int]]]],
                      open_set: set[str]) -> None:
        """Draw the bodies of the open control-flow nodes inside frames.

        # NOTE: the owner's box keeps its key, its ports and its edges, so the rest of the
        # picture is unchanged; it moves into the open frame ``@<nid>``, beside one sub-frame
        # per body ``@<nid>/<label>``. Body boxes keep their document-wide ``n:<id>`` keys; the
        # body's own keys that could collide with the outer graph (``in:``/``out:`` boxes and
        # ``g:`` name-scope groups) are prefixed with the frame path. Values a body takes from
        # an enclosing graph are drawn from their outer producer into the body box.
        # Each output of a body returns to the owner (a dashed edge into a port after its
        # inputs): the owner is laid out below its branches, and its outputs leave from where
        # the branches end. (With the owner on top, every output of an open If ran down past
        # its bodies, silero's up to 168 box heights, and what the branches make sat above them.)
        """
        node_ids, node_boxes, box_groups = self.node_ids, self.node_boxes, self.box_groups
        group_parents, group_labels, add_edge = self.group_parents, self.group_labels, self.add_edge
        weights = {**(self.outer_weights or {}), **self.initializers, **self.weight_const}
        out_boxes = self.boxes
        has_body = self.has_body
        for i in self.drawn:
            if not has_body[i]:
                continue   # (a box with subgraphs is a node with a GRAPH attribute)
            nid = node_ids[i]
            owner = node_boxes.get(i)
            frame = body_key(nid)
            if self.rep[i][0] != "n" or owner is None or not owner.subgraphs or frame not in open_set:
                continue
            owner_key = owner.key
            returns: list[tuple[str, str, str]] = []   # (output box key, value, body label)
            box_groups[owner_key], group_parents[frame] = frame, box_groups.get(owner_key, "")
            # the frame is titled by the node's own name (its last name-scope segment)
            group_labels[frame] = self.nodes[i].name.rstrip("/").rsplit("/", 1)[-1] or self.table.op[i]
            extra: list[Box] = []
            for label, bgraph, bids in bodies(nid):
                pre = f"{frame}/{label}"
                sub_open = {p[len(pre):] for p in open_set if p.startswith(pre + "/")}
                sub_open |= {p for p in open_set if p.startswith("@")}
                cap: list[tuple[str, str, int]] = []
                sub = build_display_graph(bgraph, list(bids), opsets=self.opsets, value_info=self.value_info,
                                          expanded=sub_open, bodies=bodies, unfold=self.unfold,
                                          show_plumbing=self.show_plumbing, _captured=cap, _outer_weights=weights,
                                          _outer_values=self.values)

                def ren(k: str, pre: str = pre) -> str:
                    if k.startswith(("in:@", "out:@")):
                        return k  # already prefixed by a nested body build
                    if k.startswith("g:"):
                        return k if k.startswith("g:@") else "g:" + pre + k[2:]
                    if k.startswith("in:") or k.startswith("out:"):
                        a, _, b = k.partition(":")
                        return f"{a}:{pre}:{b}"
                    return k

                def reng(g: str, pre: str = pre) -> str:
                    return g if g.startswith("@") else pre + g

                group_parents[pre] = frame
                group_labels[pre] = label
                for b in sub.boxes:
                    nk = ren(b.key)
                    if nk != b.key:
                        b = replace(b, key=nk, name=reng(b.name) if b.kind == "group" else b.name)
                    extra.append(b)
                    box_groups[nk] = reng(sub.box_groups[b.key]) if b.key in sub.box_groups else pre
                for g, p in sub.group_parents.items():
                    group_parents[reng(g)] = reng(p) if p else pre
                for g, lab in sub.group_labels.items():
                    group_labels[reng(g)] = lab
                self.folded.update(sub.folded)   # body nodes' keys are the document's: "show" works there too
                for e in sub.edges:
                    add_edge(ren(e.src), e.src_port, ren(e.dst), e.dst_port, e.value, e.kind, label=e.label)
                for value, dst, dp in cap:
                    d = ren(dst)
                    s = self.src_of(value)
                    if s is None:
                        if self.captured is not None and value not in weights:
                            self.captured.append((value, d, dp))
                        continue
                    add_edge(s[0], s[1], d, dp, value)
                # (its own outputs: a nested open body's are prefixed already, and return to theirs)
                returns += [(ren(b.key), b.name, label) for b in sub.boxes
                            if b.kind == "output" and not b.key.startswith("out:@")]
            for j, (key, value, label) in enumerate(returns):
                add_edge(key, 0, owner_key, owner.n_in + j, value, "body", "out " + label.removesuffix("_branch"))
            back = {key for key, _, _ in returns}
            extra = [replace(b, n_out=1) if b.key in back else b for b in extra]
            # body boxes follow their owner, so the box order stays graph order
            k = next(j for j, b in enumerate(out_boxes) if b.key == owner_key)
            out_boxes[k] = replace(owner, n_in=owner.n_in + len(returns))
            out_boxes[k + 1:k + 1] = extra


class _Declared(Mapping[str, onnx.ValueInfoProto]):
    """The value infos of a graph by name (its ``value_info``, inputs and outputs, a later
    one winning), overridden by ``given`` (the caller's, e.g. the shapes the window shows).

    # NOTE: speed. The graph's own are indexed on the first name ``given`` lacks: a caller
    # that gives them all (the window does) never pays for reading the 13.6k value infos of
    # the 11.8k-node export again, for the few hundred edges of its first view."""

    def __init__(self, graph: onnx.GraphProto, given: Mapping[str, onnx.ValueInfoProto] | None) -> None:
        self._graph = graph
        self._given = given or {}
        self._own: dict[str, onnx.ValueInfoProto] | None = None

    def _graph_infos(self) -> dict[str, onnx.ValueInfoProto]:
        own = self._own
        if own is None:
            own = self._own = {}
            g = self._graph
            for vi in g.value_info:
                own[vi.name] = vi
            for vi in g.input:
                own[vi.name] = vi
            for vi in g.output:
                own[vi.name] = vi
        return own

    def get(self, name: str, default: onnx.ValueInfoProto | None = None) -> onnx.ValueInfoProto | None:  # type: ignore[override]
        vi = self._given.get(name)
        return vi if vi is not None else self._graph_infos().get(name, default)

    def __getitem__(self, name: str) -> onnx.ValueInfoProto:
        vi = self.get(name)
        if vi is None:
            raise KeyError(name)
        return vi

    def __iter__(self):
        return iter({**self._graph_infos(), **self._given})

    def __len__(self) -> int:
        return len({**self._graph_infos(), **self._given})


class _Numel(Mapping[str, int]):
    """Element count of a value whose shape is fully known (from the value infos), -1 else."""

    def __init__(self, vis: Mapping[str, onnx.ValueInfoProto]) -> None:
        self._vis = vis

    def __getitem__(self, name: str) -> int:
        vi = self._vis.get(name)
        if vi is None or not vi.type.HasField("tensor_type"):
            return -1
        dims = shape_dims(vi.type)
        if dims is None or not all(isinstance(d, int) and d >= 0 for d in dims):
            return -1
        n = 1
        for d in dims:
            n *= d
        return n

    def get(self, name: str, default: int = -1) -> int:  # type: ignore[override]
        n = self[name]
        return default if n < 0 else n

    def __iter__(self):
        return iter(self._vis)

    def __len__(self) -> int:
        return len(self._vis)


_BOX_FIELDS = tuple(f.name for f in fields(Box))
_box_fields = attrgetter(*_BOX_FIELDS)   # every field of a Box, in order, in one call
_IN_PORTS, _OUT_PORTS, _OUT_X, _WIDTH = (_BOX_FIELDS.index(f) for f in ("in_ports", "out_ports", "out_x", "width"))


def _with_used_ports(boxes: list[Box], edges) -> list[Box]:
    """Boxes with ``in_ports``/``out_ports`` set where some of their ports carry no edge,
    and ``out_x`` where outputs read by the same boxes are not side by side (see
    :func:`_side_by_side`)."""
    used_in: dict[str, set[int]] = {}
    used_out: dict[str, set[int]] = {}
    readers: dict[tuple[str, int], set[str]] = {}
    for e in edges:
        used_in.setdefault(e.dst, set()).add(e.dst_port)
        used_out.setdefault(e.src, set()).add(e.src_port)
        readers.setdefault((e.src, e.src_port), set()).add(e.dst)
    out = []
    for b in boxes:
        ui = used_in.get(b.key, ())
        uo = used_out.get(b.key, ())
        ip = tuple(sorted(ui)) if ui and len(ui) < b.n_in else ()
        op = tuple(sorted(uo)) if uo and len(uo) < b.n_out else ()
        ox = _side_by_side(b.key, op or range(b.n_out), readers) if len(uo) > 2 and not b.out_x else b.out_x
        if ip != b.in_ports or op != b.out_ports or ox != b.out_x:
            # positionally: ``dataclasses.replace`` (fields() and a getattr per field) was a
            # third of this pass on the 11.8k-node flat view, where half the boxes have a weight
            v = list(_box_fields(b))
            v[_IN_PORTS], v[_OUT_PORTS], v[_OUT_X] = ip, op, ox
            b = Box(*v)
        out.append(b)
    return out


def _side_by_side(key: str, ports: Sequence[int], readers: Mapping[tuple[str, int], set[str]]) -> tuple[float, ...]:
    """Where a box's output ``ports`` sit (fractions of its width, as ``Box.out_x``) so that
    outputs read by the same boxes are neighbours; ``()`` when schema order does that.

    # NOTE: a DynamicQuantizeLinear's outputs 0 and 2 (values, zero point) both feed one
    # ConvInteger/MatMulInteger and output 1 (scale) a Mul: in schema order the scale's edge
    # starts between two edges that end on one box, and crosses one of them in any drawing
    # (all 43 crossings of an int8 OCR model's picture). Ports are drawn unlabelled (the
    # edges carry the values' names), so their order is free."""
    first: dict[frozenset[str], int] = {}
    key_of = {}
    for p in ports:
        rs = frozenset(readers.get((key, p), ()))
        key_of[p] = (first.setdefault(rs, p), p)
    order = sorted(ports, key=key_of.__getitem__)
    if list(order) == list(ports):
        return ()
    n = len(order)
    slot = {p: k for k, p in enumerate(order)}
    return tuple((slot[p] + 1) / (n + 1) for p in ports)


def document_bodies(doc) -> Callable[[int], list[tuple[str, onnx.GraphProto, Sequence[int]]]]:
    """The ``bodies`` callable of :func:`build_display_graph` for an ``editor.document.Document``."""

    def bodies(nid: int) -> list[tuple[str, onnx.GraphProto, Sequence[int]]]:
        out = []
        for sid in doc.index.children.get(nid, ()):
            sc = doc.scope(sid)
            out.append((sc.attr, sc.graph, list(sc.node_ids)))
        return out

    return bodies


def body_key(node_id: int) -> str:
    """The ``expanded`` path that opens a control-flow node's bodies in place."""
    return f"@{node_id}"


def function_graph(fn: onnx.FunctionProto) -> onnx.GraphProto:
    """A ``GraphProto`` view of a model-local function, for :func:`build_display_graph`.

    Function inputs/outputs carry no types, so they become untyped value infos.
    """
    g = onnx.GraphProto(name=f"{fn.domain}::{fn.name}" if fn.domain else fn.name)
    g.node.extend(fn.node)
    g.input.extend(onnx.ValueInfoProto(name=n) for n in fn.input)
    g.output.extend(onnx.ValueInfoProto(name=n) for n in fn.output)
    g.value_info.extend(fn.value_info)
    return g


def _body_values(g: onnx.GraphProto) -> set[str]:
    """Every value a (nested) body defines: its inputs, initializers and node results."""
    out = {vi.name for vi in g.input}
    out.update(t.name for t in g.initializer)
    for node in g.node:
        out.update(node.output)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out |= _body_values(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    out |= _body_values(sg)
    return out


def _weight_constant(table: NodeTable, i: int, output_set: Collection[str]) -> bool:
    """Node ``i`` is a ``Constant`` drawn as a weight of its consumers rather than as a box
    (read from the node table: its fields are read once per open, not again per node)."""
    outputs = table.outputs[i]
    return (table.op[i] == "Constant" and table.domain[i] in ("", "ai.onnx") and not table.inputs[i]
            and len(outputs) == 1 and outputs[0] not in output_set)


def group_tree(graph: onnx.GraphProto) -> GroupTree:
    """The group hierarchy of ``graph`` (what :func:`build_display_graph` would build)."""
    outs = {vi.name for vi in graph.output}
    nodes = graph.node
    table = node_table(nodes, scoped_name)
    ops = table.op
    drawn = [i for i in range(len(table)) if ops[i] != "Constant" or not _weight_constant(table, i, outs)]
    every = table.names
    names = [every[i] for i in drawn]
    tree = build_group_tree(names, drawn, table)
    tree.names = dict(zip(drawn, names))
    return tree


def default_expanded(graph: onnx.GraphProto, *, target: int = 40, limit: int = MAX_FIRST_VIEW,
                     groups: GroupTree | None = None) -> set[str]:
    """Groups to open for a useful first view: open the biggest closed group while the view
    stays under ``limit`` boxes and has fewer than ``target`` boxes.

    A model whose root holds one ``/model`` group and an ``lm_head`` would otherwise first
    show three boxes; this opens ``/model`` (showing the 200 decoder layers as closed
    boxes) and stops there.
    """
    tree = groups if groups is not None else group_tree(graph)
    children: dict[str, list[str]] = {}
    direct: dict[str, int] = {}
    for g, p in tree.parent.items():
        children.setdefault(p, []).append(g)
    n_grouped = 0
    for g, lst in tree._direct.items():
        direct[g] = len(lst)
        n_grouped += len(lst)
    direct[""] = tree.n_nodes - n_grouped
    opened: set[str] = set()
    visible = list(children.get("", []))
    count = direct.get("", 0) + len(visible)
    while count < target and visible:
        best = max(visible, key=lambda g: (tree.size.get(g, 0), g))
        grow = len(children.get(best, [])) + direct.get(best, 0) - 1
        if count + grow > limit:
            break
        opened.add(best)
        visible.remove(best)
        visible += children.get(best, [])
        count += grow
    return opened
