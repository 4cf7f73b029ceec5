"""Document.save: unchanged saves reuse the file's bytes, but only while they are valid."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import onnx

from editor.commands import SetModelField
from editor.document import Document
from tests.conftest import CORPUS

SRC = CORPUS / "real" / "silero_vad_16k_op15.onnx"


def test_unchanged_save_reuses_file_bytes(tmp_path: Path, monkeypatch) -> None:
    doc = Document.open(SRC)
    calls = []
    real = onnx.ModelProto.SerializeToString
    monkeypatch.setattr(onnx.ModelProto, "SerializeToString", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    doc.save(tmp_path / "a.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == SRC.read_bytes()
    assert calls == []  # not serialized again
    doc.execute(SetModelField("producer_name", "x"))
    doc.save(tmp_path / "b.onnx")
    assert calls  # an edited model is serialized
    assert onnx.load(str(tmp_path / "b.onnx")).producer_name == "x"


def test_file_changed_on_disk_is_not_trusted(tmp_path: Path) -> None:
    src = tmp_path / "m.onnx"
    shutil.copy(SRC, src)
    doc = Document.open(src)
    original = doc.serialize()
    other = onnx.load(str(CORPUS / "real" / "fw_silero_vad_v6.onnx"))
    src.write_bytes(other.SerializeToString())  # someone else rewrote the file
    os.utime(src, ns=(1, 1))
    doc.save(tmp_path / "out.onnx")
    assert (tmp_path / "out.onnx").read_bytes() == original  # our model, not the new file


def test_undo_back_to_clean_state_saves_identical_bytes(tmp_path: Path) -> None:
    doc = Document.open(SRC)
    doc.execute(SetModelField("producer_name", "x"))
    doc.undo()
    doc.save(tmp_path / "c.onnx")
    assert (tmp_path / "c.onnx").read_bytes() == SRC.read_bytes()
