"""A diff as one page: model A and model B as two panes (a switch in the page's bar), each
coloured by the diff's status of every box with the diff's legend, each node linked to its
counterpart on the other side.

The statuses, counterparts, legend and colours are the side-by-side diff's own
(:func:`editor.diff.display.display_of`), and each pane opens on the groups the diff's
pictures open (:func:`editor.diff.picture.side_expanded`: the ones that hold a change), so
the page, ``onnx-studio diff --render`` and the window's diff view colour the same boxes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from editor.webpage.overlays import every_box_values
from editor.webpage.page import Overlay, page_data

if TYPE_CHECKING:
    from editor.diff.display import DiffDisplay
    from editor.diff.side_by_side import SideBySide
    from editor.document import Document
    from editor.viewmodel import Box
    from editor.webpage import WebPage

__all__ = ["diff_overlay", "diff_page", "status_overlay"]


def diff_overlay(doc: Document, display: DiffDisplay, side: str, boxes: Iterable[Box], title: str) -> Overlay:
    """The diff's colours over every box of one side's pane (a group: its strongest status)."""
    status = display.status_a if side == "a" else display.status_b
    io = display.io_a if side == "a" else display.io_b
    return status_overlay(doc, status, io, boxes, title)


def status_overlay(doc: Document, status: Mapping[int, str], io: Mapping[str, str], boxes: Iterable[Box],
                   title: str) -> Overlay:
    """Diff statuses (node id -> status, graph input/output name -> status) as an overlay
    in the diff's colours and legend, light and dark (:data:`editor.diff.display.LEGEND`)."""
    from editor.diff.display import COLOURS, COLOURS_DARK, LEGEND, SAME, strongest

    boxes = list(boxes)
    names = {nid: doc.node(nid).name for nid in status if doc.has_node(nid)}
    per_box = {k: strongest(v) for k, v in every_box_values(status, boxes, names).items()}
    keys = {b.key for b in boxes}
    for name, st in io.items():
        for key in (f"in:{name}", f"out:{name}"):
            if key in keys:
                per_box[key] = strongest((per_box.get(key, SAME), st))
    label = {e.status: e.label for e in LEGEND}
    return Overlay(title=title, kind="diff",
                   colours={k: COLOURS[st] for k, st in per_box.items()},
                   coloursDark={k: COLOURS_DARK[st] for k, st in per_box.items()},
                   values={k: label[st] for k, st in per_box.items()},
                   legend=[[e.colour, f"{e.label}: {e.meaning}"] for e in LEGEND],
                   legendDark=[[e.colour_dark, f"{e.label}: {e.meaning}"] for e in LEGEND])


def diff_page(result: SideBySide, *, names: tuple[str, str] = ("A", "B"), dark: bool = False,
              progress: Callable[[float, str], None] | None = None,
              sides: Mapping[str, Mapping[str, Any]] | None = None, **options: Any) -> WebPage:
    """The page of a side-by-side diff (:func:`editor.diff.side_by_side.side_by_side`).
    ``sides``: per side (``"a"``, ``"b"``), :func:`editor.webpage.document_pane` options that
    replace the defaults (the window's diff view passes each pane's picture on screen)."""
    from editor.diff.picture import side_expanded
    from editor.webpage import WebPage, document_pane

    display = result.display
    panes: list[dict[str, Any]] = []
    facts: dict[str, Any] = {}
    for k, (side, doc, name) in enumerate((("a", result.doc_a, names[0]), ("b", result.doc_b, names[1]))):
        title = f"diff: {names[0]} → {names[1]}"

        def make(boxes: list[Box], doc: Document = doc, side: str = side, title: str = title) -> Overlay:
            return diff_overlay(doc, display, side, boxes, title)

        mine = {"expanded": side_expanded(doc, display, side), **options, **dict((sides or {}).get(side, {}))}
        pane, f = document_pane(doc, title=name, overlays=[make], side=f"{'AB'[k]}: {name}", progress=progress,
                                **mine)
        links = display.counterparts_a if side == "a" else display.counterparts_b
        pane["links"] = {str(n): list(v) for n, v in links.items() if v}
        pane["linkPane"] = 1 - k
        panes.append(pane)
        facts[side] = f
    title = f"{names[0]} vs {names[1]}"
    summary = {"summary": list(display.summary), "counts": display.counts()}
    return WebPage(page_data(panes, title=title, dark=dark), {**facts, **summary,
                                                             "views": facts["a"]["views"] + facts["b"]["views"],
                                                             "nodes": facts["a"]["nodes"] + facts["b"]["nodes"]})
