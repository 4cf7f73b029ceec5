"""The graph canvas: a QGraphicsView over a display model and its layout.

Public API:
- ``GraphScene`` / ``GraphView``: the scene (items, highlight, level of detail) and view
  (pan, zoom, selection); ``CanvasWidget`` combines them with a ``Breadcrumb``, a
  ``Minimap`` and a ``GraphController`` (expand/collapse + off-thread layout through
  ``LayoutRunner``).
- ``export_png`` / ``export_svg`` / ``render_image``: whole graph or selection.
"""

from widgets.canvas.breadcrumb import Breadcrumb
from widgets.canvas.controller import GraphController
from widgets.canvas.export import export_png, export_svg, render_image
from widgets.canvas.minimap import Minimap
from widgets.canvas.runner import LayoutRunner
from widgets.canvas.scene import GraphScene
from widgets.canvas.view import GraphView
from widgets.canvas.widget import CanvasWidget

__all__ = [
    "Breadcrumb",
    "CanvasWidget",
    "GraphController",
    "GraphScene",
    "GraphView",
    "LayoutRunner",
    "Minimap",
    "export_png",
    "export_svg",
    "render_image",
]
