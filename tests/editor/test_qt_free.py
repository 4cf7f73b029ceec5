"""The core is Qt-free: importing ``editor`` and every submodule loads no PySide6/shiboken6.

Runs in a fresh interpreter so that Qt modules other tests imported do not hide a leak.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import importlib, json, pkgutil, sys
import editor
names = ["editor"]
errors = {}
for info in pkgutil.walk_packages(editor.__path__, "editor."):
    if info.name.rsplit(".", 1)[-1] == "__main__":
        continue  # a script: importing it runs the program; it only imports editor.cli
    try:
        importlib.import_module(info.name)
        names.append(info.name)
    except Exception as exc:  # report, do not hide
        errors[info.name] = repr(exc)
qt = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "PyQt5", "PyQt6"))
print(json.dumps({"imported": names, "errors": errors, "qt": qt}))
"""


def test_editor_imports_no_qt() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["errors"] == {}, f"editor submodules failed to import: {result['errors']}"
    # the walk really covered the package (the document and the commands at least)
    assert {"editor.document.document", "editor.commands.nodes", "editor.schema"} <= set(result["imported"])
    assert result["qt"] == [], f"Qt modules loaded by editor: {result['qt']}"


def test_probe_detects_qt() -> None:
    """The probe above would see a Qt import (guards against a check that cannot fail)."""
    code = "import sys, PySide6.QtCore; print([m for m in sys.modules if m.startswith('PySide6')][:1])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "PySide6" in proc.stdout
