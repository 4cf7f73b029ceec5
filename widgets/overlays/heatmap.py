"""A profile heat map over the canvas: one translucent, coloured rectangle per box with time.

Like the diff colours (:mod:`widgets.compare.overlay`), this is a box overlay
(:mod:`widgets.overlays.box_overlay`): an item of our own on the tab's ``GraphScene`` that reads box
rectangles from the scene, is rebuilt when the scene lays out again and takes no mouse
buttons.

A box's time is its node's (``n:<id>`` keys) or, for a collapsed group (``g:<path>``), the
sum over the nodes inside it. Colours run from pale yellow to deep red on a square-root
scale of the box's share of the slowest box, so a few heavy convolutions do not wash every
other box out to the same pale colour.
"""

from __future__ import annotations

import math

from PySide6.QtGui import QColor, QPainter, QPen

from editor.node_data import by_box
from widgets.overlays.box_overlay import BoxOverlay, BoxOverlayItem, badge_font, group_index, paint_badge

Z_HEATMAP = 2.5  # above the box layers (2.0), below nothing that takes clicks


def heat_colour(share: float, alpha: int = 255) -> QColor:
    """Pale yellow (0) -> orange -> deep red (1)."""
    s = max(0.0, min(1.0, share))
    hue = 55.0 * (1.0 - s) / 360.0
    c = QColor.fromHslF(hue, 0.95, 0.62 - 0.22 * s)
    c.setAlpha(alpha)
    return c


def fmt_us(us: float) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.0f} µs"


def box_times(scene, node_times: dict[int, float], node_names: dict[int, str]) -> dict[str, float]:
    """Scene key -> microseconds: node boxes directly, collapsed groups by name prefix
    (the innermost group whose path prefixes the node's name)."""
    items = scene.node_items()
    out: dict[str, float] = {}
    for key, us in by_box(node_times, items, group_index(items), node_names):
        out[key] = out.get(key, 0.0) + us
    return out


class HeatMapOverlay(BoxOverlayItem):
    """Coloured rectangles over the boxes that have a time (see module docstring)."""

    def __init__(self) -> None:
        super().__init__(Z_HEATMAP)
        self._font = badge_font()

    def set_times(self, scene, times: dict[str, float], fmt=fmt_us, colour=None) -> None:
        """``times``: scene key -> microseconds (or any amount ``fmt`` labels). Boxes not in
        the scene are skipped. ``colour(amount, peak)`` replaces the heat scale (labels that
        each want a colour of their own)."""
        peak = max(times.values(), default=0.0) or 1.0
        tint = colour or (lambda us, top: heat_colour(math.sqrt(us / top)))
        self._place(scene, sorted(times.items(), key=lambda kv: kv[1]), (-4, -18, 4, 4),
                    lambda rect, us: (rect, tint(us, peak), fmt(us)))

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        exposed = option.exposedRect
        for rect, colour, label in self._cells:
            if not rect.intersects(exposed.adjusted(-4, -18, 4, 4)):
                continue
            fill = QColor(colour)
            fill.setAlpha(90)
            painter.setBrush(fill)
            painter.setPen(QPen(colour, 3.0 if lod >= 0.3 else 0.0))
            painter.drawRoundedRect(rect.adjusted(-2, -2, 2, 2), 5, 5)
            if lod >= 0.45:
                paint_badge(painter, self._font, rect, label, colour)


class HeatMap(BoxOverlay):
    """Keeps a :class:`HeatMapOverlay` on one tab's scene in step with its layout.

    The amounts are microseconds by default; a subclass sets ``fmt`` to label others
    (the cost panel's MACs, parameters or bytes)."""

    fmt = staticmethod(fmt_us)
    title = "Profile: kernel time"

    def __init__(self, tab) -> None:
        self._node_times: dict[int, float] = {}
        super().__init__(tab, HeatMapOverlay())

    @property
    def node_times(self) -> dict[int, float]:
        """Node id -> amount (what an export of the overlay carries, :mod:`widgets.export.webpage`)."""
        return dict(self._node_times)

    def set_node_times(self, node_times: dict[int, float]) -> None:
        self._node_times = dict(node_times)
        self._rebuild()
        self.refresh_legend()

    def legend(self) -> tuple[str, list[tuple[QColor, str]]]:
        """The heat scale at the slowest box's amount, a quarter and a sixteenth of it."""
        peak = max(self.times_by_key().values(), default=0.0) if self._visible else 0.0
        if peak <= 0:
            return self.title, []
        return self.title, [(heat_colour(math.sqrt(f)), self.fmt(peak * f)) for f in (1.0, 0.25, 1 / 16)]

    def _rebuild(self) -> None:
        if not self._visible:
            return
        self.overlay.set_times(self.scene, self.times_by_key(), self.fmt)
        self.overlay.update()

    def times_by_key(self) -> dict[str, float]:
        return box_times(self.scene, self._node_times, self.node_names(self._node_times))
