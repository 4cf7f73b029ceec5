"""Failures while opening: the error dialog shows the CLI's one-line message (details on
demand), no tab is created, the window survives; a model whose external data is elsewhere
asks for the folder and opens from it; cancelling a load leaves no tab."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.errors import ExternalDataError, LoadError
from tests.conftest import CORPUS, real_models

CORPUS_REAL = CORPUS / "real"
from tests.widgets.conftest import open_model


def _cli_message(path: Path) -> str:
    from editor.document import Document

    with pytest.raises(LoadError) as info:
        Document.open(path)
    return info.value.message


@pytest.mark.parametrize("content", [b"this is not a model at all \x00\x01", b"", None],
                         ids=["garbage", "empty", "missing"])
def test_bad_file_shows_one_line_error_and_no_tab(qtbot, window, dialogs, tmp_path, content):
    path = tmp_path / "bad.onnx"
    if content is not None:
        path.write_bytes(content)
    expected = _cli_message(path)
    dialogs.fail = False
    with qtbot.waitSignal(window.loadFailed, timeout=30_000) as blocker:
        window.open_path(path)
    assert blocker.args == [expected]
    assert len(dialogs.errors) == 1
    title, text, _details = dialogs.errors[0]
    assert text == expected and "\n" not in text
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.start_page
    assert not window.loader.is_busy()


def test_truncated_model_is_an_error_not_a_crash(qtbot, window, dialogs, tmp_path):
    src = real_models()[0]
    path = tmp_path / "cut.onnx"
    path.write_bytes(src.read_bytes()[: src.stat().st_size // 3])
    dialogs.fail = False
    with qtbot.waitSignal(window.loadFailed, timeout=30_000):
        window.open_path(path)
    assert window.tabs.count() == 0 and len(dialogs.errors) == 1


def _external_model(folder: Path) -> Path:
    weights = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "model.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
              size_threshold=0)
    return path


def test_missing_external_data_asks_for_the_folder(qtbot, window, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    model_dir, data_dir = tmp_path / "model", tmp_path / "data"
    model_dir.mkdir()
    data_dir.mkdir()
    path = _external_model(model_dir)
    shutil.move(model_dir / "w.bin", data_dir / "w.bin")
    from editor.document import Document

    with pytest.raises(ExternalDataError):
        Document.open(path)
    asked = []

    def choose(parent, caption, start):
        asked.append(caption)
        return str(data_dir)

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(choose))
    tab = open_model(qtbot, window, path)
    assert len(asked) == 1 and "external data" in asked[0]
    assert window.tabs.count() == 1
    # the weights are readable from the chosen folder
    if window.weights is not None:
        from widgets.common.selection import Target

        with qtbot.waitSignal(window.weights.statsReady, timeout=30_000) as blocker:
            tab.selection.select([Target.of_tensor(tab.doc.index.main, "W")], "test")
        assert blocker.args[0].max == 63.0


def test_external_data_folder_refused_is_an_error(qtbot, window, dialogs, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    path = _external_model(tmp_path)
    (tmp_path / "w.bin").unlink()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a: ""))
    dialogs.fail = False
    with qtbot.waitSignal(window.loadFailed, timeout=30_000) as blocker:
        window.open_path(path)
    assert "w.bin" in blocker.args[0]
    assert window.tabs.count() == 0 and len(dialogs.errors) == 1


def test_cancel_leaves_no_tab(qtbot, window):
    from PySide6.QtCore import QCoreApplication, QThreadPool

    path = max(real_models(), key=lambda p: p.stat().st_size)
    with qtbot.waitSignal(window.loader.cancelled, timeout=5_000):
        window.open_path(path)
        assert window.cancel_button.isVisibleTo(window)
        window.cancel_button.click()
    # the worker finishes in the background (a parse cannot be stopped); its result is dropped
    assert QThreadPool.globalInstance().waitForDone(120_000), "the cancelled load never finished"
    QCoreApplication.processEvents()  # its queued result arrives now
    assert window.tabs.count() == 0, f"a cancelled load opened {window.tabs.count()} tab(s)"
    assert not window.loader.is_busy() and not window.progress.isVisibleTo(window), "still busy after a cancel"


def test_window_gone_while_a_cancelled_load_still_parses(qtbot, monkeypatch, capfd):
    """The window (and its loader) can be freed while a load it cancelled still runs on the
    pool: the load's result goes nowhere and its files are closed. Once a segfault: the
    worker emitted through the loader's deleted relay."""
    import threading

    import shiboken6
    from PySide6.QtCore import QObject, QThreadPool

    from editor.document import Document
    from widgets.window.loader import ModelLoader

    parsing, release = threading.Event(), threading.Event()

    class Store:
        closed = False

        def close(self) -> None:
            self.closed = True

    class Doc:
        store = Store()

    def slow_open(path, data_dir=None):  # noqa: ANN001, ANN202, ARG001 - the parser, held until released
        parsing.set()
        assert release.wait(120), "the test never released the load"
        return Doc()

    monkeypatch.setattr(Document, "open", staticmethod(slow_open))
    monkeypatch.setattr("widgets.window.loader._first_validation", lambda doc: None)
    pool, owner = QThreadPool(), QObject()
    loader = ModelLoader(owner, pool=pool)
    loader.cancel(loader.load("model.onnx"))
    assert parsing.wait(120), "the load never started"
    shiboken6.delete(owner)  # the window is freed: loader and relay are gone
    assert not shiboken6.isValid(loader), "the loader outlived its window"
    release.set()
    assert pool.waitForDone(120_000), "the load never finished"
    err = capfd.readouterr().err
    assert "RuntimeError" not in err and "deleted" not in err, f"the worker reported into the void: {err}"
    assert Doc.store.closed, "the dropped document's files were left open"


def test_cancel_during_first_layout_closes_the_tab(qtbot, window):
    path = CORPUS_REAL / "ppocrv4_det.onnx"
    with qtbot.waitSignal(window.loader.loaded, timeout=30_000):
        window.open_path(path)
    tab = window.current_tab()
    if tab.is_ready:  # the layout won the race on a fast machine: nothing to cancel
        pytest.skip("first layout finished before cancel")
    assert window.cancel_button.isVisibleTo(window)
    window.cancel_button.click()
    assert window.tabs.count() == 0 and not window.cancel_button.isVisibleTo(window)
