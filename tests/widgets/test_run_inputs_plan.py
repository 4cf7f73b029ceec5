"""The Run dock starts from the inputs ``run --random`` makes (issue 29): token ids inside
their embedding table, image sides from the model's ``imgsz`` metadata, each choice shown
with its reason; the user's dims, ranges and saved inputs override it; the wheel scrolls the
form without changing the values it passes over."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from onnx import TensorProto, helper, numpy_helper

from editor.runtime.input_plan import plan_inputs
from editor.runtime.inputs import save_inputs


def _model():
    """token ids into a 300-row table, token types into 2 rows, a mask, an NCHW image with
    its size in the metadata (imgsz)."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])
    types = helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "sequence"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])
    image = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    words = numpy_helper.from_array(np.zeros((300, 4), np.float32), "word_embeddings")
    kinds = numpy_helper.from_array(np.zeros((2, 4), np.float32), "type_embeddings")
    nodes = [helper.make_node("Gather", ["word_embeddings", "input_ids"], ["w"]),
             helper.make_node("Gather", ["type_embeddings", "token_type_ids"], ["t"]),
             helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
             helper.make_node("Relu", ["images"], ["r"])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("w", "t", "m", "r")]
    model = helper.make_model(helper.make_graph(nodes, "g", [ids, types, mask, image], outs, [words, kinds]),
                              opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"imgsz": "[320, 256]"})
    return model


@pytest.fixture
def panel(qtbot, settings_dir):
    from widgets.run.inputs_panel import InputPanel

    p = InputPanel()
    qtbot.addWidget(p)
    p.resize(320, 600)
    p.show()  # the plan is worked out once the panel is seen
    with qtbot.waitSignal(p.planReady, timeout=30_000):
        p.set_model(_model(), "/models/bert_like.onnx")
    return p


def _same(feeds, plan_feeds, what):
    assert list(feeds) == list(plan_feeds), what
    for name in plan_feeds:
        assert np.array_equal(feeds[name], plan_feeds[name]), f"{name}: {what}"


def test_the_dock_shows_what_run_random_chooses_and_why(panel):
    ids = panel.editors["input_ids"]
    assert 0 <= ids.low.value() <= ids.high.value() <= 299, "token ids must lie inside their table"
    assert "word_embeddings" in ids.why.text(), ids.why.text()
    tt = panel.editors["token_type_ids"]
    assert 0 <= tt.low.value() <= tt.high.value() <= 1
    assert "attention mask" in panel.editors["attention_mask"].why.text()
    assert "standard normal" in panel.editors["images"].why.text()
    dims = panel.dim_values()
    assert (dims["height"], dims["width"]) == (320, 256), f"imgsz says 320 x 256, the dock has {dims}"
    spin = panel.dims.findChild(type(panel.seed), "dim:height")
    assert "metadata" in spin.toolTip() and spin.suffix().strip() == "metadata", (spin.toolTip(), spin.suffix())
    seq = panel.dims.findChild(type(panel.seed), "dim:sequence")
    assert seq.suffix().strip() == "guess" and "sequence" in seq.toolTip()
    assert "guessed sequence=16" in panel.plan_note.text() and not panel.plan_note.isHidden()
    # the window's words, not the command line's ("give --dim NAME=VALUE")
    assert "under Dimensions" in panel.plan_note.text() and "--dim" not in panel.plan_note.text(), \
        panel.plan_note.text()


def test_default_feeds_are_exactly_run_randoms(panel):
    _same(panel.feeds(), plan_inputs(panel.model, seed=0).feeds, "the dock's value is not run --random's")
    panel.seed.setValue(7)
    _same(panel.feeds(), plan_inputs(panel.model, seed=7).feeds, "the seed must reach plan_inputs")


def test_the_users_edits_override_the_core(qtbot, panel):
    mask = panel.editors["attention_mask"]
    mask.low.setValue(0)
    mask.high.setValue(1)
    assert "your range" in mask.why.text() and not mask.reset_range.isHidden()
    panel.dims.set_value("sequence", 9)
    cli = plan_inputs(panel.model, dims={"sequence": 9}, seed=0, val_ranges={"attention_mask": (0, 1)})
    _same(panel.feeds(), cli.feeds, "the user's dims and range must reach plan_inputs")
    assert panel.feeds()["input_ids"].shape == (1, 9)
    panel.editors["images"].set_mode("zeros")
    feeds = panel.feeds()
    assert not feeds["images"].any() and feeds["images"].shape == (1, 3, 320, 256)
    # Reset: the core's values again (an attention mask of ones)
    with qtbot.waitSignal(panel.planReady, timeout=30_000):
        mask.use_core_range()
    assert (mask.low.value(), mask.high.value()) == (1, 1) and mask.range_override() is None


def test_saved_inputs_fill_the_inputs_they_name(panel, tmp_path):
    saved = {"input_ids": np.full((1, 4), 7, np.int64), "token_type_ids": np.zeros((1, 4), np.int64)}
    path = save_inputs(tmp_path / "inputs.npz", saved)
    assert panel.use_saved(path) == ["input_ids", "token_type_ids"]
    feeds = panel.feeds()
    assert np.array_equal(feeds["input_ids"], saved["input_ids"])
    # a given input's shape fixes the dims it fills: the mask is as long as the saved ids
    assert feeds["attention_mask"].shape == (1, 4), feeds["attention_mask"].shape
    assert "2 of 4 inputs" in panel.saved_note.text()


def test_the_wheel_scrolls_the_form_and_leaves_values_alone(qtbot, panel):
    panel.show()
    qtbot.waitExposed(panel)
    spin = panel.dims.findChild(type(panel.seed), "dim:sequence")
    before = spin.value()
    centre = spin.rect().center()
    event = QWheelEvent(QPointF(centre), QPointF(spin.mapToGlobal(centre)), QPoint(0, 0), QPoint(0, 120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(spin, event)
    assert spin.value() == before, "a wheel over an unfocused spin box must not change its value"
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    QApplication.sendEvent(spin, QWheelEvent(QPointF(centre), QPointF(spin.mapToGlobal(centre)), QPoint(0, 0),
                                             QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                             Qt.ScrollPhase.NoScrollPhase, False))
    assert spin.value() != before, "a focused spin box still takes the wheel"
