"""``GraphView``: pan, zoom, selection and hover over a ``GraphScene``.

Gestures:
- wheel: zoom anchored under the mouse (a trackpad's two-finger scroll pans instead,
  Ctrl + scroll zooms); Shift + wheel scrolls sideways;
- trackpad pinch (``QNativeGestureEvent`` ZoomNativeGesture) zooms; smart-zoom fits;
- middle-button drag, or Space + left drag, pans; scroll bars pan;
- left drag on the background: rubber-band selection; click / Ctrl-click select;
- keys: ``+``/``=`` zoom in, ``-`` zoom out, ``0`` 100 %, ``F`` fit all (the whole graph,
  however small), ``R`` readable (fit when the text can be read, else the inputs at a
  readable zoom), ``S`` fit the selection, Esc clears the selection;
- a click selects exactly what is drawn under it (``key_at``: the boxes' own rectangles,
  whatever the level of detail); a click on empty canvas clears the selection, also one
  the canvas does not draw, so no action acts on a selection the user cannot see;
- double-click: a group box toggles (``groupToggled``), any other box is ``activated``;
- click in an open group's frame title band: collapses it (``groupToggled``);
- click on an edge (within ``EDGE_HIT_PX`` pixels of its route): selects the value it
  carries (``valueClicked``) and highlights its edges; hovering one lights it up and shows
  its name and shape (the tolerance is in screen pixels: the same at every zoom).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPainter, QTransform, QWheelEvent
from PySide6.QtWidgets import QFrame, QGraphicsView, QMenu, QToolTip

from widgets.canvas.items import NodeItem
from widgets.canvas.scene import GraphScene
from widgets.canvas.style import TEXT_LOD

#: Zoom to Readable never goes below a zoom where box text is drawn (from TEXT_LOD) and can
#: be read: a graph that cannot fit readably shows its inputs at this zoom instead (as
#: Netron opens); Zoom to Fit shows the whole graph however small (op names stay legible
#: down to OP_NAME_LOD, the minimap and the outline give the overview below that).
FIT_MIN_ZOOM = max(TEXT_LOD, 0.5)
MIN_SCALE = 0.0005
MAX_SCALE = 6.0
WHEEL_STEP = 1.0015  # zoom factor per 1/8 degree of wheel rotation (120 units = ~1.2x)
KEY_STEP = 1.25
EDGE_HIT_PX = 4.0  # how close (in screen pixels) a click must be to an edge's route


def scope_paths(name: str) -> list[str]:
    """Group paths a node name belongs to, outermost first.

    ``/model/layers.3/attn/MatMul`` -> ``["/model", "/model/layers.3", "/model/layers.3/attn"]``
    (the last segment is the node's own name, not a group).
    """
    if not name or "/" not in name:
        return []
    parts = [p for p in name.split("/")[:-1] if p]
    out: list[str] = []
    prefix = ""
    for part in parts:
        prefix = f"{prefix}/{part}"
        out.append(prefix)
    return out


class GraphView(QGraphicsView):
    """View of a GraphScene; see module docstring for gestures."""

    selectionChangedKeys = Signal(list)
    activated = Signal(str)
    groupToggled = Signal(str)
    #: "Show / fold weight preparation" on a box with folded weight chains (its key)
    weightsToggled = Signal(str)
    #: "Open body as its own view" on a control-flow box (its key)
    openBody = Signal(str)
    zoomChanged = Signal(float)
    viewportChanged = Signal()
    hoveredKey = Signal(str)
    #: a click on an edge selected the value (tensor name) it carries
    valueClicked = Signal(str)

    def __init__(self, scene: GraphScene | None = None, parent=None) -> None:
        super().__init__(parent)
        self._scene = scene or GraphScene(self)
        if self._scene.parent() is None:
            # NOTE: the view owns a parentless scene in C++. Otherwise the scene may be
            # destroyed while the view's Python wrapper is being torn down (its __dict__
            # holds the last reference), and the scene's destructor then calls back into
            # the half-destroyed view: a segfault at exit or at garbage collection.
            self._scene.setParent(self)
        self.setScene(self._scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        # NOTE: full repaints are cheaper than Qt's region bookkeeping once a frame has
        # hundreds of items; our paint cost is bounded by level of detail instead.
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setMouseTracking(True)
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_AcceptTouchEvents, False)
        self.grabGesture(Qt.GestureType.PinchGesture)
        self._band = QRectF()
        self._band_base: set[str] = set()
        self.rubberBandChanged.connect(self._on_band)
        self.scope_resolver = None  # Callable[[str], str] | None, see scope_of
        self.weights_unfolded = None  # Callable[[str], bool] | None, see weight_actions
        self._space = False
        self._panning = False
        self._pan_last = QPoint()
        self._on_title = False
        self._scene.selectionChangedKeys.connect(self.selectionChangedKeys)
        self._scene.valueClicked.connect(self.valueClicked)
        self._scene.graphChanged.connect(self._on_graph_changed)
        self.horizontalScrollBar().valueChanged.connect(self.viewportChanged)
        self.verticalScrollBar().valueChanged.connect(self.viewportChanged)

    # -- API -----------------------------------------------------------------------------
    def graph_scene(self) -> GraphScene:
        return self._scene

    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, scale: float, anchor: QPointF | None = None) -> None:
        """Set the absolute scale (1.0 = 100 %), keeping ``anchor`` (view coords) fixed."""
        scale = max(self._min_scale(), min(MAX_SCALE, scale))
        factor = scale / self.zoom()
        if abs(factor - 1.0) < 1e-9:
            return
        self._scale_by(factor, anchor)

    def zoom_in(self) -> None:
        self._scale_by(KEY_STEP, None)

    def zoom_out(self) -> None:
        self._scale_by(1.0 / KEY_STEP, None)

    def zoom_reset(self) -> None:
        self.set_zoom(1.0)

    def zoom_to_fit(self) -> None:
        """Show the whole graph, however small that makes it."""
        rect = self._scene.graph_rect()
        if rect.isEmpty():
            return
        # 12 px of slack: the scroll bars of a zoomed-in view go away once the graph fits,
        # and the scene shifts by half their width (a tall graph lost its last boxes)
        pad = 20.0 + 12.0 / max(self.fit_scale(rect), 1e-9)
        self.fit_rect(rect.adjusted(-pad, -pad, pad, pad))

    def zoom_to_readable(self) -> None:
        """Fit the whole graph when its text can be read so, else show its inputs readably."""
        rect = self._scene.graph_rect()
        if rect.isEmpty():
            return
        self.land_on(rect.adjusted(-20, -20, 20, 20), top=self.inputs_rect())

    def inputs_rect(self) -> QRectF:
        """Scene rectangle of the graph's input boxes (empty when the graph shows none)."""
        keys = [k for k in self._scene.node_items() if k.startswith("in:")]
        return self._scene.keys_rect(keys) if keys else QRectF()

    def fit_scale(self, rect: QRectF, *, max_scale: float = 1.5) -> float:
        """The zoom at which ``rect`` fills the viewport (capped at ``max_scale``)."""
        vp = self.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return self.zoom()
        return min(max_scale, vp.width() / rect.width(), vp.height() / rect.height())

    def land_on(self, rect: QRectF, *, top: QRectF | None = None, min_zoom: float = FIT_MIN_ZOOM,
                max_scale: float = 1.5) -> None:
        """Show ``rect`` whole when that is readable (at ``min_zoom`` or closer); else show
        its beginning at ``min_zoom``: the ``top`` region (a graph's inputs) when given, else
        the top of ``rect``, centred across when it fits the width."""
        if rect.isEmpty():
            return
        if self.fit_scale(rect, max_scale=max_scale) >= min_zoom:
            self.fit_rect(rect, max_scale=max_scale)
            return
        vp = self.viewport().rect()
        focus = top if top is not None and not top.isEmpty() else QRectF(rect.x(), rect.y(), rect.width(), 1)
        # the most context that is still readable
        zoom = min_zoom
        self.set_zoom(zoom)
        half_w = vp.width() / (2 * zoom)
        half_h = vp.height() / (2 * zoom)
        x = focus.center().x() if focus.width() <= 2 * half_w - 40 / zoom else focus.left() + half_w - 20 / zoom
        self.centerOn(QPointF(x, min(focus.top(), rect.top() + 20) + half_h - 30 / zoom))
        self._after_zoom()

    def zoom_to_selection(self) -> None:
        keys = self._scene.selected_keys()
        if not keys:
            return
        self.fit_rect(self._scene.keys_rect(keys).adjusted(-60, -60, 60, 60), max_scale=1.5)

    def fit_rect(self, rect: QRectF, *, max_scale: float = 1.5) -> None:
        vp = self.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return
        scale = min(vp.width() / rect.width(), vp.height() / rect.height())
        scale = max(MIN_SCALE, min(max_scale, scale))
        self.setTransform(QTransform.fromScale(scale, scale))
        self.centerOn(rect.center())
        self._after_zoom()

    def select_keys(self, keys, center: bool = True) -> None:
        keys = list(keys)
        self._scene.select_keys(keys)
        if center and keys:
            rect = self._scene.keys_rect(keys)
            if not rect.isEmpty():
                vis = self.mapToScene(self.viewport().rect()).boundingRect()
                if rect.width() > vis.width() or rect.height() > vis.height():
                    # all of them when that stays readable, else the first ones readably
                    # (250 Find matches over a tall graph are not a reason for a 2 % view)
                    self.land_on(rect.adjusted(-60, -60, 60, 60), max_scale=self.zoom(),
                                 min_zoom=min(FIT_MIN_ZOOM, self.zoom()))
                else:
                    self.centerOn(rect.center())

    def center_on(self, key: str) -> None:
        item = self._scene.item_for(key)
        if item is not None:
            self.centerOn(item.scene_rect().center())

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

    # -- zoom mechanics -----------------------------------------------------------------
    def _min_scale(self) -> float:
        rect = self._scene.graph_rect()
        vp = self.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return MIN_SCALE
        fit = min(vp.width() / rect.width(), vp.height() / rect.height())
        return max(MIN_SCALE, min(0.5, fit * 0.5))

    def _scale_by(self, factor: float, anchor: QPointF | None) -> None:
        current = self.zoom()
        target = max(self._min_scale(), min(MAX_SCALE, current * factor))
        factor = target / current
        if abs(factor - 1.0) < 1e-9:
            return
        if anchor is None:
            anchor = QPointF(self.viewport().rect().center())
        before = self.mapToScene(anchor.toPoint())
        old = self.transformationAnchor()
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.scale(factor, factor)
        after = self.mapToScene(anchor.toPoint())
        delta = after - before
        self.translate(delta.x(), delta.y())
        # keep the scene point under the anchor exactly (translate is scroll-bar quantised)
        self._nudge(before, anchor)
        self.setTransformationAnchor(old)
        self._after_zoom()

    def _nudge(self, scene_pt: QPointF, anchor: QPointF) -> None:
        now = self.mapFromScene(scene_pt)
        dx = now.x() - anchor.x()
        dy = now.y() - anchor.y()
        if dx:
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + round(dx))
        if dy:
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() + round(dy))

    def _after_zoom(self) -> None:
        self._scene.set_detail(self.zoom())
        self.zoomChanged.emit(self.zoom())
        self.viewportChanged.emit()

    def _on_graph_changed(self) -> None:
        self._scene.set_detail(self.zoom())
        self.viewportChanged.emit()

    # -- events ---------------------------------------------------------------------------
    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        mods = event.modifiers()
        pixel = event.pixelDelta()
        angle = event.angleDelta()
        # Trackpads report scroll phases (and pixel deltas in non-notch steps); mouse wheels
        # report whole notches without a phase.
        trackpad = event.phase() != Qt.ScrollPhase.NoScrollPhase or (not pixel.isNull() and angle.y() % 120 != 0)
        if mods & Qt.KeyboardModifier.ShiftModifier and not mods & Qt.KeyboardModifier.ControlModifier:
            bar = self.horizontalScrollBar()
            bar.setValue(bar.value() - (angle.y() or angle.x()) // 2)
            event.accept()
            return
        if trackpad and not mods & Qt.KeyboardModifier.ControlModifier:
            # two-finger scroll on a trackpad pans
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - pixel.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - pixel.y())
            event.accept()
            return
        delta = angle.y() or angle.x()
        if not delta:
            return
        self._scale_by(WHEEL_STEP**delta, event.position())
        event.accept()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip:
            text = self.tooltip_at(event.pos())
            if not text:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            return True
        if event.type() == QEvent.Type.NativeGesture:
            gesture = event.gestureType()
            if gesture == Qt.NativeGestureType.ZoomNativeGesture:
                self._scale_by(1.0 + event.value(), event.position())
                return True
            if gesture == Qt.NativeGestureType.SmartZoomNativeGesture:
                if self.zoom() < 0.9:
                    self._scale_by(1.0 / self.zoom(), event.position())
                else:
                    self.zoom_to_fit()
                return True
        return super().viewportEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            event.accept()
            return
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key == Qt.Key.Key_Minus:
            self.zoom_out()
        elif key == Qt.Key.Key_0:
            self.zoom_reset()
        elif key == Qt.Key.Key_F:
            self.zoom_to_fit()
        elif key == Qt.Key.Key_R:
            self.zoom_to_readable()
        elif key == Qt.Key.Key_S:
            self.zoom_to_selection()
        elif key == Qt.Key.Key_Escape:
            self._scene.clear_selection()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def keyReleaseEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            if not self._panning:
                self.viewport().unsetCursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (button == Qt.MouseButton.LeftButton and self._space):
            self._panning = True
            self._pan_last = event.position().toPoint()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if button == Qt.MouseButton.LeftButton:
            key = self.key_at(event.position().toPoint())
            additive = bool(event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.MetaModifier))
            if key is not None:
                if additive:
                    self._scene.toggle_key(key)
                else:
                    # exactly the clicked box, also when it was one of several selected:
                    # boxes do not drag, so nothing needs the others kept for a drag
                    self._scene.select_keys([key])
                event.accept()
                return
            if not additive:
                scene_pt = self.mapToScene(event.position().toPoint())
                path = self._scene.frame_title_at(scene_pt)
                if path is not None:
                    self.groupToggled.emit(f"g:{path}")
                    event.accept()
                    return
                edge = self.edge_at(event.position().toPoint())
                if edge is not None:
                    self._scene.click_value(edge.value)
                    event.accept()
                    return
            # empty background: start a rubber band (Qt draws it; we select on release)
            self._band_base = set(self._scene.selected_keys()) if additive else set()
            if not additive:
                self._scene.clear_selection()
            self._band = QRectF()
        super().mousePressEvent(event)

    def _on_band(self, rect: QRect, from_scene: QPointF, to_scene: QPointF) -> None:
        if not rect.isNull():
            self._band = QRectF(from_scene, to_scene).normalized()
            self._scene.select_keys(self._band_base | set(self._scene.keys_in_rect(self._band)))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._panning:
            pos = event.position().toPoint()
            delta = pos - self._pan_last
            self._pan_last = pos
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            event.accept()
            return
        if event.buttons() == Qt.MouseButton.NoButton:
            pos = event.position().toPoint()
            key = self.key_at(pos)
            if key != self._scene.hovered():
                self._scene.set_hovered(key)
                self.hoveredKey.emit(key or "")
            # a frame's title band is a button (click collapses), an edge selects its value:
            # the hovered edge lights up, and the cursor says that a click does something
            on_title = key is None and self._scene.frame_title_at(self.mapToScene(pos)) is not None
            edge = self.edge_at(pos) if key is None and not on_title else None
            self._scene.set_hovered_value(edge.value if edge is not None else None)
            clickable = on_title or edge is not None
            if clickable != self._on_title and not self._space:
                self._on_title = clickable
                if clickable:
                    self.viewport().setCursor(Qt.CursorShape.PointingHandCursor)
                else:
                    self.viewport().unsetCursor()
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._panning and event.button() in (Qt.MouseButton.MiddleButton, Qt.MouseButton.LeftButton):
            self._panning = False
            if self._space:
                self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            else:
                self.viewport().unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        # NOTE: Qt sends a double-click *instead of* the second press when two clicks come
        # quickly at one spot, even on two different boxes (the view scrolled between
        # them): that press must select what it lands on like any other, or the box
        # selected before stays selected (a real X window missed 36 of 253 clicks so).
        if event.button() != Qt.MouseButton.LeftButton or self._space:
            super().mouseDoubleClickEvent(event)
            return
        pos = event.position().toPoint()
        item = self._node_at(pos)
        if item is None:
            if self._scene.frame_title_at(self.mapToScene(pos)) is None:
                self.mousePressEvent(event)  # an edge or the background: as a press
            event.accept()
            return
        additive = bool(event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.MetaModifier))
        if not additive and self._scene.selected_keys() != [item.key]:
            self._scene.select_keys([item.key])
        if item.box.kind == "group":
            self.groupToggled.emit(item.key)
        else:
            self.activated.emit(item.key)
        event.accept()

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802
        self._scene.set_hovered(None)
        self._scene.set_hovered_value(None)
        super().leaveEvent(event)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        self.context_menu(self._node_at(event.pos())).exec(event.globalPos())

    def context_menu(self, item: NodeItem | None) -> QMenu:
        """The context menu for a box (or the background when ``item`` is None)."""
        menu = QMenu(self)
        if item is not None:
            if item.box.kind == "group":
                menu.addAction("Expand group", lambda k=item.key: self.groupToggled.emit(k))
                for path in scope_paths(item.key[2:] + "/x")[:-1]:
                    menu.addAction(f"Collapse {path}", lambda p=path: self.groupToggled.emit(f"g:{p}"))
            else:
                graph = self._scene.graph
                if item.box.subgraphs and item.box.node_id is not None:
                    self.body_actions(menu, item)
                self.weight_actions(menu, item)
                for path, text in self.open_groups_of(item.key):
                    menu.addAction(f"Collapse {text}", lambda p=path: self.groupToggled.emit(f"g:{p}"))
            if not self._scene.is_selected(item.key):
                self._scene.select_keys([item.key])
        menu.addSeparator()
        menu.addAction("Zoom to selection\tS", self.zoom_to_selection)
        menu.addAction("Zoom to fit\tF", self.zoom_to_fit)
        act = menu.addAction("Show node names")
        act.setCheckable(True)
        act.setChecked(self._scene.show_names())
        act.toggled.connect(self._scene.set_show_names)
        return menu

    def open_groups_of(self, key: str) -> list[tuple[str, str]]:
        """(path, menu text) of the open groups and bodies around box ``key``, innermost
        first: what its context menu offers to collapse."""
        graph = self._scene.graph
        box_groups = getattr(graph, "box_groups", None) or {}
        parents = getattr(graph, "group_parents", None) or {}
        labels = getattr(graph, "group_labels", None) or {}
        if not box_groups:
            scope = self.scope_of(key)
            return [(p, p) for p in reversed(scope_paths(scope + "/x") if scope else [])]
        out = []
        g = box_groups.get(key, "")
        while g:
            if g.startswith("@"):
                head, _, rest = g.partition("/")
                if not rest:  # the owner's frame (a body's sub-frame closes the same)
                    out.append((g, f"{labels.get(g, g)} bodies"))
                elif "/" in rest:  # a name scope inside a body
                    out.append((g, rest.partition("/")[2]))
            else:
                out.append((g, g))
            g = parents.get(g, "")
        return out

    def weight_actions(self, menu: QMenu, item: NodeItem) -> None:
        """Unfold the weight-preparation nodes drawn as weight rows of ``item``, or fold
        back the ones unfolded before (``weights_unfolded`` tells which)."""
        folded = (getattr(self._scene.graph, "folded", None) or {}).get(item.key, ())
        if folded:
            menu.addAction(f"Show weight preparation ({len(folded)} nodes)",
                           lambda k=item.key: self.weightsToggled.emit(k))
        elif self.weights_unfolded is not None and self.weights_unfolded(item.key):
            menu.addAction("Fold weight preparation", lambda k=item.key: self.weightsToggled.emit(k))

    def body_actions(self, menu: QMenu, item: NodeItem) -> None:
        """Expand/collapse a control-flow node's bodies in place, or open one as a view."""
        path = f"@{item.box.node_id}"
        graph = self._scene.graph
        is_open = path in (getattr(graph, "group_parents", None) or {})
        menu.addAction("Collapse bodies" if is_open else "Expand bodies in place",
                       lambda: self.groupToggled.emit(f"g:{path}"))
        menu.addAction("Open body as its own view", lambda k=item.key: self.openBody.emit(k))

    def scope_of(self, key: str) -> str:
        """Group path of a box: from ``scope_resolver`` (the controller knows exporter
        metadata scopes) or else from the node's name."""
        if self.scope_resolver is not None:
            return self.scope_resolver(key)
        item = self._scene.item_for(key)
        if item is None:
            return ""
        if item.box.kind == "group":
            return item.box.name
        paths = scope_paths(item.box.name)
        return paths[-1] if paths else ""

    def edge_at(self, pos: QPoint):
        """The edge drawn within ``EDGE_HIT_PX`` pixels of a viewport position, if any."""
        return self._scene.edge_at(self.mapToScene(pos), EDGE_HIT_PX / max(self.zoom(), 1e-6))

    def tooltip_at(self, pos: QPoint) -> str:
        """Tool tip for a viewport position: a box's, a frame title's, or an edge's."""
        item = self._node_at(pos)
        if item is not None:
            return item.tooltip()
        path = self._scene.frame_title_at(self.mapToScene(pos))
        if path is not None:
            return f"<b>{_esc(path)}</b><br>click to collapse"
        edge = self.edge_at(pos)
        if edge is not None:
            return self._scene.value_tooltip(edge)
        return ""

    def key_at(self, pos: QPoint) -> str | None:
        """Key of the box under a viewport position, if any."""
        return self._scene.key_at(self.mapToScene(pos))

    def _node_at(self, pos: QPoint) -> NodeItem | None:
        key = self.key_at(pos)
        return self._scene.item_for(key) if key is not None else None

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802
        super().scrollContentsBy(dx, dy)
        self.viewportChanged.emit()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.viewportChanged.emit()


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
