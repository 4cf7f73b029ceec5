"""ONNX Studio's Qt-free core.

Everything a script or the command line can do without a screen lives below this package:
loading and saving models (:mod:`editor.io`), the editable :class:`~editor.document.Document`
with its command stack (:mod:`editor.commands`), validation, layout, passes and the runtime.

NOTE: nothing below ``editor`` may import PySide6 (a test enforces it). The GUI lives in the
top-level ``widgets`` package and only ever talks to this core through documents and commands.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from editor.webpage import WebPage

__version__ = "0.1.0"


def show(model: object, other: object = None, **options: object) -> "WebPage":
    """A model, a document, a diff (two models) or a comparison as an interactive page that a
    notebook shows inline (:func:`editor.webpage.show.show`; ``.write(path)`` saves it)."""
    from editor.webpage.show import show as _show

    return _show(model, other, **options)
