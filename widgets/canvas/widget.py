"""``CanvasWidget``: the canvas as the main window docks it.

Breadcrumb on top, the ``GraphView`` below with a ``Minimap`` floating in its bottom-right
corner, and a ``GraphController`` that re-lays out when a group is toggled. The breadcrumb
follows the selection (the scope of the first selected box); clicking a segment selects
and frames everything inside that scope.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from widgets.canvas.breadcrumb import Breadcrumb
from widgets.canvas.controller import GraphController
from widgets.canvas.minimap import Minimap
from widgets.canvas.scene import GraphScene
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
        self.view.groupToggled.connect(self.controller.toggle_group)
        self.view.weightsToggled.connect(self.controller.toggle_weights)
        self.view.weights_unfolded = self.controller.weights_unfolded
        self.breadcrumb.pathClicked.connect(self.select_scope)
        self.view.viewportChanged.connect(self._place_minimap)
        self._fit_next = True
        self.controller.laidOut.connect(self._on_laid_out)

    def set_source(self, graph, node_ids, *, opsets, value_info=None, expanded="auto", sync: bool = False) -> None:
        """Show a graph scope (GraphProto + stable node ids); fits it once laid out."""
        self._fit_next = True
        self.breadcrumb.set_root_label(graph.name or "Graph")
        self.controller.set_source(graph, node_ids, opsets=opsets, value_info=value_info, expanded=expanded, sync=sync)

    def _on_laid_out(self) -> None:
        if self._fit_next:
            self._fit_next = False
            self.view.zoom_to_fit()

    def _on_selection(self, keys: list) -> None:
        self.breadcrumb.set_path(self.controller.scope_of(keys[0]) if keys else "")

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

    def _place_minimap(self) -> None:
        vp = self.view.viewport().geometry()
        size = self.minimap.size()
        self.minimap.move(vp.right() - size.width() - MINIMAP_MARGIN, vp.bottom() - size.height() - MINIMAP_MARGIN)
        self.minimap.raise_()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._place_minimap()
