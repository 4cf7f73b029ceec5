"""File > Export Image…: the canvas as a PNG or an SVG, from the window.

The same drawing code as ``onnx-studio render`` (:mod:`widgets.canvas.export`): a fresh
``GraphScene`` is given the tab's current display model and layout (the groups and bodies
the user has open), in the chosen theme, so the export never disturbs the live canvas
(its selection, hover or theme). "Selection" exports the region of the selected boxes.

PNG scale: 2 px per unit where the caps allow, grown past them (``readable_scale``) so a
tall graph keeps legible text where memory allows; the status bar says when it could not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QRadioButton,
    QWidget,
)

from widgets.actions.registry import ActionSpec
from widgets.common.formatting import shown


@dataclass(frozen=True)
class ImageRequest:
    """What to export: file format, region and theme."""

    fmt: str = "png"          # "png" | "svg"
    selection: bool = False   # only the selected boxes' region
    dark: bool = False


def export_tab_image(tab, path: str | Path, request: ImageRequest) -> tuple[int, int, bool]:
    """Write the tab's canvas to ``path``; returns (width, height, text readable).

    Raises ValueError when a selection export has nothing selected, OSError when the file
    cannot be written."""
    from widgets.canvas.export import (
        HARD_MAX_PIXELS, HARD_MAX_SIDE, export_png, export_rect, export_svg, readable_scale,
    )
    from widgets.canvas.scene import GraphScene

    live = tab.canvas.scene
    if live.graph is None or live.layout_result is None:
        raise ValueError("the model is not laid out yet")
    keys = live.selected_keys() if request.selection else []
    if request.selection and not keys:
        raise ValueError("nothing is selected: select boxes to export their region")
    scene = GraphScene(dark=request.dark, show_names=live.show_names())
    try:
        scene.set_graph(live.graph, live.layout_result)
        if keys:
            scene.select_keys(keys)
        title = tab.doc.path.stem if tab.doc.path else "model"
        if request.fmt == "svg":
            size = export_svg(scene, path, selection_only=request.selection, title=title)
            return size.width(), size.height(), True
        scale, readable = readable_scale(export_rect(scene, selection_only=request.selection), 2.0)
        size = export_png(scene, path, selection_only=request.selection, scale=scale,
                          max_side=HARD_MAX_SIDE, max_pixels=HARD_MAX_PIXELS)
        return size.width(), size.height(), readable
    finally:
        scene.deleteLater()


class ExportImageDialog(QDialog):
    """Format, region and theme of an image export (the file name is asked next)."""

    def __init__(self, parent: QWidget | None, *, has_selection: bool, dark: bool) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Image")
        form = QFormLayout(self)
        self.png = QRadioButton("PNG (picture)", self)
        self.svg = QRadioButton("SVG (vector, text stays text)", self)
        self.whole = QRadioButton("Whole graph", self)
        self.selected = QRadioButton("Selection", self)
        self.selected.setEnabled(has_selection)
        self.light = QRadioButton("Light", self)
        self.dark = QRadioButton("Dark", self)
        for label, buttons in (("Format:", (self.png, self.svg)), ("Region:", (self.whole, self.selected)),
                               ("Theme:", (self.light, self.dark))):
            row = QHBoxLayout()
            group = QButtonGroup(self)
            for b in buttons:
                group.addButton(b)
                row.addWidget(b)
            row.addStretch(1)
            form.addRow(label, row)
        # NOTE: checked once grouped: sibling radio buttons are one exclusive set until they
        # join their groups, so checking the theme unchecked the format and the region
        self.png.setChecked(True)
        (self.selected if has_selection else self.whole).setChecked(True)
        (self.dark if dark else self.light).setChecked(True)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        box.button(QDialogButtonBox.StandardButton.Ok).setText("Export…")
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        form.addRow(box)

    def request(self) -> ImageRequest:
        return ImageRequest("svg" if self.svg.isChecked() else "png", self.selected.isChecked(), self.dark.isChecked())


def export_image(window) -> Path | None:
    """The File > Export Image… flow: options, file name, write, say what was written."""
    tab = window.current_tab()
    if tab is None:
        return None
    dark = bool(window.theme and window.theme.dark)
    dialog = ExportImageDialog(window, has_selection=bool(tab.canvas.scene.selected_keys()), dark=dark)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    request = dialog.request()
    stem = tab.doc.path.stem if tab.doc.path else "model"
    start = str(Path(window.settings.last_dir() or ".") / f"{stem}.{request.fmt}")
    filters = "PNG image (*.png)" if request.fmt == "png" else "SVG image (*.svg)"
    path, _ = QFileDialog.getSaveFileName(window, "Export Image", start, filters)
    if not path:
        return None
    if Path(path).suffix.lower() != f".{request.fmt}":
        path += f".{request.fmt}"
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        width, height, readable = export_tab_image(tab, path, request)
    except (OSError, ValueError) as exc:
        window.statusBar().showMessage(f"Export failed: {exc}", 8000)
        return None
    finally:
        QApplication.restoreOverrideCursor()
    note = "" if readable else " (too big for readable text: use SVG or export a selection)"
    window.statusBar().showMessage(f"Exported {shown(Path(path).name)}, {width:,} x {height:,}{note}", 8000)
    return Path(path)


def install_export_image(window) -> None:
    """Declare File > Export Image… in the window's action registry (after Save)."""
    window.registry.add(ActionSpec(
        id="file.export_image", title="Export &Image…", run=lambda: export_image(window),
        menu="File", section="3_export",
        enabled_when=lambda: window.current_tab() is not None,
        tip="Save the canvas as a PNG or SVG picture (whole graph or selection, light or dark)",
        keywords="export picture png svg screenshot render"))
