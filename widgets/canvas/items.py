"""Graphics items of the canvas for boxes: one item per box, and low-zoom box batches.

Edges are drawn by :mod:`widgets.canvas.edge_items`, the zoomed-out overview image by
:mod:`widgets.canvas.overview`; painting primitives shared by both
(roles, level of detail, static text) live in :mod:`widgets.canvas.painting`.

Rules every item here follows (they are what keeps a 10k-node frame under 16 ms):
- geometry (bounding rect, paths) is computed once, in the constructor;
- text is laid out once per item into ``QStaticText`` objects, lazily on the first
  detailed paint, and reused for every later frame;
- ``paint()`` only reads state: it never changes geometry, flags or scene contents;
- the level of detail comes from the painter's transform, so the same code serves the
  view, the minimap-free exports and ``QGraphicsScene.render``.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QPainter,
    QPainterPath,
    QPen,
    QStaticText,
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QStyleOptionGraphicsItem

from widgets.canvas.painting import (  # noqa: F401 (ROLE_* re-exported: the scene's callers read them here)
    AA,
    ELIDE_MIDDLE,
    ELIDE_RIGHT,
    NO_BRUSH,
    NO_PEN,
    ROLE_NEIGHBOUR,
    ROLE_NONE,
    ROLE_PATH,
    ROLE_SELECTED,
    level_of_detail,
    static_text,
)
from widgets.canvas.style import (
    HEADER_H,
    LINE_H,
    OP_NAME_LOD,
    OP_NAME_PX,
    PAD_X,
    RADIUS,
    TEXT_LOD,
    CanvasStyle,
)

_MARGIN = 8.0  # room around a box for its selection / highlight outline


def op_name_room(rects: list[tuple[float, float, float, float]], need: list[float],
                 band: float) -> list[tuple[float, float]]:
    """How far each box's low-zoom op name may reach past the (left, right) side of the box,
    in scene units: into the gap to a box beside it only as far as that box's own name
    leaves free (half the gap when both need more), so two names never meet; ``inf`` with
    no box on that side.

    ``rects`` are (x0, y0, x1, y1); ``need[i]``: how far box i's name reaches past each
    side, centred, at the lowest zoom that draws it (a name shifted off-centre needs up to
    twice that on one side); ``band`` is half the tallest op-name pill. A box
    is *beside* another when its extent, or its own pill, and the other's pill overlap
    vertically: boxes of other layers never are.

    # NOTE: at 25 % zoom a 56-unit box is 14 px wide and "Add" in the 7.5 px bold op-name
    # font 16.5 px: inside the box's outline margin every short op type was cut ("A…",
    # "M…" for an attention MatMul). Most boxes have free room beside them (a chain's box
    # has a whole empty layer row), and a box with weights is wide enough for its name.
    """
    n = len(rects)
    cy = [(r[1] + r[3]) / 2 for r in rects]
    half = [max((r[3] - r[1]) / 2, band) for r in rects]   # vertical reach: box or pill
    order = sorted(range(n), key=cy.__getitem__)
    ys = [cy[i] for i in order]
    reach = band + max(half, default=0.0)
    inf = float("inf")
    out: list[tuple[float, float]] = [(inf, inf)] * n
    lo = 0
    for i in order:   # in y order: the window's start ``lo`` only moves forward
        c = cy[i]
        while ys[lo] < c - reach:
            lo += 1
        x0, _, x1, _ = rects[i]
        left = right = inf
        b = lo
        while b < n and ys[b] <= c + reach:
            j = order[b]
            b += 1
            if j == i or abs(cy[j] - c) >= band + half[j]:
                continue
            jx0, _, jx1, _ = rects[j]
            if jx0 >= x1:
                gap = jx0 - x1 - _NAME_GAP
            elif jx1 <= x0:
                gap = x0 - jx1 - _NAME_GAP
            else:
                left = right = 0.0   # overlapping boxes (a frame's pins): no room
                continue
            # what the neighbour leaves free: all but its own need, at least half the gap
            free = max(gap - min(max(need[j], 0.0), gap / 2), 0.0)
            if jx0 >= x1:
                right = min(right, free)
            else:
                left = min(left, free)
        out[i] = (left, right)
    return out


_NAME_GAP = 4.0   # scene units kept free between two op names that reach into one gap


class NodeItem(QGraphicsRectItem):
    """One box of the display model (node, graph input/output, collapsed group).

    # NOTE: a QGraphicsRectItem rather than a bare QGraphicsItem so that ``boundingRect``
    # stays in C++: Qt asks every item in the exposed area for it on every frame, and a
    # Python override costs ~6 us per call (65 ms for 10k boxes, measured). The rect item's
    # (never drawn) rect supplies the margin for selection outlines.
    # NOTE: no item cache (ItemCoordinateCache / DeviceCoordinateCache): measured on a 10k
    # graph at 100 % and 50 % zoom, cached frames and pans were no faster than uncached ones
    # (a box paints in ~30 us; text is already QStaticText), and the caches cost memory.
    """

    def __init__(self, box, pos: tuple[float, float], style: CanvasStyle, *, show_names: bool = False,
                 parent: QGraphicsItem | None = None, repeats: tuple[str, ...] = ()) -> None:
        super().__init__(parent)
        #: group boxes: every collapsed group with the same structure (itself included)
        self.repeats = repeats
        self._selected = False
        self.box = box
        self.key: str = box.key
        self._style = style
        self._show_names = show_names
        self._role = ROLE_NONE
        self._rect = QRectF(0.0, 0.0, float(box.width), float(box.height))
        # the (never drawn) rect is the box plus the outline margin: boundingRect in C++
        self.setRect(QRectF(-_MARGIN, -_MARGIN, box.width + 2 * _MARGIN, box.height + 2 * _MARGIN))
        self._texts: list[tuple[int, QStaticText, QPointF]] | None = None
        #: (texts, scale) that warm_text last laid out glyphs for (None: not warmed)
        self._warmed: tuple[list, QTransform] | None = None
        #: the op name of the low-zoom level of detail: (room, text, width, height)
        self._op_name: tuple[int, QStaticText | None, float, float] | None = None
        #: free room beside the box (set_op_name_room), and how far the op name reaches into
        #: it on the left and on the right
        self._room = (0.0, 0.0)
        self._spill = (_MARGIN, _MARGIN)
        self._body: QPainterPath | None = None
        self._colour = style.category_colour(box.category)
        self._brush = style.category_brush(box.category)
        self.setPos(float(pos[0]), float(pos[1]))
        # boxes never move after construction (a new layout makes new items)
        self._scene_rect = QRectF(float(pos[0]), float(pos[1]), float(box.width), float(box.height))
        # NOTE: selection is the scene's (GraphScene.selected_keys), not Qt's item flag:
        # Qt deselects hidden items, and boxes are hidden as a whole at low zoom. Tool tips
        # are the view's too (built on demand from tooltip()): 10k boxes are built faster
        # without either, and nothing here needs Qt's per-item mouse handling.

    # -- state changed from outside paint() -------------------------------------------
    def set_role(self, role: int) -> None:
        if role != self._role:
            self._role = role
            self.update()

    @property
    def role(self) -> int:
        return self._role

    def set_marked_selected(self, selected: bool) -> None:
        if selected != self._selected:
            self._selected = selected
            self.update()

    def is_marked_selected(self) -> bool:
        return self._selected

    def set_box(self, box) -> None:
        """The same box (key, size, ports) with other text: a node rename.

        NOTE: no ``update()`` here: with the view's full-viewport updates an item update
        repaints the whole canvas (group frames and all: 30 ms on a small model); the caller
        repaints the box's region of the viewport instead."""
        self.box = box
        self._texts = None
        self._op_name = None
        self._fit_spill()

    def set_show_names(self, show: bool) -> None:
        if show != self._show_names:
            self._show_names = show
            self._texts = None
            self.update()

    def set_style(self, style: CanvasStyle) -> None:
        self._style = style
        self._colour = style.category_colour(self.box.category)
        self._brush = style.category_brush(self.box.category)
        self._texts = None
        self._op_name = None
        self._fit_spill()
        self.update()

    def set_op_name_room(self, room: tuple[float, float]) -> None:
        """Let the low-zoom op name reach up to ``room`` scene units past the (left, right)
        side of the box (the free space beside it, :func:`op_name_room`)."""
        self._room = room
        self._fit_spill()

    def op_name_need(self) -> float:
        """How far the op name reaches past each side of the box at the lowest zoom that
        draws it (negative: it fits inside)."""
        style = self._style
        k = OP_NAME_PX / (OP_NAME_LOD * style.op_name_font.pixelSize())
        return ((style.op_name_width(self.box.label) + 8.0) * k - self.box.width) / 2

    def _fit_spill(self) -> None:
        """As far into the room beside the box as the op name needs: centred where both
        sides have the room, else shifted toward the freer side; the bounding rect grows
        with it, so the name is repainted with the box."""
        need = self.op_name_need()
        left, right = self._room
        if need <= 0:
            spill = (_MARGIN, _MARGIN)
        else:
            a, b = min(left, need), min(right, need)
            a, b = min(left, a + (need - b)), min(right, b + (need - a))   # what one side lacks, the other
            spill = (max(_MARGIN, a), max(_MARGIN, b))
        if spill != self._spill:
            self.prepareGeometryChange()
            self._spill = spill
            self._op_name = None
            w, h = self.box.width, self.box.height
            self.setRect(QRectF(-spill[0], -_MARGIN, w + spill[0] + spill[1], h + 2 * _MARGIN))

    def scene_rect(self) -> QRectF:
        return QRectF(self._scene_rect)

    # -- QGraphicsItem --------------------------------------------------------------
    def shape(self) -> QPainterPath:
        # hit tests use the box itself, not the margin of the pen
        path = QPainterPath()
        path.addRect(self._rect)
        return path

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = level_of_detail(option, painter)
        style = self._style
        selected = self._selected
        if lod < TEXT_LOD:
            # Plain shape: no text, no antialiasing, one fill.
            painter.setPen(style.no_pen)
            painter.setBrush(self._brush)
            painter.drawRect(self._rect)
            if lod >= OP_NAME_LOD:
                self._paint_op_name(painter, lod)
            if selected or self._role:
                self._paint_outline(painter, selected, cosmetic=True)
            return
        painter.setRenderHint(AA, True)
        kind = self.box.kind
        if kind == "group":
            self._paint_group(painter)
        elif kind in ("input", "output"):
            self._paint_terminal(painter)
        else:
            self._paint_node(painter)
            if self.box.subgraphs:
                self._paint_subgraph_badge(painter)
        if self._texts is None:
            self._texts = self._layout_text()
        self._paint_texts(painter)
        if selected or self._role:
            self._paint_outline(painter, selected, cosmetic=False)

    # -- painting helpers -------------------------------------------------------------
    def _paint_op_name(self, painter: QPainter, lod: float) -> None:
        """The box's label alone, bold, OP_NAME_PX pixels high on screen (see
        :meth:`op_name_at`)."""
        k, text, w, h, cx = self.op_name_at(lod)
        if text is None:
            return
        style = self._style
        # NOTE: the painter's scale times k is OP_NAME_PX / 10 at every zoom, so the static
        # text's glyph cache stays valid from item to item and frame to frame
        painter.save()
        painter.translate(cx, self._rect.center().y())
        painter.scale(k, k)
        painter.setPen(style.no_pen)
        painter.setBrush(self._brush)
        painter.drawRect(QRectF(-w / 2 - 2.0, -h / 2, w + 4.0, h))
        painter.setFont(style.op_name_font)
        painter.setPen(style.header_text_pen)
        painter.drawStaticText(QPointF(-w / 2, -h / 2), text)
        painter.restore()

    def op_name_at(self, lod: float) -> tuple[float, QStaticText | None, float, float, float]:
        """(scale k, text, width, height, centre x) of the op name drawn at zoom ``lod``:
        text and size in font units, k font units to scene units, the centre in item units.

        Centred on the box, on a pill of the box's colour where it is wider than the box,
        reaching into the free room beside it (shifted toward the freer side when one side
        lacks it: see :func:`op_name_room`); elided only where even that is too narrow."""
        style = self._style
        k = OP_NAME_PX / (lod * style.op_name_font.pixelSize())
        # room in font units: the box and the room beside it (never past the bounding rect)
        left, right = self._spill
        box = self._rect
        room = int((box.width() + left + right - 4.0) / k)
        cached = self._op_name
        if cached is None or cached[0] != room:
            fm = style.op_name_metrics
            text = fm.elidedText(self.box.label, ELIDE_RIGHT, room) if self.box.label else ""
            cached = self._op_name = (room, static_text(text) if text else None, fm.horizontalAdvance(text),
                                      fm.height())
        _, text, w, h = cached
        half_pill = (w + 4.0) * k / 2
        cx = min(max(box.center().x(), box.left() - left + half_pill), box.right() + right - half_pill)
        return k, text, w, h, cx

    def _paint_outline(self, painter: QPainter, selected: bool, *, cosmetic: bool) -> None:
        style = self._style
        if selected:
            pen = QPen(style.selection_pen)
        elif self._role == ROLE_PATH:
            pen = QPen(style.path_pen)
        else:
            pen = QPen(style.highlight_pen)
        pen.setCosmetic(cosmetic)
        painter.setPen(pen)
        painter.setBrush(NO_BRUSH)
        r = self._rect.adjusted(-2.0, -2.0, 2.0, 2.0)
        if cosmetic:
            painter.drawRect(r)
        else:
            painter.drawRoundedRect(r, RADIUS + 2, RADIUS + 2)

    def _body_path(self) -> QPainterPath | None:
        """The white body under the coloured header (None for title-only boxes); built once."""
        if self._body is None and (self.box.details or self.box.weights):
            full = QPainterPath()
            full.addRoundedRect(self._rect, RADIUS, RADIUS)
            below = QPainterPath()
            h = min(HEADER_H, self._rect.height())
            below.addRect(QRectF(0.0, h, self._rect.width(), self._rect.height() - h))
            self._body = full.intersected(below)
        return self._body

    def _paint_node(self, painter: QPainter) -> None:
        style = self._style
        r = self._rect
        body = self._body_path()
        if body is None:
            painter.setPen(style.no_pen)
            painter.setBrush(self._brush)
            painter.drawRoundedRect(r, RADIUS, RADIUS)
            return
        painter.setPen(style.no_pen)
        painter.setBrush(self._brush)
        painter.drawRoundedRect(r, RADIUS, RADIUS)
        painter.setBrush(style.fill_brush)
        painter.drawPath(body)
        painter.setPen(style.border_pen)
        painter.setBrush(NO_BRUSH)
        painter.drawRoundedRect(r, RADIUS, RADIUS)

    def _paint_subgraph_badge(self, painter: QPainter) -> None:
        """Control-flow nodes (If/Loop/Scan) carry their bodies: a stacked-squares badge."""
        style = self._style
        cx, cy = self._rect.right() - 4.0, self._rect.top()
        painter.setPen(style.border_pen)
        painter.setBrush(style.fill_brush)
        painter.drawRoundedRect(QRectF(cx - 5.0, cy - 3.0, 9.0, 9.0), 1.5, 1.5)
        painter.setBrush(self._brush)
        painter.drawRoundedRect(QRectF(cx - 7.0, cy - 5.0, 9.0, 9.0), 1.5, 1.5)

    def _paint_terminal(self, painter: QPainter) -> None:
        r = self._rect
        painter.setPen(self._style.no_pen)
        painter.setBrush(self._brush)
        radius = min(r.height() / 2.0, 12.0)
        painter.drawRoundedRect(r, radius, radius)

    def _paint_group(self, painter: QPainter) -> None:
        style = self._style
        r = self._rect
        # A stacked-cards look says "there is more inside".
        painter.setPen(style.border_pen)
        painter.setBrush(style.group_brush)
        painter.drawRoundedRect(r.adjusted(4.0, 4.0, 0.0, 0.0), RADIUS, RADIUS)
        painter.setBrush(style.fill_brush)
        painter.drawRoundedRect(r.adjusted(0.0, 0.0, -4.0, -4.0), RADIUS, RADIUS)
        painter.setPen(style.no_pen)
        painter.setBrush(self._brush)
        painter.drawRoundedRect(QRectF(r.x(), r.y(), 5.0, r.height() - 4.0), 2.0, 2.0)
        # expand affordance: a "+" badge on the top-right corner
        cx = r.right() - 4.0
        cy = r.top()
        painter.setBrush(self._brush)
        painter.drawEllipse(QPointF(cx, cy), 6.5, 6.5)
        pen = QPen(style.palette.header_text, 1.6)
        painter.setPen(pen)
        painter.drawLine(QPointF(cx - 3.2, cy), QPointF(cx + 3.2, cy))
        painter.drawLine(QPointF(cx, cy - 3.2), QPointF(cx, cy + 3.2))

    def _text_fonts(self) -> tuple:
        style = self._style
        return (style.header_font, style.body_font, style.name_font, style.body_font, style.header_font, style.name_font)

    def _paint_texts(self, painter: QPainter) -> None:
        style = self._style
        fonts = self._text_fonts()
        pens = (style.header_text_pen, style.text_pen, style.muted_pen, style.muted_pen, style.text_pen, style.header_text_pen)
        current = -1
        for kind, text, point in self._texts or ():
            if kind != current:
                painter.setFont(fonts[kind])
                painter.setPen(pens[kind])
                current = kind
            painter.drawStaticText(point, text)

    # NOTE: text kinds (index into the font/pen tables of _paint_texts): 0 header (bold,
    # light on colour), 1 body (dark), 2 name (italic muted), 3 body muted (attribute values,
    # weight shapes), 4 group title (bold, dark), 5 node name in the header (italic, light).
    def warm_text(self, scale: QTransform) -> bool:
        """Lay out the texts (and a node's body shape) now and have Qt lay out their glyphs
        for ``scale`` (the view's transform without its translation), as the first paint at
        that zoom would: work done ahead of that paint (see :mod:`widgets.canvas.text_warmer`). False when it
        was done already."""
        warmed = self._warmed
        if warmed is not None and warmed[0] is self._texts and warmed[1] == scale:
            return False
        if self._texts is None:
            self._texts = self._layout_text()
        if self.box.kind not in ("group", "input", "output"):
            self._body_path()
        fonts = self._text_fonts()
        for kind, text, _point in self._texts:
            text.prepare(scale, fonts[kind])
        self._warmed = (self._texts, scale)
        return True

    def _layout_text(self) -> list[tuple[int, QStaticText, QPointF]]:
        return [(kind, static_text(text), QPointF(x, y))
                for kind, text, x, y in box_text_layout(self.box, self._style, self._show_names,
                                                        repeat=len(self.repeats))]

    def tooltip(self) -> str:
        """Rich-text tool tip (op, name, weights, attributes); the view shows it on hover."""
        box = self.box
        lines = [f"<b>{_esc(box.label)}</b>"]
        if box.name:
            lines.append(_esc(box.name))
        if box.kind == "group":
            lines.append(f"{box.child_count} nodes — double-click to expand")
            if self.repeats:
                from widgets.canvas.frames import repeat_text

                lines.append(_esc(repeat_text(box.key[2:], self.repeats)))
        if box.subgraphs:
            lines.append("bodies: " + ", ".join(_esc(g) for g in box.subgraphs))
        for k, v in box.weights:
            lines.append(f"{_esc(k)}: {_esc(v)}")
        for k, v in box.details:
            lines.append(f"{_esc(k)} = {_esc(v)}")
        return "<br>".join(lines)


def box_text_layout(box, style: CanvasStyle, show_names: bool = False, *,
                    repeat: int = 0) -> list[tuple[int, str, float, float]]:
    """Texts of a box as (kind, text, x, y), top-left of each text relative to the box;
    elided to fit. Kinds index the font/colour tables (see NodeItem._paint_texts).
    ``repeat``: a group box's repeat-class size (``DisplayGraph.repeats``), shown as
    "N identical blocks" when two or more."""
    r = QRectF(0.0, 0.0, float(box.width), float(box.height))
    out: list[tuple[int, str, float, float]] = []
    hm = style.header_metrics
    bm = style.body_metrics
    el = ELIDE_MIDDLE
    if box.kind == "group":
        inner = r.width() - 4.0 - 10.0 - 4.0
        title = style.elided(hm, box.label, el, inner)
        count = f"{box.child_count} nodes" if box.child_count != 1 else "1 node"
        if repeat >= 2:
            # the repeat matters more than the size: drop the size when both do not fit
            for text in (f"{repeat} identical blocks · {count}", f"{repeat} identical blocks",
                         f"{repeat} identical", f"×{repeat}"):
                if style.advance(bm, text) <= inner:
                    count = text
                    break
            else:
                count = f"×{repeat}"
        total_h = hm.height() + bm.height()
        y0 = r.top() + (r.height() - 4.0 - total_h) / 2.0
        out.append((4, title, r.left() + 10.0, y0))
        out.append((3, count, r.left() + 10.0, y0 + hm.height()))
        return out
    if box.kind in ("input", "output"):
        text = style.elided(hm, box.label, el, r.width() - 2 * PAD_X)
        w = style.advance(hm, text)
        out.append((0, text, r.left() + (r.width() - w) / 2.0, r.top() + (r.height() - hm.height()) / 2.0))
        return out
    has_body = bool(box.details or box.weights)
    header_h = min(HEADER_H, r.height()) if has_body else r.height()
    title = box.label
    title_w = style.advance(hm, title)
    name = box.name if show_names else ""
    if name:
        nm = style.name_metrics
        room = r.width() - 2 * PAD_X - title_w - 6.0
        name_text = style.elided(nm, name, el, room) if room > 20 else ""
        if name_text:
            x = r.left() + PAD_X
            out.append((0, title, x, r.top() + (header_h - hm.height()) / 2.0))
            nx = r.right() - PAD_X - style.advance(nm, name_text)
            out.append((5, name_text, nx, r.top() + (header_h - nm.height()) / 2.0))
        else:
            title = style.elided(hm, title, el, r.width() - 6.0)  # a title may use the padding
            out.append((0, title, r.left() + (r.width() - style.advance(hm, title)) / 2.0, r.top() + (header_h - hm.height()) / 2.0))
    else:
        title = style.elided(hm, title, el, r.width() - 6.0)  # a title may use the padding
        x = r.left() + (r.width() - style.advance(hm, title)) / 2.0
        out.append((0, title, x, r.top() + (header_h - hm.height()) / 2.0))
    if has_body:
        y = r.top() + header_h + 2.5
        bottom = r.bottom() - 2.0
        avail = r.width() - 2 * PAD_X
        for key, value in tuple((_short(k), v) for k, v in box.weights) + tuple(box.details):
            if y + bm.height() > bottom + 1.0:
                break
            # the value (shape, kernel ...) matters more than the key: it keeps up to
            # 60 % of the line, the key gets the rest
            val_text = style.elided(bm, str(value), ELIDE_RIGHT, avail * 0.6)
            key_room = max(avail - style.advance(bm, val_text) - 6.0, 0.0)
            key_text = style.elided(bm, key, el, key_room)
            out.append((1, key_text, r.left() + PAD_X, y))
            if val_text:
                vw = style.advance(bm, val_text)
                out.append((3, val_text, r.right() - PAD_X - vw, y))
            y += LINE_H
    out.sort(key=lambda t: t[0])
    return out


def _short(name: str) -> str:
    """A weight's display name: the last segment of a scoped tensor name."""
    tail = name.rstrip("/").rsplit("/", 1)[-1]
    return tail or name


def _esc(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class BoxBatchItem(QGraphicsItem):
    """Every box of a tile as one filled path per colour; shown only at low zoom."""

    def __init__(self, fills: list[tuple[QColor, QPainterPath]]) -> None:
        super().__init__()
        self._fills = [(QBrush(c), p) for c, p in fills]
        rect = QRectF()
        for _, p in fills:
            rect = rect.united(p.boundingRect())
        self._bounds = rect
        self.setZValue(1.0)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_fills(self, fills: list[tuple[QColor, QPainterPath]]) -> None:
        self._fills = [(QBrush(c), p) for c, p in fills]
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(AA, False)
        painter.setPen(NO_PEN)
        for brush, path in self._fills:
            painter.setBrush(brush)
            painter.drawPath(path)
