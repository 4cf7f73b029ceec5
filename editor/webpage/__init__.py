"""A model as one interactive, self-contained web page (``onnx-studio render MODEL -o
view.html``, File ▸ Export ▸ Interactive Web Page…, and inline in a notebook).

The page draws the same display model (:mod:`editor.viewmodel`) and the same layout
(:mod:`editor.layout`) as the window's canvas, computed here by the core for the views a
click reaches (:mod:`editor.webpage.views` says which and why), with the viewer's script
and style (``resources/webpage``) and the data inline: no server, no network.

* :func:`document_page` — the page of a document (the first view, or the window's);
* :class:`WebPage` — a page as an object: ``.html``, ``.write(path)``, and
  ``_repr_html_`` so a notebook shows it inline (:func:`editor.show` builds one).
"""

from __future__ import annotations

import html as _html
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from editor.webpage.page import Overlay, page_data, page_html, pane_data
from editor.webpage.source import ViewSource, source_of_document
from editor.webpage.views import ViewSet, compute_views

if TYPE_CHECKING:
    from editor.document import Document
    from editor.layout import LayoutResult
    from editor.viewmodel import Box, DisplayGraph

__all__ = ["WebPage", "document_page", "document_pane", "Overlay", "ViewSource", "ViewSet", "compute_views",
           "page_data", "pane_data", "page_html", "source_of_document", "NOTEBOOK_HEIGHT"]

#: height of the page inside a notebook cell, in CSS pixels (its width is the cell's)
NOTEBOOK_HEIGHT = 560


@dataclass
class WebPage:
    """One page's data; its HTML is made on demand."""

    data: dict[str, Any]
    #: facts about how it was made (views held, seconds), for the CLI and the README figures
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def panes(self) -> list[dict[str, Any]]:
        """The page's panes: one per model (a diff's page has two)."""
        return self.data["panes"]

    @property
    def html(self) -> str:
        return page_html(self.data)

    def write(self, path: str | Path) -> int:
        """Write the page to ``path`` (UTF-8); returns its size in bytes."""
        from editor.io.atomic import Transaction

        raw = self.html.encode("utf-8")
        with Transaction() as tx:  # a half-written page never replaces a good one
            tx.open(Path(path)).write(raw)
            tx.commit()
        return len(raw)

    def _repr_html_(self) -> str:
        # NOTE: the page goes into an iframe's srcdoc: its script and style stay apart from
        # the notebook's own (ids, keys, CSS), and the cell sizes it; no server is involved
        return (f'<iframe srcdoc="{_html.escape(self.html, quote=True)}" style="width:100%;box-sizing:border-box;'
                f'height:{NOTEBOOK_HEIGHT}px;border:1px solid #d0d7de;border-radius:4px" '
                f'title="{_html.escape(str(self.data.get("title", "")))}"></iframe>')


def document_page(doc: Document, *, title: str | None = None, dark: bool = False, **options: Any) -> WebPage:
    """The page of ``doc``'s main graph (one pane; ``options``: :func:`document_pane`'s)."""
    name = title or _title(doc)
    pane, facts = document_pane(doc, title=name, **options)
    return WebPage(page_data([pane], title=name, dark=dark), facts)


def _title(doc: Document) -> str:
    return doc.path.name if getattr(doc, "path", None) else doc.main.graph.name or "model"


def document_pane(doc: Document, *, title: str | None = None, expanded: Collection[str] | None | str = "auto",
                  first: tuple[DisplayGraph, LayoutResult] | None = None,
                  inferred_shapes: bool = True, show_plumbing: bool = False,
                  overlays: Sequence[Overlay | Callable[[list[Box]], Overlay]] = (), weights: bool = True,
                  source: ViewSource | None = None, max_boxes: int | None = None, side: str = "",
                  progress: Callable[[float, str], None] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the pane of ``doc``'s main graph, facts about it) opening on ``expanded``
    (``"auto"``: the window's first view, None: flat). ``first``: that view's display model
    and layout when the caller has them (the window), ``source``: the graph and display
    settings it draws with (default: the main graph as ``onnx-studio render`` draws it).
    ``overlays``: overlays, or makers called with every box the page's views draw."""
    import time

    from editor.viewmodel import default_expanded
    from editor.webpage.details import node_records, value_texts
    from editor.webpage.views import MAX_VIEW_BOXES

    t0 = time.perf_counter()
    if source is None:
        source = source_of_document(doc, inferred_shapes=inferred_shapes, show_plumbing=show_plumbing)
    if expanded == "auto":
        expanded = default_expanded(source.graph)
    t1 = time.perf_counter()
    views = compute_views(source, expanded, first=first,
                          max_boxes=MAX_VIEW_BOXES if max_boxes is None else max_boxes, progress=progress)
    t2 = time.perf_counter()
    node_ids = sorted({b.node_id for v in views.views for b in v.display.boxes if b.node_id is not None}
                      | set(_all_node_ids(doc)))
    values = value_texts(doc, source.value_info)
    nodes, stats = node_records(doc, node_ids, values, weights=weights)
    every = list({b.key: b for v in views.views for b in v.display.boxes}.values())
    made = [o if isinstance(o, Overlay) else o(every) for o in overlays]
    pane = pane_data(views, title=title or _title(doc), nodes=nodes, weights=stats, values=values, overlays=made,
                     side=side)
    t3 = time.perf_counter()
    facts = {"views": len(views.views), "missing": len(views.missing), "boxes": len(views.views[0].display.boxes),
             "edges": len(views.views[0].display.edges), "nodes": len(nodes),
             "timings": {"shapes": t1 - t0, "views": t2 - t1, "details": t3 - t2}}
    return pane, facts


def _all_node_ids(doc: Document) -> list[int]:
    """Every node of the main graph and of the bodies drawn inside it (functions are not drawn)."""
    out = []
    for scope, nid, _node in doc.index.iter_nodes():
        if scope.kind != "function":
            out.append(nid)
    return out
