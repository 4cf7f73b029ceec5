"""``GraphScene``: a DisplayGraph + LayoutResult as graphics items.

One ``NodeItem`` per box (selectable, hit-testable, cached text); edges are NOT items of
their own: they are grouped by spatial tile into ``EdgeTileItem``s that paint prebuilt
paths, so that a 15k-edge graph is a few hundred items. At low zoom the node items switch
to "no contents" and ``BoxBatchItem``s paint all boxes of a tile as one path per colour.

The scene keeps the graph's adjacency to highlight the producers and consumers of the
hovered and selected boxes, and the shortest path between two selected boxes.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence

from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QColor, QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from widgets.canvas.items import (
    ROLE_NEIGHBOUR,
    ROLE_NONE,
    ROLE_PATH,
    BoxBatchItem,
    EdgeLabel,
    EdgeTileItem,
    HighlightItem,
    NodeItem,
    arrow_head,
    rounded_polyline,
    trimmed_route,
)
from widgets.canvas.palette import Palette, dark_palette, light_palette
from widgets.canvas.style import CanvasStyle

# NOTE: tile sizes in scene units. Edge tiles are small enough that a zoomed-in view paints
# only a handful of them (and only their labels), big enough that a whole 15k-edge graph is
# a few hundred items. Box batches are only painted zoomed out, so they can be coarser.
EDGE_TILE = 1200.0
BOX_TILE = 4000.0
SCENE_MARGIN = 120.0
_STUB = 16.0
# Above this many focused boxes (e.g. select-all) neighbour highlighting is skipped: it
# would light up the whole graph and cost a rebuild of every edge path.
MAX_FOCUS = 400


class GraphScene(QGraphicsScene):
    """Scene of one display graph; see module docstring."""

    selectionChangedKeys = Signal(list)
    graphChanged = Signal()

    def __init__(self, parent=None, *, dark: bool = False, show_names: bool = False) -> None:
        super().__init__(parent)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self._style = CanvasStyle(dark_palette() if dark else light_palette())
        self._show_names = show_names
        self._batch = False
        self._graph = None
        self._layout = None
        self._items: dict[str, NodeItem] = {}
        self._edges_by_key: dict = {}
        self._out: dict[str, list] = defaultdict(list)
        self._in: dict[str, list] = defaultdict(list)
        self._tiles: list[EdgeTileItem] = []
        self._batches: list[BoxBatchItem] = []
        self._hover: str | None = None
        self._graph_rect = QRectF()
        self._highlight = HighlightItem(self._style)
        self.addItem(self._highlight)
        self._overview_edges = QPainterPath()
        self._overview_boxes: list[tuple[QColor, QPainterPath]] = []
        self._path_keys: list[str] = []
        self._neighbour_keys: set[str] = set()
        self.setBackgroundBrush(self._style.palette.background)
        self.selectionChanged.connect(self._on_selection_changed)

    # -- properties ------------------------------------------------------------------
    @property
    def style(self) -> CanvasStyle:
        return self._style

    @property
    def palette_(self) -> Palette:
        return self._style.palette

    @property
    def graph(self):
        return self._graph

    @property
    def layout_result(self):
        return self._layout

    @property
    def batch_mode(self) -> bool:
        return self._batch

    def graph_rect(self) -> QRectF:
        """Bounding rectangle of every box and edge (without the scene margin)."""
        return QRectF(self._graph_rect)

    def node_items(self) -> Mapping[str, NodeItem]:
        return self._items

    def item_for(self, key: str) -> NodeItem | None:
        return self._items.get(key)

    def edge_tiles(self) -> Sequence[EdgeTileItem]:
        return tuple(self._tiles)

    def path_keys(self) -> list[str]:
        """Boxes on the highlighted path between two selected boxes (in path order)."""
        return list(self._path_keys)

    def neighbour_keys(self) -> set[str]:
        """Producers and consumers of the focused (hovered/selected) boxes."""
        return set(self._neighbour_keys)

    # -- building ----------------------------------------------------------------------
    def set_graph(self, graph, layout) -> None:
        """Show ``graph`` (DisplayGraph) placed by ``layout`` (LayoutResult); keeps selection by key."""
        keep = set(self.selected_keys())
        self.blockSignals(True)
        try:
            self._clear_graph()
            self._graph = graph
            self._layout = layout
            self._build_nodes(graph, layout)
            self._build_edges(graph, layout)
            self._build_batches()
            self._apply_batch_flags()
            for key in keep:
                item = self._items.get(key)
                if item is not None:
                    item.setSelected(True)
        finally:
            self.blockSignals(False)
        margin = SCENE_MARGIN
        self.setSceneRect(self._graph_rect.adjusted(-margin, -margin, margin, margin))
        self._update_highlight()
        self.graphChanged.emit()
        if keep:
            self.selectionChangedKeys.emit(self.selected_keys())

    def _clear_graph(self) -> None:
        for item in list(self._items.values()) + self._tiles + self._batches:
            self.removeItem(item)
        self._items = {}
        self._tiles = []
        self._batches = []
        self._edges_by_key = {}
        self._out = defaultdict(list)
        self._in = defaultdict(list)
        self._hover = None
        self._path_keys = []
        self._neighbour_keys = set()

    def _build_nodes(self, graph, layout) -> None:
        positions = layout.positions
        style = self._style
        rect = QRectF()
        add = self.addItem
        items = self._items
        for box in graph.boxes:
            pos = positions.get(box.key)
            if pos is None:
                continue
            item = NodeItem(box, pos, style, show_names=self._show_names)
            items[box.key] = item
            add(item)
        if items:
            xs0 = min(positions[k][0] for k in items)
            ys0 = min(positions[k][1] for k in items)
            xs1 = max(positions[k][0] + items[k].box.width for k in items)
            ys1 = max(positions[k][1] + items[k].box.height for k in items)
            rect = QRectF(xs0, ys0, xs1 - xs0, ys1 - ys0)
        self._graph_rect = rect

    def _build_edges(self, graph, layout) -> None:
        from editor.layout import port_position  # Qt-free core; imported late on purpose

        routes = layout.routes
        refs = layout.references
        boxes = {b.key: b for b in graph.boxes}
        positions = layout.positions
        style = self._style
        lm = style.label_metrics
        tiles: dict[tuple[int, int], list] = defaultdict(list)
        overview = QPainterPath()
        for edge in graph.edges:
            if edge.src not in self._items or edge.dst not in self._items:
                continue
            self._edges_by_key[edge.key] = edge
            self._out[edge.src].append(edge)
            self._in[edge.dst].append(edge)
            if edge.key in refs:
                sp = port_position(boxes[edge.src], positions[edge.src], "out", edge.src_port)
                tiles[(int(sp[0] // EDGE_TILE), int(sp[1] // EDGE_TILE))].append(edge)
                continue
            route = routes.get(edge.key)
            if not route or len(route) < 2:
                continue
            x0, y0 = route[0]
            tiles[(int(x0 // EDGE_TILE), int(y0 // EDGE_TILE))].append(edge)
            overview.moveTo(x0, y0)
            for x, y in route[1:]:
                overview.lineTo(x, y)
        rect = QRectF(self._graph_rect)
        for _, edges in sorted(tiles.items()):
            lines = QPainterPath()
            arrows = QPainterPath()
            stubs = QPainterPath()
            labels: list[EdgeLabel] = []
            labelled: set[tuple[str, int]] = set()
            stubbed: set[tuple[str, int]] = set()
            for edge in edges:
                if edge.key in refs:
                    self._add_reference(edge, boxes, positions, stubs, arrows, labels, stubbed, lm)
                    continue
                route = routes[edge.key]
                pts = trimmed_route(route)
                rounded_polyline(lines, pts)
                arrow_head(arrows, route[-1], pts[-2] if len(pts) >= 2 else route[0])
                if edge.label and (edge.src, edge.src_port) not in labelled:
                    labelled.add((edge.src, edge.src_port))
                    x, y = route[0]
                    pos = QPointF(x + 4.0, y + 2.0)
                    w = lm.horizontalAdvance(edge.label)
                    labels.append(EdgeLabel(pos, edge.label, QRectF(pos.x(), pos.y(), w, lm.height())))
            tile = EdgeTileItem(lines, arrows, stubs, labels, style)
            self._tiles.append(tile)
            self.addItem(tile)
            rect = rect.united(tile.boundingRect())
        self._graph_rect = rect
        self._overview_edges = overview

    def _add_reference(self, edge, boxes, positions, stubs, arrows, labels, stubbed, lm) -> None:
        """A broadcast edge: a short stub under the producer and one above the consumer."""
        from editor.layout import port_position

        text = edge.value
        sx, sy = port_position(boxes[edge.src], positions[edge.src], "out", edge.src_port)
        if (edge.src, edge.src_port) not in stubbed:
            stubbed.add((edge.src, edge.src_port))
            stubs.moveTo(sx, sy)
            stubs.lineTo(sx, sy + _STUB)
            stubs.addEllipse(QPointF(sx, sy + _STUB + 2.0), 2.0, 2.0)
            pos = QPointF(sx + 5.0, sy + _STUB - lm.height() / 2.0)
            labels.append(EdgeLabel(pos, f"{text} ⇢", QRectF(pos.x(), pos.y(), lm.horizontalAdvance(f"{text} ⇢"), lm.height()), 1))
        dx, dy = port_position(boxes[edge.dst], positions[edge.dst], "in", edge.dst_port)
        stubs.moveTo(dx, dy - _STUB)
        stubs.lineTo(dx, dy - 6.0)
        arrow_head(arrows, (dx, dy), (dx, dy - _STUB))
        label = f"⇢ {text}"
        w = lm.horizontalAdvance(label)
        pos = QPointF(dx + 5.0, dy - _STUB - 2.0)
        labels.append(EdgeLabel(pos, label, QRectF(pos.x(), pos.y(), w, lm.height()), 1))

    def _build_batches(self) -> None:
        groups: dict[tuple[int, int], dict[str, QPainterPath]] = defaultdict(dict)
        overview: dict[str, QPainterPath] = {}
        for key, item in self._items.items():
            r = item.scene_rect()
            cell = (int(r.x() // BOX_TILE), int(r.y() // BOX_TILE))
            cat = item.box.category
            path = groups[cell].get(cat)
            if path is None:
                path = groups[cell][cat] = QPainterPath()
            path.addRect(r)
            opath = overview.get(cat)
            if opath is None:
                opath = overview[cat] = QPainterPath()
            opath.addRect(r)
        colour = self._style.category_colour
        for _, cats in sorted(groups.items()):
            batch = BoxBatchItem([(colour(c), p) for c, p in sorted(cats.items())])
            batch._categories = sorted(cats)  # type: ignore[attr-defined]
            self._batches.append(batch)
            self.addItem(batch)
        self._overview_boxes = [(colour(c), p) for c, p in sorted(overview.items())]

    # -- level of detail ----------------------------------------------------------------
    def set_batch_mode(self, on: bool) -> None:
        """Zoomed-out mode: boxes painted by tile batches instead of one item each."""
        if on == self._batch:
            return
        self._batch = on
        self._apply_batch_flags()

    def _apply_batch_flags(self) -> None:
        on = self._batch
        flag = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
        for item in self._items.values():
            item.setFlag(flag, on)
        for batch in self._batches:
            batch.setVisible(on)

    # -- appearance ---------------------------------------------------------------------
    def set_show_names(self, show: bool) -> None:
        self._show_names = show
        for item in self._items.values():
            item.set_show_names(show)

    def show_names(self) -> bool:
        return self._show_names

    def set_dark(self, dark: bool) -> None:
        self._style = CanvasStyle(dark_palette() if dark else light_palette())
        self.setBackgroundBrush(self._style.palette.background)
        for item in self._items.values():
            item.set_style(self._style)
        for tile in self._tiles:
            tile.set_style(self._style)
        colour = self._style.category_colour
        for batch in self._batches:
            cats = batch._categories  # type: ignore[attr-defined]
            batch.set_fills([(colour(c), p) for c, (_, p) in zip(cats, batch._fills)])
        self._overview_boxes = self._recolour_overview()
        self._highlight.set_style(self._style)
        self.graphChanged.emit()

    def _recolour_overview(self) -> list[tuple[QColor, QPainterPath]]:
        overview: dict[str, QPainterPath] = {}
        for item in self._items.values():
            cat = item.box.category
            p = overview.get(cat)
            if p is None:
                p = overview[cat] = QPainterPath()
            p.addRect(item.scene_rect())
        return [(self._style.category_colour(c), p) for c, p in sorted(overview.items())]

    def is_dark(self) -> bool:
        return self._style.palette.dark

    def overview(self) -> tuple[QPainterPath, list[tuple[QColor, QPainterPath]]]:
        """Cheap whole-graph picture for the minimap: every edge, every box by colour."""
        return self._overview_edges, self._overview_boxes

    # -- selection -----------------------------------------------------------------------
    def selected_keys(self) -> list[str]:
        keys = [item.key for item in self.selectedItems() if isinstance(item, NodeItem)]
        keys.sort()
        return keys

    def select_keys(self, keys: Iterable[str]) -> None:
        wanted = set(keys)
        self.blockSignals(True)
        try:
            for item in self.selectedItems():
                if isinstance(item, NodeItem) and item.key not in wanted:
                    item.setSelected(False)
            for key in wanted:
                item = self._items.get(key)
                if item is not None:
                    item.setSelected(True)
        finally:
            self.blockSignals(False)
        self._on_selection_changed()

    def keys_rect(self, keys: Iterable[str]) -> QRectF:
        rect = QRectF()
        for key in keys:
            item = self._items.get(key)
            if item is not None:
                rect = rect.united(item.scene_rect())
        return rect

    def set_hovered(self, key: str | None) -> None:
        if key == self._hover:
            return
        self._hover = key
        self._update_highlight()

    def hovered(self) -> str | None:
        return self._hover

    def _on_selection_changed(self) -> None:
        self._update_highlight()
        self.selectionChangedKeys.emit(self.selected_keys())

    # -- highlight -----------------------------------------------------------------------
    def shortest_path(self, a: str, b: str) -> list[str]:
        """Boxes on a shortest directed path a→b, else b→a; [] when neither exists."""
        for s, t in ((a, b), (b, a)):
            path = self._bfs(s, t)
            if path:
                return path
        return []

    def _bfs(self, s: str, t: str) -> list[str]:
        if s == t:
            return [s]
        parent: dict[str, str] = {s: s}
        queue = deque([s])
        while queue:
            cur = queue.popleft()
            for edge in self._out.get(cur, ()):
                nxt = edge.dst
                if nxt in parent:
                    continue
                parent[nxt] = cur
                if nxt == t:
                    out = [t]
                    while out[-1] != s:
                        out.append(parent[out[-1]])
                    out.reverse()
                    return out
                queue.append(nxt)
        return []

    def _edge_path(self, edge, lines: QPainterPath, arrows: QPainterPath) -> None:
        layout = self._layout
        if edge.key in layout.references:
            from editor.layout import port_position

            boxes = self._items
            sx, sy = port_position(boxes[edge.src].box, layout.positions[edge.src], "out", edge.src_port)
            dx, dy = port_position(boxes[edge.dst].box, layout.positions[edge.dst], "in", edge.dst_port)
            lines.moveTo(sx, sy)
            lines.lineTo(sx, sy + _STUB)
            lines.moveTo(dx, dy - _STUB)
            lines.lineTo(dx, dy - 6.0)
            arrow_head(arrows, (dx, dy), (dx, dy - _STUB))
            return
        route = layout.routes.get(edge.key)
        if not route or len(route) < 2:
            return
        pts = trimmed_route(route)
        rounded_polyline(lines, pts)
        arrow_head(arrows, route[-1], pts[-2])

    def _update_highlight(self) -> None:
        for key in self._neighbour_keys | set(self._path_keys):
            item = self._items.get(key)
            if item is not None:
                item.set_role(ROLE_NONE)
        self._neighbour_keys = set()
        self._path_keys = []
        if self._layout is None:
            self._highlight.set_paths(QPainterPath(), QPainterPath(), QPainterPath(), QPainterPath())
            return
        selected = self.selected_keys()
        focus = set(selected)
        if self._hover is not None:
            focus.add(self._hover)
        near_lines, near_arrows = QPainterPath(), QPainterPath()
        path_lines, path_arrows = QPainterPath(), QPainterPath()
        if len(focus) <= MAX_FOCUS:
            neighbours: set[str] = set()
            for key in focus:
                for edge in self._in.get(key, ()):
                    neighbours.add(edge.src)
                    self._edge_path(edge, near_lines, near_arrows)
                for edge in self._out.get(key, ()):
                    neighbours.add(edge.dst)
                    self._edge_path(edge, near_lines, near_arrows)
            neighbours -= focus
            self._neighbour_keys = neighbours
        if len(selected) == 2:
            path = self.shortest_path(selected[0], selected[1])
            self._path_keys = path
            for u, v in zip(path, path[1:]):
                for edge in self._out.get(u, ()):
                    if edge.dst == v:
                        self._edge_path(edge, path_lines, path_arrows)
                        break
        for key in self._neighbour_keys:
            self._items[key].set_role(ROLE_NEIGHBOUR)
        for key in self._path_keys:
            if key not in focus:
                self._items[key].set_role(ROLE_PATH)
        self._highlight.set_paths(near_lines, near_arrows, path_lines, path_arrows)

    def edges_of(self, key: str) -> tuple[list, list]:
        """(incoming, outgoing) edges of a box."""
        return list(self._in.get(key, ())), list(self._out.get(key, ()))
