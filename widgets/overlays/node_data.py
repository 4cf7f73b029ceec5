"""View ▸ Node Data Overlay…: colour the canvas by per-node data from a JSON or CSV file.

:func:`editor.node_data.load_node_data` reads the file; numbers are drawn as the profile
heat map draws times (pale to deep red, the value on a badge), labels each in a colour of
their own. A collapsed group shows the largest number of the nodes inside it (a label: the
most common one). The data stays with the tab it was loaded for; View ▸ Clear Overlay removes
it. Names in the file that match no node are counted in the status bar.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QMessageBox

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.overlays.box_overlay import BoxOverlay
from widgets.overlays.heatmap import HeatMapOverlay, fmt_us

FILTER = "Node data (*.json *.csv *.tsv *.txt);;All files (*)"


class NodeDataOverlay(BoxOverlay):
    """Node values (numbers or labels) over one tab's boxes."""

    def __init__(self, tab, data) -> None:
        self.data = data
        self.values = data.match_doc(tab.doc)
        super().__init__(tab, HeatMapOverlay())

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"Node data: {self.data.column}"

    def legend(self):  # noqa: ANN201
        from editor.node_data import legend_entries, overlay_amounts
        from widgets.canvas.overlay_export import overlay_colour

        values = self.by_key()
        amounts, _text = overlay_amounts(values, self.data.numeric)
        peak = max(amounts.values(), default=0.0)
        colour = overlay_colour(self.data.numeric)
        entries = legend_entries(values, self.data.numeric)
        if self.data.ort_profile:  # times (never negative: the amounts are the values)
            entries = [(a, fmt_us(a)) for a, _text in entries]
        if self.data.numeric:
            entries = list(reversed(entries))  # the largest first, as the heat maps
        return self.title, [(colour(a, peak), text) for a, text in entries[:8]]

    def by_key(self) -> dict[str, float | str]:
        from editor.node_data import box_values

        doc = self.tab.doc
        names = {nid: doc.node(nid).name for nid in self.values if doc.has_node(nid)}
        boxes = ((key, item.box.name) for key, item in self.scene.node_items().items())
        return box_values(boxes, {nid: v for nid, v in self.values.items() if nid in names}, names)

    def _rebuild(self) -> None:
        if not self._visible:
            return
        from editor.node_data import overlay_amounts
        from widgets.canvas.overlay_export import overlay_colour

        amounts, text = overlay_amounts(self.by_key(), self.data.numeric)
        if self.data.ort_profile:
            text = fmt_us
        self.overlay.set_times(self.scene, amounts, text, overlay_colour(self.data.numeric))
        self.overlay.update()


def install_node_data(window) -> None:
    """View ▸ Node Data Overlay… / Clear Overlay on ``window`` (a MainWindow)."""
    overlays: dict[int, NodeDataOverlay] = {}

    def load() -> None:
        tab = window.current_tab()
        if tab is None:
            return
        path, _ = QFileDialog.getOpenFileName(window, "Node Data Overlay", window.settings.last_dir(), FILTER)
        if path:
            show(tab, path)

    def show(tab, path: str) -> NodeDataOverlay | None:
        from editor.node_data import load_node_data

        try:
            data = load_node_data(path)
        except StudioError as exc:
            QMessageBox.warning(window, "Node Data Overlay", exc.message)
            return None
        old = overlays.pop(id(tab), None)
        if old is not None:
            old.set_visible(False)
        overlay = overlays[id(tab)] = NodeDataOverlay(tab, data)
        overlay.on_cleared = lambda key=id(tab), o=overlay: overlays.pop(key, None) if overlays.get(key) is o else None
        overlay.set_visible(True)
        matched = len(overlay.values)
        note = f"; {len(data.unmatched)} names match no node" if data.unmatched else ""
        window.statusBar().showMessage(f"Node data '{data.column}': {matched} nodes coloured{note}", 8000)
        return overlay

    def clear() -> None:
        """View ▸ Clear Overlay: whatever the current tab shows (node data, a heat map, diff
        colours), its legend with it."""
        from widgets.overlays.layer import layer_for

        tab = window.current_tab()
        layer = layer_for(tab, create=False) if tab is not None else None
        if layer is not None:
            layer.clear()
        window.registry.refresh()

    def has_overlay() -> bool:
        from widgets.overlays.layer import layer_for

        tab = window.current_tab()
        layer = layer_for(tab, create=False) if tab is not None else None
        return layer is not None and layer.active is not None

    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    window.registry.add_all([
        ActionSpec("view.node_data", "Node &Data Overlay…", load, menu="View", section="7_overlay",
                   enabled_when=has_tab,
                   tip="Colour the nodes by values from a JSON or CSV file (node name → number or label), "
                       "or by kernel time from an onnxruntime profile"),
        ActionSpec("view.clear_overlay", "Clear Overlay", clear, menu="View", section="7_overlay",
                   enabled_when=has_overlay, keywords="node data heat map diff colours legend",
                   tip="Remove the overlay the canvas shows (node data, a heat map, diff colours)"),
    ])
    window.node_data_overlays = overlays
    window.show_node_data = show
