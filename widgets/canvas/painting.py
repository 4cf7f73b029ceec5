"""Painting primitives shared by the canvas items: highlight roles, level of detail, static text.

Box items (:mod:`widgets.canvas.items`) and edge items (:mod:`widgets.canvas.edge_items`)
paint with the same few Qt values; they are looked up once here because PySide's enum
attribute access costs ~4 us a time, which adds up over a 10k-box frame.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QStaticText
from PySide6.QtWidgets import QStyleOptionGraphicsItem

# Roles a box can have in the current highlight (drawn as outlines).
ROLE_NONE = 0
ROLE_NEIGHBOUR = 1
ROLE_PATH = 2
ROLE_SELECTED = 3  # only used for the low-zoom marks of HighlightItem

# enum members looked up once (see the module docstring)
ELIDE_MIDDLE = Qt.TextElideMode.ElideMiddle
ELIDE_RIGHT = Qt.TextElideMode.ElideRight
AA = QPainter.RenderHint.Antialiasing
SMOOTH = QPainter.RenderHint.SmoothPixmapTransform
NO_BRUSH = Qt.BrushStyle.NoBrush
NO_PEN = Qt.PenStyle.NoPen
_PLAIN = Qt.TextFormat.PlainText
_AGGRESSIVE = QStaticText.PerformanceHint.AggressiveCaching


def level_of_detail(option: QStyleOptionGraphicsItem, painter: QPainter) -> float:
    """The painter's current scale (1: one scene unit per pixel)."""
    return QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())


def static_text(text: str) -> QStaticText:
    """``text`` as plain, aggressively cached static text (laid out once, drawn every frame)."""
    st = QStaticText(text)
    st.setTextFormat(_PLAIN)
    st.setPerformanceHint(_AGGRESSIVE)
    return st
