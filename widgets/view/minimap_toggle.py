"""View > Minimap: show or hide the canvas overview in every tab, remembered between runs.

The minimap also hides itself while the whole graph is in view (``CanvasWidget``); this
toggle is the user's own say on top of that, kept in the settings (``view/show_minimap``).
"""

from __future__ import annotations

from widgets.actions.registry import ActionSpec

SETTING = "show_minimap"


def _apply(window, on: bool) -> None:
    for tab in window.tab_list():
        tab.canvas.set_minimap_enabled(on)


def install_minimap_toggle(window) -> None:
    """Declare View > Minimap and keep every tab (new ones included) in step with it."""
    on = window.settings.view_option(SETTING)

    def toggled(checked: bool) -> None:
        window.settings.set_view_option(SETTING, checked)
        _apply(window, checked)

    action = window.registry.add(ActionSpec(
        id="view.minimap", title="&Minimap", run=toggled, checkable=True, checked=on, menu="View",
        section="3_overview", tip="Show the overview of the whole graph in a corner of the canvas",
        keywords="overview navigator"))
    # a newly opened tab becomes current: give it the remembered state then
    window.tabs.currentChanged.connect(lambda _i: _apply(window, action.isChecked()))
