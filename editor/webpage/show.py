"""``from editor import show``: a model, a document, a diff or a comparison as the page a
notebook shows inline (``WebPage._repr_html_``: the same self-contained page in an iframe
sized to the cell; no server, no extension).

    show("model.onnx")                 # a path, an onnx.ModelProto, a Document or a script's doc
    show("a.onnx", "b.onnx")           # a diff: both models, coloured, linked
    show(side_by_side(...))            # a diff computed already
    show(compare_runs(a, b))           # model A with the compare error heat map
    show(doc, overlay="cost")          # with the cost heat map (MACs per node)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import onnx

if TYPE_CHECKING:
    from editor.document import Document
    from editor.webpage import WebPage

__all__ = ["show"]


def _document(obj: Any) -> Document:
    from editor.document import Document

    from editor.scripting import ScriptAPI

    if isinstance(obj, Document):
        return obj
    if isinstance(obj, ScriptAPI):  # ``doc`` of an edit script or the scripting console
        return obj.document
    if isinstance(obj, onnx.ModelProto):
        return Document(obj)
    if isinstance(obj, (str, os.PathLike)):
        return Document.open(obj)
    raise TypeError(f"show() draws a model (path, onnx.ModelProto, Document), two models (a diff), "
                    f"a side-by-side diff or a comparison, not {type(obj).__name__}")


def show(model: Any, other: Any = None, *, dark: bool = False, overlay: str | None = None,
         title: str | None = None, **options: Any) -> WebPage:
    """The page of ``model`` (see the module docstring); ``other``: a second model to diff
    against; ``overlay="cost"``: the cost heat map; ``options``: those of
    :func:`editor.webpage.document_pane` (``expanded``, ``show_plumbing``, ...)."""
    from editor.debug.verdict import Comparison
    from editor.diff.side_by_side import Side, SideBySide, side_by_side
    from editor.webpage import document_page
    from editor.webpage.diff import diff_page

    if other is not None:
        from editor.scripting import ScriptAPI

        model, other = (x.document if isinstance(x, ScriptAPI) else x for x in (model, other))
        names = tuple(_name(x, d) for x, d in ((model, "A"), (other, "B")))
        result = side_by_side(Side(model, name=names[0]), Side(other, name=names[1]))
        try:
            return diff_page(result, names=names, dark=dark, **options)
        finally:
            result.close()
    if isinstance(model, SideBySide):
        return diff_page(model, names=(_name(model.doc_a, "A"), _name(model.doc_b, "B")), dark=dark, **options)
    if isinstance(model, Comparison):
        from editor.webpage.overlays import comparison_overlay

        doc = _document(model.a.model)
        name = title or f"{model.a.label()} vs {model.b.label()}"
        return document_page(doc, title=name, dark=dark, overlays=[comparison_overlay(doc, model)], **options)
    doc = _document(model)
    overlays = list(options.pop("overlays", ()))
    if overlay == "cost":
        from editor.webpage.overlays import cost_overlay

        overlays.append(cost_overlay(doc))
    elif overlay is not None:
        from editor.webpage.overlays import node_data_overlay

        overlays.append(node_data_overlay(doc, overlay))  # a JSON or CSV file of node data
    return document_page(doc, title=title, dark=dark, overlays=overlays, **options)


def _name(obj: Any, default: str) -> str:
    if isinstance(obj, (str, os.PathLike)):
        return os.path.basename(os.fspath(obj))
    path = getattr(obj, "path", None)
    if path is not None:
        return os.path.basename(os.fspath(path))
    return default
