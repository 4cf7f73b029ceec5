"""Where the window's panels go and what its status bar shows.

The panels over the current document dock in an IDE layout (outline and find on the left,
properties, summary and cost on the right, problems under the canvas); the status bar
carries the open progress with its Cancel, the model's size and node count, and the zoom.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QProgressBar, QPushButton, QWidget

from widgets.common.formatting import human_bytes
from widgets.panels.op_docs import OpDocsPanel
from widgets.panels.outline import OutlinePanel
from widgets.panels.problems import ProblemsPanel
from widgets.panels.properties import PropertiesPanel
from widgets.panels.summary import SummaryPanel
from widgets.panels.weights import WeightsView


def add_dock(window, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, window)
    dock.setObjectName(name)  # saveState/restoreState key
    dock.setWidget(widget)
    window.addDockWidget(area, dock)
    return dock


def add_bottom_dock(window, dock: QDockWidget, beside: QDockWidget) -> None:
    """A dock shown on demand: bottom area, tabbed with ``beside``, hidden until used, and
    listed in ``window.docks`` (View ▸ Panels, saved state)."""
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    window.tabifyDockWidget(beside, dock)
    dock.hide()
    window.docks.append(dock)


def build_docks(window) -> None:
    left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                           Qt.DockWidgetArea.BottomDockWidgetArea)
    # IDE layout: side docks run the full height, the problems dock sits under the canvas
    window.setCorner(Qt.Corner.BottomLeftCorner, left)
    window.setCorner(Qt.Corner.BottomRightCorner, right)
    window.outline = OutlinePanel(window)
    window.properties = PropertiesPanel(window)
    window.op_docs = OpDocsPanel(window)
    window.outline_dock = add_dock(window, "Outline", "outline", window.outline, left)
    # the Find and Cost panels come after the first picture (install_late_panels): their
    # docks take their places, tabs and saved state now, empty until then
    window.find_dock = add_dock(window, "Find", "find", QWidget(window), left)
    window.tabifyDockWidget(window.outline_dock, window.find_dock)
    window.outline_dock.raise_()
    window.properties_dock = add_dock(window, "Properties", "properties", window.properties, right)
    window.op_docs_dock = add_dock(window, "Operator", "op_docs", window.op_docs, right)
    window.splitDockWidget(window.properties_dock, window.op_docs_dock, Qt.Orientation.Vertical)
    window.panels: list = [window.outline, window.properties, window.op_docs]
    window.docks = [window.outline_dock, window.find_dock, window.properties_dock, window.op_docs_dock]
    window.problems = ProblemsPanel(window)
    window.problems_dock = add_dock(window, "Problems", "problems", window.problems, bottom)
    window.problems.countChanged.connect(
        lambda errors, total: window.problems_dock.setWindowTitle(f"Problems ({total})" if total else "Problems"))
    window.summary = SummaryPanel(window)
    window.summary_dock = add_dock(window, "Summary", "summary", window.summary, right)
    window.cost_dock = add_dock(window, "Cost", "cost", QWidget(window), right)
    for dock in (window.summary_dock, window.cost_dock):
        window.tabifyDockWidget(window.properties_dock, dock)
    window.properties_dock.raise_()
    window.panels += [window.problems, window.summary]
    window.docks += [window.problems_dock, window.summary_dock, window.cost_dock]
    window.weights = WeightsView(window)
    window.properties.set_weights_view(window.weights)
    window.properties.tensorShown.connect(window.show_weights)


def install_late_panels(window) -> None:
    """The Find and Cost panels (``window.find_panel``, ``window.cost``) in the docks
    :func:`build_docks` left empty for them, listed among the panels where they were always
    listed (after Outline, after Summary).

    NOTE: after the first picture (a late step of the window): both docks are closed or
    tabbed behind another on a first start, the Cost panel's figures are computed after the
    picture anyway, and their modules (the query language, the cost formulas, the shape
    engine, the heat map) and widgets cost ~60 ms of GUI-thread CPU before it."""
    from widgets.docking import set_dock_content
    from widgets.overlays.layer import clear_when_closed
    from widgets.panels.cost import CostPanel
    from widgets.panels.find import FindPanel

    window.find_panel = FindPanel(window)
    set_dock_content(window.find_dock, window.find_panel)
    window.panels.insert(window.panels.index(window.outline) + 1, window.find_panel)
    window.cost = CostPanel(window)
    set_dock_content(window.cost_dock, window.cost)
    clear_when_closed(window.cost_dock, lambda: [window.cost.heatmap] if window.cost.heatmap is not None else [])
    window.panels.insert(window.panels.index(window.summary) + 1, window.cost)


def default_dock_sizes(window) -> None:
    """First-run layout: canvas first (:func:`widgets.docking.first_start_layout`).

    NOTE: resizeDocks only takes effect once the window has its real size, so this runs
    from the event loop after the first show (a saved window state replaces it)."""
    from widgets.docking import first_start_layout

    first_start_layout(window)


def build_status(window) -> None:
    bar = window.statusBar()
    window.model_info = QLabel(window)
    window.zoom_info = QLabel(window)
    window.progress = QProgressBar(window)
    window.progress.setMaximumWidth(180)
    window.progress.setTextVisible(False)
    window.progress.hide()
    window.cancel_button = QPushButton("Cancel", window)
    window.cancel_button.setFlat(True)
    window.cancel_button.hide()
    window.cancel_button.clicked.connect(window.cancel_loading)
    bar.addPermanentWidget(window.progress)
    bar.addPermanentWidget(window.cancel_button)
    bar.addPermanentWidget(window.model_info)
    bar.addPermanentWidget(window.zoom_info)


def update_zoom(window, zoom: float) -> None:
    window.zoom_info.setText(f"{zoom * 100:.0f}%")

def update_status(window) -> None:
    tab = window.current_tab()
    if tab is None:
        window.model_info.setText("")
        window.zoom_info.setText("")
        return
    doc = tab.doc
    total = sum(len(s.node_ids) for s in doc.index.scopes.values() if s.kind != "function")
    main = len(doc.main.node_ids)
    nodes = f"{main:,} node{'s' if main != 1 else ''}"  # an extract of one node said "1 nodes"
    if total != main:
        nodes += f" ({total:,} with subgraphs)"
    size = human_bytes(doc.file_size) if getattr(doc, "file_size", 0) else ""
    ext = ""
    store = getattr(doc, "store", None)
    if store is not None and store.files():
        ext = f" + {len(store.files())} external file{'s' if len(store.files()) != 1 else ''}"
    window.model_info.setText(" · ".join(x for x in (size + ext, nodes) if x))
    update_zoom(window, tab.canvas.view.zoom())
