"""The About dialog: what this is, and the versions of everything that matters in a bug report."""

from __future__ import annotations

import platform
import sys

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QMessageBox, QWidget


def versions() -> dict[str, str]:
    """Component versions, in the order shown (also useful for bug reports)."""
    from editor import __version__ as studio_version

    out = {"ONNX Studio": studio_version}
    try:
        import onnx

        out["ONNX"] = f"{onnx.__version__} (opset {onnx.defs.onnx_opset_version()})"
    except Exception:  # noqa: BLE001
        out["ONNX"] = "not installed"
    try:
        import onnxruntime

        out["onnxruntime"] = f"{onnxruntime.__version__} ({', '.join(onnxruntime.get_available_providers())})"
    except Exception:  # noqa: BLE001 - optional at run time
        out["onnxruntime"] = "not installed"
    out["Qt"] = f"{qVersion()} (PySide6 {pyside_version})"
    import numpy

    out["NumPy"] = numpy.__version__
    out["Python"] = f"{platform.python_version()} ({sys.platform}, {platform.machine()})"
    return out


def about_html() -> str:
    rows = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in versions().items())
    return ("<h3>ONNX Studio</h3>"
            "<p>A desktop editor and visualizer for ONNX models: browse, find, inspect, edit with "
            "full undo, validate live.</p>"
            f"<table>{rows}</table>"
            "<p>Licensed under the Apache License 2.0.</p>")


def show_about(parent: QWidget | None) -> None:
    box = QMessageBox(parent)
    box.setWindowTitle("About ONNX Studio")
    box.setTextFormat(box.textFormat().RichText)
    box.setText(about_html())
    if parent is not None and not parent.windowIcon().isNull():
        box.setIconPixmap(parent.windowIcon().pixmap(64, 64))
    box.exec()
