"""Colours of the canvas: one light and one dark theme, a colour per operator category.

Categories come from the view model (``Box.category``, derived from ``onnx.defs`` there);
this module only maps a category *name* to a colour. Known names get hand-picked,
mutually distinguishable hues (in the spirit of Netron's scheme); an unknown name gets a
stable hue derived from a hash of the name, so a new category never collapses into grey
and never changes colour between runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from PySide6.QtGui import QColor

from editor.viewmodel.palette import CATEGORY_COLOURS as _LIGHT_CATEGORY
from editor.viewmodel.palette import norm_category as _norm


def _hashed_colour(name: str, *, dark: bool) -> QColor:
    digest = hashlib.blake2s(name.encode("utf-8"), digest_size=2).digest()
    hue = int.from_bytes(digest, "big") % 360
    return QColor.fromHsl(hue, 110, 120 if dark else 95)


@dataclass
class Palette:
    """Every colour the canvas paints with; ``category(name)`` is cached per name."""

    dark: bool
    background: QColor
    box_fill: QColor
    box_border: QColor
    box_text: QColor
    header_text: QColor
    muted_text: QColor
    edge: QColor
    edge_label: QColor
    reference: QColor
    hover: QColor
    highlight: QColor
    path: QColor
    selection: QColor
    group_fill: QColor
    minimap_background: QColor
    minimap_viewport: QColor
    _cache: dict[str, QColor] = field(default_factory=dict, repr=False)

    def category(self, name: str) -> QColor:
        """Colour of a category name (stable for unknown names)."""
        colour = self._cache.get(name)
        if colour is None:
            hexa = _LIGHT_CATEGORY.get(_norm(name))
            if hexa is None:
                colour = _hashed_colour(_norm(name), dark=self.dark)
            else:
                colour = QColor(hexa)
                if self.dark:
                    # Same hue, lifted so that it reads on a dark background.
                    colour = colour.lighter(135)
            self._cache[name] = colour
        return colour


def light_palette() -> Palette:
    return Palette(
        dark=False,
        background=QColor("#f7f8fa"),
        box_fill=QColor("#ffffff"),
        box_border=QColor("#b4bac3"),
        box_text=QColor("#1f2328"),
        header_text=QColor("#ffffff"),
        muted_text=QColor("#5b636e"),
        edge=QColor("#737a84"),
        edge_label=QColor("#57606a"),
        reference=QColor("#9a6700"),
        hover=QColor("#0969da"),
        highlight=QColor("#0969da"),
        path=QColor("#e8590c"),
        selection=QColor("#0969da"),
        group_fill=QColor("#eef1f5"),
        minimap_background=QColor(255, 255, 255, 235),
        minimap_viewport=QColor("#0969da"),
    )


def dark_palette() -> Palette:
    return Palette(
        dark=True,
        background=QColor("#1e1f22"),
        box_fill=QColor("#2b2d31"),
        box_border=QColor("#4a4e56"),
        box_text=QColor("#e6e6e6"),
        header_text=QColor("#ffffff"),
        muted_text=QColor("#a0a6ad"),
        edge=QColor("#6f7680"),
        edge_label=QColor("#a0a6ad"),
        reference=QColor("#d4a72c"),
        hover=QColor("#4493f8"),
        highlight=QColor("#4493f8"),
        path=QColor("#ff922b"),
        selection=QColor("#4493f8"),
        group_fill=QColor("#26282c"),
        minimap_background=QColor(30, 31, 34, 235),
        minimap_viewport=QColor("#4493f8"),
    )
