"""Start-up pays only for what the first painted model needs.

A window that opens a model and paints it has not imported onnxruntime, networkx or the ONNX
reference evaluator: running a model, graph passes (topological sort, cycles) and the
reference backend import them when first used (about 0.5 s of start-up CPU for networkx
alone, issue 35's "painted <= 2 s"). Runs in a fresh interpreter, since other tests import
these modules into this one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: modules the first painted model must not need
DEFERRED = ("onnxruntime", "networkx", "onnx.reference")

PROBE = r"""
import importlib.util, json, sys, tempfile

DEFERRED = json.loads(sys.argv[1])
# each is installed here, so "not loaded" below means deferred, not missing
missing = [m for m in DEFERRED if importlib.util.find_spec(m) is None]

from PySide6.QtCore import QSettings, QTimer

from resources import sample_model_path
from widgets.window import app as studio

settings_dir = tempfile.TemporaryDirectory(prefix="onnx-studio-startup-")
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir.name)
qapp = studio.create_application()
window = studio.create_window(theme_choice="light")
window.interactive_errors = False
window.resize(1000, 700)
window.show()
result = {}

def watch_new_tab(_index):
    # the same watch as --screenshot's "model painted": the first paint of the laid-out model
    tab = window.current_tab()
    if tab is not None and "painted" not in result:
        studio.watch_first_paint(tab.canvas.view.viewport(), result, when=lambda t=tab: t.is_ready)

def failed(message):
    result["failed"] = message
    qapp.quit()

def poll():
    if "painted" in result:
        # the modules loaded when the model was first painted, before any later work
        result["loaded"] = [m for m in DEFERRED if m in sys.modules]
        qapp.quit()

window.tabs.currentChanged.connect(watch_new_tab)
window.loadFailed.connect(failed)
window.layoutFailed.connect(failed)
timer = QTimer()
timer.timeout.connect(poll)
timer.start(10)
window.open_path(str(sample_model_path()))
qapp.exec()
timer.stop()
print(json.dumps({"missing": missing, "loaded": result.get("loaded"), "failed": result.get("failed")}))
"""


def test_first_painted_model_loads_no_deferred_module() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(DEFERRED)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"probe exited {proc.returncode}: {proc.stderr[-2000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["missing"] == [], f"not installed, so the check would prove nothing: {result['missing']}"
    assert result["failed"] is None, f"the sample model did not open: {result['failed']}"
    assert result["loaded"] == [], (f"expected none of {list(DEFERRED)} loaded when the first model is painted, "
                                    f"saw {result['loaded']} (import them where they are used)")
