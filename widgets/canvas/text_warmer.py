"""Box texts laid out ahead of their first paint, nearest the view first, while idle.

A box lays out its texts (elided, placed ``QStaticText``) at its first paint, and Qt lays
out each static text's glyphs at its first draw at a zoom. So a view that comes to a part
of the graph not shown before (a jump to a search hit, an undo or a rename far away, a
pan) paid for both for every box in it within one frame: 12-18 ms of a 25-45 ms repaint on
densenet121's 219 boxes, the longest stall of a burst of edits there. The warmer does that
work between events, a slice of a few milliseconds at a time: first the boxes within a
screen of the view, then (on graphs of up to ``WARM_ALL`` boxes) all of them; again after a
zoom (glyphs are laid out per scale) and around the view after it moves on bigger graphs.
Nothing is warmed below the zoom at which boxes show text.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QTransform

from widgets.canvas.style import TEXT_LOD

#: seconds of warming per event-loop turn
SLICE_S = 0.003
#: graphs with at most this many boxes are warmed whole; bigger ones around the view only
#: (a warmed box holds its glyph layouts: memory, and ~0.13 ms of CPU each)
WARM_ALL = 3000
#: milliseconds to wait after a zoom or a move before warming (a gesture in progress)
SETTLE_MS = 120


class TextWarmer(QObject):
    """Warms the texts of ``view``'s boxes (see the module docstring)."""

    def __init__(self, view) -> None:
        super().__init__(view)
        self.view = view
        self.scene = view.graph_scene()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._step)
        self._queue: Iterator[str] | None = None
        self._scale: QTransform | None = None
        #: boxes warmed so far (for tests and benchmarks)
        self.warmed = 0
        self.scene.graphChanged.connect(self.restart)
        view.zoomChanged.connect(self.restart)
        view.viewportChanged.connect(self._on_moved)

    def restart(self, *_args) -> None:
        """Warm again from the boxes around the view (a new graph, a new zoom)."""
        self._queue = None
        self._timer.start(SETTLE_MS)

    def _on_moved(self) -> None:
        # a graph warmed whole needs nothing more; on a bigger one the new surroundings do
        if len(self.scene.node_items()) > WARM_ALL:
            self.restart()

    def _keys(self) -> Iterator[str]:
        items = self.scene.node_items()
        rect = self.view.visible_scene_rect()
        near = self.scene.keys_in_rect(rect.adjusted(-rect.width(), -rect.height(), rect.width(), rect.height()))
        yield from near
        if len(items) <= WARM_ALL:
            seen = set(near)
            yield from (k for k in list(items) if k not in seen)

    def _step(self) -> None:
        zoom = self.view.zoom()
        if zoom < TEXT_LOD or self.scene.relaying:
            self._queue = None
            return
        if self._queue is None:
            ratio = self.view.viewport().devicePixelRatioF()
            self._scale = QTransform.fromScale(zoom * ratio, zoom * ratio)
            self._queue = self._keys()
        items = self.scene.node_items()
        deadline = time.perf_counter() + SLICE_S
        for key in self._queue:
            item = items.get(key)
            if item is not None and item.warm_text(self._scale):
                self.warmed += 1
                if time.perf_counter() > deadline:
                    self._timer.start(0)
                    return
        self._queue = None
