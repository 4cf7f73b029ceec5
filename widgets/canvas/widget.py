"""``CanvasWidget``: the canvas as the main window docks it.

Breadcrumb on top, the ``GraphView`` below with a ``Minimap`` floating in a corner free of
boxes (in a strip beside the viewport when none is) and a ``LayoutBusy`` bar (progress, Cancel) at its top while a slow re-layout runs,
and a ``GraphController`` that re-lays out when a group is toggled. The breadcrumb
follows the selection (the scope of its current box, ``follow``, else of the first selected
box); clicking a segment selects and frames everything inside that scope.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Signal
from PySide6.QtWidgets import QGraphicsView, QVBoxLayout, QWidget

from widgets.canvas.breadcrumb import Breadcrumb
from widgets.canvas.busy import LayoutBusy
from widgets.canvas.controller import GraphController
from widgets.canvas.minimap import Minimap
from widgets.canvas.scene import GraphScene
from widgets.canvas.text_warmer import TextWarmer
from widgets.canvas.view import GraphView

MINIMAP_MARGIN = 12


class CanvasWidget(QWidget):
    """Breadcrumb + view + minimap + controller; forwards the view's signals."""

    selectionChangedKeys = Signal(list)
    activated = Signal(str)
    #: "Open body as its own view" asked on a control-flow box (its key)
    openBody = Signal(str)
    #: a click on an edge selected this value (tensor name)
    valueClicked = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, dark: bool = False) -> None:
        super().__init__(parent)
        self.scene = GraphScene(self, dark=dark)
        self.view = GraphView(self.scene, self)
        self.breadcrumb = Breadcrumb(self)
        self.controller = GraphController(self.scene, self)
        self.minimap = Minimap(self.view, self.view)
        self.busy = LayoutBusy(self.controller, self.view)
        self.text_warmer = TextWarmer(self.view)
        self._minimap_enabled = True
        #: the minimap sits in a strip of its own beside the viewport (no corner was free)
        self._gutter = False
        #: a legend floating over the view's top-left corner (the overlay layer's), or None
        self.legend: QWidget | None = None
        self._current_key: str | None = None  # the box the breadcrumb names
        self.view.scope_resolver = self.controller.scope_of
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.breadcrumb)
        layout.addWidget(self.view, 1)
        self.view.selectionChangedKeys.connect(self._on_selection)
        self.view.selectionChangedKeys.connect(self.selectionChangedKeys)
        self.view.activated.connect(self.activated)
        self.view.openBody.connect(self.openBody)
        self.view.valueClicked.connect(self.valueClicked)
        self.view.groupToggled.connect(self.toggle_group)
        self.view.weightsToggled.connect(self.controller.toggle_weights)
        self.view.weights_unfolded = self.controller.weights_unfolded
        self.breadcrumb.pathClicked.connect(self.select_scope)
        self.breadcrumb.set_labeler(self._group_label)
        self.view.viewportChanged.connect(self._place_minimap)
        self._fit_next = True
        #: a control-flow body opened in place: the next layout lands the view on its frame
        self._land_frame: str | None = None
        self.controller.laidOut.connect(self._on_laid_out)

    def _group_label(self, path: str) -> str | None:
        """The display model's name for a group or body frame (``@12`` -> ``If_0``); the
        breadcrumb's paths start with "/", body frames' keys do not."""
        labels = getattr(self.scene.graph, "group_labels", None) or {}
        return labels.get(path) or labels.get(path[1:] if path.startswith("/@") else path)

    def toggle_group(self, key: str) -> None:
        """Open or close a group or a control-flow node's bodies (``g:@<id>``); a body
        opened in place is where the user looks next, so the view goes to it."""
        path = key[2:] if key.startswith("g:") else key
        expanded = self.controller.expanded()
        if path.startswith("@") and path[1:].isdigit() and (expanded is None or path not in expanded):
            self._land_frame = path
        self.controller.toggle_group(key)

    def toggle_body(self, node_id: int) -> None:
        self.toggle_group(f"g:@{node_id}")

    def set_source(self, graph, node_ids, *, opsets, value_info=None, expanded="auto", sync: bool = False,
                   groups=None) -> None:
        """Show a graph scope (GraphProto + stable node ids); fits it once laid out."""
        self._fit_next = True
        self.breadcrumb.set_root_label(graph.name or "Graph")
        self.controller.set_source(graph, node_ids, opsets=opsets, value_info=value_info, expanded=expanded, sync=sync,
                                   groups=groups)

    def _on_laid_out(self) -> None:
        if self._fit_next:
            self._fit_next = False
            self._land_frame = None
            self.view.zoom_to_readable()
        elif self._land_frame is not None:
            path, self._land_frame = self._land_frame, None
            frame = next((f for f in self.scene.frames() if f.path == path), None)
            if frame is not None:
                self.view.land_on(frame.rect().adjusted(-30, -30, 30, 30), max_scale=1.0)

    def _on_selection(self, keys: list) -> None:
        # the current box while it stays selected (a relayout re-announces the selection
        # in key order), else the first one
        key = self._current_key if self._current_key in keys else (keys[0] if keys else None)
        self.follow(key)

    def follow(self, key: str | None) -> None:
        """Show where box ``key`` lies in the breadcrumb: the current one of a selection
        (Find's current match: F3 moves it without changing the selection)."""
        self._current_key = key
        self.breadcrumb.set_path(self.controller.scope_of(key) if key is not None else "")

    def select_scope(self, path: str) -> None:
        """Select every box inside ``path`` ("" = fit the whole graph) and frame them."""
        if not path:
            self.view.zoom_to_fit()
            return
        prefix = path + "/"
        keys = []
        for key in self.scene.node_items():
            scope = self.controller.scope_of(key)
            if scope == path or scope.startswith(prefix):
                keys.append(key)
        if keys:
            self.view.select_keys(keys, center=False)
            self.view.fit_rect(self.scene.keys_rect(keys).adjusted(-40, -40, 40, 40), max_scale=1.2)
        self.breadcrumb.set_path(path)

    def set_minimap_enabled(self, on: bool) -> None:
        """View > Minimap: off hides it for good; on shows it whenever the graph overflows."""
        self._minimap_enabled = bool(on)
        self._place_minimap()

    def minimap_enabled(self) -> bool:
        return self._minimap_enabled

    def set_legend(self, legend: QWidget | None) -> None:
        """Float ``legend`` (what an overlay's colours mean) in a corner of the view
        (top-left first, another while boxes lie under it), where the minimap then never
        goes; None removes it."""
        if self.legend is not None and self.legend is not legend:
            self.legend.hide()
        self.legend = legend
        if legend is not None:
            if legend.parent() is not self.view:
                legend.setParent(self.view)
                vp = self.view.viewport().geometry()
                legend.move(vp.left() + MINIMAP_MARGIN, vp.top() + MINIMAP_MARGIN)
            legend.adjustSize()
            legend.raise_()
        self._place_minimap()

    def _corners(self, w: int, h: int, order: str) -> list[QRect]:
        """A ``w`` x ``h`` rect in each corner of the viewport (view coordinates), in
        ``order`` (letters of corners: b(ottom-)r(ight), bl, tr, tl, two at a time)."""
        vp = self.view.viewport().geometry()
        left, right = vp.left() + MINIMAP_MARGIN, vp.right() - w - MINIMAP_MARGIN
        top, bottom = vp.top() + MINIMAP_MARGIN, vp.bottom() - h - MINIMAP_MARGIN
        at = {"br": (right, bottom), "bl": (left, bottom), "tr": (right, top), "tl": (left, top)}
        return [QRect(*at[order[k:k + 2]], w, h) for k in range(0, len(order), 2)]

    def _corner_rects(self) -> list[QRect]:
        """Where the minimap may sit (viewport coords), preferred first: bottom-right,
        bottom-left, top-right, top-left; never over a shown legend."""
        corners = self._corners(self.minimap.width(), self.minimap.height(), "brbltrtl")
        if self.legend is not None and self.legend.isVisibleTo(self):
            corners = [c for c in corners if not c.intersects(self.legend.geometry())]
        return corners

    def _place_legend(self) -> None:
        """The legend stays in its corner while no box lies under it; else it moves to a
        corner with none (top-left, top-right, bottom-left, bottom-right), else stays."""
        legend = self.legend
        if legend is None or not legend.isVisibleTo(self):
            return
        corners = self._corners(legend.width(), legend.height(), "tltrblbr")
        current = next((c for c in corners if c.topLeft() == legend.pos()), corners[0])
        if self._covered(current):
            current = next((c for c in corners if not self._covered(c)), current)
        legend.move(current.topLeft())

    def _covered(self, rect: QRect) -> int:
        """How many boxes the minimap (a legend) would hide at ``rect`` (view widget coordinates)."""
        origin = self.view.viewport().geometry().topLeft()
        local = rect.translated(-origin)
        return len(self.scene.keys_in_rect(self.view.mapToScene(local).boundingRect()))

    def _place_minimap(self) -> None:
        self._place_legend()  # first: the minimap keeps clear of it
        graph = self.scene.graph_rect()
        fits = graph.isEmpty() or self.view.visible_scene_rect().contains(graph)
        if not self._minimap_enabled or fits:
            self.minimap.hide()
            self._set_gutter(False)
            return
        if self._gutter:
            self._show_minimap(self._gutter_rect())
            return
        corners = self._corner_rects()
        if not corners:  # a legend in every corner (a small pane): no room for the minimap
            self.minimap.hide()
            return
        current = QRect(self.minimap.geometry())
        if current not in corners:
            current = corners[0]
        if self._covered(current):
            # stay put while the corner is free; else a free corner
            current = next((c for c in corners if not self._covered(c)), None)
            if current is None:
                # NOTE: no corner is free (a tall model in columns fills every corner at a
                # readable zoom): the minimap must not cover the graph it summarises (it
                # hid MiniLM's first boxes), and a big graph is where it is needed most, so
                # it moves into a strip of its own beside the viewport, until the graph fits
                self._set_gutter(True)
                current = self._gutter_rect()
        self._show_minimap(current)

    def _show_minimap(self, rect: QRect) -> None:
        self.minimap.setGeometry(rect)
        self.minimap.show()
        self.minimap.raise_()

    def minimap_in_gutter(self) -> bool:
        """The minimap sits beside the viewport, not over it."""
        return self._gutter

    def _gutter_rect(self) -> QRect:
        """The minimap's place in the strip right of the viewport (view coordinates)."""
        vp = self.view.viewport().geometry()
        w, h = self.minimap.width(), self.minimap.height()
        return QRect(vp.right() + 1 + MINIMAP_MARGIN, max(vp.top(), vp.bottom() - h - MINIMAP_MARGIN), w, h)

    def _set_gutter(self, on: bool) -> None:
        """Make (or give back) the strip right of the viewport where the minimap sits.

        NOTE: the view's left edge stays where it is while the viewport narrows or widens:
        the view's own anchor (the centre) would shift the whole picture sideways by half
        the strip, under the user's pointer, in the middle of a pan."""
        if on == self._gutter:
            return
        self._gutter = on
        view = self.view
        anchor = view.resizeAnchor()
        view.setResizeAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        try:
            view.setViewportMargins(0, 0, self.minimap.width() + 2 * MINIMAP_MARGIN if on else 0, 0)
        finally:
            view.setResizeAnchor(anchor)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._place_minimap()
        self.busy.place()
