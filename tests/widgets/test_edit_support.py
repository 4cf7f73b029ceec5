"""Helpers for the editing tests (a window with editing installed, opening copies of
corpus models, clicking boxes, checking saved models), and tests of the small parsers the
editing dialogs share."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"
PPOCR = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"
SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"
IRIS = CORPUS / "real" / "ort_logreg_iris.onnx"


def install(win, tmp_path: Path):
    """The window's editing controller, writing recovery copies under ``tmp_path``."""
    from editor.recovery import RecoveryStore

    win.editing.enable_recovery(RecoveryStore(tmp_path / "recovery"), offer=False)
    return win.editing


def open_copy(qtbot, win, src: Path, tmp_path: Path):
    """Open a copy of ``src`` (so saving never touches the corpus); returns the tab."""
    dst = tmp_path / src.name
    if not dst.exists():
        shutil.copyfile(src, dst)
    tab = open_model(qtbot, win, dst)
    win.editing.sync()
    return tab


def edit_copy(qtbot, win, src: Path, tmp_path: Path):
    """Editing installed (:func:`install`) and a copy of ``src`` open (:func:`open_copy`):
    returns ``(editing, tab, doc, original bytes)``."""
    editing = install(win, tmp_path)
    tab = open_copy(qtbot, win, src, tmp_path)
    return editing, tab, tab.doc, tab.doc.serialize()


def node_named(doc, name: str) -> int:
    ids = doc.find_nodes(name)
    assert ids, name
    return ids[0]


def first_node(doc, op_type: str) -> int:
    for _sid, nid, node in doc.index.iter_nodes():
        if node.op_type == op_type:
            return nid
    raise AssertionError(op_type)


def select_node(tab, nid: int) -> None:
    from widgets.common.selection import Target

    tab.selection.select([Target.of_node(tab.doc.index.node_scope[nid], nid)], "test")


def select_value(tab, name: str, sid: int | None = None) -> None:
    from widgets.common.selection import Target

    tab.selection.select([Target.of_value(tab.doc.index.main if sid is None else sid, name)], "test")


def box_point(tab, key: str, *, where: str = "centre"):
    """Viewport point of a box (centred in view first): centre, bottom band, top."""
    from PySide6.QtCore import QPointF

    view = tab.canvas.view
    view.center_on(key)
    r = tab.canvas.scene.item_for(key).scene_rect()
    if where == "bottom":
        pt = QPointF(r.center().x(), r.bottom() - 2 / max(view.zoom(), 1e-6))
    elif where == "top":
        pt = QPointF(r.center().x(), r.top() + 4)
    else:
        pt = r.center()
    return view.mapFromScene(pt)


def wait_layout(qtbot, tab) -> None:
    """Wait for the relayout an edit starts."""
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        pass


def check_saved(doc, path: Path, feeds: dict | None = None):
    """Save, run onnx.checker on the file and (with ``feeds``) onnxruntime; returns outputs."""
    doc.save(path)
    onnx.checker.check_model(str(path), full_check=True)
    if feeds is None:
        return None
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def ppocr_feed(name: str = "x", batch: int = 1):
    return {name: np.random.default_rng(0).standard_normal((batch, 3, 48, 192)).astype(np.float32)}


def squeezenet_feed():
    return {"data_0": np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)}


# -- the shared parsers -------------------------------------------------------------------
def test_parse_shape_and_dims():
    from widgets.editing.common import parse_shape
    from widgets.editing.graph_io import parse_dim

    assert parse_shape("1, 3, N, ?") == [1, 3, "N", None]
    assert parse_shape("") is None
    assert parse_shape("[]") == []
    assert parse_dim("batch") == "batch" and parse_dim("8") == 8 and parse_dim("?") is None


def test_enum_choices_from_schema_docs():
    from editor.schema import attribute_specs, get_schema
    from widgets.editing.attributes import enum_choices

    conv = attribute_specs(get_schema("Conv", "", 13))
    assert {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"} <= set(enum_choices(conv["auto_pad"].doc))
    pad = attribute_specs(get_schema("Pad", "", 13))
    assert {"constant", "reflect", "edge"} <= set(enum_choices(pad["mode"].doc))
    assert enum_choices("An integer axis.") == []


def test_parse_attribute_values():
    from onnx import AttributeProto as AP

    from widgets.editing.attributes import parse_value

    assert parse_value(AP.INTS, "1, 2,3") == [1, 2, 3]
    assert parse_value(AP.FLOAT, "0.5") == 0.5
    assert parse_value(AP.STRINGS, "a, b") == ["a", "b"]
    with pytest.raises(ValueError, match="not a valid int"):
        parse_value(AP.INT, "two")
