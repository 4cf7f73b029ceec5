"""Packaging recipes hold together: desktop entry and MIME type agree, the icon renders,
the PyInstaller spec is valid Python naming files that exist."""

from __future__ import annotations

import ast
import configparser
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"


def test_desktop_entry_and_mime_type_agree():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(LINUX / "onnx-studio.desktop")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Exec"].startswith("onnx-studio ")
    assert "%F" in d["Exec"] or "%f" in d["Exec"]
    assert "application/x-onnx" in d["MimeType"].split(";")
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    mime = ET.parse(LINUX / "onnx-studio-mime.xml").getroot().find("m:mime-type", ns)
    assert mime.get("type") == "application/x-onnx"
    assert [g.get("pattern") for g in mime.findall("m:glob", ns)] == ["*.onnx"]
    assert (LINUX / "onnx-studio.svg").read_bytes() == (ROOT / "resources" / "onnx-studio.svg").read_bytes()


def test_app_icon_renders(qapp):
    from PySide6.QtGui import QIcon

    from resources import app_icon_path

    icon = QIcon(str(app_icon_path()))
    image = icon.pixmap(64, 64).toImage()
    assert not image.isNull() and image.width() == 64
    assert image.pixelColor(32, 4).alpha() > 0  # drawn, not empty


def test_pyinstaller_spec_is_valid_and_points_at_real_files():
    spec = (ROOT / "packaging" / "onnx-studio.spec").read_text()
    ast.parse(spec)
    assert (ROOT / "packaging" / "onnx_studio_launcher.py").is_file()
    assert '"resources"' in spec and "editor" in spec and "widgets" in spec
