"""``onnx-studio MODEL --screenshot FILE``: offscreen, waits for the model, writes a PNG,
exits 0; a bad model exits 2 with one ``error:`` line and writes nothing. Also: the
bundled sample and its provenance, and opening by drag and drop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage

from resources import sample_model_path
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "widgets", *args], capture_output=True, text=True,
                          timeout=180, env=env, cwd=ROOT)


def test_screenshot_of_a_real_model(tmp_path):
    out = tmp_path / "shot.png"
    proc = _run(str(CORPUS / "real" / "fw_silero_vad_v6.onnx"), "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert not image.isNull() and image.width() >= 1000 and image.height() >= 600
    # not a blank window: many distinct colours (boxes, text, panels)
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 30


def test_screenshot_of_bad_model_fails_with_one_line(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    out = tmp_path / "shot.png"
    proc = _run(str(bad), "--screenshot", str(out))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "bad.onnx" in errors[0]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_sample_model_is_shipped_with_provenance():
    path = sample_model_path()
    assert path.is_file() and path.stat().st_size < 5_000_000
    readme = (path.parent / "README.md").read_text()
    assert path.name in readme and "Apache-2.0" in readme and "github.com/google/magika" in readme
    import hashlib

    assert hashlib.sha256(path.read_bytes()).hexdigest() in readme


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the QPoint overload is the one PySide exposes
def test_drop_a_file_opens_it(qtbot, window):
    path = CORPUS / "real" / "asr_prep_resample_44_16.onnx"
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPointF(10, 10).toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.modelShown, timeout=60_000):
        window.dropEvent(drop)
    assert window.current_tab().path.name == path.name


def test_open_dialog_opens_the_chosen_files(qtbot, window, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    chosen = [str(CORPUS / "real" / "asr_prep_kaldi.onnx"), str(CORPUS / "real" / "ort_logreg_iris.onnx")]
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: (chosen, "")))
    with qtbot.waitSignals([window.modelShown, window.modelShown], timeout=60_000):
        window.registry.action("file.open").trigger()
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=60_000)


def test_screenshot_with_data_dir(tmp_path):
    import shutil

    from tests.widgets.test_app_errors import _external_model

    model_dir, data_dir = tmp_path / "m", tmp_path / "d"
    model_dir.mkdir()
    data_dir.mkdir()
    path = _external_model(model_dir)
    shutil.move(model_dir / "w.bin", data_dir / "w.bin")
    out = tmp_path / "shot.png"
    missing = _run(str(path), "--screenshot", str(out))
    assert missing.returncode == 2 and "w.bin" in missing.stderr and not out.exists()
    found = _run(str(path), "--screenshot", str(out), "--data-dir", str(data_dir))
    assert found.returncode == 0, found.stderr
    assert not QImage(str(out)).isNull()


def test_main_without_model_opens_sample_on_first_run(qtbot, qapp, settings_dir, dialogs, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from widgets.window import app as app_module
    from widgets.window.main_window import MainWindow

    shown = []

    def fake_exec(*_a):
        win = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
        qtbot.addWidget(win)
        qtbot.waitUntil(lambda: win.current_tab() is not None and win.current_tab().is_ready, timeout=60_000)
        shown.append(win.current_tab().path)
        return 0

    monkeypatch.setattr(QApplication, "exec", staticmethod(fake_exec))
    assert app_module.main([]) == 0
    assert shown == [sample_model_path().resolve()]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_screenshot_ended_by_a_signal_leaves_no_temporary_folder(tmp_path):
    import signal
    import time

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT), TMPDIR=str(scratch))
    # a model that never finishes loading in time: the screenshot is still waiting when stopped
    model = CORPUS / "onnx-backend" / "light" / "light_densenet121.onnx"
    proc = subprocess.Popen([sys.executable, "-m", "widgets", str(model), "--screenshot", str(tmp_path / "s.png")],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(scratch.glob("onnx-studio-shot-*")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert list(scratch.glob("onnx-studio-shot-*")), "the screenshot made no temporary folder"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and "Traceback" not in err
    assert not list(scratch.glob("onnx-studio-shot-*")), err
