"""Layered layout of a :class:`~editor.viewmodel.DisplayGraph`: pure, deterministic, cancellable.

``layout_graph`` is a pure function of the display model (plus, optionally, the previous
result to stay close to): no Qt, no globals, safe to run on a worker thread. Progress is
reported through a callback in ``[0, 1]``; a :class:`CancelToken` is checked between phases
and iterations and raises :class:`Cancelled`.

The algorithm lives in :mod:`editor.layout.sugiyama` (array code); this module converts
between boxes/edges and arrays, and handles incremental re-layout
(:mod:`editor.layout.incremental`).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from editor.collector import without_collection
from editor.viewmodel import Box, DisplayGraph

__all__ = ["Cancelled", "CancelToken", "LayoutResult", "layout_graph", "port_fraction", "port_position"]


class Cancelled(Exception):
    """The layout was cancelled through its :class:`CancelToken`."""


class CancelToken:
    """Thread-safe cancellation flag shared between the GUI and a layout worker."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass(frozen=True)
class LayoutResult:
    positions: Mapping[str, tuple[float, float]]
    routes: Mapping[str, tuple[tuple[float, float], ...]]
    references: frozenset[str]
    width: float
    height: float
    #: Additive: rank (layer index) of every box, and the (top, bottom) of each layer band.
    ranks: Mapping[str, int] = field(default_factory=dict)
    layers: tuple[tuple[float, float], ...] = ()
    #: Additive: (width, height) of every box as laid out (lets an incremental re-layout
    #: tell a resized box from an unchanged one).
    sizes: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: Additive: open group path -> frame (x, y, width, height) enclosing its members, when
    #: the display graph has open groups (see :mod:`editor.layout.compound`). The group's
    #: name goes in the top ``FRAME_TITLE`` pixels of the frame.
    frames: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)
    #: Additive, internal: the per-level layouts of a compound layout (level-local
    #: coordinates), kept so the next incremental re-layout can start from them.
    levels: Mapping[str, "LayoutResult"] = field(default_factory=dict)
    #: Additive: a picture set in columns (:mod:`editor.layout.wrap`) has the ranks that
    #: begin its columns 2, 3, ... and the one-column layout it was made from, so an edit's
    #: re-layout keeps the columns where they were.
    cuts: tuple[int, ...] = ()
    strip: "LayoutResult | None" = None


def port_position(box: Box, pos: tuple[float, float], side: str, index: int) -> tuple[float, float]:
    """Scene position of port ``index`` on ``side`` ("in": top edge, "out": bottom edge)."""
    if side == "in":
        return (pos[0] + box.width * port_fraction(box.n_in, box.in_ports, box.in_x, index), pos[1])
    if side == "out":
        return (pos[0] + box.width * port_fraction(box.n_out, box.out_ports, box.out_x, index), pos[1] + box.height)
    raise ValueError(f"port side must be 'in' or 'out', not {side!r}")


def port_fraction(n: int, used: Sequence[int], at: Sequence[float], index: int) -> float:
    """Where port ``index`` of ``n`` sits along its edge of the box, as a fraction of the
    width: spread evenly over the ``used`` ones (all when empty; see ``Box.in_ports``), or
    at ``at[slot]`` when given (``Box.in_x``)."""
    if used:  # ports spread over the used ones only (see Box.in_ports)
        n = len(used)
        index = bisect_left(used, index)
    if n <= 0:
        return 0.5
    i = min(max(index, 0), n - 1)
    return at[i] if at else (i + 1) / (n + 1)


def _checker(progress: Callable[[float], None] | None, cancel: CancelToken | None):
    def check(frac: float) -> None:
        if cancel is not None and cancel.cancelled:
            raise Cancelled("layout cancelled")
        if progress is not None:
            progress(min(1.0, max(0.0, frac)))
    return check


def graph_arrays(graph: DisplayGraph) -> dict[str, np.ndarray]:
    """Boxes and edges of ``graph`` as index arrays (edges to unknown boxes are dropped);
    ``sfrac``/``dfrac``: where each edge leaves / enters its box, as a fraction of the width
    (:func:`port_fraction`)."""
    boxes = graph.boxes
    index = {b.key: i for i, b in enumerate(boxes)}
    w = np.fromiter((b.width for b in boxes), dtype=np.float64, count=len(boxes))
    h = np.fromiter((b.height for b in boxes), dtype=np.float64, count=len(boxes))
    get = index.get
    es_l, ed_l, esp_l, sf_l, df_l, eidx = [], [], [], [], [], []
    for k, e in enumerate(graph.edges):
        a = get(e.src)
        b = get(e.dst)
        if a is None or b is None:
            continue
        es_l.append(a)
        ed_l.append(b)
        sb, db = boxes[a], boxes[b]
        # the source port as a slot among the used ones: edges of one value share it
        esp_l.append(bisect_left(sb.out_ports, e.src_port) if sb.out_ports else e.src_port)
        sf_l.append(port_fraction(sb.n_out, sb.out_ports, sb.out_x, e.src_port))
        df_l.append(port_fraction(db.n_in, db.in_ports, db.in_x, e.dst_port))
        eidx.append(k)
    return {
        "w": w, "h": h,
        "es": np.asarray(es_l, dtype=np.int64), "ed": np.asarray(ed_l, dtype=np.int64),
        "esp": np.asarray(esp_l, dtype=np.int64),
        "sfrac": np.asarray(sf_l, dtype=np.float64), "dfrac": np.asarray(df_l, dtype=np.float64),
        "eidx": np.asarray(eidx, dtype=np.int64),
        "anchor": np.fromiter((b.kind in ("input", "entry") for b in boxes), dtype=bool, count=len(boxes)),
        # internal kinds used by the compound layout for a group's boundary crossings
        "pin_top": np.fromiter((b.kind == "entry" for b in boxes), dtype=bool, count=len(boxes)),
        "pin_bottom": np.fromiter((b.kind == "exit" for b in boxes), dtype=bool, count=len(boxes)),
    }


@without_collection
def layout_graph(
    graph: DisplayGraph,
    *,
    previous: LayoutResult | None = None,
    progress: Callable[[float], None] | None = None,
    cancel: CancelToken | None = None,
    wrap: bool = False,
) -> LayoutResult:
    """Lay ``graph`` out top to bottom. Same input, same output.

    ``wrap``: a drawing far taller than wide is set in side-by-side columns
    (:mod:`editor.layout.wrap`). With ``previous`` in columns, the edit is laid out
    incrementally in one column (``previous.strip``) and set in the same columns again;
    without columns before, none are added (a picture the user knows does not jump), and
    without ``wrap`` it stays one column."""
    from editor.layout.sugiyama import layout_arrays

    check = _checker(progress, cancel)
    if graph.box_groups and graph.boxes:
        from editor.layout.compound import compound_layout

        return compound_layout(graph, check, previous, wrap=wrap)
    if previous is not None:
        from editor.layout.incremental import incremental_layout

        base = previous.strip if previous.strip is not None else previous
        res = incremental_layout(graph, base, check)
        if res is not None:
            if wrap and previous.cuts:
                from editor.layout.wrap import wrap_columns

                res = wrap_columns(graph, res, cuts=previous.cuts)
            return res
    arr = graph_arrays(graph)
    lay = layout_arrays(arr["w"], arr["h"], arr["es"], arr["ed"], arr["esp"], arr["sfrac"], arr["dfrac"],
                        check=check, anchor=arr["anchor"],
                        pin_top=arr["pin_top"], pin_bottom=arr["pin_bottom"])
    res = to_result(graph, arr, lay)
    if wrap:
        from editor.layout.wrap import wrap_columns

        res = wrap_columns(graph, res)
    return res


def to_result(graph: DisplayGraph, arr: Mapping[str, np.ndarray], lay) -> LayoutResult:
    boxes = graph.boxes
    edges = graph.edges
    keys = [b.key for b in boxes]
    positions = dict(zip(keys, zip(lay.x.tolist(), lay.y.tolist())))
    routes: dict[str, tuple[tuple[float, float], ...]] = {}
    refs = []
    eidx = arr["eidx"].tolist()
    for j, k in enumerate(eidx):
        r = lay.routes[j]
        if r is None:
            refs.append(edges[k].key)
        else:
            routes[edges[k].key] = tuple(r)
    ranks = dict(zip(keys, lay.rank.tolist()))
    layers = tuple(zip(lay.layer_top.tolist(), lay.layer_bottom.tolist()))
    sizes = {b.key: (b.width, b.height) for b in boxes}
    return LayoutResult(positions=positions, routes=routes, references=frozenset(refs),
                        width=lay.width, height=lay.height, ranks=ranks, layers=layers, sizes=sizes)
