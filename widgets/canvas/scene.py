"""``GraphScene``: a DisplayGraph + LayoutResult as graphics items.

One ``NodeItem`` per box (selectable, hit-testable, cached text); edges are NOT items of
their own: they are grouped by spatial tile into ``EdgeTileItem``s that paint prebuilt
paths, so that a 15k-edge graph is a few hundred items. At low zoom the node items switch
to "no contents" and ``BoxBatchItem``s paint all boxes of a tile as one path per colour.

The scene keeps the graph's adjacency to highlight the producers and consumers of the
hovered and selected boxes, and the shortest path between two selected boxes.

Its parts live beside it: tiles and batches in :mod:`widgets.canvas.batching`, edge hit
testing in :mod:`widgets.canvas.edge_hits`, highlight paths in
:mod:`widgets.canvas.highlight`, the zoomed-out image in :mod:`widgets.canvas.overview`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsScene

from widgets.canvas.batching import BOX_TILE, box_batches, edge_tiles
from widgets.canvas.edge_hits import GRID, EdgeHits
from widgets.canvas.edge_items import EdgeTileItem, HighlightItem
from widgets.canvas.frames import FrameLayerItem, FrameSpec, frame_specs, repeat_classes
from widgets.canvas.geometry import edge_geometry
from widgets.canvas.highlight import edge_path, shortest_path
from widgets.canvas.items import BoxBatchItem, NodeItem, op_name_room
from widgets.canvas.overview import OverviewItem, overview_fills, overview_scale, render_overview
from widgets.canvas.painting import ROLE_NEIGHBOUR, ROLE_NONE, ROLE_PATH, ROLE_SELECTED
from widgets.canvas.palette import Palette, dark_palette, light_palette
from widgets.canvas.style import BATCH_LOD, OP_NAME_LOD, OP_NAME_PX, CanvasStyle

SCENE_MARGIN = 120.0
OVERVIEW_MIN_BOXES = 1500  # smaller graphs draw fast enough without a prerendered image
REMOVE_LAYER_MIN_BOXES = 1500
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
        self._edge_hits: EdgeHits | None = None   # built on the first edge_at after a layout
        self._value: str | None = None
        self._hover_value: str | None = None
        self._edges_by_value: dict[str, list] = defaultdict(list)
        self._relaying = False

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
    def relaying(self) -> bool:
        """True while ``set_graph`` announces which selected boxes survived a new layout
        (nothing was chosen: the boxes were drawn again)."""
        return self._relaying

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
            self._relaying = True
            try:
                self.selectionChangedKeys.emit(self.selected_keys())
            finally:
                self._relaying = False

    def rename_boxes(self, names: Mapping[str, str]) -> QRectF:
        """Boxes whose node was renamed (key -> new name): same place, size and edges, so
        the layout stands, and the display graph follows. Returns the scene area to repaint
        (see ``NodeItem.set_box``)."""
        changed = {}
        area = QRectF()
        for key, name in names.items():
            item = self._items.get(key)
            if item is not None and item.box.name != name:
                changed[key] = replace(item.box, name=name)
                item.set_box(changed[key])
                area = area.united(item.sceneBoundingRect())
        if changed and self._graph is not None:
            self._graph = replace(self._graph, boxes=tuple(changed.get(b.key, b) for b in self._graph.boxes))
        return area

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
        self._edge_hits = None
        self._value = None
        self._items = {}
        self._selected = set()
        self._grid = {}
        self._tiles = []
        self._batches = []
        self._edges_by_key = {}
        self._edges_by_value = defaultdict(list)
        self._hover_value = None
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
        # low-zoom op names may use the free room beside their box (before the items join
        # the scene: a bounding rect that grows later would update the scene's index)
        k = OP_NAME_PX / (OP_NAME_LOD * style.op_name_font.pixelSize())
        node_items = list(items.values())
        rooms = op_name_room([(p[0], p[1], p[0] + it.box.width, p[1] + it.box.height)
                              for it in node_items for p in (positions[it.key],)],
                             [it.op_name_need() for it in node_items], style.op_name_metrics.height() * k / 2)
        for it, room in zip(node_items, rooms):
            it.set_op_name_room(room)
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
    def edge_at(self, point: QPointF, tolerance: float = 4.0):
        """The edge (``editor.viewmodel.Edge``) whose drawn route passes within
        ``tolerance`` scene units of ``point``, nearest first; None when there is none."""
        if self._edge_hits is None:  # built on the first query after a layout
            self._edge_hits = EdgeHits(self._geometry, self._layout, self._items)
        return self._edge_hits.at(point, tolerance)

    def click_value(self, name: str) -> None:
        """Select the value ``name`` (boxes are deselected) and emit ``valueClicked``."""
        self.select_keys([])
        self._set_value(name)
        self._update_highlight()
        self.valueClicked.emit(name)

    def edges_of_value(self, name: str) -> list:
        """The drawn edges that carry value ``name`` (empty when none is drawn)."""
        return list(self._edges_by_value.get(name, ()))

    def selected_value(self) -> str | None:
        """The value whose edges are highlighted after a click on one of them."""
        return self._value

    def _set_value(self, name: str | None) -> None:
        self._value = name if name and name in self._edges_by_value else None

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
        geo = edge_geometry(graph, layout, self._items, lambda t: style.advance(lm, t), lm.height())
        for edge in geo.edges:
            self._edges_by_key[edge.key] = edge
            self._edges_by_value[edge.value].append(edge)
            self._out[edge.src].append(edge)
            self._in[edge.dst].append(edge)

        tiles, self._overview_edges = edge_tiles(geo, style)
        rect = QRectF(self._graph_rect)
        for tile in tiles:
            self._tiles.append(tile)
            self.addItem(tile)
            rect = rect.united(tile.boundingRect())
        self._graph_rect = rect
        self._geometry = geo

    def edge_geometry(self):
        """The plain edge drawing data of the current graph (see widgets.canvas.geometry)."""
        return self._geometry

    def _build_batches(self) -> None:
        self._batches, self._overview_boxes = box_batches(self._items.values(), self._style.category_colour)
        for batch in self._batches:
            self.addItem(batch)

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
        elif len(self._items) >= OVERVIEW_MIN_BOXES and scale < overview_scale(self._graph_rect):
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

    def overview_image(self) -> tuple[QImage, QRectF]:
        """The whole graph prerendered (built on first use); and the scene rect it covers."""
        self._ensure_overview()
        return self._overview_item.image(), self.graph_rect()

    def _ensure_overview(self) -> None:
        if self._overview_item is not None:
            return
        self._overview_item = render_overview(self._graph_rect, self._overview_edges, self._overview_boxes,
                                              self._style.palette.edge)
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
        self._overview_boxes = overview_fills(self._items.values(), self._style.category_colour)
        if self._overview_item is not None:
            self.removeItem(self._overview_item)
            self._overview_item = None
            self._apply_mode()
        self._highlight.set_style(self._style)
        self.graphChanged.emit()

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

    def clear_selection(self) -> None:
        """Select nothing and say so (``selectionChangedKeys([])``) even when no box was
        selected: a click on empty canvas also ends a selection the boxes do not show (a
        value, a tensor picked in a panel), so that no action acts on it afterwards."""
        had = bool(self._selected)
        self.select_keys([])
        if not had:
            self.selectionChangedKeys.emit([])

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

    def set_hovered_value(self, name: str | None) -> None:
        """Light up the edges of value ``name`` (the edge under the mouse); None: none."""
        if name == self._hover_value:
            return
        self._hover_value = name
        self._update_highlight()

    def hovered_value(self) -> str | None:
        return self._hover_value

    def _on_selection_changed(self) -> None:
        self._update_highlight()
        self.selectionChangedKeys.emit(self.selected_keys())

    # -- highlight -----------------------------------------------------------------------
    def shortest_path(self, a: str, b: str) -> list[str]:
        """Boxes on a shortest directed path a→b, else b→a; [] when neither exists."""
        return shortest_path(self._out, a, b)

    def _edge_path(self, edge, lines: QPainterPath, arrows: QPainterPath) -> None:
        edge_path(edge, self._layout, self._items, lines, arrows)

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
        if self._hover_value is not None:
            # the edge under the mouse: every edge carrying its value, drawn like neighbours'
            for edge in self._edges_by_value.get(self._hover_value, ()):
                self._edge_path(edge, near_lines, near_arrows)
        if self._value is not None:
            # the clicked value: every edge carrying it, drawn like the path
            for edge in self._edges_by_value.get(self._value, ()):
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


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
