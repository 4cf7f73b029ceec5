"""View ▸ Node Data Overlay…: colour the canvas by per-node data from a JSON or CSV file.

:func:`editor.node_data.load_node_data` reads the file; numbers are drawn as the profile
heat map draws times (pale to deep red, the value on a badge), labels each in a colour of
their own. A collapsed group shows the largest number of the nodes inside it (a label: the
most common one). The data stays with the tab it was loaded for; "Clear Node Data" removes
it. Names in the file that match no node are counted in the status bar.
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtWidgets import QFileDialog, QMessageBox

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.box_overlay import BoxOverlay, group_index, innermost_group
from widgets.run.heatmap import HeatMapOverlay

FILTER = "Node data (*.json *.csv *.tsv *.txt);;All files (*)"


def _fmt_number(v: float) -> str:
    return f"{v:.4g}"


class NodeDataOverlay(BoxOverlay):
    """Node values (numbers or labels) over one tab's boxes."""

    def __init__(self, tab, data) -> None:
        self.data = data
        names = {nid: tab.doc.node(nid).name for _scope, nid, _node in tab.doc.index.iter_nodes()}
        self.values = data.match(names)
        super().__init__(tab, HeatMapOverlay())

    def by_key(self) -> dict[str, float | str]:
        items = self.scene.node_items()
        groups = group_index(items)
        per_key: dict[str, list] = {}
        for nid, value in self.values.items():
            key = f"n:{nid}"
            if key not in items:
                key = innermost_group(groups, self.tab.doc.node(nid).name) if self.tab.doc.has_node(nid) else None
                if key is None:
                    continue
            per_key.setdefault(key, []).append(value)
        out: dict[str, float | str] = {}
        for key, vals in per_key.items():
            numbers = [v for v in vals if isinstance(v, float)]
            out[key] = max(numbers) if numbers else Counter(map(str, vals)).most_common(1)[0][0]
        return out

    def _rebuild(self) -> None:
        if not self._visible:
            return
        values = self.by_key()
        if self.data.numeric:
            low = min(values.values(), default=0.0)
            # shift so the smallest value is pale and the largest deep red (scores can be negative)
            shifted = {k: float(v) - min(0.0, float(low)) for k, v in values.items()}
            offset = min(0.0, float(low))
            self.overlay.set_times(self.scene, shifted, lambda v: _fmt_number(v + offset))
        else:
            labels = sorted({str(v) for v in values.values()})
            index = {label: k + 1 for k, label in enumerate(labels)}
            self.overlay.set_times(self.scene, {k: float(index[str(v)]) for k, v in values.items()},
                                   lambda v: labels[int(round(v)) - 1])
        self.overlay.update()


def install_node_data(window) -> None:
    """View ▸ Node Data Overlay… / Clear Node Data on ``window`` (a MainWindow)."""
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
        overlay.set_visible(True)
        matched = len(overlay.values)
        note = f"; {len(data.unmatched)} names match no node" if data.unmatched else ""
        window.statusBar().showMessage(f"Node data '{data.column}': {matched} nodes coloured{note}", 8000)
        return overlay

    def clear() -> None:
        tab = window.current_tab()
        overlay = overlays.pop(id(tab), None) if tab is not None else None
        if overlay is not None:
            overlay.set_visible(False)

    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    window.registry.add_all([
        ActionSpec("view.node_data", "Node &Data Overlay…", load, menu="View", section="7_overlay",
                   enabled_when=has_tab,
                   tip="Colour the nodes by values from a JSON or CSV file (node name → number or label)"),
        ActionSpec("view.node_data_clear", "Clear Node Data", clear, menu="View", section="7_overlay",
                   enabled_when=has_tab),
    ])
    window.node_data_overlays = overlays
    window.show_node_data = show
