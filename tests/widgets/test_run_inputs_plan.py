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

from editor.runtime.inputs import make_inputs, save_inputs
from tests.editor.test_input_plan import _model


@pytest.fixture
def panel(qtbot, settings_dir):
    from widgets.run.inputs_panel import InputPanel

    p = InputPanel()
    qtbot.addWidget(p)
    p.resize(320, 600)
    p.set_model(_model(), "/models/bert_like.onnx")
    return p


def test_the_dock_shows_what_run_random_chooses_and_why(panel):
    ids = panel.editors["input_ids"]
    assert (ids.low.value(), ids.high.value()) == (0, 299), "token ids must start inside their table"
    assert "word_embeddings" in ids.why.text() and "ints in [0, 299]" in ids.why.text(), ids.why.text()
    assert (panel.editors["token_type_ids"].low.value(), panel.editors["token_type_ids"].high.value()) == (0, 1)
    assert "standard normal" in panel.editors["images"].why.text()
    dims = panel.dim_values()
    assert (dims["height"], dims["width"]) == (320, 256), f"imgsz says 320 x 256, the dock has {dims}"
    spin = panel.dims.findChild(type(panel.seed), "dim:height")
    assert "imgsz" in spin.toolTip() and spin.suffix().strip() == "metadata", (spin.toolTip(), spin.suffix())
    batch = panel.dims.findChild(type(panel.seed), "dim:batch")
    assert batch.suffix().strip() == "guess" and "batch" in batch.toolTip()


def test_default_feeds_are_exactly_run_randoms(panel):
    feeds = panel.feeds()
    cli = make_inputs(panel.model, "random", seed=0)
    assert list(feeds) == list(cli)
    for name in cli:
        assert np.array_equal(feeds[name], cli[name]), f"{name}: the dock's value is not run --random's"
    panel.seed.setValue(7)
    again = panel.feeds()
    assert np.array_equal(again["input_ids"], make_inputs(panel.model, "random", seed=7)["input_ids"])


def test_the_users_edits_override_the_core(panel):
    mask = panel.editors["attention_mask"]
    mask.low.setValue(0)
    mask.high.setValue(1)
    assert "your range" in mask.why.text() and not mask.reset_range.isHidden()
    panel.dims.set_value("sequence", 9)
    feeds = panel.feeds()
    cli = make_inputs(panel.model, "random", dims={"sequence": 9}, seed=0, val_ranges={"attention_mask": (0, 1)})
    for name in cli:
        assert np.array_equal(feeds[name], cli[name]), f"{name}: the user's dims and range must reach make_inputs"
    assert feeds["input_ids"].shape == (1, 9)
    panel.editors["images"].set_mode("zeros")
    assert not panel.feeds()["images"].any()
    # Reset: the core's values again
    mask.use_core_range()
    assert (mask.low.value(), mask.high.value()) == (-10, 10) and mask.range_override() is None


def test_saved_inputs_fill_the_inputs_they_name(panel, tmp_path):
    saved = {"input_ids": np.full((1, 4), 7, np.int64), "token_type_ids": np.zeros((1, 4), np.int64)}
    path = save_inputs(tmp_path / "inputs.npz", saved)
    assert panel.use_saved(path) == ["input_ids", "token_type_ids"]
    feeds = panel.feeds()
    assert np.array_equal(feeds["input_ids"], saved["input_ids"]) and feeds["attention_mask"].shape == (1, 16)
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
