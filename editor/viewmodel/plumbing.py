"""Shape plumbing: the nodes that compute shapes and small constants, folded into their readers.

A transformer exported from torch computes every ``view``'s target shape at run time:
``Shape → Gather → Unsqueeze → Concat → Reshape``, once per layer, often from a value at the
top of the graph (the input's length). Drawn as boxes, these chains fill a band at the top
of the picture (a 3.6k-node TTS model: 148 boxes wide) and cross every edge on their way to
the layer that reads them. They say nothing about the architecture: what a reader needs to
know is that its ``shape`` input is computed, and from what.

:func:`fold_plumbing` finds them and :func:`editor.viewmodel.build_display_graph` draws each
as a row of every reader (``shape  Shape → Gather → … → Concat``), like a folded weight, so a
value read by many layers is attached to each of them instead of being a hub. A reader in
``keep`` (the canvas's "show") gets its chain drawn as boxes again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from editor.viewmodel.folding import NEVER_FOLD
from editor.viewmodel.nodetable import NodeTable

__all__ = ["Plumbing", "fold_plumbing"]

_SHAPE_SOURCES = frozenset({"Shape", "Size"})
_MAX_OPS = 4          # ops named in a row; longer chains elide the middle
SMALL_ELEMS = 16      # a constant-only result of at most this many elements is plumbing too


class Plumbing:
    """What :func:`fold_plumbing` found: hidden nodes, row texts, and who reads what."""

    __slots__ = ("hidden", "texts", "feeds")

    def __init__(self) -> None:
        #: node indices not drawn (their results are rows of their readers)
        self.hidden: set[int] = set()
        #: value -> row text (``"Shape → Gather → … → Concat"``) of every folded result
        self.texts: dict[str, str] = {}
        #: drawn reader index -> the hidden node indices that feed it (for ``DisplayGraph.folded``)
        self.feeds: dict[int, set[int]] = {}


def fold_plumbing(table: NodeTable, hidden: bytearray, known: Collection[str],
                  output_set: Collection[str], keep: Collection[int],
                  numel: Mapping[str, int]) -> Plumbing:
    """The shape plumbing of a graph (``hidden[i]``: node ``i`` already not drawn).

    A node is plumbing when it is a ``Shape``/``Size``, or when every input is a constant
    (``known``) or plumbing, at least one is plumbing or its result is small (``numel`` at
    most :data:`SMALL_ELEMS`, e.g. a shared scalar), and it has no body, is not random and
    makes no graph output. Plumbing read only by plumbing nodes that are folded is folded
    with them; a reader in ``keep`` (graph indices) has its chains drawn as boxes."""
    out = Plumbing()
    chain: dict[str, tuple[str, ...]] = {}   # plumbing value -> ops from its source
    made_by: dict[str, int] = {}
    plumb: list[int] = []
    ops_of, domains, inputs, outputs, body = table.op, table.domain, table.inputs, table.outputs, table.body
    outset = output_set if isinstance(output_set, (set, frozenset)) else set(output_set)
    get_chain = chain.get
    for i in range(len(table)):
        op = ops_of[i]
        if hidden[i] or body[i] or op in NEVER_FOLD:
            continue
        outs = outputs[i]
        if not outset.isdisjoint(outs):
            continue
        if op in _SHAPE_SOURCES and domains[i] in ("", "ai.onnx"):
            ops: tuple[str, ...] = (op,)
        else:
            srcs: list[tuple[str, ...]] = []
            n_ins = 0
            for v in inputs[i]:
                if not v:
                    continue
                c = get_chain(v)
                if c is None and v not in known:
                    n_ins = 0
                    break
                n_ins += 1
                if c is not None:
                    srcs.append(c)
            if not n_ins:
                continue   # no input, or one that is neither a constant nor plumbing
            made = [o for o in outs if o]
            if not srcs and not (made and all(0 <= numel.get(o, SMALL_ELEMS + 1) <= SMALL_ELEMS for o in made)):
                continue   # a constant-only node with a big result stays a box (a shared weight)
            ops = max(srcs, key=len, default=()) + (op,)
        plumb.append(i)
        for o in outs:
            if o:
                chain[o] = ops
                made_by[o] = i
    if not plumb:
        return out
    # who reads each plumbing node: plumbing nodes and drawn readers (-1: a body, which
    # keeps it drawn)
    readers: dict[int, set[int]] = {}
    made = made_by.keys()
    for j in range(len(table)):
        if hidden[j]:
            continue
        if not made.isdisjoint(inputs[j]):   # (most nodes read no plumbing)
            for v in inputs[j]:
                i = made_by.get(v)
                if i is not None:
                    readers.setdefault(i, set()).add(j)
        if body[j]:
            for v in table.body_reads(j):
                i = made_by.get(v)
                if i is not None:
                    readers.setdefault(i, set()).add(-1)
    # drawn: plumbing that feeds a kept reader or a body, with everything above it
    drawn: set[int] = set()
    keep = set(keep)
    for i in reversed(plumb):
        rs = readers.get(i, ())
        if any(r == -1 or r in keep or r in drawn for r in rs):
            drawn.add(i)
    for i in plumb:
        if i in drawn:
            continue
        out.hidden.add(i)
        for o in outputs[i]:
            if o:
                out.texts[o] = _text(chain[o])
    # the hidden nodes each drawn reader stands for (through hidden plumbing above it)
    above: dict[int, set[int]] = {}
    for i in plumb:
        if i in out.hidden:
            s = {i}
            for v in inputs[i]:
                p = made_by.get(v)
                if p is not None and p in out.hidden:
                    s |= above[p]
            above[i] = s
    for i in out.hidden:
        for r in readers.get(i, ()):
            if r >= 0 and r not in out.hidden:
                out.feeds.setdefault(r, set()).update(above[i])
    return out


def _text(ops: tuple[str, ...]) -> str:
    if len(ops) > _MAX_OPS:
        ops = ops[:1] + ("…",) + ops[-(_MAX_OPS - 2):]
    return " → ".join(ops)
