"""File ▸ Export ▸ Interactive Web Page…: the tab as one self-contained HTML page.

The page starts on the picture on screen: the canvas's own display model and layout, its
open groups and bodies, its edge labels and display settings (``GraphController.
view_source``); the core (:mod:`editor.webpage`) lays out the views a click reaches from
there, off the GUI thread with a progress dialog that can cancel, and the page is written
when it is done. The theme is the window's; the overlay the tab shows (node data, profile
or cost heat map, compare errors, diff colours: :func:`active_overlay`) goes with the page
with its legend. From a side-by-side diff view: both panes as they are
on screen, coloured by the view's diff, each node linked to its counterpart.
"""

from __future__ import annotations

import sys

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.common.formatting import shown

__all__ = ["diff_view_page", "export_web_page", "install_export_web_page", "tab_page"]


def tab_page(tab, *, dark: bool = False, overlays=(), progress=None):
    """The :class:`editor.webpage.WebPage` of ``tab`` as it is on screen (call on the GUI
    thread for the snapshot; the returned callable does the work and may run on any thread)."""
    from editor.webpage import document_page

    snap = _snapshot(tab)
    title = tab.doc.path.name if tab.doc.path else "model"

    def make():
        return document_page(tab.doc, title=title, dark=dark, overlays=overlays, progress=progress, **snap)

    return make


def active_overlay(tab) -> list:
    """The overlay the tab shows (its managed overlay layer, :mod:`widgets.overlays.layer`)
    as the page's overlay makers: node data, the profile or cost heat map, the compare error
    heat map, the Diff dock's colours; [] when none is shown."""
    from editor.webpage import overlays as page
    from widgets.compare.overlay import CanvasDiff
    from widgets.numeric.heatmap import ErrorHeatMap
    from widgets.overlays.layer import layer_for
    from widgets.overlays.node_data import NodeDataOverlay
    from widgets.overlays.heatmap import HeatMap

    layer = layer_for(tab, create=False)
    shown = layer.active if layer is not None else None
    if shown is None or not shown.visible:
        return []
    doc = tab.doc
    if isinstance(shown, NodeDataOverlay):
        return [page.node_data_overlay(doc, shown.data)]
    if isinstance(shown, HeatMap):
        from widgets.panels.cost import CostHeatMap

        times = shown.node_times
        kind = "cost" if isinstance(shown, CostHeatMap) else "profile"
        return [page.heat_overlay(times, shown.node_names(times), title=shown.title, kind=kind, fmt=shown.fmt)]
    if isinstance(shown, ErrorHeatMap):
        shares = shown.shares
        return [page.error_overlay(shares, shown.node_names(shares), title=shown.title)]
    if isinstance(shown, CanvasDiff):
        from editor.webpage.diff import status_overlay

        status = shown.status
        return [lambda boxes: status_overlay(doc, status, {}, boxes, shown.title)]
    return []


def _snapshot(tab) -> dict:
    """The picture on ``tab``'s canvas as :func:`editor.webpage.document_pane` options."""
    controller = tab.canvas.controller
    live = tab.canvas.scene
    if live.graph is None or live.layout_result is None:
        raise ValueError("the model is not laid out yet")
    return {"expanded": controller.expanded(), "first": (live.graph, live.layout_result),
            "source": controller.view_source()}


def diff_view_page(view, *, dark: bool = False, progress=None):
    """Like :func:`tab_page` for a side-by-side diff view: both panes as they are on screen,
    coloured by the view's diff (:mod:`editor.webpage.diff`)."""
    from editor.webpage.diff import diff_page

    sides = {side: _snapshot(pane.tab) for side, pane in view.panes.items()}
    names = (view.side_a.name, view.side_b.name)
    return lambda: diff_page(view.result, names=names, dark=dark, sides=sides, progress=progress)


def _diff_view(window):
    """The current tab when it is a side-by-side diff view that has finished opening."""
    # NOTE: asked on every refresh of the actions, from the first: no diff view exists
    # before its module is loaded, and importing it (the Diff and Compare Runs docks' modules
    # with it) cost start-up a tenth of a second
    view_module = sys.modules.get("widgets.diffview.view")
    if view_module is None:
        return None
    widget = window.tabs.currentWidget()
    return widget if isinstance(widget, view_module.DiffView) and widget.result is not None and widget.is_ready else None


def export_web_page(window, path: str | Path | None = None):
    """The menu's flow: file name, then the page made on a thread and written when done.
    Returns the background job (tests wait on ``job.thread``), or None when nothing runs."""
    from widgets.editing.background import BackgroundEdit, JobControl

    tab = window.current_tab()
    view = _diff_view(window) if tab is None else None
    if tab is None and view is None:
        return None
    doc = tab.doc if tab is not None else view.panes["a"].doc
    if path is None:
        stem = doc.path.stem if doc.path else "model"
        if view is not None:
            stem = f"{Path(view.side_a.name).stem}-vs-{Path(view.side_b.name).stem}"
        start = str(Path(window.settings.last_dir() or ".") / f"{stem}.html")
        path, _ = QFileDialog.getSaveFileName(window, "Export Interactive Web Page", start, "Web page (*.html)")
        if not path:
            return None
    if Path(path).suffix.lower() not in (".html", ".htm"):
        path = str(path) + ".html"
    control = JobControl()

    def progress(fraction: float, message: str) -> None:
        if control.cancelled.is_set():
            raise StudioError("cancelled")
        control.report(fraction, message)

    dark = bool(window.theme and window.theme.dark)
    overlays = active_overlay(tab) if tab is not None else []
    try:
        if tab is not None:
            make = tab_page(tab, dark=dark, overlays=overlays, progress=progress)
        else:
            make = diff_view_page(view, dark=dark, progress=progress)
    except ValueError as exc:
        window.statusBar().showMessage(f"Export failed: {exc}", 8000)
        return None

    def apply(page) -> None:
        try:
            size = page.write(path)
        except OSError as exc:
            window.statusBar().showMessage(f"Export failed: {exc}", 8000)
            return
        f = page.facts
        window.statusBar().showMessage(
            f"Exported {shown(Path(path).name)}: {f['views']} views, {f['nodes']:,} nodes, {size / 1e6:.1f} MB", 8000)

    return BackgroundEdit(window, doc, make, apply, title="Export Interactive Web Page",
                          label="Laying out the page's views…", name="export-web-page", control=control,
                          stale="The model changed while its page was being made: export it again")


def install_export_web_page(window) -> None:
    """Declare File ▸ Export ▸ Interactive Web Page… in the window's action registry."""
    window.registry.add(ActionSpec(
        id="file.export_web_page", title="Interactive &Web Page…", run=lambda: export_web_page(window),
        menu="File/Export", section="3_export",
        enabled_when=lambda: window.current_tab() is not None or _diff_view(window) is not None,
        tip="Save the graph (or both models of a diff view) as one self-contained HTML page to share: pan, zoom, open groups, find, "
            "node details; no server, nothing to install",
        keywords="export html web page share browser interactive notebook"))
