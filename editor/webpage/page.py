"""The page itself: the views, node details and overlays as one data object, and the HTML
file that carries it with the viewer's script and style inline.

The data is JSON, gzip-compressed and base64-encoded inside the page (the browser inflates
it with ``DecompressionStream``): views repeat most coordinates, so this keeps a 3.6k-node
model's page a few megabytes. Nothing is fetched at view time: the script, the style and
the data are all in the one file, which opens from disk, a mail attachment or a notebook
cell alike.

Box and edge records are tables shared by every view (a box that looks the same in two
views is stored once); a view lists the records it shows with their positions and routes
(``q``: the ends of the edges drawn as references, as the canvas draws them).
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from collections.abc import Mapping
from typing import Any

from editor.layout import LayoutResult, port_position
from editor.viewmodel import Box, DisplayGraph, Edge
from editor.viewmodel.palette import CATEGORY_COLOURS
from editor.webpage.views import ViewSet

__all__ = ["page_data", "page_html", "pane_data", "Overlay", "FORMAT_VERSION"]

#: bumped when the data's shape changes (the script refuses data it does not know)
FORMAT_VERSION = 1


def _r(v: float) -> float:
    """Coordinates to 0.1 layout units: finer than a screen pixel at any zoom users read at."""
    return round(float(v), 1)


class Overlay(dict):
    """An overlay the sender had on, as the page draws it: ``{"title", "kind", "colours":
    {box key: css colour}, "values": {box key: text}, "legend": [[css colour, text], ...]}``
    (``kind``: ``"diff"``, ``"compare"``, ``"cost"``, ``"data"``)."""


class _Tables:
    """Box and edge records shared by all views (index by record)."""

    def __init__(self) -> None:
        self.boxes: list[list[Any]] = []
        self.edges: list[list[Any]] = []
        self._box_index: dict[str, int] = {}
        self._edge_index: dict[str, int] = {}

    def box(self, b: Box) -> int:
        rec = [b.key, b.kind, b.label, b.name, b.category, b.width, b.height, b.n_in, b.n_out, b.node_id,
               [list(d) for d in b.details], [list(w) for w in b.weights], b.child_count, list(b.subgraphs)]
        k = json.dumps(rec, separators=(",", ":"))
        i = self._box_index.get(k)
        if i is None:
            i = self._box_index[k] = len(self.boxes)
            self.boxes.append(rec)
        return i

    def edge(self, e: Edge) -> int:
        rec = [e.key, e.src, e.dst, e.value, e.label, e.kind]
        k = json.dumps(rec, separators=(",", ":"))
        i = self._edge_index.get(k)
        if i is None:
            i = self._edge_index[k] = len(self.edges)
            self.edges.append(rec)
        return i


def _badges(display: DisplayGraph) -> dict[str, str]:
    """Box key -> repeat badge of a closed group that has structural twins, as the canvas writes it."""
    size: dict[int, int] = {}
    for c in display.repeats.values():
        size[c] = size.get(c, 0) + 1
    out = {}
    for b in display.boxes:
        c = display.repeats.get(b.name) if b.kind == "group" else None
        if c is not None and size[c] > 1:
            out[b.key] = f"{size[c]} identical blocks · {b.child_count} nodes"
    return out


def _view(t: _Tables, expanded: frozenset[str], display: DisplayGraph, layout: LayoutResult) -> dict[str, Any]:
    pos = layout.positions
    boxes, xy = [], []
    for b in display.boxes:
        p = pos.get(b.key)
        if p is None:
            continue
        boxes.append(t.box(b))
        xy += [_r(p[0]), _r(p[1])]
    edges, routes, refs = [], [], []
    by_key = {b.key: b for b in display.boxes}
    for e in display.edges:
        r = layout.routes.get(e.key)
        if r is None and e.key not in layout.references:
            continue
        if r is None:
            # a reference (an edge too long to route): the canvas draws a stub under the
            # source's port and one over the target's, each with the value's name
            if e.src not in pos or e.dst not in pos:
                continue
            sx, sy = port_position(by_key[e.src], pos[e.src], "out", e.src_port)
            dx, dy = port_position(by_key[e.dst], pos[e.dst], "in", e.dst_port)
            refs.append([len(edges), _r(sx), _r(sy), _r(dx), _r(dy)])
        edges.append(t.edge(e))
        routes.append(None if r is None else [_r(c) for pt in r for c in pt])
    return {
        "x": sorted(expanded), "b": boxes, "p": xy, "e": edges, "r": routes, "q": refs,
        "f": {g: [_r(v) for v in f] for g, f in layout.frames.items()},
        "fl": {g: display.group_labels.get(g, g) for g in layout.frames},
        "badge": _badges(display),
        "w": _r(layout.width), "h": _r(layout.height),
    }


def page_data(panes: list[dict[str, Any]], *, title: str, dark: bool = False) -> dict[str, Any]:
    """Everything the viewer draws: one pane per model (a diff has two, switched in the page's
    bar), the category colours, the theme it opens in."""
    return {"version": FORMAT_VERSION, "title": title, "dark": dark, "colours": CATEGORY_COLOURS,
            "panes": list(panes)}


def pane_data(views: ViewSet, *, title: str, nodes: Mapping[str, Any], weights: Mapping[str, Any],
              values: Mapping[str, tuple[str, str]], overlays: list[Overlay] | None = None,
              side: str = "") -> dict[str, Any]:
    """One model's pane (see the module docstring). ``values``: value name -> (type text,
    ``"declared"`` | ``"inferred"``), for the shapes a hover on an edge shows; ``side``: the
    pane's name in the bar (``"A"``, ``"B"``) when there are several."""
    t = _Tables()
    vs = [_view(t, v.expanded, v.display, v.layout) for v in views.views]
    return {
        "title": title,
        "side": side,
        "boxes": t.boxes,
        "edges": t.edges,
        "views": vs,
        "parents": views.parents,
        "labels": views.labels,
        "missing": views.missing,
        "home": views.home,
        "host": views.host,
        "nodes": nodes,
        "weights": weights,
        "values": {k: list(v) for k, v in values.items()},
        "overlays": list(overlays or []),
    }


def _resource(name: str) -> str:
    """The viewer's page, script or style, as shipped (wheel, checkout, bundle alike)."""
    from resources import resource_path

    return resource_path(f"webpage/{name}").read_text(encoding="utf-8")


def encode_data(data: Mapping[str, Any]) -> str:
    """The data as the page carries it: JSON, gzip (level 9, no timestamp: same model, same
    bytes), base64."""
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def page_html(data: Mapping[str, Any]) -> str:
    """The whole self-contained page for ``data`` (see :func:`page_data`)."""
    template = _resource("page.html")
    return (template.replace("{{TITLE}}", html.escape(str(data.get("title", "")) + " — ONNX Studio"))
            .replace("{{CSS}}", _resource("viewer.css"))
            .replace("{{DARK}}", "dark" if data.get("dark") else "light")
            .replace("{{DATA}}", encode_data(data))
            .replace("{{JS}}", _resource("viewer.js")))
