"""``onnx-studio MODEL --run --screenshot FILE``: the model runs in the window's Run dock (the
runtime's child process) before the picture is taken; a run that fails exits 1 with one
``error:`` line. This is also how the desktop bundle's smoke test checks the Run dock."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper
from PySide6.QtGui import QImage

from resources import sample_model_path

ROOT = Path(__file__).resolve().parents[2]


def _app(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "widgets", *args], capture_output=True, text=True,
                          timeout=180, env=env, cwd=ROOT)


def test_run_then_screenshot_shows_the_result(tmp_path):
    out = tmp_path / "ran.png"
    proc = _app(str(sample_model_path()), "--run", "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert not QImage(str(out)).isNull()
    if sys.platform.startswith("linux"):  # the start-up time bench_startup.py reads
        assert re.search(r"model painted \d+\.\d+ s after start", proc.stderr), proc.stderr


def test_a_run_that_fails_exits_1_with_one_line(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    path = tmp_path / "unrunnable.onnx"
    onnx.save(model, path)
    out = tmp_path / "shot.png"
    proc = _app(str(path), "--run", "--screenshot", str(out))
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "unrunnable.onnx" in errors[0] and "Frobnicate" in errors[0]
    assert "Traceback" not in proc.stderr and not out.exists()


def test_run_flag_in_the_window_runs_the_model_once(qtbot, qapp, settings_dir, monkeypatch, tmp_path):
    import shutil

    other = tmp_path / "other.onnx"
    shutil.copy2(sample_model_path(), other)
    from PySide6.QtWidgets import QApplication

    from widgets.window import app as app_module
    from widgets.window.main_window import MainWindow

    results = []

    def fake_exec(*_a):
        win = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
        qtbot.addWidget(win)
        qtbot.waitUntil(lambda: win.run_dock.controller is not None
                        and win.run_dock.controller.last_result is not None, timeout=90_000)
        results.append(win.run_dock.controller.last_result)
        qtbot.waitUntil(lambda: not win.run_dock.service.busy, timeout=10_000)
        # a model opened afterwards is not run by itself
        with qtbot.waitSignal(win.modelShown, timeout=60_000):
            win.open_path(other)
        qtbot.wait(200)
        results.append(win.run_dock.service.busy or win.run_dock.controller.last_result is not None)
        return 0

    monkeypatch.setattr(QApplication, "exec", staticmethod(fake_exec))
    assert app_module.main([str(sample_model_path()), "--run"]) == 0
    assert len(results) == 2 and results[0].ok and results[1] is False, results
