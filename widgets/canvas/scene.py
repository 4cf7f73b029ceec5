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

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsScene

from widgets.canvas.items import (
    ROLE_NEIGHBOUR,
    ROLE_NONE,
    ROLE_PATH,
    ROLE_SELECTED,
    BoxBatchItem,
    EdgeLabel,
    EdgeTileItem,
    HighlightItem,
    NodeItem,
    OverviewItem,
    arrow_head,
    rounded_polyline,
    trimmed_route,
)
from widgets.canvas.frames import FrameLayerItem, FrameSpec, frame_specs, repeat_classes
from widgets.canvas.geometry import STUB, edge_geometry
from widgets.canvas.palette import Palette, dark_palette, light_palette
from widgets.canvas.style import BATCH_LOD, CanvasStyle

# NOTE: tile sizes in scene units. Edge tiles are small enough that a zoomed-in view paints
# only a handful of them (and only their labels), big enough that a whole 15k-edge graph is
# a few hundred items. Box batches are only painted zoomed out, so they can be coarser.
EDGE_TILE = 1200.0
BOX_TILE = 4000.0
SCENE_MARGIN = 120.0
GRID = 256.0  # cell size of the hit-test grid
OVERVIEW_MIN_BOXES = 1500  # smaller graphs draw fast enough without a prerendered image
REMOVE_LAYER_MIN_BOXES = 1500
OVERVIEW_SIDE = 8192
OVERVIEW_PIXELS = 4_000_000  # 16 MB of ARGB
# Above this many focused boxes (e.g. select-all) neighbour highlighting is skipped: it
# would light up the whole graph and cost a rebuild of every edge path.
MAX_FOCUS = 400


class GraphScene(QGraphicsScene):
    """Scene of one display graph; see module docstring."""

    selectionChangedKeys = Signal(list)
    graphChanged = Signal()
    #: a click on an edge selected the value (tensor name) it carries
    valueClicked = Signal(str)

    def __init__(self, parent=None, *, dark: bool = False, show_names: bool = False) -> None:
        super().__init__(parent)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self._style = CanvasStyle(dark_palette() if dark else light_palette())
        self._show_names = show_names
        #: ``fn(value name) -> rich text`` added to an edge's tool tip (set by the tab)
        self.value_notes = None
        self._mode = "full"
        self._overview_item: OverviewItem | None = None
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
        self._geometry = None
        self._overview_boxes: list[tuple[QColor, QPainterPath]] = []
        self._path_keys: list[str] = []
        self._neighbour_keys: set[str] = set()
        self.setBackgroundBrush(self._style.palette.background)
        self._selected: set[str] = set()
        self._grid: dict[tuple[int, int], list[str]] = {}
        # Node items are children of per-tile (C++-only) layer items: a frame visits only the
        # children of layers near the viewport, and at low zoom removing ~100 layers takes
        # 10k boxes out of the frame (see _apply_mode).
        self._layers: list[QGraphicsRectItem] = []
        self._frames: list[FrameSpec] = []
        self._title_bands: list[tuple[str, float, float, float, float]] = []
        self._frame_item: FrameLayerItem | None = None
        self._repeats: dict[str, tuple[str, ...]] = {}
        # edge hit-testing: segments bucketed by grid cell, built on the first query
        self._edge_grid: dict[tuple[int, int], list[int]] | None = None
        self._edge_segments: list[tuple[float, float, float, float, object]] = []
        self._value: str | None = None

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
        """True when boxes are not painted as individual items (batch or overview mode)."""
        return self._mode != "full"

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
        keep = set(self._selected)
        keep_value = self._value
        self._clear_graph()
        self._graph = graph
        self._layout = layout
        self._repeats = repeat_classes(graph)
        self._build_nodes(graph, layout)
        self._build_frames(graph, layout)
        self._build_edges(graph, layout)
        self._build_batches()
        self._apply_mode()
        self._selected = {k for k in keep if k in self._items}
        for key in self._selected:
            self._items[key].set_marked_selected(True)
        margin = SCENE_MARGIN
        self.setSceneRect(self._graph_rect.adjusted(-margin, -margin, margin, margin))
        if keep_value is not None and not self._selected:
            self._set_value(keep_value)
        self._update_highlight()
        self.graphChanged.emit()
        if keep:
            self.selectionChangedKeys.emit(self.selected_keys())

    def _build_grid(self) -> None:
        grid: dict[tuple[int, int], list[str]] = defaultdict(list)
        positions = self._layout.positions
        for key, item in self._items.items():
            x, y = positions[key]
            box = item.box
            for cx in range(int(x // GRID), int((x + box.width) // GRID) + 1):
                for cy in range(int(y // GRID), int((y + box.height) // GRID) + 1):
                    grid[(cx, cy)].append(key)
        self._grid = dict(grid)

    def key_at(self, point: QPointF) -> str | None:
        """Key of the box under a scene point (works whatever the level of detail)."""
        best = None
        for key in self._grid.get((int(point.x() // GRID), int(point.y() // GRID)), ()):
            if self._items[key]._scene_rect.contains(point):
                best = key
        return best

    def keys_in_rect(self, rect: QRectF) -> list[str]:
        """Keys of the boxes intersecting a scene rectangle."""
        r = rect.normalized()
        cells = (int(r.right() // GRID) - int(r.left() // GRID) + 1) * (int(r.bottom() // GRID) - int(r.top() // GRID) + 1)
        if cells > len(self._grid):
            candidates = self._items.keys()
        else:
            candidates = set()
            for cx in range(int(r.left() // GRID), int(r.right() // GRID) + 1):
                for cy in range(int(r.top() // GRID), int(r.bottom() // GRID) + 1):
                    candidates.update(self._grid.get((cx, cy), ()))
        return sorted(k for k in candidates if self._items[k]._scene_rect.intersects(r))

    def _clear_graph(self) -> None:
        for item in self._tiles + self._batches:
            self.removeItem(item)
        if self._overview_item is not None:
            self.removeItem(self._overview_item)
            self._overview_item = None
        # NOTE: removing a layer drops its children with it
        for layer in self._layers:
            if layer.scene() is self:
                self.removeItem(layer)
        self._layers = []
        if self._frame_item is not None:
            self.removeItem(self._frame_item)
            self._frame_item = None
        self._frames = []
        self._title_bands = []
        self._edge_grid = None
        self._edge_segments = []
        self._value = None
        self._items = {}
        self._selected = set()
        self._grid = {}
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
        items = self._items
        layers: dict[tuple[int, int], QGraphicsRectItem] = {}
        bounds: dict[tuple[int, int], QRectF] = {}
        for box in graph.boxes:
            pos = positions.get(box.key)
            if pos is None:
                continue
            cell = (int(pos[0] // BOX_TILE), int(pos[1] // BOX_TILE))
            layer = layers.get(cell)
            if layer is None:
                layer = layers[cell] = QGraphicsRectItem()
                layer.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
                layer.setZValue(2.0)
                bounds[cell] = QRectF()
            items[box.key] = NodeItem(box, pos, style, show_names=self._show_names, parent=layer,
                                      repeats=self._repeats.get(box.key[2:], ()) if box.kind == "group" else ())
            bounds[cell] = bounds[cell].united(QRectF(pos[0], pos[1], box.width, box.height))
        for cell, layer in sorted(layers.items()):
            layer.setRect(bounds[cell])
            layer.setPen(Qt.PenStyle.NoPen)
            self.addItem(layer)
            self._layers.append(layer)
        if items:
            xs0 = min(positions[k][0] for k in items)
            ys0 = min(positions[k][1] for k in items)
            xs1 = max(positions[k][0] + items[k].box.width for k in items)
            ys1 = max(positions[k][1] + items[k].box.height for k in items)
            rect = QRectF(xs0, ys0, xs1 - xs0, ys1 - ys0)
        self._graph_rect = rect
        self._build_grid()

    def _build_frames(self, graph, layout) -> None:
        self._frames = frame_specs(graph, layout)
        self._title_bands = [(f.path, r.left(), r.top(), r.right(), r.bottom())
                             for f in self._frames for r in (f.title_rect(),)]
        if not self._frames:
            return
        self._frame_item = FrameLayerItem(self._frames, self._style)
        self.addItem(self._frame_item)
        self._graph_rect = self._graph_rect.united(self._frame_item.boundingRect())

    def frames(self) -> list[FrameSpec]:
        """Frames of the open groups, parents before children."""
        return list(self._frames)

    def frame_title_at(self, point: QPointF) -> str | None:
        """Path of the open group whose frame title band holds ``point`` (innermost)."""
        # NOTE: asked on every mouse move; plain float compares over a prebuilt list
        x, y = point.x(), point.y()
        hit = None
        for path, x0, y0, x1, y1 in self._title_bands:
            if x0 <= x <= x1 and y0 <= y <= y1:
                hit = path  # children come after parents: the last hit is innermost
        return hit

    def repeats_of(self, path: str) -> tuple[str, ...]:
        """Every collapsed group structurally identical to ``path`` (itself included)."""
        return self._repeats.get(path, ())

    # -- edges: hit testing and value selection -------------------------------------------
    # NOTE: edges are not items (see module docstring), so a click on one is resolved here:
    # route segments (and reference stubs) bucketed in a GRID-sized hash grid, built on the
    # first query after a layout; a query looks at the few cells around the point only.
    def _ensure_edge_grid(self) -> None:
        if self._edge_grid is not None:
            return
        grid: dict[tuple[int, int], list[int]] = defaultdict(list)
        segs: list[tuple[float, float, float, float, object]] = []
        geo = self._geometry
        if geo is not None:
            def add(x0: float, y0: float, x1: float, y1: float, edge) -> None:
                i = len(segs)
                segs.append((x0, y0, x1, y1, edge))
                for cx in range(int(min(x0, x1) // GRID), int(max(x0, x1) // GRID) + 1):
                    for cy in range(int(min(y0, y1) // GRID), int(max(y0, y1) // GRID) + 1):
                        grid[(cx, cy)].append(i)

            for edge, route, _ in geo.routed:
                for (x0, y0), (x1, y1) in zip(route, route[1:]):
                    add(x0, y0, x1, y1, edge)
            refs = self._layout.references if self._layout is not None else ()
            if refs:
                from editor.layout import port_position

                for edge in geo.edges:
                    if edge.key not in refs:
                        continue
                    sx, sy = port_position(self._items[edge.src].box, self._layout.positions[edge.src], "out",
                                           edge.src_port)
                    dx, dy = port_position(self._items[edge.dst].box, self._layout.positions[edge.dst], "in",
                                           edge.dst_port)
                    add(sx, sy, sx, sy + STUB, edge)
                    add(dx, dy - STUB, dx, dy, edge)
        self._edge_grid = dict(grid)
        self._edge_segments = segs

    def edge_at(self, point: QPointF, tolerance: float = 4.0):
        """The edge (``editor.viewmodel.Edge``) whose drawn route passes within
        ``tolerance`` scene units of ``point``, nearest first; None when there is none."""
        self._ensure_edge_grid()
        px, py = point.x(), point.y()
        best, best_d = None, tolerance * tolerance
        seen: set[int] = set()
        segs = self._edge_segments
        for cx in range(int((px - tolerance) // GRID), int((px + tolerance) // GRID) + 1):
            for cy in range(int((py - tolerance) // GRID), int((py + tolerance) // GRID) + 1):
                for i in self._edge_grid.get((cx, cy), ()):
                    if i in seen:
                        continue
                    seen.add(i)
                    x0, y0, x1, y1, edge = segs[i]
                    d = _dist2(px, py, x0, y0, x1, y1)
                    if d <= best_d:
                        best, best_d = edge, d
        return best

    def click_value(self, name: str) -> None:
        """Select the value ``name`` (boxes are deselected) and emit ``valueClicked``."""
        self.select_keys([])
        self._set_value(name)
        self._update_highlight()
        self.valueClicked.emit(name)

    def selected_value(self) -> str | None:
        """The value whose edges are highlighted after a click on one of them."""
        return self._value

    def _set_value(self, name: str | None) -> None:
        self._value = name if name and any(e.value == name for e in self._edges_by_key.values()) else None

    def value_tooltip(self, edge) -> str:
        """Rich-text tool tip of an edge: the tensor's name and shape, then the owner's
        ``value_notes(name)`` (rich text: where the shape comes from), when set."""
        shape = edge.label or "shape unknown"
        text = f"<b>{_esc(edge.value)}</b><br>{_esc(shape)}"
        notes = self.value_notes(edge.value) if self.value_notes is not None else ""
        return f"{text}<br>{notes}" if notes else text

    def _build_edges(self, graph, layout) -> None:
        style = self._style
        lm = style.label_metrics
        geo = edge_geometry(graph, layout, self._items, lm.horizontalAdvance, lm.height())
        for edge in geo.edges:
            self._edges_by_key[edge.key] = edge
            self._out[edge.src].append(edge)
            self._in[edge.dst].append(edge)

        def cell(x: float, y: float) -> tuple[int, int]:
            return (int(x // EDGE_TILE), int(y // EDGE_TILE))

        # bucket everything by the tile it starts in
        routed: dict[tuple[int, int], list] = defaultdict(list)
        heads: dict[tuple[int, int], list] = defaultdict(list)
        src_stubs: dict[tuple[int, int], list] = defaultdict(list)
        dst_stubs: dict[tuple[int, int], list] = defaultdict(list)
        labels: dict[tuple[int, int], list] = defaultdict(list)
        for edge, route, pts in geo.routed:
            routed[cell(*route[0])].append((route, pts))
        for tip, before in geo.heads:
            heads[cell(*tip)].append((tip, before))
        for p in geo.src_stubs:
            src_stubs[cell(*p)].append(p)
        for p in geo.dst_stubs:
            dst_stubs[cell(*p)].append(p)
        for label in geo.labels:
            labels[cell(label.x, label.y)].append(label)
        overview = QPainterPath()
        rect = QRectF(self._graph_rect)
        for c in sorted(set(routed) | set(heads) | set(src_stubs) | set(dst_stubs) | set(labels)):
            polylines = []
            straight = QPainterPath()
            for route, pts in routed.get(c, ()):
                polylines.append(pts)
                straight.moveTo(route[0][0], route[0][1])
                for x, y in route[1:]:
                    straight.lineTo(x, y)
            arrows = QPainterPath()
            for tip, before in heads.get(c, ()):
                arrow_head(arrows, tip, before)
            stubs = QPainterPath()
            for sx, sy in src_stubs.get(c, ()):
                stubs.moveTo(sx, sy)
                stubs.lineTo(sx, sy + STUB)
                stubs.addEllipse(QPointF(sx, sy + STUB + 2.0), 2.0, 2.0)
            for dx, dy in dst_stubs.get(c, ()):
                stubs.moveTo(dx, dy - STUB)
                stubs.lineTo(dx, dy - 6.0)
            tile_labels = [EdgeLabel(QPointF(lb.x, lb.y), lb.text, QRectF(lb.x, lb.y, lb.w, lb.h), lb.kind)
                           for lb in labels.get(c, ())]
            overview.addPath(straight)
            tile = EdgeTileItem(polylines, straight, arrows, stubs, tile_labels, style)
            self._tiles.append(tile)
            self.addItem(tile)
            rect = rect.united(tile.boundingRect())
        self._graph_rect = rect
        self._overview_edges = overview
        self._geometry = geo

    def edge_geometry(self):
        """The plain edge drawing data of the current graph (see widgets.canvas.geometry)."""
        return self._geometry

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
    # NOTE: three modes, chosen from the view's scale (set_detail):
    #   full      boxes are items (text from TEXT_LOD on), edges are tile items;
    #   batch     below BATCH_LOD: box items leave the frame, tile batches paint them;
    #   overview  below the scale of a prerendered whole-graph image: that image alone
    #             (10k boxes of a fraction of a pixel cost as much as big ones otherwise).
    # The box layer is removed from the scene (not just hidden) in the zoomed-out modes
    # when the graph is large: Qt's BSP walk still visits hidden children, ~1 us each.
    def set_detail(self, scale: float) -> None:
        """Pick the drawing mode for a view (or export) at ``scale`` pixels per unit."""
        if scale >= BATCH_LOD:
            mode = "full"
        elif len(self._items) >= OVERVIEW_MIN_BOXES and scale < self._overview_scale():
            mode = "overview"
        else:
            mode = "batch"
        if mode != self._mode:
            self._mode = mode
            self._apply_mode()

    def set_batch_mode(self, on: bool) -> None:
        """Force the batch (``True``) or full (``False``) mode; tests and benchmarks use it."""
        self.set_mode("batch" if on else "full")

    def set_mode(self, mode: str) -> None:
        """Force a drawing mode: "full", "batch" or "overview"."""
        if mode not in ("full", "batch", "overview"):
            raise ValueError(f"unknown canvas mode {mode!r}")
        if mode != self._mode:
            self._mode = mode
            self._apply_mode()

    @property
    def mode(self) -> str:
        return self._mode

    def _apply_mode(self) -> None:
        mode = self._mode
        remove = len(self._items) >= REMOVE_LAYER_MIN_BOXES
        for layer in self._layers:
            if mode == "full":
                if layer.scene() is None:
                    self.addItem(layer)
                layer.setVisible(True)
            else:
                layer.setVisible(False)
                if remove and layer.scene() is self:
                    self.removeItem(layer)
        for tile in self._tiles:
            tile.setVisible(mode != "overview")
        for batch in self._batches:
            batch.setVisible(mode == "batch")
        if mode == "overview":
            self._ensure_overview()
        if self._overview_item is not None:
            self._overview_item.setVisible(mode == "overview")

    def _overview_scale(self) -> float:
        rect = self._graph_rect
        if rect.isEmpty():
            return 0.0
        return min(OVERVIEW_SIDE / rect.width(), OVERVIEW_SIDE / rect.height(),
                   (OVERVIEW_PIXELS / (rect.width() * rect.height())) ** 0.5)

    def overview_image(self) -> tuple[QImage, QRectF]:
        """The whole graph prerendered (built on first use); and the scene rect it covers."""
        self._ensure_overview()
        return self._overview_item.image(), self.graph_rect()

    def _ensure_overview(self) -> None:
        if self._overview_item is not None:
            return
        rect = self._graph_rect
        s = self._overview_scale()
        w = max(1, int(rect.width() * s) + 1)
        h = max(1, int(rect.height() * s) + 1)
        image = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        if not rect.isEmpty():
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setTransform(QTransform(s, 0, 0, s, -rect.x() * s, -rect.y() * s))
            pen = QPen(self._style.palette.edge, 1.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawPath(self._overview_edges)
            painter.setPen(Qt.PenStyle.NoPen)
            for colour, path in self._overview_boxes:
                painter.setBrush(colour)
                painter.drawPath(path)
            painter.end()
        self._overview_item = OverviewItem(image, QRectF(rect.x(), rect.y(), w / s if s else 0, h / s if s else 0))
        self._overview_item.setVisible(self._mode == "overview")
        self.addItem(self._overview_item)

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
        if self._frame_item is not None:
            self._frame_item.set_style(self._style)
        colour = self._style.category_colour
        for batch in self._batches:
            cats = batch._categories  # type: ignore[attr-defined]
            batch.set_fills([(colour(c), p) for c, (_, p) in zip(cats, batch._fills)])
        self._overview_boxes = self._recolour_overview()
        if self._overview_item is not None:
            self.removeItem(self._overview_item)
            self._overview_item = None
            self._apply_mode()
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
        return sorted(self._selected)

    def is_selected(self, key: str) -> bool:
        return key in self._selected

    def select_keys(self, keys: Iterable[str]) -> None:
        """Make ``keys`` (those that exist) the selection; emits selectionChangedKeys on change."""
        wanted = {k for k in keys if k in self._items}
        if self._value is not None:
            # a box selection (or a click on the background) replaces a value selection
            self._value = None
            if wanted == self._selected:
                self._update_highlight()
        if wanted == self._selected:
            return
        for key in self._selected - wanted:
            self._items[key].set_marked_selected(False)
        for key in wanted - self._selected:
            self._items[key].set_marked_selected(True)
        self._selected = wanted
        self._on_selection_changed()

    def toggle_key(self, key: str) -> None:
        self.select_keys(self._selected ^ {key})

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
            lines.lineTo(sx, sy + STUB)
            lines.moveTo(dx, dy - STUB)
            lines.lineTo(dx, dy - 6.0)
            arrow_head(arrows, (dx, dy), (dx, dy - STUB))
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
        if self._value is not None:
            # the clicked value: every edge carrying it, drawn like the path
            for edge in self._edges_by_key.values():
                if edge.value == self._value:
                    self._edge_path(edge, path_lines, path_arrows)
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
        marks = []
        if self._selected and len(self._selected) <= MAX_FOCUS:
            marks.append((ROLE_SELECTED, [self._items[k].scene_rect() for k in self._selected]))
        if self._neighbour_keys:
            marks.append((ROLE_NEIGHBOUR, [self._items[k].scene_rect() for k in self._neighbour_keys]))
        on_path = [k for k in self._path_keys if k not in focus]
        if on_path:
            marks.append((ROLE_PATH, [self._items[k].scene_rect() for k in on_path]))
        self._highlight.set_paths(near_lines, near_arrows, path_lines, path_arrows, marks)

    def edges_of(self, key: str) -> tuple[list, list]:
        """(incoming, outgoing) edges of a box."""
        return list(self._in.get(key, ())), list(self._out.get(key, ()))


def _dist2(px: float, py: float, x0: float, y0: float, x1: float, y1: float) -> float:
    """Squared distance from a point to a segment."""
    dx, dy = x1 - x0, y1 - y0
    L = dx * dx + dy * dy
    t = 0.0 if L <= 0.0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / L))
    qx, qy = x0 + t * dx - px, y0 + t * dy - py
    return qx * qx + qy * qy


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
