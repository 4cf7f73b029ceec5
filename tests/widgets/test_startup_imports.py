"""Start-up pays only for what the first painted model needs.

A window that opens a model and paints it has not imported onnxruntime, networkx or the ONNX
reference evaluator: running a model, graph passes (topological sort, cycles) and the
reference backend import them when first used (about 0.5 s of start-up CPU for networkx
alone, issue 35's "painted <= 2 s"). Nor the modules of the docks the window installs after
its first picture (Run, Diff, Compare Runs, Generate, Quantization: a third of a second), nor
the application-wide file-dialog filter (its first event made PySide6 build every type it had
left for later: ~50 ms). Runs in a fresh interpreter, since other tests import these modules
into this one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: modules the first painted model must not need: running, graph passes, the reference
#: backend, and the docks the window installs after the first picture
#: (``MainWindow.install_late_docks``: Run, Diff, Compare Runs, Generate, Quantization, with
#: the core they drive: the debugger, the decoder, the quantizer; the passes and the runtime
#: front end, which only dialogs, scripts and runs use), the file-dialog filter, and the Find
#: and Cost panels with their query language and formulas (their docks are placed at start,
#: the panels come after the picture); multiprocessing is the on-demand full check's
DEFERRED = ("onnxruntime", "networkx", "onnx.reference", "widgets.run", "widgets.compare", "widgets.diffview",
            "widgets.numeric", "widgets.generate", "widgets.quantize", "editor.debug", "editor.decoder",
            "editor.quantize", "editor.passes", "editor.runtime", "widgets.window.file_dialog_fit",
            "widgets.panels.cost", "editor.cost", "widgets.panels.find", "editor.find", "multiprocessing")

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
class AtPaint(dict):
    # the watch's result: the deferred modules loaded at the moment of the first paint
    # (the late docks are installed right after it, in the same call)
    def setdefault(self, key, value):
        if key == "painted" and key not in self:
            self["loaded"] = [m for m in DEFERRED if m in sys.modules]
        return super().setdefault(key, value)

result = AtPaint()

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
