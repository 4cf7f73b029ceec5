"""File ▸ Export ▸ Interactive Web Page…: the tab as one self-contained HTML page.

The page starts on the picture on screen: the canvas's own display model and layout, its
open groups and bodies, its edge labels and display settings (``GraphController.
view_source``); the core (:mod:`editor.webpage`) lays out the views a click reaches from
there, off the GUI thread with a progress dialog that can cancel, and the page is written
when it is done. The theme is the window's.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.common.formatting import shown

__all__ = ["export_web_page", "install_export_web_page", "tab_page"]


def tab_page(tab, *, dark: bool = False, progress=None):
    """The :class:`editor.webpage.WebPage` of ``tab`` as it is on screen (call on the GUI
    thread for the snapshot; the returned callable does the work and may run on any thread)."""
    from editor.webpage import document_page

    controller = tab.canvas.controller
    live = tab.canvas.scene
    if live.graph is None or live.layout_result is None:
        raise ValueError("the model is not laid out yet")
    source = controller.view_source()
    expanded = controller.expanded()
    first = (live.graph, live.layout_result)
    title = tab.doc.path.name if tab.doc.path else "model"

    def make():
        return document_page(tab.doc, title=title, expanded=expanded, first=first, dark=dark, source=source,
                             progress=progress)

    return make


def export_web_page(window, path: str | Path | None = None):
    """The menu's flow: file name, then the page made on a thread and written when done.
    Returns the background job (tests wait on ``job.thread``), or None when nothing runs."""
    from widgets.editing.background import BackgroundEdit, JobControl

    tab = window.current_tab()
    if tab is None:
        return None
    if path is None:
        stem = tab.doc.path.stem if tab.doc.path else "model"
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

    try:
        make = tab_page(tab, dark=bool(window.theme and window.theme.dark), progress=progress)
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

    return BackgroundEdit(window, tab.doc, make, apply, title="Export Interactive Web Page",
                          label="Laying out the page's views…", name="export-web-page", control=control,
                          stale="The model changed while its page was being made: export it again")


def install_export_web_page(window) -> None:
    """Declare File ▸ Export ▸ Interactive Web Page… in the window's action registry."""
    window.registry.add(ActionSpec(
        id="file.export_web_page", title="Interactive &Web Page…", run=lambda: export_web_page(window),
        menu="File/Export", section="3_export",
        enabled_when=lambda: window.current_tab() is not None,
        tip="Save the graph as one self-contained HTML page to share: pan, zoom, open groups, find, "
            "node details; no server, nothing to install",
        keywords="export html web page share browser interactive notebook"))
