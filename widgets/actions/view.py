"""View menu: zoom, the main graph, what boxes show, panels, theme.

Panels: every dock registers its toggle with :func:`register_dock` (the dock's own
toggle-view action, adopted by the registry, so its check mark follows the dock)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from widgets.actions.registry import ActionSpec

K = QKeySequence.StandardKey
THEMES = (("system", "Follow &System"), ("light", "&Light"), ("dark", "&Dark"))


def register(window) -> None:
    reg = window.registry
    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    opt = window.settings.view_option
    reg.declare_menu("View/Boxes Show", "4_boxes")
    reg.declare_menu("View/Panels", "5_panels")
    reg.add_all([
        ActionSpec("view.zoom_in", "Zoom &In", lambda: view_call(window, "zoom_in"), K.ZoomIn, "View", "1_zoom",
                   enabled_when=has_tab),
        ActionSpec("view.zoom_out", "Zoom &Out", lambda: view_call(window, "zoom_out"), K.ZoomOut, "View", "1_zoom",
                   enabled_when=has_tab),
        ActionSpec("view.zoom_fit", "Zoom to &Fit", lambda: view_call(window, "zoom_to_fit"), "Ctrl+0", "View",
                   "1_zoom", enabled_when=has_tab, contexts=("node", "value", "canvas"), keywords="whole graph",
                   tip="Show the whole graph, however small"),
        ActionSpec("view.zoom_readable", "Zoom to &Readable", lambda: view_call(window, "zoom_to_readable"),
                   "Ctrl+Alt+0", "View", "1_zoom", enabled_when=has_tab, contexts=("canvas",),
                   keywords="fit inputs start", tip="The whole graph if its text can be read so, else its "
                                                    "inputs at a readable zoom"),
        ActionSpec("view.zoom_selection", "Zoom to &Selection", lambda: view_call(window, "zoom_to_selection"),
                   "Ctrl+Shift+0", "View", "1_zoom", enabled_when=has_tab, contexts=("node", "value", "canvas")),
        ActionSpec("view.main_graph", "Show &Main Graph", window.show_main_graph, "Ctrl+Home", "View", "2_graph",
                   enabled_when=has_tab),
        ActionSpec("view.names", "Node &Names", window.set_show_names, menu="View/Boxes Show", checkable=True,
                   checked=opt("show_names")),
        ActionSpec("view.attributes", "&Attributes", window.set_display_options, menu="View/Boxes Show",
                   checkable=True, checked=opt("show_attributes")),
        ActionSpec("view.shapes", "Tensor &Shapes", window.set_display_options, menu="View/Boxes Show",
                   checkable=True, checked=opt("show_shapes")),
        ActionSpec("view.initializers", "&Initializers and Constants", window.set_display_options,
                   menu="View/Boxes Show", checkable=True, checked=opt("show_initializers")),
        ActionSpec("view.shape_plumbing", "Shape &Computations as Boxes", lambda on: show_plumbing(window, on),
                   menu="View", section="2_graph", checkable=True, keywords="shape gather concat reshape fold",
                   tip="Draw Shape → Gather → Concat chains and shared small constants as boxes "
                       "(else a row of each node that reads them)"),
    ])
    if window.theme is not None:
        reg.add(ActionSpec("view.theme", "&Theme", window.set_theme, menu="View", section="6_theme",
                           choices=lambda _t: [(label, key) for key, label in THEMES],
                           checked_for=lambda key: window.theme.choice == key))
    for dock in window.docks:
        register_dock(window, dock)


def register_dock(window, dock, section: str = "1") -> None:
    """View ▸ Panels ▸ <dock>: shows or hides the dock (its own toggle action, adopted)."""
    title = dock.windowTitle().split(" (")[0]
    window.registry.add(ActionSpec(f"view.panel.{dock.objectName()}", title, lambda: None, menu="View/Panels",
                                   section=section, tip=f"Show or hide the {title} panel",
                                   keywords="panel dock"),
                        action=dock.toggleViewAction())
    # a panel asked for comes to the front of its tab group (it opened behind Find's tab)
    dock.toggleViewAction().triggered.connect(lambda shown: dock.raise_() if shown else None)


def show_plumbing(window, on: bool) -> None:
    """Shape plumbing as boxes (or as rows of its readers) in every open tab."""
    for tab in window.tab_list():
        tab.canvas.controller.set_show_plumbing(bool(on))


def view_call(window, method: str) -> None:
    tab = window.current_tab()
    if tab is not None:
        getattr(tab.canvas.view, method)()
