"""Category colours as data: one hand-picked hue per operator category name.

Shared by the window's canvas (:mod:`widgets.canvas.palette` turns them into ``QColor``)
and the web page (:mod:`editor.webpage`, which draws in the browser), so both pictures
colour a box alike. Categories come from :mod:`editor.viewmodel.categories`.
"""

from __future__ import annotations

__all__ = ["CATEGORY_COLOURS", "norm_category"]

# NOTE: keys are compared lower-cased with spaces/underscores removed so that "Layer",
# "layer" and "LAYER" are the same category. Hues follow Netron's: layers blue, activations
# red, pooling green, normalisation dark green, shape/tensor ops brown/neutral, control flow
# purple; inputs/outputs dark grey.
CATEGORY_COLOURS: dict[str, str] = {
    "layer": "#336699",
    "conv": "#336699",
    "linear": "#336699",
    "matmul": "#336699",
    "activation": "#b33a3a",
    "pool": "#3a7d44",
    "pooling": "#3a7d44",
    "normalization": "#2f5d50",
    "normalisation": "#2f5d50",
    "dropout": "#45658a",
    "shape": "#6c4f3d",
    "tensor": "#6c4f3d",
    "transform": "#7a5c3b",
    "data": "#5f6b73",
    "constant": "#5f6b73",
    "logic": "#5a4b8a",
    "control": "#6b3fa0",
    "controlflow": "#6b3fa0",
    "arithmetic": "#5b6770",
    "elementwise": "#5b6770",
    "math": "#5b6770",
    "reduce": "#2d7a7a",
    "reduction": "#2d7a7a",
    "attention": "#8a5a00",
    "quantization": "#8a4f7d",
    "quantize": "#8a4f7d",
    "sequence": "#7a6a2f",
    "generator": "#8a6d3b",
    "training": "#8a4f7d",
    "deprecated": "#7d7d7d",
    "ml": "#4a6b2f",
    "custom": "#555555",
    "function": "#6b5b95",
    "group": "#4a5568",
    "input": "#2b2b2b",
    "output": "#2b2b2b",
    "other": "#5c6670",
    "": "#5c6670",
}


def norm_category(name: str) -> str:
    """The key a category name is looked up by."""
    return name.lower().replace(" ", "").replace("_", "").replace("-", "")
