"""The window never destroys a file its document depends on, and notices files changed on disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model

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
