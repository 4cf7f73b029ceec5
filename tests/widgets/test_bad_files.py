"""Damaged real models in the window: names that are not UTF-8 and element types ONNX does not
define open without an exception, and show as U+FFFD and "unknown type N"."""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model, show_outline

KALDI = CORPUS / "real" / "asr_prep_kaldi.onnx"
MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"


@pytest.fixture
def no_stray_exceptions(monkeypatch):
    """Exceptions Qt's event loop would swallow (slots, timers) fail the test."""
    caught: list[str] = []
    monkeypatch.setattr(sys, "excepthook", lambda et, ev, tb: caught.append(f"{et.__name__}: {ev}"))
    yield caught
    assert caught == []


def bad_op_type(tmp_path: Path) -> Path:
    model = onnx.load(KALDI)
    data = model.SerializeToString()
    op = model.graph.node[3].op_type.encode()
    i = data.index(b"\x22" + bytes([len(op)]) + op)  # NodeProto.op_type, field 4
    path = tmp_path / "bad_op.onnx"
    path.write_bytes(data[: i + 2] + b"\xfe" + data[i + 3 :])
    return path


def test_op_type_that_is_not_utf8(qtbot, window, tmp_path: Path, no_stray_exceptions) -> None:
    from widgets.panels.find import search

    tab = open_model(qtbot, window, bad_op_type(tmp_path))
    ops = [item.box.label for item in tab.canvas.scene.node_items().values()]
    assert any("\ufffd" in op for op in ops), ops
    hits = search(tab.doc, "\ufffdoncat")
    assert hits  # Find finds it by what it shows
    # the Problems panel lists it as an error of node #3
    qtbot.waitUntil(lambda: any("node #3" in p.message for p in tab.validator.problems), timeout=20_000)


def test_unknown_element_types(qtbot, window, tmp_path: Path, no_stray_exceptions) -> None:
    model = onnx.load(MAGIKA)
    model.graph.initializer[0].data_type = 40  # no such TensorProto.DataType
    model.graph.input[0].type.tensor_type.elem_type = 77
    path = tmp_path / "types.onnx"
    onnx.save(model, path)
    open_model(qtbot, window, path)
    show_outline(qtbot, window)
    outline = window.outline
    texts = []

    def walk(parent) -> None:
        m = outline.model
        for r in range(m.rowCount(parent)):
            index = m.index(r, 1, parent)
            texts.append(str(index.data()))
            walk(m.index(r, 0, parent))

    from PySide6.QtCore import QModelIndex

    walk(QModelIndex())
    assert any("unknown type 40" in t for t in texts), texts[:20]
