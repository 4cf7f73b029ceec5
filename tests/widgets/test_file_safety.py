"""The window never destroys a file its document depends on, and notices files changed on disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model, show_panel

MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def external_folder(tmp_path_factory) -> Path:
    from editor.document import Document
    from editor.io import SaveOptions

    folder = tmp_path_factory.mktemp("ext")
    doc = Document.open(MAGIKA)
    doc.save(folder / "M.onnx", options=SaveOptions(external="single-file", location="M.onnx.data"))
    doc.store.close()
    return folder


@pytest.fixture
def work(external_folder: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "w"
    shutil.copytree(external_folder, folder)
    return folder


def test_save_as_over_its_own_data_file_is_refused(qtbot, monkeypatch, window, dialogs, work: Path) -> None:
    from PySide6.QtWidgets import QFileDialog

    tab = open_model(qtbot, window, work / "M.onnx")
    before = snapshot(work)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(work / "M.onnx.data"), "")))
    dialogs.fail = False
    assert window.save_as() is False
    assert len(dialogs.errors) == 1
    title, text, _ = dialogs.errors[0]
    assert "M.onnx.data" in text and "\n" not in text
    assert snapshot(work) == before
    assert tab.doc.path == work / "M.onnx"


# ------------------------------------------------------------------ files changed on disk

KALDI = CORPUS / "real" / "asr_prep_kaldi.onnx"


def node_count(tab) -> int:
    return len(tab.doc.model.graph.node)


def test_clean_document_offers_reload(qtbot, window, work: Path) -> None:
    tab = open_model(qtbot, window, work / "M.onnx")
    bar = window.file_watch.watched[id(tab)].bar
    assert bar.isHidden()
    shutil.copy(KALDI, work / "M.onnx")  # another program rewrites the file
    qtbot.waitUntil(lambda: bar.isVisible(), timeout=10_000)
    assert "M.onnx changed on disk" in bar.label.text() and bar.reload_button.isVisible()
    kaldi_nodes = len(__import__("onnx").load(KALDI).graph.node)
    with qtbot.waitSignal(window.modelShown, timeout=30_000) as blocker:
        bar.reload_button.click()
    assert node_count(blocker.args[0]) == kaldi_nodes
    assert window.tabs.count() == 1


def test_edited_document_warns_and_save_asks_first(qtbot, monkeypatch, window, work: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    from editor.commands.nodes import SetNodeField

    tab = open_model(qtbot, window, work / "M.onnx")
    tab.doc.execute(SetNodeField(tab.doc.main.node_ids[0], "name", "edited"))
    shutil.copy(KALDI, work / "M.onnx")
    window.file_watch.check_all()
    bar = window.file_watch.watched[id(tab)].bar
    assert bar.isVisible() and "unsaved edits" in bar.label.text() and bar.reload_button.isHidden()
    newer = (work / "M.onnx").read_bytes()
    asked: list[str] = []

    def answer(button):
        def question(parent, title, text, *a, **k):
            asked.append(text)
            return button
        return staticmethod(question)

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Cancel))
    assert window.save() is False
    assert len(asked) == 1 and "M.onnx" in asked[0]
    assert (work / "M.onnx").read_bytes() == newer  # nothing overwritten
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Save))
    assert window.save() is True
    assert (work / "M.onnx").read_bytes() != newer
    assert bar.isHidden()


def test_own_saves_and_data_files(qtbot, window, work: Path) -> None:
    from editor.commands.nodes import SetNodeField

    tab = open_model(qtbot, window, work / "M.onnx")
    tab.doc.execute(SetNodeField(tab.doc.main.node_ids[0], "name", "edited"))
    assert window.save() is True  # no question: nothing changed on disk
    window.file_watch.check_all()
    bar = window.file_watch.watched[id(tab)].bar
    assert bar.isHidden()  # our own save is not a change on disk
    with open(work / "M.onnx.data", "r+b") as f:  # another program touches the weights
        f.seek(100)
        f.write(b"\x00" * 8)
    window.file_watch.check_all()
    assert bar.isVisible() and "M.onnx.data" in bar.label.text()


# ------------------------------------------------------------------ a file name that is not UTF-8


def test_file_name_that_is_not_utf8(qtbot, window, tmp_path: Path) -> None:
    import os

    raw = os.fsencode(tmp_path) + b"/ka\xffldi.onnx"
    shutil.copy(KALDI, raw)
    path = os.fsdecode(raw)
    tab = open_model(qtbot, window, path)
    assert "\ufffd" in tab.title() and "\ufffd" in window.windowTitle()
    assert "\ufffd" in window.tabs.tabText(window.tabs.indexOf(tab))
    recent = window.settings.recent_files()
    assert recent[0] == str(Path(path).resolve())  # the real name, not the shown one
    assert os.path.exists(recent[0])
    # a new session's Settings read it back the same
    from widgets.settings.store import Settings

    assert Settings().recent_files()[0] == recent[0]
    labels = [a.text() for a in window.recent_menu.actions()]
    assert any("\ufffd" in label for label in labels)


# ------------------------------------------------------------------ a panel that cannot show its model


def test_summary_panel_shows_an_error_state(qtbot, monkeypatch, window) -> None:
    import editor.summary
    from editor.errors import ExternalDataError

    def broken(doc):
        raise ExternalDataError("external data file 'w.bin' changed since the model was opened; reopen the model")

    monkeypatch.setattr(editor.summary, "summarize", broken)
    open_model(qtbot, window, KALDI)  # would raise inside the panel without the error state
    panel = next(p for p in window.panels if type(p).__name__ == "SummaryPanel")
    show_panel(qtbot, panel)
    qtbot.waitUntil(lambda: "Cannot summarize" in panel.browser.toPlainText(), timeout=10_000)
    text = panel.browser.toPlainText()
    assert "Cannot summarize this model" in text and "w.bin" in text
