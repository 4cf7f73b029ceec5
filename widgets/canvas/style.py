"""Shared drawing resources of one scene: fonts, metrics, pens, level-of-detail thresholds.

Created once per scene (and again when the theme changes) so that ``paint()`` never
allocates fonts, metrics or pens: every item reads them from here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen

from widgets.canvas.palette import Palette, light_palette

# NOTE: level-of-detail thresholds, in device pixels per scene unit (the painter's scale).
# Below BATCH_LOD node items stop painting altogether and per-tile batch items draw every
# box of a tile as one filled path per colour (a frame of 10k boxes is then a few dozen
# fillPath calls instead of 10k Python paint() calls). Between BATCH_LOD and TEXT_LOD each
# box paints itself as a plain two-tone rectangle; from TEXT_LOD on it draws its text.
# Edge labels (tensor shapes) need more room still: LABEL_LOD.
BATCH_LOD = 0.22
TEXT_LOD = 0.45
# Between OP_NAME_LOD and TEXT_LOD a box shows its op type alone, bold, at OP_NAME_PX screen
# pixels whatever the zoom (the label is what users navigate by: Netron's text stays longer
# than ours did); it may use the box's outline margin when wider than the box.
OP_NAME_LOD = BATCH_LOD
OP_NAME_PX = 7.5
LABEL_LOD = 0.75
ANTIALIAS_LOD = 0.3
EDGE_DOUBLE_LOD = 1.4   # from here on edges are 2 px wide (see the NOTE on edge pens)

# Box geometry inside the sizes the view model computes (editor.viewmodel: TITLE_H 26,
# LINE_H 13, 4 units of bottom padding): a 22-unit coloured header, then 13-unit lines.
HEADER_H = 22.0
LINE_H = 13.0
PAD_X = 7.0
RADIUS = 4.0


#: texts whose widths and elisions a style remembers (a long session's many models)
_TEXT_CACHE_MAX = 100_000


class CanvasStyle:
    """Fonts (pixel-sized, so that scene units are layout units), metrics and pens."""

    def __init__(self, palette: Palette | None = None, family: str = "") -> None:
        self.palette = palette or light_palette()
        base = QFont(family) if family else QFont()
        base.setStyleHint(QFont.StyleHint.SansSerif)
        base.setHintingPreference(QFont.HintingPreference.PreferNoHinting)

        self.header_font = QFont(base)
        self.header_font.setPixelSize(11)
        self.header_font.setBold(True)
        self.body_font = QFont(base)
        self.body_font.setPixelSize(10)
        self.name_font = QFont(base)
        self.name_font.setPixelSize(10)
        self.name_font.setItalic(True)
        self.label_font = QFont(base)
        self.label_font.setPixelSize(9)
        # the op name below TEXT_LOD: drawn scaled to OP_NAME_PX screen pixels
        self.op_name_font = QFont(base)
        self.op_name_font.setPixelSize(10)
        self.op_name_font.setBold(True)
        self.header_metrics = QFontMetricsF(self.header_font)
        self.body_metrics = QFontMetricsF(self.body_font)
        self.name_metrics = QFontMetricsF(self.name_font)
        self.label_metrics = QFontMetricsF(self.label_font)
        self.op_name_metrics = QFontMetricsF(self.op_name_font)

        pal = self.palette
        self.border_pen = QPen(pal.box_border, 1.0)
        self.border_pen.setCosmetic(True)
        self.no_pen = QPen(Qt.PenStyle.NoPen)
        self.fill_brush = QBrush(pal.box_fill)
        self.group_brush = QBrush(pal.group_fill)
        self.text_pen = QPen(pal.box_text)
        self.header_text_pen = QPen(pal.header_text)
        self.muted_pen = QPen(pal.muted_text)
        self.label_pen = QPen(pal.edge_label)
        halo = QColor(pal.background)
        halo.setAlpha(210)
        self.label_halo = QBrush(halo)
        self.reference_pen = QPen(pal.reference, 1.2)
        self.reference_pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        # a value read inside a closed If/Loop/Scan body (Edge.kind "body"): dashed
        self.body_pen = QPen(pal.edge, 1.0, Qt.PenStyle.DashLine)
        self.body_pen.setCosmetic(True)

        # NOTE: edge pens are exactly 1 px and cosmetic. Qt's raster engine draws antialiased
        # cosmetic lines up to 1 px wide with its line drawer; any wider pen (cosmetic or
        # scaled) is stroked into an outline polygon that is then filled, and for a tile's
        # batched path of long edges that fill grew with edges x image height: it was the
        # 7-55 s "draw" of collapsed PNGs (1.3 px: 35 s, 1.0 px: 0.4 s, same picture).
        # Close up, edges are drawn twice, a fraction of a pixel apart (EDGE_DOUBLE_LOD):
        # a 2 px line at the cost of two fast ones. Zoomed out (below TEXT_LOD) they use a
        # stronger colour so they stay visible against the background.
        self.edge_pen = QPen(pal.edge, 1.0)
        self.edge_pen.setCosmetic(True)
        self.edge_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self.edge_pen_cosmetic = self.edge_pen
        far = QColor(pal.edge).darker(140) if QColor(pal.background).lightness() > 128 else \
            QColor(pal.edge).lighter(150)
        self.edge_pen_far = QPen(far, 1.0)
        self.edge_pen_far.setCosmetic(True)
        self.edge_brush = QBrush(pal.edge)

        self.selection_pen = QPen(pal.selection, 2.5)
        self.selection_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        # neighbours (producers/consumers) get a lighter, thinner, dashed outline than the
        # selection so that the two never read as the same thing
        neighbour = QColor(pal.highlight)
        neighbour.setAlpha(170)
        self.highlight_pen = QPen(neighbour, 1.6, Qt.PenStyle.DashLine)
        self.highlight_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self.path_pen = QPen(pal.path, 2.5)
        self.path_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self.hl_edge_pen = QPen(pal.highlight, 2.2)
        self.hl_edge_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self.hl_edge_pen_cosmetic = QPen(pal.highlight, 2.0)
        self.hl_edge_pen_cosmetic.setCosmetic(True)
        self.path_edge_pen = QPen(pal.path, 2.8)
        self.path_edge_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        self.path_edge_pen_cosmetic = QPen(pal.path, 2.5)
        self.path_edge_pen_cosmetic.setCosmetic(True)
        self._brushes: dict[str, QBrush] = {}
        self._header_brushes: dict[str, QBrush] = {}
        self._op_name_widths: dict[str, float] = {}
        # NOTE: speed. Box after box asks for the same texts ("MatMul", "128x128 float32"):
        # an 11.8k-node SVG asked for 61,657 widths of 861 texts and 36,636 elisions of
        # 1,912, a fifth of its CPU. Keyed by the metrics object (one of this style's own).
        self._advances: dict[tuple[int, str], float] = {}
        self._elisions: dict[tuple[int, str, object, float], str] = {}

    def advance(self, metrics: QFontMetricsF, text: str) -> float:
        """``metrics.horizontalAdvance(text)`` for one of this style's metrics, remembered."""
        key = (id(metrics), text)
        w = self._advances.get(key)
        if w is None:
            if len(self._advances) > _TEXT_CACHE_MAX:
                self._advances.clear()
            w = self._advances[key] = metrics.horizontalAdvance(text)
        return w

    def elided(self, metrics: QFontMetricsF, text: str, mode: Qt.TextElideMode, width: float) -> str:
        """``metrics.elidedText(text, mode, width)`` for one of this style's metrics, remembered."""
        key = (id(metrics), text, mode, width)
        out = self._elisions.get(key)
        if out is None:
            if len(self._elisions) > _TEXT_CACHE_MAX:
                self._elisions.clear()
            out = self._elisions[key] = metrics.elidedText(text, mode, width)
        return out

    def op_name_width(self, text: str) -> float:
        """Width of ``text`` in the op-name font (font units), once per distinct op type."""
        w = self._op_name_widths.get(text)
        if w is None:
            w = self._op_name_widths[text] = self.op_name_metrics.horizontalAdvance(text)
        return w

    def category_brush(self, category: str) -> QBrush:
        brush = self._brushes.get(category)
        if brush is None:
            brush = QBrush(self.palette.category(category))
            self._brushes[category] = brush
        return brush

    def category_colour(self, category: str) -> QColor:
        return self.palette.category(category)
