"""The README's two screenshots (light and dark, 1,600 x 1,000) are taken by this test.

It opens the bundled sample (Magika, a real model) the way a user would, finds a MatMul
with Ctrl+F, and grabs the window in each theme. By default the pictures go to a temporary
folder and the test checks them (size, both themes really differ); with
``ONNX_STUDIO_README_SHOTS=1`` they replace ``resources/screenshots/window-{light,dark}.png``::

    ONNX_STUDIO_README_SHOTS=1 QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest \\
        tests/widgets/test_readme_screenshots.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest

from resources import sample_model_path
from tests.conftest import ROOT
from tests.widgets.conftest import open_model

SIZE = (1600, 1000)


def _mean_lightness(image: QImage) -> float:
    small = image.scaled(40, 25)
    values = [small.pixelColor(x, y).lightness() for x in range(small.width()) for y in range(small.height())]
    return sum(values) / len(values)


@pytest.mark.timeout(120)
def test_readme_screenshots_light_and_dark(qtbot, window, tmp_path):
    folder = ROOT / "resources" / "screenshots" if os.environ.get("ONNX_STUDIO_README_SHOTS") else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    window.resize(*SIZE)
    tab = open_model(qtbot, window, sample_model_path())
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(window.find_panel.query, "op:MatMul")
    QTest.keyClick(window.find_panel.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(tab.canvas.scene.selected_keys()), timeout=30_000)
    window.outline_dock.raise_()
    qtbot.wait(200)
    lightness = {}
    for theme in ("light", "dark"):
        window.set_theme(theme)
        qtbot.wait(200)
        path = Path(folder) / f"window-{theme}.png"
        assert window.grab().save(str(path))
        image = QImage(str(path))
        assert (image.width(), image.height()) == (SIZE[0] * image.devicePixelRatio(), SIZE[1] * image.devicePixelRatio())
        lightness[theme] = _mean_lightness(image)
    assert lightness["dark"] < lightness["light"] - 60, lightness
    window.set_theme("light")


@pytest.mark.timeout(180)
def test_readme_diff_view_screenshot(qtbot, window, tmp_path, quantized_magika):  # noqa: ANN001
    """The diff view of the README: Magika against its int8 QOperator quantization, side
    by side, on the first quantized MatMul (F8 twice), its weights before and after below."""
    from widgets.diffview import open_diff_view
    from widgets.diffview.actions import side_of_path
    from tests.quantize_support import MAGIKA

    folder = ROOT / "resources" / "screenshots" if os.environ.get("ONNX_STUDIO_README_SHOTS") else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    window.resize(*SIZE)
    from PySide6.QtWidgets import QDockWidget

    for dock in window.findChildren(QDockWidget):
        dock.hide()  # the view needs the room; the panels have nothing to say about it
    view = open_diff_view(window, side_of_path(MAGIKA), side_of_path(quantized_magika["qoperator"], "magika_int8_qoperator.onnx"))
    qtbot.waitUntil(lambda: view.is_ready, timeout=60_000)
    QTest.keyClick(window, Qt.Key.Key_F8)
    QTest.keyClick(window, Qt.Key.Key_F8)
    stop = view.stops[view.current]
    assert "MatMul quantized" in stop.title, stop.title
    qtbot.waitUntil(lambda: any(r[0] == "largest element-wise difference" for r in view.details.rows()))
    qtbot.wait(300)
    path = Path(folder) / "diff-view.png"
    assert window.grab().save(str(path))
    image = QImage(str(path))
    assert (image.width(), image.height()) == (SIZE[0] * image.devicePixelRatio(), SIZE[1] * image.devicePixelRatio())
